// generated from configs/default.yaml by cutlass-splitk; do not edit
// op bias_gelu_mul_permute_bf16, sm80 groups: t128x128x64_w64x64x64_i16x8x16_s4_a8_z1, t128x64x64_w64x32x64_i16x8x16_s6_a8_z1, t256x128x32_w64x64x32_i16x8x16_s3_a8_z1, t32x64x64_w32x32x64_i16x8x16_s6_a8_z1, t64x64x64_w32x32x64_i16x8x16_s7_a8_z1
#include "cks_sm80.cuh"

// t128x128x64_w64x64x64_i16x8x16_s4_a8_z1
namespace group_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1 {
using Config = cks::VariantConfig<
    cutlass::bfloat16_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<128, 128, 64>, cutlass::gemm::GemmShape<64, 64, 64>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/4, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213>;

// bias_gelu_mul_permute_bf16_parallel_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_bf16_serial_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::SerialGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_t128x128x64_w64x64x64_i16x8x16_s4_a8_z1

// t128x64x64_w64x32x64_i16x8x16_s6_a8_z1
namespace group_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1 {
using Config = cks::VariantConfig<
    cutlass::bfloat16_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<128, 64, 64>, cutlass::gemm::GemmShape<64, 32, 64>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/6, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213>;

// bias_gelu_mul_permute_bf16_parallel_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_bf16_serial_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::SerialGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_t128x64x64_w64x32x64_i16x8x16_s6_a8_z1

// t256x128x32_w64x64x32_i16x8x16_s3_a8_z1
namespace group_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1 {
using Config = cks::VariantConfig<
    cutlass::bfloat16_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<256, 128, 32>, cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/3, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213>;

// bias_gelu_mul_permute_bf16_parallel_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_bf16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::SerialGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1

// t32x64x64_w32x32x64_i16x8x16_s6_a8_z1
namespace group_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1 {
using Config = cks::VariantConfig<
    cutlass::bfloat16_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<32, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/6, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213>;

// bias_gelu_mul_permute_bf16_parallel_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_bf16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::SerialGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1

// t64x64x64_w32x32x64_i16x8x16_s7_a8_z1
namespace group_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1 {
using Config = cks::VariantConfig<
    cutlass::bfloat16_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/7, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213>;

// bias_gelu_mul_permute_bf16_parallel_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_parallel_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_bf16_serial_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_bf16_serial_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::SerialGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_t64x64x64_w32x32x64_i16x8x16_s7_a8_z1
