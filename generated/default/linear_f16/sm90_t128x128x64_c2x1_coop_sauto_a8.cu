// generated from configs/default.yaml by cutlass-splitk; do not edit
// op linear_f16: sm90_t128x128x64_c2x1_coop_sauto_a8
#include "cks_sm90.cuh"

namespace {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 128, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kIdentity, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::kNone>;
}  // namespace

// linear_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_linear_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_linear_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::sm90::SplitKGemm<Config, false>::run(*args, static_cast<cudaStream_t>(stream)); });
}

// linear_f16_stream_k_sm90_t128x128x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_linear_f16_stream_k_sm90_t128x128x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::sm90::SplitKGemm<Config, true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_linear_f16_stream_k_sm90_t128x128x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::sm90::SplitKGemm<Config, true>::run(*args, static_cast<cudaStream_t>(stream)); });
}

