"""The C side's plan cache (templates/cks_plan_cache.cuh) and replay cache (cks_replay_cache.cuh),
compiled as host C++ with the system compiler and run: hits need every byte of the key, the least
recently used entry makes room (a replay cache destroying its recording), and concurrent callers
see whole plans and only their own, live recordings. The GPU tests run them inside the entry
points."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from cks_testutil import TEMPLATES

CXX = shutil.which("c++") or shutil.which("g++")

PROGRAM = textwrap.dedent(r"""
    #include <cstdio>
    #include <cstring>
    #include <thread>
    #include <vector>
    #include "cks_plan_cache.cuh"

    struct Key { int m, n; const void* a; };
    struct Plan { long value[16]; };
    static Plan plan_of(long v) { Plan p; for (long& x : p.value) x = v; return p; }
    static Key key_of(int m, int n, const void* a) { Key k; std::memset(&k, 0, sizeof k); k.m = m; k.n = n; k.a = a; return k; }

    int main() {
      cks::PlanCache<Key, Plan, 3> cache;
      Plan p = plan_of(-1);
      int x = 0, y = 0;
      std::printf("empty %d\n", cache.find(key_of(1, 2, &x), p));
      cache.insert(key_of(1, 2, &x), plan_of(10));
      int hit = cache.find(key_of(1, 2, &x), p);
      std::printf("hit %d %ld\n", hit, p.value[15]);
      std::printf("other pointer %d\n", cache.find(key_of(1, 2, &y), p));
      std::printf("other shape %d\n", cache.find(key_of(1, 3, &x), p));
      cache.insert(key_of(1, 2, &x), plan_of(11));  // replaces, does not duplicate
      cache.find(key_of(1, 2, &x), p);
      std::printf("replaced %ld\n", p.value[0]);
      cache.insert(key_of(2, 2, &x), plan_of(20));
      cache.insert(key_of(3, 2, &x), plan_of(30));
      cache.find(key_of(1, 2, &x), p);              // 1 is now the most recent, 2 the least
      cache.insert(key_of(4, 2, &x), plan_of(40));  // full: evicts 2
      int h1 = cache.find(key_of(1, 2, &x), p), h2 = cache.find(key_of(2, 2, &x), p);
      int h3 = cache.find(key_of(3, 2, &x), p), h4 = cache.find(key_of(4, 2, &x), p);
      std::printf("after eviction %d %d %d %d\n", h1, h2, h3, h4);
      // threads inserting and reading their own keys: a found plan is always whole and its own
      cks::PlanCache<Key, Plan, 8> shared;
      std::vector<std::thread> threads;
      int torn = 0, wrong = 0;
      std::vector<int> torn_by(8), wrong_by(8);
      for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] {
        for (int i = 0; i < 20000; ++i) {
          int m = t * 100 + i % 5;
          Plan q;
          if (shared.find(key_of(m, 0, nullptr), q)) {
            for (long v : q.value) torn_by[t] += v != q.value[0];
            wrong_by[t] += q.value[0] != m;
          } else {
            shared.insert(key_of(m, 0, nullptr), plan_of(m));
          }
        }
      });
      for (auto& th : threads) th.join();
      for (int t = 0; t < 8; ++t) { torn += torn_by[t]; wrong += wrong_by[t]; }
      std::printf("threads torn %d wrong %d\n", torn, wrong);
      return 0;
    }
