// generated from configs/default.yaml by cutlass-splitk; do not edit
// op linear_bias_gelu_f16: t256x128x32_w64x64x32_i16x8x16_s3_a8_z1
#include "cks_sm80.cuh"

namespace {
using Config = cks::VariantConfig<
    cutlass::half_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<256, 128, 32>, cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/3, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::kNone>;
}  // namespace

// linear_bias_gelu_f16_parallel_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1
extern "C" CKS_EXPORT int cks_linear_bias_gelu_f16_parallel_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_linear_bias_gelu_f16_parallel_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::ParallelGemm<Config>::run(*args, static_cast<cudaStream_t>(stream)); });
}

// linear_bias_gelu_f16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1
extern "C" CKS_EXPORT int cks_linear_bias_gelu_f16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_linear_bias_gelu_f16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::SerialGemm<Config>::run(*args, static_cast<cudaStream_t>(stream)); });
}

