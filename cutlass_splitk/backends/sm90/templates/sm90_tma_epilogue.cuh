// cutlass-splitk sm90 backend: the in-kernel modes' epilogue for ops without E and without a
// permuted store, on CUTLASS's TMA warp-specialized collective epilogue. CUTLASS brings C (where
// beta != 0) into shared memory with TMA from the epilogue's load warp while the MMAs run,
// applies a visitor tree to the accumulator fragments in registers and writes D through shared
// memory with TMA stores that complete while the next tile's main loop runs. The tree's one
// compute node is FusedEpilogue's linear part and activation, written out here per value with
// the same operations in the same order (the same bits as the parallel reduction's epilogue).
//
// Measured on the H100 (BENCHMARKS.md, session 20, round 30): against FusedWarpEpilogue on the
// same 128x256 main loop, CUTLASS's epilogue issued 14.4 M warp instructions for a whole plain
// 8192 x 8192 x 512 GEMM where ours issued 34.5 M (~9.5 thread instructions per output of
// staging and addressing), 20-30 % faster where the epilogue weighs (short K, large M*N).
//
// Its shared memory stays within FusedWarpEpilogue's (static_assert below), so the main loop keeps
// the stage count sm90's rules (rules.py) compute for every in-kernel variant.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"

#include "cks_activation.cuh"
#include "cks_epilogue.cuh"
#include "sm90_epilogue.cuh"

namespace cks {
namespace sm90 {

namespace fusion = cutlass::epilogue::fusion;

// Whether an op's in-kernel modes take this epilogue: no E and no permuted store.
template <class Cfg>
constexpr bool kTmaEpilogue = Cfg::kEOp == EOp::kNone && Cfg::kPermute == Permute::kNone;

// The call's scalars (the compute node's arguments).
struct TmaScalars {
  float alpha = 1.f, beta = 0.f, act_arg = 0.f;
  bool bias = false;  // a bias was given at call time
};

// alpha * acc + beta * C + bias, then the activation: FusedEpilogue::add_linear and finish_with
// (without E), value by value, the call's case (bias given or not, beta zero or not) chosen once
// per fragment: tested value by value, the node ran 25 % slower on 8192 x 8192 x 512 (round 33).
// `c` is only read where beta != 0 (C is only loaded then); kBeta: the op takes C at all.
template <Act kAct, bool kBeta, bool kBias>
struct TmaLinearAct {
  template <class T>
  struct Fn {
    using Arguments = TmaScalars;
    template <int N>
    CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& acc,
                                                       cutlass::Array<float, N> const& c,
                                                       cutlass::Array<float, N> const& bias,
                                                       TmaScalars const& s) const {
      cutlass::Array<float, N> v;
      bool const with_c = kBeta && s.beta != 0.f;
      if (kBias && s.bias) {
        if (with_c) {
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < N; ++i) v[i] = activate<kAct>(fmaf(acc[i], s.alpha, fmaf(s.beta, c[i], bias[i])), s.act_arg);
        } else {
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < N; ++i) v[i] = activate<kAct>(fmaf(acc[i], s.alpha, bias[i]), s.act_arg);
        }
      } else if (with_c) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i) v[i] = activate<kAct>(fmaf(acc[i], s.alpha, s.beta * c[i]), s.act_arg);
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i) v[i] = activate<kAct>(acc[i] * s.alpha, s.act_arg);
      }
      return v;
    }
  };
};

// CUTLASS's source fetch, loaded only where the call's beta is non-zero (C may then be absent).
template <class Element>
struct SourceWhereNeeded : fusion::Sm90SrcFetch<Element> {
  struct SharedStorage {};
  struct Arguments {
    bool needed = false;
  };
  using Params = Arguments;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }

  CUTLASS_HOST_DEVICE SourceWhereNeeded() {}
  CUTLASS_HOST_DEVICE SourceWhereNeeded(Params const& params, SharedStorage const&) : needed_(params.needed) {}

  CUTLASS_DEVICE bool is_producer_load_needed() const { return needed_; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return needed_; }
  CUTLASS_DEVICE bool is_zero() const { return !needed_; }

  bool needed_ = false;
};

