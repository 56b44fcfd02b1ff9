// cutlass-splitk sm90 backend: serial split-K's in-kernel reduction without a turnstile.
//
// CUTLASS's stream-K scheduler in its split-K decomposition with ReductionMode::Deterministic
// chains a tile's K partitions: partition k waits until partitions 0..k-1 have added theirs
// into one f32 tile, so S partitions that finish together still reduce one after another (S - 1
// read-modify-writes of the tile on the critical path). OrderedSplitKTileScheduler keeps that
// scheduler (the same work units, grid and epilogue) and replaces its fix-up for split-K:
//
//   1. every partition stores its accumulators to its own f32 slot (no waiting);
//   2. it then counts itself in on the tile's counter (one per consumer warpgroup);
//   3. the partition that arrives last, whichever it is, adds the slots in K order
//      (slot 0 + slot 1 + ... + slot S-1, its own from registers), alone runs the epilogue and
//      sets the counter back to zero.
//
// The slots live in the caller's partials, the counters in its semaphores (int32, zero-filled and
// left zero by a completed launch, as the sm80 serial kernels' semaphores): no memset before a
// launch. The sum's order never depends on arrival, so the result is bitwise reproducible, as before
// (and the same bits as the turnstile's: it too adds the partitions in K order), and the
// epilogue's non-linear parts still run once, on the complete sum. Stream-K, data-parallel work and
// split launches whose slots would exceed kMaxSlotBytes keep CUTLASS's fix-up unchanged.
#pragma once

#include <cstdint>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

namespace cks {
namespace sm90 {

struct OrderedSplitKScheduler {};  // the tag a GemmUniversal takes (see the selector below)

template <class TileShape, class ClusterShape>
class OrderedSplitKTileScheduler
    : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamK<TileShape, ClusterShape> {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamK<TileShape, ClusterShape>;

 public:
  using typename Base::WorkTileInfo;
  using Base::Base;

  // CUTLASS's arguments and parameters, plus the counters: the caller's zeroed semaphores.
  struct Arguments : Base::Arguments {
    int* counters = nullptr;
  };
  struct Params : Base::Params {
    int* counters = nullptr;
  };

  static constexpr int kWarpgroupThreads = 128;
  static constexpr int kTileElements = int(cute::size<0>(TileShape{}) * cute::size<1>(TileShape{}));
  // K_idx of a work tile whose partition arrived last (set by fixup, read by compute_epilogue).
  static constexpr int32_t kReducesTile = -1;
  // The slots take S times the workspace of the turnstile's one running tile; beyond kMaxSlotBytes
  // (1024 slots of a 128x128 tile: e.g. 64 tiles at split 16, far more than two waves of work units,
  // where the reduction's latency no longer matters) a split launch keeps CUTLASS's turnstile.
  static constexpr uint64_t kMaxSlotBytes = uint64_t(64) << 20;

  CUTLASS_HOST_DEVICE static uint64_t slot_bytes(typename Base::Params const& params) {
    return uint64_t(params.divmod_splits_.divisor) * params.units_per_problem_ * kTileElements * 4;
  }

  // Whether a launch with these parameters reduces in order (split-K, slots within kMaxSlotBytes);
  // the host (workspace) and the device (fixup) decide from the same parameters.
  CUTLASS_HOST_DEVICE static bool ordered(typename Base::Params const& params) {
    return params.divmod_splits_.divisor > 1 && slot_bytes(params) <= kMaxSlotBytes;
  }

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape problem_shape, TileShape tile_shape, ClusterShape cluster_shape,
                                        cutlass::KernelHardwareInfo const& hw_info, Arguments const& args,
                                        void* workspace, uint32_t epilogue_subtile = 1,
                                        uint32_t ktile_start_alignment_count = 1u) {
    Params params;
    static_cast<typename Base::Params&>(params) = Base::to_underlying_arguments(
        problem_shape, tile_shape, cluster_shape, hw_info, args, workspace, epilogue_subtile,
        ktile_start_alignment_count);
    params.counters = args.counters;
    return params;
  }

  // ---- host: the slots (in the workspace) and the counters (in the caller's semaphores) ----
  template <class ProblemShape>
  static Params host_params(Arguments const& args, ProblemShape problem_shape, cutlass::KernelHardwareInfo const& hw_info,
                            void* workspace) {
    return to_underlying_arguments(problem_shape, TileShape{}, ClusterShape{}, hw_info, args, workspace);
  }

