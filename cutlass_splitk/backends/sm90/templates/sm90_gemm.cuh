// cutlass-splitk sm90 backend: the entry points' logic for the three modes.
//
//   * swapped operands (Cfg::kSwapAB) in every mode: the kernel computes D^T (its tile the op's N rows by M
//     columns, fitted to a small M), its epilogue storing the op's row-major D as a column-major one.
//   * serial (SplitKGemm<Cfg, false>): one kernel. CUTLASS's stream-K tile scheduler in its
//     SplitK decomposition gives each CTA one K partition of a tile; the partitions meet in an
//     f32 workspace in K order (ReductionMode::Deterministic: a turnstile per tile, so the sum
//     is bitwise reproducible), and only the CTA that finishes a tile runs the fused epilogue,
//     once, on the complete f32 sum: CUTLASS's TMA epilogue (sm90_tma_epilogue.cuh, the permuted
//     store sm90_permuted_store.cuh's). Split 1 is the data-parallel decomposition.
//   * stream_k (SplitKGemm<Cfg, true>): the same kernel with the StreamK decomposition: whole
//     tiles plus stream-K units that split the remaining K iterations evenly over the SMs.
//   * parallel (ParallelGemm<Cfg>): the batched partial GEMM (sm90_partial.cuh) writes f32
//     partials of K slices, then the shared reduction kernel sums them in order and applies
//     the whole epilogue, including the permuted store (launched with PDL). With
//     CUTLASS_SPLITK_TAIL=1, where the partial GEMM runs in one round, it reduces them itself
//     instead (sm90_tail.cuh): one kernel, but slower on the H100 (session 31).
//
// Host time: run() and the partial GEMM's launch remember the plan of each argument block
// (cks_plan_cache.cuh): a repeated call skips the checks and the TMA descriptor encoding.
//
// Only the cooperative kernel takes the stream-K scheduler, and only where the variant has in-kernel
// split-K (serial splits above 1, or stream-K): a serial variant whose only split is 1 runs CUTLASS's
// persistent data-parallel scheduler (codegen passes kSplitOne), as every ping-pong variant does
// (ping-pong variants run serial split 1 and parallel split-K).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cute/tensor.hpp"
#include "sm90_cutlass_gemm.cuh"  // GemmUniversal (sm90 kernels only)
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

#include "cks_abi.h"
#include "cks_epilogue.cuh"
#include "cks_error.cuh"
#include "cks_host.cuh"
#include "cks_plan_cache.cuh"
#include "cks_reduction.cuh"
#include "sm90_config.cuh"
#include "sm90_launch.cuh"
#include "sm90_tma_epilogue.cuh"
#include "sm90_partial.cuh"

namespace cks {
namespace sm90 {

// The in-kernel modes' epilogue: CUTLASS's TMA epilogue (sm90_tma_epilogue.cuh), with two buffers of
// each kind it stages (C, E, D) wherever the whole kernel, KernelWith<that epilogue>, fits sm_90's shared
// memory, else one of each (which the budget, kEpilogueSmem, always holds). The budget only prices the main
// loop's stage count; the stages it leaves often leave more: the 128x256 tile's four 48 KB stages leave
// ~35 KB, where E's and D's 18 KB budget held one buffer of each, so each 128x32 subtile's E load waited for
// the previous subtile's compute and D's store for the previous store (round 69, BENCHMARKS.md session 45).
template <class Cfg, template <class> class KernelWith>
struct InKernelEpilogue {
  template <int kBuffers>
  using Collective = typename TmaEpilogueConfig<Cfg>::template Build<kBuffers, kBuffers>::Collective;
  static constexpr bool kDouble = KernelWith<Collective<2>>::SharedStorageSize <= kSmemLimit;
  using type = Collective<kDouble ? 2 : 1>;
  static void fill(typename type::Arguments& e, CksArgs const& a, typename FusedEpilogue<Cfg>::Params const& epi) {
    TmaEpilogueConfig<Cfg>::fill(e, a, epi);
  }
};

// kSplitOne: a serial variant whose only split is 1: CUTLASS's persistent data-parallel tile
// scheduler (ping-pong variants always take it) instead of the stream-K one.
template <class Cfg, bool kStreamK, bool kSplitOne = false>
struct SplitKGemm {
  using Gemm = typename Cfg::Gemm;
  static_assert(!(kStreamK && kSplitOne), "stream-K needs the stream-K scheduler");
  static constexpr bool kStreamKScheduler = Gemm::kCooperative && !kSplitOne;
  using Scheduler = typename cutlass::platform::conditional<
      kStreamKScheduler, cutlass::gemm::StreamKScheduler, cutlass::gemm::PersistentScheduler>::type;
  template <class Epilogue>
  using KernelWith = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
                                                          Mainloop<Gemm, kEpilogueSmem<Cfg>>, Epilogue, Scheduler>;
  using Epilogue = InKernelEpilogue<Cfg, KernelWith>;
  using Kernel = KernelWith<typename Epilogue::type>;
  static_assert(Kernel::SharedStorageSize <= kSmemLimit, "more shared memory than one sm_90 block can have");

