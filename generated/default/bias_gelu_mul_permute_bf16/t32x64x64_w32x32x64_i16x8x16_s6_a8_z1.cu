// generated from configs/default.yaml by cutlass-splitk; do not edit
// op bias_gelu_mul_permute_bf16: t32x64x64_w32x32x64_i16x8x16_s6_a8_z1
#include "cks_sm80.cuh"

namespace {
using Config = cks::VariantConfig<
    cutlass::bfloat16_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<32, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/6, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213>;
}  // namespace

// bias_gelu_mul_permute_bf16_parallel_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::ParallelGemm<Config>::run(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_bf16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::guarded([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::guarded([&] { return cks::SerialGemm<Config>::run(*args, static_cast<cudaStream_t>(stream)); });
}