""")


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
def test_plan_cache_hits_only_on_every_byte_and_evicts_the_least_recently_used(tmp_path):
    source = tmp_path / "plan_cache.cpp"
    source.write_text(PROGRAM)
    exe = tmp_path / "plan_cache"
    subprocess.run([CXX, "-std=c++17", "-O1", "-pthread", f"-I{TEMPLATES}", str(source), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == [
        "empty 0",
        "hit 1 10",
        "other pointer 0",
        "other shape 0",
        "replaced 11",
        "after eviction 1 0 1 1",
        "threads torn 0 wrong 0",
    ]


REPLAY_PROGRAM = textwrap.dedent(r"""
    #include <atomic>
    #include <cstdio>
    #include <cstring>
    #include <mutex>
    #include <set>
    #include <thread>
    #include <vector>
    #include "cks_replay_cache.cuh"

    struct Key { int m; const void* a; };
    // Keys built in place, as the library builds its own: padding zeroed (a Key returned by value
    // need not carry its padding), then the fields
    static void fill(Key& k, int m, const void* a) { std::memset(&k, 0, sizeof k); k.m = m; k.a = a; }

    int main() {
      cks::ReplayCache<Key, long, 2> cache;
      std::vector<long> destroyed;
      auto destroy = [&](long e) { destroyed.push_back(e); };
      auto replay = [](long e) { return int(e * 10); };
      int x = 0, y = 0, status = -1;
      Key k1x, k1y, k2x, k3x;
      fill(k1x, 1, &x); fill(k1y, 1, &y); fill(k2x, 2, &x); fill(k3x, 3, &x);
      int s1 = int(cache.visit(k1x, replay, destroy, &status));
      int s2 = int(cache.visit(k1x, replay, destroy, &status));
      std::printf("first %d second %d status %d\n", s1, s2, status);
      std::printf("other pointer %d\n", int(cache.visit(k1y, replay, destroy, &status)));
      std::printf("record replays %d\n", cache.record(k1x, 7, replay, destroy));
      int s3 = int(cache.visit(k1x, replay, destroy, &status));
      std::printf("third %d status %d recordings %d\n", s3, status, cache.recordings());
      std::printf("recorded twice %d\n", cache.record(k1x, 8, replay, destroy));  // keeps 7, destroys 8
      cache.visit(k2x, replay, destroy, &status);  // evicts (1, &y), never recorded
      cache.visit(k3x, replay, destroy, &status);  // evicts (1, &x): its recording destroyed
      std::printf("destroyed");
      for (long e : destroyed) std::printf(" %ld", e);
      std::printf("\nafter eviction %d recordings %d\n", int(cache.visit(k1x, replay, destroy, &status)),
                  cache.recordings());
      // threads: every replay runs the key's own recording, never one destroyed before it
      cks::ReplayCache<Key, long, 8> shared;
      std::mutex m;
      std::set<long> gone;
      std::atomic<int> wrong{0}, replays{0};
      auto destroy_shared = [&](long e) { std::lock_guard<std::mutex> l(m); gone.insert(e); };
      std::vector<std::thread> threads;
      std::atomic<long> next{1000};
      for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] {
        for (int i = 0; i < 20000; ++i) {
          int key = t * 100 + i % 3;
          auto check = [&](long e) {
            std::lock_guard<std::mutex> l(m);
            if (e / 1000000 != key || gone.count(e)) ++wrong;
            ++replays;
            return 0;
          };
          int st = 0;
          Key k;
          fill(k, key, nullptr);
          if (shared.visit(k, check, destroy_shared, &st) == cks::Sighting::kSecond)
            shared.record(k, long(key) * 1000000 + next++ % 1000000, check, destroy_shared);
        }
      });
      for (auto& th : threads) th.join();
      std::printf("threads wrong %d replayed %d\n", wrong.load(), replays.load() > 100000);
      return 0;
    }
""")


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
def test_replay_cache_records_on_the_second_sighting_and_destroys_what_it_evicts(tmp_path):
    source = tmp_path / "replay_cache.cpp"
    source.write_text(REPLAY_PROGRAM)
    exe = tmp_path / "replay_cache"
    subprocess.run([CXX, "-std=c++17", "-O1", "-pthread", f"-I{TEMPLATES}", str(source), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == [
        "first 0 second 1 status -1",
        "other pointer 0",
        "record replays 70",
        "third 2 status 70 recordings 1",
        "recorded twice 70",
        "destroyed 8 7",
        "after eviction 0 recordings 0",
        "threads wrong 0 replayed 1",
    ]