template <class Cfg>
struct TmaEpilogueConfig {
  using Element = typename Cfg::Element;
  using TileShape = typename Cfg::TileShape;
  static constexpr bool kBeta = Cfg::kBeta;
  // CUTLASS's automatic epilogue tile: 128 (cooperative) or 64 (ping-pong) rows by 32 columns.
  using EpilogueTile = cute::Shape<cute::Int<cute::min(Cfg::kCooperative ? 128 : 64, Cfg::kTileRows)>, cute::_32>;
  static constexpr int kEpiTiles = Cfg::kTileRows * Cfg::kTileCols / (cute::size<0>(EpilogueTile{}) * 32);
  static constexpr int kFragment = cute::size<0>(EpilogueTile{}) * 32 / (Cfg::kCooperative ? 256 : 128);
  // Without C: CUTLASS's own stages (two D buffers, the store's wait delayed). With C: C's buffers
  // hold D too; two of them (CUTLASS would take four, more than FusedWarpEpilogue's footprint).
  using Policy = typename cutlass::platform::conditional<
      kBeta, cutlass::epilogue::Sm90TmaWarpSpecialized<2, 1, kFragment, true, false>,
      cutlass::epilogue::Sm90TmaWarpSpecialized<2, cute::min(kEpiTiles, 2), kFragment, false, true>>::type;
  using ElementC = typename cutlass::platform::conditional<kBeta, Element, void>::type;

  using Accumulator = fusion::Sm90AccFetch;
  using Zero = fusion::Sm90ScalarBroadcast<float>;
  using Source = typename cutlass::platform::conditional<kBeta, SourceWhereNeeded<Element>, Zero>::type;
  using BiasNode = typename cutlass::platform::conditional<
      Cfg::kBias == Bias::kPerCol,
      fusion::Sm90RowBroadcast<0, TileShape, Element, float, cute::Stride<cute::_0, cute::_1, int64_t>, 8>,
      typename cutlass::platform::conditional<
          Cfg::kBias == Bias::kPerRow,
          fusion::Sm90ColBroadcast<0, TileShape, Element, float, cute::Stride<cute::_1, cute::_0, int64_t>, 1>,
          Zero>::type>::type;
  using Fusion = fusion::Sm90EVT<
      fusion::Sm90Compute<TmaLinearAct<Cfg::kAct, kBeta, Cfg::kBias != Bias::kNone>::template Fn, Element, float,
                          cutlass::FloatRoundStyle::round_to_nearest>,
      Accumulator, Source, BiasNode>;

  using Collective = typename cutlass::epilogue::collective::detail::Sm90TmaBuilderImpl<
      TileShape, EpilogueTile, float, float, ElementC, cutlass::layout::RowMajor, 8, Element,
      cutlass::layout::RowMajor, 8, Fusion, Policy>::CollectiveOp;

  static_assert(sizeof(typename Collective::SharedStorage) <= sizeof(typename FusedWarpEpilogue<Cfg>::SharedStorage),
                "the TMA epilogue must fit the shared memory the stage rule leaves FusedWarpEpilogue");

  // The collective's arguments for one call (checked by prepare: C, D and the bias aligned to 16
  // bytes with strides of whole vectors).
  template <class EpilogueArguments>
  static void fill(EpilogueArguments& e, CksArgs const& a) {
    Element* d = static_cast<Element*>(a.d);
    if constexpr (kBeta) {
      bool const source = a.beta != 0.f;
      // Without C (beta = 0) the descriptor still needs a tensor: D's, never read.
      e.ptr_C = source ? static_cast<Element const*>(a.c) : d;
      cute::get<0>(e.dC) = source ? a.ldc : a.ldd;
      e.thread.op_1.needed = source;
    }
    e.ptr_D = d;
    cute::get<0>(e.dD) = a.ldd;
    Element const* bias = static_cast<Element const*>(a.bias);
    if constexpr (Cfg::kBias == Bias::kPerCol) {
      e.thread.op_2.ptr_row = bias;
    } else if constexpr (Cfg::kBias == Bias::kPerRow) {
      e.thread.op_2.ptr_col = bias;
    }
    TmaScalars& s = e.thread.op_3;
    s.alpha = a.alpha;
    s.beta = kBeta ? a.beta : 0.f;
    s.act_arg = a.act_arg;
    s.bias = Cfg::kBias != Bias::kNone && bias != nullptr;
  }
};

}  // namespace sm90
}  // namespace cks
