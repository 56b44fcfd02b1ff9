// A probe kernel for tests/test_epilogue_ptx.py: the shared fused epilogue's whole path for one
// vector of 8 half-precision outputs (GELU, * E, per-column bias, the output permute chosen by
// -DPROBE_PERMUTE), compiled to PTX to check how D is stored.
#include "cks_abi.h"
#include "cks_epilogue.cuh"

struct ProbeCfg {
  using Element = cutlass::half_t;
  static constexpr int kAlignment = 8;
  static constexpr cks::Act kAct = cks::Act::kGelu;
  static constexpr cks::EOp kEOp = cks::EOp::kMul;
  static constexpr cks::Bias kBias = cks::Bias::kPerCol;
  static constexpr cks::Permute kPermute = cks::Permute::PROBE_PERMUTE;
};

__global__ void store_probe(cks::EpilogueParams<cutlass::half_t> p, float const* acc) {
  using Epi = cks::FusedEpilogue<ProbeCfg>;
  typename Epi::Vec v;
  for (int i = 0; i < 8; ++i) v[i] = acc[threadIdx.x * 8 + i];
  Epi::apply_and_store(p, blockIdx.x, threadIdx.x * 8, v);
}
