"""The C side's plan cache (templates/cks_plan_cache.cuh), compiled as host C++ with the
system compiler and run: hits need every byte of the key, the least recently used plan makes
room, and concurrent callers see whole plans. The GPU tests run it inside the sm90 entry points."""

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
