// cutlass-splitk sm90 backend: the configuration a generated unit chooses. GemmConfig is
// what the main loop needs (and all a partial GEMM depends on); VariantConfig adds the op's
// fused epilogue (the Cfg concept of FusedEpilogue: Element, kAlignment, kAct, kEOp, kBias,
// kPermute; and kBeta, whether the op reads C, for the TMA epilogue).
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "sm90_cutlass_gemm.cuh"  // the collective builder (sm90 only)
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/layout/matrix.h"

#include "cks_epilogue.cuh"
#include "sm90_mainloop.cuh"
#include "sm90_tma_promotion.cuh"
#include "sm90_wide_mma.cuh"

namespace cks {
namespace sm90 {

enum class Schedule { kCooperative, kPingpong };

// Shared memory one sm_90 block can have (rules.py's SMEM_LIMIT).
constexpr int kSmemLimit = 232448;

// kSwapAB_: the kernel computes the transposed product D^T = B^T A^T (its A is the op's B, its B
// the op's A), so that a small M runs along the wgmma instruction's N (16 or 32 wide) instead of
// filling most of a 64-row A box with rows past the matrix's edge. TileShape and ClusterShape
// are the kernel's: with kSwapAB_, their first mode runs along the op's N. Every mode: the partial GEMM
// stores its transposed tile column-major (the op's row-major partial), the in-kernel modes' TMA epilogue
// C, D and E (sm90_tma_epilogue.cuh).
template <class Element_, bool kBColumnMajor_, int kTileM, int kTileN, int kTileK, int kClusterM,
          int kClusterN, Schedule kSchedule_, int kStages_, bool kSwapAB_ = false>
struct GemmConfig {
  using Element = Element_;
  static constexpr bool kSwapAB = kSwapAB_;
  // The kernel's operands: the op's A (M x K, row-major) and B (K x N: column-major for TN),
  // exchanged under kSwapAB (the op's B as an N x K matrix; the op's A as K x M, column-major).
  using LayoutOpB = typename cutlass::platform::conditional<
      kBColumnMajor_, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>::type;
  using LayoutA = typename cutlass::platform::conditional<
      kSwapAB_,
      typename cutlass::platform::conditional<kBColumnMajor_, cutlass::layout::RowMajor,
                                              cutlass::layout::ColumnMajor>::type,
      cutlass::layout::RowMajor>::type;
  using LayoutB =
      typename cutlass::platform::conditional<kSwapAB_, cutlass::layout::ColumnMajor, LayoutOpB>::type;
  using TileShape = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<kTileK>>;
  using ClusterShape = cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>;
  // The tile over the op's output: rows along M, columns along N.
  static constexpr int kTileRows = kSwapAB_ ? kTileN : kTileM;
  static constexpr int kTileCols = kSwapAB_ ? kTileM : kTileN;
  static constexpr bool kBColumnMajor = kBColumnMajor_;
  static constexpr bool kCooperative = kSchedule_ == Schedule::kCooperative;
  using KernelSchedule = typename cutlass::platform::conditional<
      kCooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
      cutlass::gemm::KernelTmaWarpSpecializedPingpong>::type;
  using EpilogueSchedule = typename cutlass::platform::conditional<
      kCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
      cutlass::epilogue::TmaWarpSpecialized>::type;
  static constexpr int kTileDepth = kTileK;  // K
  static constexpr int kStages = kStages_;  // 0: as many as shared memory holds
  static constexpr int kAlignment = 8;     // TMA: 16-byte rows
};

template <class Gemm_, Act kAct_, EOp kEOp_, Bias kBias_, Permute kPermute_, bool kBeta_>
struct VariantConfig : Gemm_ {
  using Gemm = Gemm_;
  static constexpr bool kBeta = kBeta_;  // the op takes beta * C
  static constexpr Act kAct = kAct_;
  static constexpr EOp kEOp = kEOp_;
  static constexpr Bias kBias = kBias_;
  static constexpr Permute kPermute = kPermute_;
};

// The TMA + wgmma main loop, its stage count left to fill shared memory after the epilogue's
// kCarveout bytes unless the config fixes it; the weight streamed with EVICT_FIRST where it is
// read once; kSliced: K slices as batches of one launch (sm90_mainloop.cuh); one wgmma across the
// tile N whatever its width (sm90_wide_mma.cuh).
template <class Gemm, int kCarveout, bool kSliced = false>
using Mainloop = StreamingMainloop<
    typename FullWidthMma<typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, typename Gemm::Element, typename Gemm::LayoutA,
        Gemm::kAlignment, typename Gemm::Element, typename Gemm::LayoutB, Gemm::kAlignment, float,
        typename Gemm::TileShape, typename Gemm::ClusterShape,
        typename cutlass::platform::conditional<
            Gemm::kStages == 0, cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
            cutlass::gemm::collective::StageCount<(Gemm::kStages > 0 ? Gemm::kStages : 1)>>::type,
        typename Gemm::KernelSchedule>::CollectiveOp>::type,
    Gemm::kSwapAB, kSliced>;

// Around a kernel's to_underlying_arguments: its main loop's descriptors take the 256-byte L2
// promotion (sm90_tma_promotion.cuh's rule) if its K tile is 64 deep.
template <class Gemm>
struct MainloopPromotion : TmaPromotionScope {
  MainloopPromotion() : TmaPromotionScope(Gemm::kTileDepth == 64) {}
};

}  // namespace sm90
}  // namespace cks
