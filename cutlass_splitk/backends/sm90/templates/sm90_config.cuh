// cutlass-splitk sm90 backend: the configuration a generated unit chooses. GemmConfig is
// what the main loop needs (and all a partial GEMM depends on); VariantConfig adds the op's
// fused epilogue (the Cfg concept of FusedEpilogue: Element, kAlignment, kAct, kEOp, kBias,
// kPermute).
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/layout/matrix.h"

#include "cks_epilogue.cuh"

namespace cks {
namespace sm90 {

enum class Schedule { kCooperative, kPingpong };

template <class Element_, bool kBColumnMajor_, int kTileM, int kTileN, int kTileK, int kClusterM,
          int kClusterN, Schedule kSchedule_, int kStages_>
struct GemmConfig {
  using Element = Element_;
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = typename cutlass::platform::conditional<
      kBColumnMajor_, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>::type;
  using TileShape = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<kTileK>>;
  using ClusterShape = cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>;
  static constexpr int kTileRows = kTileM;
  static constexpr int kTileCols = kTileN;
  static constexpr bool kBColumnMajor = kBColumnMajor_;
  static constexpr bool kCooperative = kSchedule_ == Schedule::kCooperative;
  using KernelSchedule = typename cutlass::platform::conditional<
      kCooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
      cutlass::gemm::KernelTmaWarpSpecializedPingpong>::type;
  using EpilogueSchedule = typename cutlass::platform::conditional<
      kCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
      cutlass::epilogue::TmaWarpSpecialized>::type;
  static constexpr int kStages = kStages_;  // 0: as many as shared memory holds
  static constexpr int kAlignment = 8;     // TMA: 16-byte rows
};

template <class Gemm_, Act kAct_, EOp kEOp_, Bias kBias_, Permute kPermute_>
struct VariantConfig : Gemm_ {
  using Gemm = Gemm_;
  static constexpr Act kAct = kAct_;
  static constexpr EOp kEOp = kEOp_;
  static constexpr Bias kBias = kBias_;
  static constexpr Permute kPermute = kPermute_;
};

// The TMA + wgmma main loop, its stage count left to fill shared memory after the epilogue's
// kCarveout bytes unless the config fixes it.
template <class Gemm, int kCarveout>
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, typename Gemm::Element,
    typename Gemm::LayoutA, Gemm::kAlignment, typename Gemm::Element, typename Gemm::LayoutB,
    Gemm::kAlignment, float, typename Gemm::TileShape, typename Gemm::ClusterShape,
    typename cutlass::platform::conditional<
        Gemm::kStages == 0, cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
        cutlass::gemm::collective::StageCount<(Gemm::kStages > 0 ? Gemm::kStages : 1)>>::type,
    typename Gemm::KernelSchedule>::CollectiveOp;

}  // namespace sm90
}  // namespace cks
