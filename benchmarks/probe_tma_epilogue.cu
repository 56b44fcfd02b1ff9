// Probe (round 30, not part of the library): what CUTLASS's own TMA warp-specialized epilogue
// costs on the squares, against our register-direct FusedWarpEpilogue. The same main loop as
// the shipped in-kernel square tile (128x256x64, cooperative, 1x2 cluster, stage count from
// the carve-out) with three epilogues built from CUTLASS's visitor tree:
//   kind 0: D = acc                         (the GEMM alone, TMA store)
//   kind 1: D = gelu(acc + bias)            (bias per column, our GELU)
//   kind 2: D = gelu(acc + bias) * E        (E fed as CUTLASS's source C: TMA-loaded by the
//                                            epilogue's producer warp while the MMAs run)
//   kind 3: kind 1 through the library's own epilogue type (sm90_tma_epilogue.cuh's
//           TmaEpilogueConfig, as the library builds it); kinds 4 and 5: its tree with the compute
//           node branch-free, and without the C leaf (round 33: what made kind 3 slower)
// No permute (the chain's head split is a store this epilogue cannot express flat); D, E
// row-major M x N; A row-major M x K; B is the nn.Linear weight (N x K row-major).
// Build: nvcc -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a
//        -Xcompiler=-fPIC -shared -I<cutlass>/include
//        -Icutlass_splitk/templates -DPROBE_KIND=<k> -DPROBE_CLUSTER_M=<1|2> -o probe_<k>.so
//        (-DPROBE_STREAMK: CUTLASS's stream-K tile scheduler, data-parallel, as our serial split 1;
//         -DPROBE_STREAMK=2: the same scheduler in its own heuristic decomposition (stream-K where the
//         last wave is partial), as an untuned CUTLASS 3.x GEMM runs it; -DPROBE_CLUSTER_N=<1|2> with
//         PROBE_CLUSTER_M for 1x1 and 2x2 clusters; -DPROBE_PINGPONG: the ping-pong kernel, kind 0 only)
#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

#include "cks_activation.cuh"
#if PROBE_KIND >= 3
#include "cks_abi.h"
#include "sm90_tma_epilogue.cuh"
#endif

#ifndef PROBE_KIND
#define PROBE_KIND 2
#endif
#ifndef PROBE_CLUSTER_M
#define PROBE_CLUSTER_M 1
#endif
#ifndef PROBE_CLUSTER_N
#define PROBE_CLUSTER_N (3 - PROBE_CLUSTER_M)
#endif
#ifndef PROBE_TILE_M
#define PROBE_TILE_M 128
#endif
#ifndef PROBE_TILE_N
#define PROBE_TILE_N 256
#endif

using namespace cute;
using Element = cutlass::half_t;
using TileShape = Shape<Int<PROBE_TILE_M>, Int<PROBE_TILE_N>, _64>;
using ClusterShape = Shape<Int<PROBE_CLUSTER_M>, Int<PROBE_CLUSTER_N>, _1>;
constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;

template <class T>
struct CksGelu {
  CUTLASS_HOST_DEVICE float operator()(float x) const { return cks::activate<cks::Act::kGelu>(x, 0.f); }
  template <int N>
  CUTLASS_HOST_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& x) const {
    cutlass::Array<float, N> y;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) y[i] = cks::activate<cks::Act::kGelu>(x[i], 0.f);
    return y;
  }
};

namespace fusion = cutlass::epilogue::fusion;
using Bias = fusion::Sm90RowBroadcast<0, TileShape, Element, float, Stride<_0, _1, int64_t>, 8>;
using Linear = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::plus, float, float, kRound>, fusion::Sm90AccFetch, Bias>;
using Gelu = fusion::Sm90EVT<fusion::Sm90Compute<CksGelu, Element, float, kRound>, Linear>;
using GeluF = fusion::Sm90EVT<fusion::Sm90Compute<CksGelu, float, float, kRound>, Linear>;
using Chain = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::multiplies, Element, float, kRound>, GeluF,
                              fusion::Sm90SrcFetch<Element>>;
using Plain = fusion::LinearCombination<Element, float, void, float, kRound>;

#if PROBE_KIND >= 3  // kind 1 through the library's own TMA epilogue (sm90_tma_epilogue.cuh)
struct ProbeCfg {
  using Element = ::Element;
  using TileShape = ::TileShape;
  static constexpr int kTileRows = PROBE_TILE_M, kTileCols = PROBE_TILE_N, kAlignment = 8;
  static constexpr bool kCooperative = true, kBeta = false;
  static constexpr cks::Act kAct = cks::Act::kGelu;
  static constexpr cks::EOp kEOp = cks::EOp::kNone;
  static constexpr cks::Bias kBias = cks::Bias::kPerCol;
  static constexpr cks::Permute kPermute = cks::Permute::kNone;
};
using ElementC = void;
#elif PROBE_KIND == 0
using Fusion = Plain;
using ElementC = void;
#elif PROBE_KIND == 1
using Fusion = Gelu;
using ElementC = void;
#else
using Fusion = Chain;
using ElementC = Element;
#endif

