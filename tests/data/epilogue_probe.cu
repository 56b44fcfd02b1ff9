// Probe kernels for tests/test_epilogue_ptx.py, compiled to PTX: the shared fused epilogue's
// whole path for one vector of 8 half-precision outputs (GELU, * E, per-column bias, the output
// permute chosen by -DPROBE_PERMUTE), to check how D is stored; with -DPROBE_REDUCTION, parallel
// split-K's reduction kernel for the same epilogue instead, to check the order of its loads
// around the wait for the GEMM (griddepcontrol.wait); with -DPROBE_RUNTIME, the epilogue whose kind
// is read from its parameters (RuntimeKind: sm90's partial GEMM with the reduction inside).
#include "cks_abi.h"
#include "cks_reduction.cuh"

struct ProbeCfg {
  using Element = cutlass::half_t;
  static constexpr int kAlignment = 8;
  static constexpr cks::Act kAct = cks::Act::kGelu;
  static constexpr cks::EOp kEOp = cks::EOp::kMul;
  static constexpr cks::Bias kBias = cks::Bias::kPerCol;
  static constexpr cks::Permute kPermute = cks::Permute::PROBE_PERMUTE;
};

#ifdef PROBE_REDUCTION
template __global__ void cks::reduce_epilogue_kernel<ProbeCfg>(cks::FusedEpilogue<ProbeCfg>::Params, float const*,
                                                               int64_t, int64_t, int);
#elif defined(PROBE_RUNTIME)
__global__ void store_probe(cks::EpilogueParams<cutlass::half_t> p, float const* acc) {
  using Epi = cks::FusedEpilogue<cks::RuntimeKind<cutlass::half_t>>;
  typename Epi::Vec v;
  for (int i = 0; i < 8; ++i) v[i] = acc[threadIdx.x * 8 + i];
  Epi::apply_and_store(p, blockIdx.x, threadIdx.x * 8, v);
}
#else
__global__ void store_probe(cks::EpilogueParams<cutlass::half_t> p, float const* acc) {
  using Epi = cks::FusedEpilogue<ProbeCfg>;
  typename Epi::Vec v;
  for (int i = 0; i < 8; ++i) v[i] = acc[threadIdx.x * 8 + i];
  Epi::apply_and_store(p, blockIdx.x, threadIdx.x * 8, v);
}
#endif
