// A probe for tests/test_epilogue_ptx.py: parallel split-K's reduction kernel instantiated for
// the chain epilogue (GELU, * E, per-column bias, beta * C), compiled to PTX to check the order
// of its loads around the wait for the GEMM (griddepcontrol.wait).
#include "cks_abi.h"
#include "cks_reduction.cuh"

struct ProbeCfg {
  using Element = cutlass::half_t;
  static constexpr int kAlignment = 8;
  static constexpr cks::Act kAct = cks::Act::kGelu;
  static constexpr cks::EOp kEOp = cks::EOp::kMul;
  static constexpr cks::Bias kBias = cks::Bias::kPerCol;
  static constexpr cks::Permute kPermute = cks::Permute::kNone;
};

template __global__ void cks::reduce_epilogue_kernel<ProbeCfg>(cks::FusedEpilogue<ProbeCfg>::Params, float const*,
                                                               int64_t, int64_t, int);
