// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// op sigmoid_qkv_bf16, sm90 groups: sm90_t128x64x64_c1x1_coop_sauto_a8, sm90_t128x80x64_c1x2_coop_sauto_a8_swab, sm90_t64x128x64_c1x1_pp_sauto_a8, sm90_t64x32x64_c2x1_pp_sauto_a8_swab
#include "cks_sm90.cuh"
// wgmma m64n80k16 (sm90_wide_mma.cuh): the tile N 80 in one instruction, 40 f32 accumulators a thread
namespace cks {
namespace sm90 {
template <cute::GMMA::Major kMajorA, cute::GMMA::Major kMajorB>
struct WideWgmmaSS<cutlass::bfloat16_t, 80, kMajorA, kMajorB> {
  using DRegisters = void;
  using ARegisters = uint64_t[1];
  using BRegisters = uint64_t[1];
  using CRegisters = float[40];

  CUTE_HOST_DEVICE static void fma(uint64_t const& desc_a, uint64_t const& desc_b,
      float& d000, float& d001, float& d002, float& d003, float& d004, float& d005, float& d006, float& d007,
      float& d008, float& d009, float& d010, float& d011, float& d012, float& d013, float& d014, float& d015,
      float& d016, float& d017, float& d018, float& d019, float& d020, float& d021, float& d022, float& d023,
      float& d024, float& d025, float& d026, float& d027, float& d028, float& d029, float& d030, float& d031,
      float& d032, float& d033, float& d034, float& d035, float& d036, float& d037, float& d038, float& d039,
      cute::GMMA::ScaleOut const scale_d = cute::GMMA::ScaleOut::One) {
#if defined(CUTE_ARCH_MMA_SM90A_ENABLED)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39"
                 "}, %40, %41, p, 1, 1, %43, %44;\n}\n"
                 : "+f"(d000), "+f"(d001), "+f"(d002), "+f"(d003), "+f"(d004), "+f"(d005), "+f"(d006), "+f"(d007),
                   "+f"(d008), "+f"(d009), "+f"(d010), "+f"(d011), "+f"(d012), "+f"(d013), "+f"(d014), "+f"(d015),
                   "+f"(d016), "+f"(d017), "+f"(d018), "+f"(d019), "+f"(d020), "+f"(d021), "+f"(d022), "+f"(d023),
                   "+f"(d024), "+f"(d025), "+f"(d026), "+f"(d027), "+f"(d028), "+f"(d029), "+f"(d030), "+f"(d031),
                   "+f"(d032), "+f"(d033), "+f"(d034), "+f"(d035), "+f"(d036), "+f"(d037), "+f"(d038), "+f"(d039)
                 : "l"(desc_a), "l"(desc_b), "r"(int32_t(scale_d)), "n"(int32_t(kMajorA)), "n"(int32_t(kMajorB)));
#else
    CUTE_INVALID_CONTROL_PATH("wgmma m64n80k16 needs sm_90a");
#endif
  }
};
}  // namespace sm90
}  // namespace cks

// sm90_t128x64x64_c1x1_coop_sauto_a8
namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::bfloat16_t, /*B column-major=*/true, /*tile=*/128, 64, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x64x64_c1x1_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kSigmoid, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::k20314, /*beta=*/false>;

// sigmoid_qkv_bf16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// sigmoid_qkv_bf16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false>>(*args, static_cast<cudaStream_t>(stream)); });
}

// sigmoid_qkv_bf16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x64x64_c1x1_coop_sauto_a8

// sm90_t128x80x64_c1x2_coop_sauto_a8_swab
namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::bfloat16_t, /*B column-major=*/true, /*tile=*/128, 80, 64,
    /*cluster=*/1, 2, cks::sm90::Schedule::kCooperative, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab
namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kSigmoid, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::k20314, /*beta=*/false>;

// sigmoid_qkv_bf16_serial_sm90_t128x80x64_c1x2_coop_sauto_a8_swab
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t128x80x64_c1x2_coop_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t128x80x64_c1x2_coop_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x80x64_c1x2_coop_sauto_a8_swab

// sm90_t64x128x64_c1x1_pp_sauto_a8
namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::bfloat16_t, /*B column-major=*/true, /*tile=*/64, 128, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0>;
}  // namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t64x128x64_c1x1_pp_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kSigmoid, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::k20314, /*beta=*/false>;

// sigmoid_qkv_bf16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// sigmoid_qkv_bf16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x128x64_c1x1_pp_sauto_a8

// sm90_t64x32x64_c2x1_pp_sauto_a8_swab
namespace group_sm90_t64x32x64_c2x1_pp_sauto_a8_swab {
using Gemm = cks::sm90::GemmConfig<cutlass::bfloat16_t, /*B column-major=*/true, /*tile=*/64, 32, 64,
    /*cluster=*/2, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0, /*swap AB=*/true>;
}  // namespace group_sm90_t64x32x64_c2x1_pp_sauto_a8_swab
extern template struct cks::sm90::PartialGemm<group_sm90_t64x32x64_c2x1_pp_sauto_a8_swab::Gemm>;  // defined in its own unit
namespace group_sm90_t64x32x64_c2x1_pp_sauto_a8_swab {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kSigmoid, cks::EOp::kNone, cks::Bias::kPerCol, cks::Permute::k20314, /*beta=*/false>;

// sigmoid_qkv_bf16_parallel_sm90_t64x32x64_c2x1_pp_sauto_a8_swab
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_parallel_sm90_t64x32x64_c2x1_pp_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_parallel_sm90_t64x32x64_c2x1_pp_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// sigmoid_qkv_bf16_serial_sm90_t64x32x64_c2x1_pp_sauto_a8_swab
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t64x32x64_c2x1_pp_sauto_a8_swab_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_sigmoid_qkv_bf16_serial_sm90_t64x32x64_c2x1_pp_sauto_a8_swab_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t64x32x64_c2x1_pp_sauto_a8_swab
