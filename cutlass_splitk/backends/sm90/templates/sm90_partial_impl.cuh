// cutlass-splitk sm90 backend: the definition of PartialGemm::launch (included by the
// partial GEMM's own translation unit only; see sm90_partial.cuh).
#pragma once

// CUTLASS's warp-specialized kernels then execute griddepcontrol.launch_dependents as each CTA
// reaches its last tile's epilogue, so the reduction (launched with PDL, cks_reduction.cuh) is
// scheduled before the partial GEMM's CTAs exit; it still waits for the whole grid before reading
// the partials. Round 27 (H100, BENCHMARKS.md session 18): 1-4 % on the skinny picks, mostly in
// graph replays. This unit only: with it, CUTLASS 4.2's stream-K scheduler (the in-kernel modes)
// does not compile.
#ifndef CUTLASS_ENABLE_GDC_FOR_SM90
#define CUTLASS_ENABLE_GDC_FOR_SM90 1
#endif

#include "sm90_driver.cuh"

#include <cstring>

#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "sm90_cutlass_gemm.cuh"  // GemmUniversal (sm90 kernels only)
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

#include "cks_plan_cache.cuh"
#include "sm90_config.cuh"
#include "sm90_gpc_scheduler.cuh"
#include "sm90_launch.cuh"
#include "sm90_partial.cuh"

namespace cks {
namespace sm90 {

template <class Gemm>
struct PartialKernel {
  static constexpr int kAlign = PartialGemm<Gemm>::kPartialAlign;
  // The op's partial is row-major (M x ld); a swapped kernel's output (N x M) is its transpose.
  using LayoutD = typename cutlass::platform::conditional<Gemm::kSwapAB, cutlass::layout::ColumnMajor,
                                                          cutlass::layout::RowMajor>::type;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, typename Gemm::TileShape,
      typename Gemm::ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto, float, float, void,
      LayoutD, kAlign, float, LayoutD, kAlign, typename Gemm::EpilogueSchedule>::CollectiveOp;
  // Batch l of the kernel's problem (M, N, slice, slices) is the K slice l (sm90_mainloop.cuh's kSliced);
  // the units in the GPC order where they run in one round (sm90_gpc_scheduler.cuh).
  using Kernel = cutlass::gemm::kernel::GemmUniversal<
      cute::Shape<int, int, int, int>, Mainloop<Gemm, int(sizeof(typename Epilogue::SharedStorage)), true>,
      Epilogue, GpcOrderTag<typename Gemm::Element, Gemm::kSwapAB>>;
  static constexpr int kClusterSize = cute::size(typename Gemm::ClusterShape{});
  // Units a CTA runs at once: the ping-pong kernel's two consumer warpgroups take one each.
  static constexpr int kUnitsPerCta = Gemm::kCooperative ? 1 : 2;
};

// What names a partial launch: the call's argument block, its slices, the device's placement and
// the tail's mode (the tail's epilogue is a function of the argument block).
struct PartialKey {
  CksArgs args;
  int32_t k, batches;
  float* partials;
  uint32_t placement_epoch;
  int32_t tail;
};

template <class Gemm>
int PartialGemm<Gemm>::launch(CksArgs const& a, int k, int batches, float* partials, Tail const* tail, bool& fused,
                              int& one_round_ctas, cudaStream_t stream) {
  using Kernel = typename PartialKernel<Gemm>::Kernel;
  using Element = typename Gemm::Element;
  struct Plan {
    typename Kernel::Params params;
    bool fused;
    int one_round_ctas;
  };
  static auto& plans = *new PlanCache<PartialKey, Plan>();  // never destroyed
  TailMode const mode = tail != nullptr ? tail->mode : TailMode::kOff;
  PartialKey key;
  std::memset(&key, 0, sizeof(key));  // the key is compared as bytes, padding included
  key.args = a;
  key.k = k;
  key.batches = batches;
  key.partials = partials;
  key.placement_epoch = placement_epoch(a.device);
  key.tail = int32_t(mode);
  Plan plan;
  auto run = [&]() {
    fused = plan.fused;
    one_round_ctas = plan.one_round_ctas;
    return sm90::launch<Kernel>(plan.params, a.device, stream, "sm90 partial GEMM launch",
                                plan.fused && mode == TailMode::kOn);
  };
  if (plans.find(key, plan)) return run();
  typename Kernel::Params& params = plan.params;
  int64_t const ld = partial_ld(a.n);
  typename Kernel::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kBatched;
  // The batch strides (the next K slice) satisfy can_implement; the descriptors span all of K instead.
  set_operands<Gemm>(args, a, k, batches, k, Gemm::kBColumnMajor ? int64_t(k) : int64_t(k) * a.ldb);
  // D: the op's row-major partial (M x ld per slice), column-major N x M to a swapped kernel.
  cute::get<Gemm::kSwapAB ? 1 : 0>(args.epilogue.dD) = ld;
  args.epilogue.thread.alpha = 1.f;
  args.epilogue.thread.beta = 0.f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.ptr_D = partials;
  cute::get<2>(args.epilogue.dD) = int64_t(a.m) * ld;
  args.epilogue.dC = args.epilogue.dD;
  args.mainloop.k_total = a.k;
  args.hw_info = hardware<Kernel>(a.device);
  if (Kernel::can_implement(args) == false)
    return fail(CKS_ERROR_INVALID_PROBLEM, "CUTLASS cannot run this partial GEMM (can_implement)");
  {
    MainloopPromotion<Gemm> promotion;
    params = Kernel::to_underlying_arguments(args, nullptr);
  }
  set_l2_policy<Gemm, Kernel>(params, a);
  dim3 const grid = Kernel::get_grid_shape(params);
  int const clusters = int(grid.x * grid.y * grid.z) / PartialKernel<Gemm>::kClusterSize;
  using Scheduler = typename Kernel::TileScheduler;
  Scheduler::set_order(params.scheduler, clusters, placement(a.device, PartialKernel<Gemm>::kClusterSize));
  // The tail where every unit runs in the first round (all resident at once), else none.
  bool const one_round = Scheduler::units(params.scheduler) <= int64_t(clusters) * PartialKernel<Gemm>::kUnitsPerCta;
  plan.fused = mode != TailMode::kOff && one_round;
  plan.one_round_ctas = one_round ? int(grid.x * grid.y * grid.z) : 0;
  if (plan.fused) {
    TailParams<Element>& t = params.scheduler.tail;
    t.slices = batches;
    t.tiles_r = tiles(a.m, Gemm::kTileRows);
    t.tiles_c = tiles(a.n, Gemm::kTileCols);
    t.counters = tail->counters;
    t.partials = partials;
    t.ld = ld;
    t.slice_stride = int64_t(a.m) * ld;
    t.epi = tail->epi;
  }
  plans.insert(key, plan);
  return run();
}

}  // namespace sm90
}  // namespace cks