#if PROBE_KIND == 3
using Epilogue = typename cks::sm90::TmaEpilogueConfig<ProbeCfg>::Collective;
#elif PROBE_KIND == 4 || PROBE_KIND == 5
// kind 4: the library's tree with a branch-free node (bias present, beta 0); kind 5: its node
// without the zero C input.
struct Scalars4 { float alpha = 1.f, beta = 0.f, act_arg = 0.f; bool bias = true; };
template <class T>
struct Fn4 {
  using Arguments = Scalars4;
  template <int N>
  CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& acc,
#if PROBE_KIND == 4
                                                     cutlass::Array<float, N> const&,
#endif
                                                     cutlass::Array<float, N> const& bias, Scalars4 const& s) const {
    cutlass::Array<float, N> v;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) {
#if PROBE_KIND == 4
      v[i] = cks::activate<cks::Act::kGelu>(fmaf(acc[i], s.alpha, bias[i]), s.act_arg);
#else
      float x = acc[i];
      if (!s.bias && s.beta == 0.f) {
        x *= s.alpha;
      } else {
        x = fmaf(x, s.alpha, s.bias ? bias[i] : 0.f);
      }
      v[i] = cks::activate<cks::Act::kGelu>(x, s.act_arg);
#endif
    }
    return v;
  }
};
using Fusion45 = fusion::Sm90EVT<fusion::Sm90Compute<Fn4, Element, float, kRound>, fusion::Sm90AccFetch,
#if PROBE_KIND == 4
                                 fusion::Sm90ScalarBroadcast<float>,
#endif
                                 Bias>;
using Epilogue = typename cutlass::epilogue::collective::detail::Sm90TmaBuilderImpl<
    TileShape, Shape<_128, _32>, float, float, void, cutlass::layout::RowMajor, 8, Element,
    cutlass::layout::RowMajor, 8, Fusion45, cutlass::epilogue::Sm90TmaWarpSpecialized<2, 2, 16, false, true>>::CollectiveOp;
#else
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, ElementC, cutlass::layout::RowMajor, 8,
    Element, cutlass::layout::RowMajor, 8,
#ifdef PROBE_PINGPONG
    cutlass::epilogue::TmaWarpSpecialized,
#else
    cutlass::epilogue::TmaWarpSpecializedCooperative,
#endif
    Fusion>::CollectiveOp;
#endif

using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, 8, Element,
    cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<int(sizeof(typename Epilogue::SharedStorage))>,
#ifdef PROBE_PINGPONG
    cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;
#else
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
#endif

#ifdef PROBE_STREAMK  // the stream-K scheduler in its data-parallel decomposition, as our serial split 1
using Scheduler = cutlass::gemm::StreamKScheduler;
#else
using Scheduler = cutlass::gemm::PersistentScheduler;
#endif
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, Scheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

extern "C" __attribute__((visibility("default"))) int probe_stages() { return Mainloop::DispatchPolicy::Stages; }

extern "C" __attribute__((visibility("default"))) int probe_smem() { return int(Kernel::SharedStorageSize); }

// Returns 0 on success, else a small error code. `workspace` must hold 64 MiB.
extern "C" __attribute__((visibility("default"))) int probe_run(int m, int n, int k, void const* a, void const* b,
                                                                void const* bias, void const* e, void* d,
                                                                void* workspace, int sms, cudaStream_t stream) {
  typename Gemm::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = {m, n, k, 1};
  args.mainloop.ptr_A = static_cast<Element const*>(a);
  args.mainloop.ptr_B = static_cast<Element const*>(b);
  cute::get<0>(args.mainloop.dA) = k;
  cute::get<0>(args.mainloop.dB) = k;
  args.epilogue.ptr_C = static_cast<ElementC const*>(e);
  cute::get<0>(args.epilogue.dC) = n;
  args.epilogue.ptr_D = static_cast<Element*>(d);
  cute::get<0>(args.epilogue.dD) = n;
#if PROBE_KIND == 0
  args.epilogue.thread.alpha = 1.f;
  args.epilogue.thread.beta = 0.f;
#elif PROBE_KIND == 1
  args.epilogue.thread = {{{}, {static_cast<Element const*>(bias), Element(0), {_0{}, _1{}, 0}}, {}}, {}};
#elif PROBE_KIND == 3 || PROBE_KIND == 4
  args.epilogue.thread.op_2.ptr_row = static_cast<Element const*>(bias);
  args.epilogue.thread.op_3.bias = true;
#elif PROBE_KIND == 5
  args.epilogue.thread.op_1.ptr_row = static_cast<Element const*>(bias);
  args.epilogue.thread.op_2.bias = true;
#else
  args.epilogue.thread = {{{{}, {static_cast<Element const*>(bias), Element(0), {_0{}, _1{}, 0}}, {}}, {}}, {}, {}};
#endif
#ifdef PROBE_STREAMK
  args.scheduler.splits = 1;
#if PROBE_STREAMK == 2
  args.scheduler.decomposition_mode = Kernel::TileScheduler::DecompositionMode::Heuristic;
#else
  args.scheduler.decomposition_mode = Kernel::TileScheduler::DecompositionMode::DataParallel;
#endif
  args.scheduler.reduction_mode = Kernel::TileScheduler::ReductionMode::Deterministic;
#endif
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = sms;
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return 1;
  if (Gemm::get_workspace_size(args) > (64 << 20)) return 2;
  if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return 3;
  if (gemm.run(stream) != cutlass::Status::kSuccess) return 4;
  return 0;
}
