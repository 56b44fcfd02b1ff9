// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// op leaky_add_permute_f16, sm80 groups: t64x64x64_w32x32x64_i16x8x16_s3_a8_z1
#include "cks_sm80.cuh"

// t64x64x64_w32x32x64_i16x8x16_s3_a8_z1
namespace group_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1 {
using Config = cks::VariantConfig<
    cutlass::half_t, /*B column-major=*/true,
    cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>,
    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/3, /*alignment=*/8,
    /*swizzle=*/1, cks::Act::kLeakyRelu, cks::EOp::kAdd, cks::Bias::kPerRow, cks::Permute::k0213>;

// leaky_add_permute_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1
extern "C" CKS_EXPORT int cks_leaky_add_permute_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_leaky_add_permute_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// leaky_add_permute_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1
extern "C" CKS_EXPORT int cks_leaky_add_permute_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::SerialGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_leaky_add_permute_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::SerialGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1