  // Bytes of zeroed int32 counters a launch needs (0 where it does not reduce in order).
  template <class ProblemShape>
  static size_t counter_bytes(Arguments const& args, ProblemShape problem_shape,
                              cutlass::KernelHardwareInfo const& hw_info, uint32_t mma_warp_groups) {
    Params const params = host_params(args, problem_shape, hw_info, nullptr);
    return ordered(params) ? size_t(params.units_per_problem_) * mma_warp_groups * sizeof(int32_t) : 0;
  }

  template <class ProblemShape, class ElementAccumulator>
  static size_t get_workspace_size(Arguments const& args, ProblemShape problem_shape,
                                   cutlass::KernelHardwareInfo const& hw_info, uint32_t mma_warp_groups,
                                   uint32_t epilogue_subtile = 1, uint32_t num_accumulator_mtxs = 1) {
    static_assert(sizeof(ElementAccumulator) == 4, "f32 accumulators");
    Params const params = host_params(args, problem_shape, hw_info, nullptr);
    if (!ordered(params))
      return Base::template get_workspace_size<ProblemShape, ElementAccumulator>(
          args, problem_shape, hw_info, mma_warp_groups, epilogue_subtile, num_accumulator_mtxs);
    return slot_bytes(params);
  }

  template <class ProblemShape, class ElementAccumulator>
  static cutlass::Status initialize_workspace(Arguments const& args, void* workspace, cudaStream_t stream,
                                              ProblemShape const& problem_shape,
                                              cutlass::KernelHardwareInfo const& hw_info, uint32_t mma_warp_groups,
                                              uint32_t epilogue_subtile = 1, uint32_t num_accumulator_mtxs = 1,
                                              cutlass::CudaHostAdapter* cuda_adapter = nullptr) {
    Params const params = host_params(args, problem_shape, hw_info, workspace);
    if (!ordered(params))
      return Base::template initialize_workspace<ProblemShape, ElementAccumulator>(
          args, workspace, stream, problem_shape, hw_info, mma_warp_groups, epilogue_subtile, num_accumulator_mtxs,
          cuda_adapter);
    return cutlass::Status::kSuccess;  // every slot is written before it is read; the counters are zero
  }

  // ---- device ----
  // The partition index of a split-K work tile, from its first K tile (the scheduler gives the
  // first `big_units_` partitions one K tile more than the others).
  CUTLASS_HOST_DEVICE static uint32_t partition(typename Base::Params const& params, WorkTileInfo const& work) {
    uint32_t const per = params.divmod_k_tiles_per_sk_unit_.divisor;
    uint32_t const big = params.big_units_;
    uint32_t const k = uint32_t(work.K_idx);
    if (k < big * (per + 1)) return k / (per + 1);
    return big + (k - big * (per + 1)) / per;
  }

  static constexpr int kFirstBarrier = int(cutlass::arch::ReservedNamedBarriers::StreamkBarrier0);

  // A warpgroup counts itself in on `counter` once all its threads' slot stores are done; true (in
  // every thread) for the partition that arrives last, which also sets the counter back to zero.
  template <int kBarrier>
  CUTLASS_DEVICE static bool count_in(int* counter, uint32_t splits, int lane) {
    int last = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("bar.sync %0, %1;" ::"n"(kBarrier), "n"(kWarpgroupThreads) : "memory");
    if (lane == 0) {
      int arrived;
      asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;" : "=r"(arrived) : "l"(counter) : "memory");
      last = arrived == int(splits) - 1;
      if (last) *counter = 0;  // every partition has counted in: zero again for the next launch
    }
    asm volatile(
        "{\n .reg .pred p, q;\n setp.ne.s32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n selp.s32 %0, 1, 0, q;\n}"
        : "=r"(last)
        : "r"(last), "n"(kBarrier), "n"(kWarpgroupThreads)
        : "memory");
    if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
    return last != 0;
  }