  static typename Kernel::Arguments arguments(CksArgs const& a, typename FusedEpilogue<Cfg>::Params const& epi) {
    typename Kernel::Arguments args;
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    set_operands<Gemm>(args, a, a.k, 1, 0, 0);
    Epilogue::fill(args.epilogue, a, epi);
    args.hw_info = hardware<Kernel>(a.device);
    if constexpr (kStreamKScheduler) {
      using Decomposition = typename Kernel::TileScheduler::DecompositionMode;
      args.scheduler.splits = kStreamK ? 1 : a.split_k;
      args.scheduler.decomposition_mode =
          kStreamK ? Decomposition::StreamK
                   : (a.split_k > 1 ? Decomposition::SplitK : Decomposition::DataParallel);
      args.scheduler.reduction_mode = Kernel::TileScheduler::ReductionMode::Deterministic;
    }
    return args;
  }

  // What a launch needs: the arguments (initialize_workspace reads them), the kernel's
  // parameters with their TMA descriptors, and the workspace size (none: nothing to zero).
  struct Plan {
    typename Kernel::Arguments args;
    typename Kernel::Params params;
    int64_t workspace_bytes;
  };

  // Checks the problem and fills q and args (everything but the kernel's parameters). The caller's
  // device is selected first: the arguments ask it how many of the kernel's clusters it runs at once.
  static int plan(CksArgs const& a, CksQuery& q, typename Kernel::Arguments& args) {
    typename FusedEpilogue<Cfg>::Params epi;
    if (int s = prepare<Cfg>(a, epi)) return s;
    if (int s = select_device(a)) return s;
    if (!kStreamKScheduler && (kStreamK || a.split_k > 1))
      return fail(CKS_ERROR_INVALID_PROBLEM, Gemm::kCooperative ? "this variant runs split 1 only"
                                                                : "ping-pong variants run split 1 only (no in-kernel split-K)");
    if (kStreamK && a.split_k != 1) return fail(CKS_ERROR_INVALID_PROBLEM, "stream-K takes no split factor (split 1)");
    args = arguments(a, epi);
    if (!Kernel::can_implement(args))
      return fail(CKS_ERROR_INVALID_PROBLEM, "CUTLASS cannot run this problem (can_implement)");
    q.tiles_m = tiles(a.m, Cfg::kTileRows);
    q.tiles_n = tiles(a.n, Cfg::kTileCols);
    q.k_partitions = kStreamK ? 1 : a.split_k;
    q.semaphore_bytes = 0;
    // The scheduler's f32 reduction tiles and turnstiles (zeroed per launch) live in `partials`.
    q.partial_bytes = int64_t(Kernel::get_workspace_size(args));
    return CKS_OK;
  }

  static int query(CksArgs const& a, CksQuery& q) {
    typename Kernel::Arguments args;
    return plan(a, q, args);
  }

