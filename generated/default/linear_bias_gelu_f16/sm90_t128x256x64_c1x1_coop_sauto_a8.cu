// generated from configs/default.yaml by cutlass-splitk; do not edit
// op linear_bias_gelu_f16: sm90_t128x256x64_c1x1_coop_sauto_a8
#include "cks_sm90.cuh"

namespace {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 256, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::kNone>;
}  // namespace
extern template struct cks::sm90::PartialGemm<Gemm>;  // defined in its own unit

// linear_bias_gelu_f16_parallel_sm90_t128x256x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_linear_bias_gelu_f16_parallel_sm90_t128x256x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_linear_bias_gelu_f16_parallel_sm90_t128x256x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::sm90::ParallelGemm<Config>::run(*args, static_cast<cudaStream_t>(stream)); });
}

