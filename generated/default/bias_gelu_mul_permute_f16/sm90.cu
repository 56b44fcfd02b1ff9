// generated from configs/default.yaml by cutlass-splitk; do not edit
// op bias_gelu_mul_permute_f16, sm90 groups: sm90_t128x112x64_c1x2_coop_sauto_a8, sm90_t128x112x64_c2x1_coop_sauto_a8, sm90_t128x128x64_c1x1_coop_sauto_a8, sm90_t128x128x64_c1x2_coop_sauto_a8, sm90_t128x128x64_c2x1_coop_sauto_a8, sm90_t128x144x64_c2x1_coop_sauto_a8_swab, sm90_t128x176x64_c2x1_coop_sauto_a8_swab, sm90_t128x192x64_c2x1_coop_sauto_a8, sm90_t128x208x64_c2x1_coop_sauto_a8_swab, sm90_t128x256x64_c1x2_coop_sauto_a8, sm90_t128x256x64_c2x1_coop_sauto_a8, sm90_t128x64x64_c1x1_coop_sauto_a8, sm90_t128x80x64_c1x2_coop_sauto_a8_swab, sm90_t64x128x64_c1x2_pp_sauto_a8, sm90_t64x16x128_c1x1_pp_sauto_a8_swab, sm90_t64x32x128_c1x1_pp_sauto_a8, sm90_t64x64x64_c1x2_pp_sauto_a8
#include "cks_sm90.cuh"

// sm90_t128x112x64_c1x2_coop_sauto_a8
namespace group_sm90_t128x112x64_c1x2_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 112, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x112x64_c1x2_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x112x64_c1x2_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x112x64_c1x2_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x112x64_c1x2_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x112x64_c1x2_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x112x64_c1x2_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x112x64_c1x2_coop_sauto_a8

// sm90_t128x112x64_c2x1_coop_sauto_a8
namespace group_sm90_t128x112x64_c2x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 112, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x112x64_c2x1_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x112x64_c2x1_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x112x64_c2x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x112x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x112x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x112x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x112x64_c2x1_coop_sauto_a8

// sm90_t128x128x64_c1x1_coop_sauto_a8
namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 128, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x128x64_c1x1_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8

// sm90_t128x128x64_c1x2_coop_sauto_a8
namespace group_sm90_t128x128x64_c1x2_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 128, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x128x64_c1x2_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x128x64_c1x2_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x128x64_c1x2_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x128x64_c1x2_coop_sauto_a8

// sm90_t128x128x64_c2x1_coop_sauto_a8
namespace group_sm90_t128x128x64_c2x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 128, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x128x64_c2x1_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x128x64_c2x1_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x128x64_c2x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// bias_gelu_mul_permute_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x128x64_c2x1_coop_sauto_a8

// sm90_t128x144x64_c2x1_coop_sauto_a8_swab
namespace group_sm90_t128x144x64_c2x1_coop_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 144, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t128x144x64_c2x1_coop_sauto_a8_swab
extern template struct cks::sm90::PartialGemm<group_sm90_t128x144x64_c2x1_coop_sauto_a8_swab::Gemm>;  // defined in its own unit
namespace group_sm90_t128x144x64_c2x1_coop_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x144x64_c2x1_coop_sauto_a8_swab
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x144x64_c2x1_coop_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x144x64_c2x1_coop_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x144x64_c2x1_coop_sauto_a8_swab

// sm90_t128x176x64_c2x1_coop_sauto_a8_swab
namespace group_sm90_t128x176x64_c2x1_coop_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 176, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t128x176x64_c2x1_coop_sauto_a8_swab
extern template struct cks::sm90::PartialGemm<group_sm90_t128x176x64_c2x1_coop_sauto_a8_swab::Gemm>;  // defined in its own unit
namespace group_sm90_t128x176x64_c2x1_coop_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x176x64_c2x1_coop_sauto_a8_swab
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x176x64_c2x1_coop_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x176x64_c2x1_coop_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x176x64_c2x1_coop_sauto_a8_swab

// sm90_t128x192x64_c2x1_coop_sauto_a8
namespace group_sm90_t128x192x64_c2x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 192, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x192x64_c2x1_coop_sauto_a8
namespace group_sm90_t128x192x64_c2x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_serial_sm90_t128x192x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x192x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x192x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x192x64_c2x1_coop_sauto_a8

// sm90_t128x208x64_c2x1_coop_sauto_a8_swab
namespace group_sm90_t128x208x64_c2x1_coop_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 208, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t128x208x64_c2x1_coop_sauto_a8_swab
extern template struct cks::sm90::PartialGemm<group_sm90_t128x208x64_c2x1_coop_sauto_a8_swab::Gemm>;  // defined in its own unit
namespace group_sm90_t128x208x64_c2x1_coop_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x208x64_c2x1_coop_sauto_a8_swab
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x208x64_c2x1_coop_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x208x64_c2x1_coop_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x208x64_c2x1_coop_sauto_a8_swab

// sm90_t128x256x64_c1x2_coop_sauto_a8
namespace group_sm90_t128x256x64_c1x2_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 256, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x256x64_c1x2_coop_sauto_a8
namespace group_sm90_t128x256x64_c1x2_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_serial_sm90_t128x256x64_c1x2_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x256x64_c1x2_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x256x64_c1x2_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x256x64_c1x2_coop_sauto_a8

// sm90_t128x256x64_c2x1_coop_sauto_a8
namespace group_sm90_t128x256x64_c2x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 256, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x256x64_c2x1_coop_sauto_a8
namespace group_sm90_t128x256x64_c2x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_serial_sm90_t128x256x64_c2x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x256x64_c2x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x256x64_c2x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x256x64_c2x1_coop_sauto_a8

// sm90_t128x64x64_c1x1_coop_sauto_a8
namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 64, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8
namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8

// sm90_t128x80x64_c1x2_coop_sauto_a8_swab
namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 80, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kCooperative, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab
extern template struct cks::sm90::PartialGemm<group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab::Gemm>;  // defined in its own unit
namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t128x80x64_c1x2_coop_sauto_a8_swab
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x80x64_c1x2_coop_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t128x80x64_c1x2_coop_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab

// sm90_t64x128x64_c1x2_pp_sauto_a8
namespace group_sm90_t64x128x64_c1x2_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 128, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x128x64_c1x2_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x128x64_c1x2_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x128x64_c1x2_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x128x64_c1x2_pp_sauto_a8

// sm90_t64x16x128_c1x1_pp_sauto_a8_swab
namespace group_sm90_t64x16x128_c1x1_pp_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 16, 128,
    /*cluster=*/1, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t64x16x128_c1x1_pp_sauto_a8_swab
extern template struct cks::sm90::PartialGemm<group_sm90_t64x16x128_c1x1_pp_sauto_a8_swab::Gemm>;  // defined in its own unit
namespace group_sm90_t64x16x128_c1x1_pp_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x16x128_c1x1_pp_sauto_a8_swab

// sm90_t64x32x128_c1x1_pp_sauto_a8
namespace group_sm90_t64x32x128_c1x1_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 32, 128,
    /*cluster=*/1, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x32x128_c1x1_pp_sauto_a8
namespace group_sm90_t64x32x128_c1x1_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_serial_sm90_t64x32x128_c1x1_pp_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t64x32x128_c1x1_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_serial_sm90_t64x32x128_c1x1_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x32x128_c1x1_pp_sauto_a8

// sm90_t64x64x64_c1x2_pp_sauto_a8
namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 64, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x64x64_c1x2_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// bias_gelu_mul_permute_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_bias_gelu_mul_permute_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x64x64_c1x2_pp_sauto_a8