  static int run(CksArgs const& a, cudaStream_t stream) {
    static auto& plans = *new PlanCache<CksArgs, Plan>();  // never destroyed: no exit-order hazard
    Plan p;
    if (!plans.find(a, p)) {
      CksQuery q{};
      if (int s = plan(a, q, p.args)) return s;
      if (q.partial_bytes > a.partial_bytes || (q.partial_bytes && !a.partials))
        return fail(CKS_ERROR_WORKSPACE, "sm90 split-K needs " + std::to_string(q.partial_bytes) +
                                             " bytes of workspace");
      {
        MainloopPromotion<Gemm> promotion;
        p.params = Kernel::to_underlying_arguments(p.args, a.partials);
      }
      set_l2_policy<Gemm, Kernel>(p.params, a);
      p.workspace_bytes = q.partial_bytes;
      plans.insert(a, p);
    } else if (int s = select_device(a)) {
      return s;
    }
    // With no workspace (data-parallel tiles: split 1) there is nothing to zero, and CUTLASS's
    // initialize_workspace would only recompute the scheduler's parameters on the host.
    if (p.workspace_bytes > 0) {
      if (int s = status(Kernel::initialize_workspace(p.args, a.partials, stream), "sm90 workspace initialization"))
        return s;
    }
    return launch<Kernel>(p.params, a.device, stream, "sm90 split-K GEMM launch");
  }
};

template <class Cfg>
struct ParallelGemm {
  using Partial = PartialGemm<typename Cfg::Gemm>;

  // K slices: ceil(K / split) rounded up to whole k-tiles, as many as it takes to cover K (fewer than
  // the split where the rounding overruns), all in one launch; the last one reads zeros past K.
  struct Slices {
    int length, count;
  };
  static Slices slices(CksArgs const& a) {
    int const unit = Cfg::kTileDepth;
    int length = (a.k + a.split_k - 1) / a.split_k;
    length = (length + unit - 1) / unit * unit;
    return Slices{length, (a.k + length - 1) / length};
  }

  // Checks the problem and fills q and epi, for the tail's `mode` (read once per call).
  static int plan(CksArgs const& a, TailMode mode, CksQuery& q, typename FusedEpilogue<Cfg>::Params& epi) {
    if (int s = prepare<Cfg>(a, epi)) return s;
    Slices const s = slices(a);
    q.tiles_m = tiles(a.m, Cfg::kTileRows);
    q.tiles_n = tiles(a.n, Cfg::kTileCols);
    q.k_partitions = s.count;
    // The tail's counters (sm90_tail.cuh), one per output tile, where it is on (used where the launch is one round).
    q.semaphore_bytes = mode != TailMode::kOff ? int64_t(sizeof(int)) * q.tiles_m * q.tiles_n : 0;
    q.partial_bytes = int64_t(sizeof(float)) * s.count * a.m * Partial::partial_ld(a.n);
    return CKS_OK;
  }

  static int query(CksArgs const& a, CksQuery& q) {
    typename FusedEpilogue<Cfg>::Params epi;
    return plan(a, tail_mode(), q, epi);
  }

  static int run(CksArgs const& a, cudaStream_t stream) {
    CksQuery q{};
    typename Partial::Tail tail;
    tail.mode = tail_mode();
    if (int s = plan(a, tail.mode, q, tail.epi)) return s;
    if (int s = select_device(a)) return s;
    if (q.partial_bytes > a.partial_bytes || !a.partials || !aligned(a.partials, 16))
      return fail(CKS_ERROR_WORKSPACE, "parallel split-K needs " + std::to_string(q.partial_bytes) +
                                           " bytes of 16-byte aligned float32 partials");
    Slices const s = slices(a);
    float* partials = static_cast<float*>(a.partials);
    int64_t const ld = Partial::partial_ld(a.n);
    int64_t const slice_stride = int64_t(a.m) * ld;
    // The reduction inside the GEMM where it is on, runs in one round and the caller gave the
    // counters (a call planned while it was off has none), else the reduction kernel.
    bool const counters = q.semaphore_bytes > 0 && a.semaphores != nullptr && a.semaphore_bytes >= q.semaphore_bytes;
    tail.counters = static_cast<int*>(a.semaphores);
    bool fused = false;
    int one_round_ctas = 0;
    if (int st = Partial::launch(a, s.length, s.count, partials, counters ? &tail : nullptr, fused, one_round_ctas,
                                 stream))
      return st;
    if (fused) return CKS_OK;
    return launch_reduction<Cfg>(tail.epi, a, partials, ld, slice_stride, s.count, stream, pdl_mode(a.device),
                                 one_round_ctas);
  }
};

}  // namespace sm90
}  // namespace cks