  template <class FrgTensorC>
  CUTLASS_DEVICE static void fixup(Params const& params, WorkTileInfo const& work, FrgTensorC& accumulators,
                                   uint32_t num_barriers, uint32_t barrier_idx) {
    if (!ordered(params)) {
      Base::fixup(params, work, accumulators, num_barriers, barrier_idx);
      return;
    }
    if (!Base::requires_fixup(params, work)) return;
    constexpr int kValues = int(cute::size(FrgTensorC{}));
    static_assert(kValues % 4 == 0, "accumulators stored as 16-byte vectors");
    constexpr int kVectors = kValues / 4;
    uint32_t const splits = params.divmod_splits_.divisor;
    uint32_t const mine = partition(params, work);
    uint64_t const tile = Base::output_tile_index(params, work);
    int const lane = int(threadIdx.x % kWarpgroupThreads);
    char* const workspace = static_cast<char*>(params.reduction_workspace_);
    // Slot (split, tile, warpgroup): kVectors 16-byte vectors per thread, thread-minor (coalesced).
    auto slot = [&](uint32_t split) {
      uint64_t const index = (uint64_t(split) * params.units_per_problem_ + tile) * num_barriers + barrier_idx;
      return reinterpret_cast<float4*>(workspace) + index * (kVectors * kWarpgroupThreads) + lane;
    };
    int* const counter = params.counters + tile * num_barriers + barrier_idx;

    float4* const stored = slot(mine);
    CUTLASS_PRAGMA_UNROLL
    for (int v = 0; v < kVectors; ++v) {
      stored[v * kWarpgroupThreads] = make_float4(accumulators(4 * v), accumulators(4 * v + 1), accumulators(4 * v + 2),
                                              accumulators(4 * v + 3));
    }
    // Every thread's stores before the count (bar.sync, then a release at GPU scope by one thread,
    // CUTLASS's arrive_inc pattern); the last arrival's loads after it (an acquire). The barrier ids
    // are CUTLASS's stream-K fix-up ids, one per consumer warpgroup, as immediates (a register id
    // makes ptxas reserve all sixteen barriers).
    bool const last = barrier_idx == 0 ? count_in<kFirstBarrier>(counter, splits, lane)
                                       : count_in<kFirstBarrier + 1>(counter, splits, lane);
    if (!last) return;
    // The sum in K order, slot 0 + slot 1 + ... (its own slot too, from L2), kChunk vectors of every
    // slot at a time: kChunk loads in flight, and only the chunk's sums live across the loop over the
    // slots (keeping the accumulators live across it, or a copy of them, made the kernel spill, main
    // loop included).
    constexpr int kChunk = kVectors < 8 ? kVectors : 8;
    static_assert(kVectors % kChunk == 0, "whole chunks");
    CUTLASS_PRAGMA_UNROLL
    for (int c = 0; c < kVectors; c += kChunk) {
      float4 sum[kChunk];
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < kChunk; ++v) sum[v] = __ldcg(slot(0) + (c + v) * kWarpgroupThreads);
#pragma unroll 1
      for (uint32_t s = 1; s < splits; ++s) {
        float4 const* const terms = slot(s);
        float4 t[kChunk];
        CUTLASS_PRAGMA_UNROLL
        for (int v = 0; v < kChunk; ++v) t[v] = __ldcg(terms + (c + v) * kWarpgroupThreads);
        CUTLASS_PRAGMA_UNROLL
        for (int v = 0; v < kChunk; ++v) {
          sum[v].x += t[v].x;
          sum[v].y += t[v].y;
          sum[v].z += t[v].z;
          sum[v].w += t[v].w;
        }
      }
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < kChunk; ++v) {
        accumulators(4 * (c + v)) = sum[v].x;
        accumulators(4 * (c + v) + 1) = sum[v].y;
        accumulators(4 * (c + v) + 2) = sum[v].z;
        accumulators(4 * (c + v) + 3) = sum[v].w;
      }
    }
    const_cast<WorkTileInfo&>(work).K_idx = kReducesTile;  // the kernel's own (non-const) work tile
  }

  CUTLASS_HOST_DEVICE static bool compute_epilogue(WorkTileInfo const& work, Params const& params) {
    if (!ordered(params)) return Base::compute_epilogue(work, params);
    return work.is_valid() &&
           (work.K_idx == kReducesTile || work.k_tile_count == params.divmod_tiles_per_output_tile_.divisor);
  }
};

}  // namespace sm90
}  // namespace cks

namespace cutlass::gemm::kernel::detail {
template <class TileShape, class ClusterShape, uint32_t SchedulerPipelineStageCount>
struct TileSchedulerSelector<cks::sm90::OrderedSplitKScheduler, arch::Sm90, TileShape, ClusterShape,
                             SchedulerPipelineStageCount> {
  using Scheduler = cks::sm90::OrderedSplitKTileScheduler<TileShape, ClusterShape>;
};
}  // namespace cutlass::gemm::kernel::detail
