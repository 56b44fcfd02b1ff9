// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// op rowbias_leaky_f16, sm90 groups: sm90_t128x64x64_c1x1_coop_sauto_a8, sm90_t64x128x64_c1x1_pp_sauto_a8, sm90_t64x128x64_c1x4_pp_sauto_a8, sm90_t64x128x64_c4x2_pp_sauto_a8
#include "cks_sm90.cuh"

// sm90_t128x64x64_c1x1_coop_sauto_a8
namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 64, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x64x64_c1x1_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kLeakyRelu, cks::EOp::kNone, cks::Bias::kPerRow, cks::Permute::kNone, /*beta=*/true>;

// rowbias_leaky_f16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// rowbias_leaky_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false>>(*args, static_cast<cudaStream_t>(stream)); });
}

// rowbias_leaky_f16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8

// sm90_t64x128x64_c1x1_pp_sauto_a8
namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 128, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x128x64_c1x1_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kLeakyRelu, cks::EOp::kNone, cks::Bias::kPerRow, cks::Permute::kNone, /*beta=*/true>;

// rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// rowbias_leaky_f16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8

// sm90_t64x128x64_c1x4_pp_sauto_a8
namespace group_sm90_t64x128x64_c1x4_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 128, 64,
    /*cluster=*/1, 4, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x128x64_c1x4_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x128x64_c1x4_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x128x64_c1x4_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kLeakyRelu, cks::EOp::kNone, cks::Bias::kPerRow, cks::Permute::kNone, /*beta=*/true>;

// rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x4_pp_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x4_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x4_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// rowbias_leaky_f16_serial_sm90_t64x128x64_c1x4_pp_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t64x128x64_c1x4_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t64x128x64_c1x4_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x128x64_c1x4_pp_sauto_a8

// sm90_t64x128x64_c4x2_pp_sauto_a8
namespace group_sm90_t64x128x64_c4x2_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/64, 128, 64,
    /*cluster=*/4, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x128x64_c4x2_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x128x64_c4x2_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x128x64_c4x2_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kLeakyRelu, cks::EOp::kNone, cks::Bias::kPerRow, cks::Permute::kNone, /*beta=*/true>;

// rowbias_leaky_f16_parallel_sm90_t64x128x64_c4x2_pp_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t64x128x64_c4x2_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_parallel_sm90_t64x128x64_c4x2_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// rowbias_leaky_f16_serial_sm90_t64x128x64_c4x2_pp_sauto_a8
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t64x128x64_c4x2_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_rowbias_leaky_f16_serial_sm90_t64x128x64_c4x2_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x128x64_c4x2_pp_sauto_a8
