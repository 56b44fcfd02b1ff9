// cutlass-splitk sm80 backend: the variant configuration, the only thing a generated group
// unit chooses (group.cu.in instantiates it).
#pragma once

#include "cutlass/cutlass.h"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/threadblock/threadblock_swizzle.h"
#include "cutlass/layout/matrix.h"

#include "cks_epilogue.cuh"

namespace cks {

template <class Element_, bool kBColumnMajor_, class ThreadblockShape_, class WarpShape_,
          class InstructionShape_, int kStages_, int kAlignment_, int kSwizzle_, Act kAct_,
          EOp kEOp_, Bias kBias_, Permute kPermute_>
struct VariantConfig {
  using Element = Element_;
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = typename cutlass::platform::conditional<
      kBColumnMajor_, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>::type;
  using ThreadblockShape = ThreadblockShape_;
  using WarpShape = WarpShape_;
  using InstructionShape = InstructionShape_;
  using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<kSwizzle_>;
  static bool const kBColumnMajor = kBColumnMajor_;
  static int const kStages = kStages_;
  static int const kAlignment = kAlignment_;  // elements per access for A, B, C, D, E
  static Act const kAct = kAct_;
  static EOp const kEOp = kEOp_;
  static Bias const kBias = kBias_;
  static Permute const kPermute = kPermute_;
};

}  // namespace cks
