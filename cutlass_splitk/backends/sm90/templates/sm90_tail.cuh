// cutlass-splitk sm90 backend: parallel split-K's reduction inside the partial GEMM (the tail),
// for launches whose units all run in one round (every CTA resident at once: the host checks the
// grid and launches it cooperatively).
//
// After a unit has stored its f32 partial slice, its consumer threads
//   1. wait for their TMA stores to complete and count the unit in the output tile's counter;
//   2. wait until all S slices of the tile are counted;
//   3. sum their 1/S share of the tile's vectors over the S slices in a fixed order (bitwise
//      reproducible), apply the op's whole epilogue (FusedEpilogue<RuntimeKind>: the partial
//      GEMM is shared by every op of a dtype, so the op's kind is read from the parameters) and
//      store D, permuted or not.
// The counter takes a second lap (each unit counts again once past its wait); the last of it
// zeroes the counter, so the counters (the call's semaphores: int32, zero-filled) are zero
// again for the next launch. No second kernel, no wait for the whole grid; but on the H100 it is
// 3-7 us slower than the PDL-launched reduction kernel (from the tail's start to the reads ~3.6
// us, of which the fences and the counter's atomics ~1; the slices' reads ~3.3: BENCHMARKS.md,
// session 31), so it is opt-in (CUTLASS_SPLITK_TAIL=1, cks_host.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cutlass/cutlass.h"
#include "cutlass/array.h"

#include "cks_epilogue.cuh"

namespace cks {
namespace sm90 {

template <class Element>
struct TailParams {
  int32_t slices = 0;                // S; 0: no tail (the reduction kernel follows the GEMM)
  int32_t tiles_r = 0, tiles_c = 0;  // the op's output tiles
  int* counters = nullptr;           // one per output tile
  float const* partials = nullptr;   // slice s of row r at partials + s * slice_stride + r * ld
  int64_t ld = 0, slice_stride = 0;
  EpilogueParams<Element> epi;
};

// Named barriers of the tail (CUTLASS's kernels use ids 0-7): one for the cooperative kernel's
// two consumer warpgroups, one per ping-pong consumer warpgroup.
constexpr int kTailBarrier = 14;

CUTLASS_DEVICE void tail_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

CUTLASS_DEVICE int load_acquire(int const* p) {
  int v = 0;
#if defined(__CUDA_ARCH__)
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#endif
  return v;
}

// Counts the unit in its tile's counter once its slice is stored, then waits for all of the tile's
// slices (one thread of the unit's kThreads; the others wait at the named barrier `barrier`).
template <int kThreads>
CUTLASS_DEVICE void wait_for_slices(int* counter, int slices, int thread, int barrier) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The slice's TMA stores (issued by one of these threads) complete, then made visible beyond
  // the async proxy, before the unit is counted.
  asm volatile("cp.async.bulk.wait_group 0;" : : : "memory");
  asm volatile("fence.proxy.async.global;" : : : "memory");
  tail_sync(barrier, kThreads);
  if (thread == 0) {
    __threadfence();
    atomicAdd(counter, 1);
    while (load_acquire(counter) < slices) {
    }
    if (atomicAdd(counter, 1) == 2 * slices - 1) atomicExch(counter, 0);  // the second lap's last
    __threadfence();
  }
  tail_sync(barrier, kThreads);
#endif
}

// The tail of the unit (tile_r, tile_c, slice) of the op's output, run by its kThreads consumer
// threads (`thread` in [0, kThreads), sharing named barrier `barrier`). Not inlined: its registers
// are its own, so the main loop's allocation stays what it was without it (inlined, it spilled).
template <class Element, int kTileRows, int kTileCols, int kThreads>
__device__ __noinline__ void reduce_tile(TailParams<Element> const& t, int tile_r, int tile_c, int slice, int thread,
                                         int barrier) {
  if (tile_r >= t.tiles_r || tile_c >= t.tiles_c) return;  // a cluster's tile past the edge: nothing stored
  using Epi = FusedEpilogue<RuntimeKind<Element>>;
  using Vec = typename Epi::Vec;
  constexpr int kV = Epi::kV;
  static_assert(kTileCols % kV == 0, "whole vectors per tile row");
  EpilogueParams<Element> const& epi = t.epi;
  int const r0 = tile_r * kTileRows, c0 = tile_c * kTileCols;
  int const rows = min(kTileRows, epi.m - r0);
  int const vectors_per_row = min(kTileCols, epi.n - c0) / kV;  // N is a whole number of vectors
  int const total = rows * vectors_per_row;
  int const begin = int(int64_t(total) * slice / t.slices), share = int(int64_t(total) * (slice + 1) / t.slices) - begin;
  // Latency, not bandwidth, bounds this: a few hundred vectors of S slices each, read from L2 by one CTA. So every
  // thread keeps many loads in flight: where the share has fewer vectors than threads, `lanes` neighbouring threads
  // (a power of two, at most a warp) split one vector's slices and meet by shuffles in a fixed order; each thread
  // loads kBatch vectors' slices before it adds them; the stores come after all of a batch's loads (a store to D
  // may alias the partials as far as the compiler knows, so loads after it would wait for it). The epilogue's own
  // inputs (C, bias, E: not written by the GEMM) of the first batch are loaded before the wait for the slices.
  int lanes = 1;
  while (lanes < 32 && lanes < t.slices && share * lanes * 2 <= kThreads) lanes *= 2;
  int const groups = kThreads / lanes, group = thread / lanes, first_slice = thread % lanes;
  int const per_group = (share + groups - 1) / groups;  // vectors per group of lanes: the same in every thread
  constexpr int kBatch = 2;
  int row[kBatch], col[kBatch];
  bool valid[kBatch];
  typename Epi::Sources sources[kBatch];
  auto assign = [&](int done) {
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < kBatch; ++j) {
      int const v = begin + group + (done + j) * groups;
      valid[j] = done + j < per_group && v < begin + share;
      int const r = valid[j] ? v / vectors_per_row : 0;
      row[j] = r0 + r;
      col[j] = c0 + (valid[j] ? v - r * vectors_per_row : 0) * kV;
      if (valid[j] && first_slice == 0) Epi::load_sources(epi, row[j], col[j], sources[j]);
    }
  };
  assign(0);
  wait_for_slices<kThreads>(t.counters + int64_t(tile_r) * t.tiles_c + tile_c, t.slices, thread, barrier);
  for (int done = 0; done < per_group; done += kBatch) {
    if (done > 0) assign(done);
    Vec acc[kBatch];
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < kBatch; ++j) acc[j].clear();
#pragma unroll 4
    for (int s = first_slice; s < t.slices; s += lanes) {
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kBatch; ++j) {
        if (!valid[j]) continue;
        float const* q = t.partials + s * t.slice_stride + int64_t(row[j]) * t.ld + col[j];
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kV; i += 4) {
          cutlass::Array<float, 4> x = load_vec<float, 4, true>(q + i);
          CUTLASS_PRAGMA_UNROLL
          for (int e = 0; e < 4; ++e) acc[j][i + e] += x[e];
        }
      }
    }
    // Every thread of the warp reaches the shuffles (the loop counts above are the same in all of them).
    for (int offset = 1; offset < lanes; offset *= 2) {
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kBatch; ++j) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kV; ++i) acc[j][i] += __shfl_xor_sync(0xffffffffu, acc[j][i], offset);
      }
    }
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < kBatch; ++j) {
      if (valid[j] && first_slice == 0) Epi::apply_and_store(epi, row[j], col[j], sources[j], acc[j]);
    }
  }
}

}  // namespace sm90
}  // namespace cks
