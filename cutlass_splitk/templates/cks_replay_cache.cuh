// cutlass-splitk: the bookkeeping behind replayed launches (cks_replay.cuh): which argument
// blocks an entry point has seen, and the recorded work (a CUDA graph executable) of those it
// has seen twice. Host C++ only: `Exec` is any trivially copyable handle, so the tests run it
// without a GPU.
//
// A key's first sighting only notes it (a caller that never repeats its arguments pays
// nothing but the note); its second asks the caller to record; later ones replay. One mutex
// per cache; a replay runs under it, so no eviction can destroy an executable while another
// thread launches it. Capacity bounds the memory: the least recently used entry makes room
// (its executable, if any, handed to the caller's destroy()).
#pragma once

#include <cstdint>
#include <mutex>

#include "cks_plan_cache.cuh"

namespace cks {

enum class Sighting { kFirst, kSecond, kRecorded };

template <class Key, class Exec, int kCapacity = 256>
class ReplayCache {
 public:
  // kRecorded: `replay(exec)` ran under the lock and `*status` holds what it returned.
  // kSecond: the key was seen before without a recording (the caller may record()).
  // kFirst: the key is new; it is now noted (the least recently used entry making room: its
  // recording, if any, handed to destroy()).
  template <class Replay, class Destroy>
  Sighting visit(Key const& key, Replay&& replay, Destroy&& destroy, int* status) {
    uint64_t const h = key_hash(key);
    std::lock_guard<std::mutex> lock(mutex_);
    int const i = table_.find(key, h);
    if (i < 0) {
      table_.add(key, h, Recording{}, evicting(destroy));
      return Sighting::kFirst;
    }
    Recording const& r = table_.value(i);
    if (!r.recorded) return Sighting::kSecond;
    *status = replay(r.exec);
    return Sighting::kRecorded;
  }

  // Stores `exec` as key's recording (noting the key again if it was evicted meanwhile; a
  // recording already there, from a thread that recorded the same key concurrently, is kept
  // and `exec` destroyed), then replays the stored one under the lock: its status.
  template <class Replay, class Destroy>
  int record(Key const& key, Exec exec, Replay&& replay, Destroy&& destroy) {
    uint64_t const h = key_hash(key);
    std::lock_guard<std::mutex> lock(mutex_);
    int i = table_.find(key, h);
    if (i < 0) i = table_.add(key, h, Recording{}, evicting(destroy));
    Recording& r = table_.value(i);
    if (r.recorded) {
      destroy(exec);
    } else {
      r.exec = exec;
      r.recorded = true;
    }
    return replay(r.exec);
  }

  int recordings() {
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (int i = 0; i < table_.size(); ++i) n += table_.value(i).recorded;
    return n;
  }

 private:
  struct Recording {
    Exec exec{};
    bool recorded = false;
  };

  template <class Destroy>
  static auto evicting(Destroy& destroy) {
    return [&destroy](Recording const& r) {
      if (r.recorded) destroy(r.exec);
    };
  }

  std::mutex mutex_;
  LruTable<Key, Recording, kCapacity> table_;
};

}  // namespace cks
