// generated from configs/default.yaml by cutlass-splitk; do not edit
// op linear_f16, sm90 groups: sm90_t64x64x64_c1x2_pp_sauto_a8
#include "cks_sm90.cuh"

// sm90_t64x64x64_c1x2_pp_sauto_a8
namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 64, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x64x64_c1x2_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kIdentity, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::kNone, /*beta=*/true>;

// linear_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8
extern "C" CKS_EXPORT int cks_linear_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_linear_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8
