// Host-only probe of the TMA descriptors' L2 promotion (sm90_tma_promotion.cuh), printing one
// line per case, "name" and the promotion(s) in bytes (0 = none). tests/test_sm90.py compiles and
// runs it; no GPU and no driver call is involved.
//   * rule_*: the rule on hand-made descriptors (rank, type, base, strides, box), outside and
//     inside a promoting scope;
//   * the rest: the descriptors CUTLASS really encodes for sm90 main loops (cks::sm90::Mainloop of
//     a GemmConfig, as the generated units instantiate it, inside the MainloopPromotion scope the
//     kernels' launches use), recorded by a cuTensorMapEncodeTiled standing in for the driver's:
//     "name A B", the promotion of the main loop's A and B descriptors, and "hints_name A B", the
//     L2 policy of their loads that set_l2_policy gives on a GPU with 50 MiB of L2 (an H100's) or
//     the L2 given (sm90_mainloop.cuh).
#define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL 1
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "sm90_tma_promotion.cuh"

namespace {

std::vector<int> promotions;

int bytes(CUtensorMapL2promotion p) {
  switch (p) {
    case CU_TENSOR_MAP_L2_PROMOTION_L2_64B: return 64;
    case CU_TENSOR_MAP_L2_PROMOTION_L2_128B: return 128;
    case CU_TENSOR_MAP_L2_PROMOTION_L2_256B: return 256;
    default: return 0;
  }
}

void rule(char const* name, CUtensorMapDataType type, cuuint32_t rank, std::uintptr_t address, cuuint64_t s1,
          cuuint64_t s2, cuuint32_t box0) {
  cuuint64_t const strides[2] = {s1, s2};
  cuuint32_t const box[3] = {box0, 128, 1};
  std::printf("%s %d\n", name,
              bytes(cks::sm90::tma_l2_promotion(type, rank, reinterpret_cast<void const*>(address), strides, box,
                                                CU_TENSOR_MAP_L2_PROMOTION_L2_128B)));
}

void rules() {
  auto const u16 = CU_TENSOR_MAP_DATA_TYPE_UINT16;  // how CUTLASS's main loops encode f16 and bf16
  rule("rule_outside_a_promoting_scope", u16, 3, 0x7f0000000000, 65536 * 2, 4096 * 2, 64);
  cks::sm90::TmaPromotionScope promoting(true);  // as a 64-deep K tile's main loop
  rule("rule_k64_aligned_u16", u16, 3, 0x7f0000000000, 65536 * 2, 4096 * 2, 64);
  rule("rule_k64_aligned_float16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, 0x7f0000000000, 65536 * 2, 4096 * 2, 64);
  rule("rule_k64_aligned_bfloat16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, 0x7f0000000000, 65536 * 2, 4096 * 2, 64);
  rule("rule_rows_2000_bytes", u16, 3, 0x7f0000000000, 1000 * 2, 1000 * 2, 64);
  rule("rule_base_128_bytes_off", u16, 3, 0x7f0000000080, 65536 * 2, 4096 * 2, 64);
  rule("rule_batch_stride_128_bytes", u16, 3, 0x7f0000000000, 65536 * 2, 64 * 2, 64);
  rule("rule_box_of_256_bytes", u16, 3, 0x7f0000000000, 65536 * 2, 4096 * 2, 128);
  rule("rule_box_of_64_bytes", u16, 3, 0x7f0000000000, 65536 * 2, 4096 * 2, 32);
  rule("rule_f32_partials", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, 0x7f0000000000, 256 * 4, 65536 * 4, 32);
  rule("rule_u32_box_of_128_bytes", CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, 0x7f0000000000, 256 * 4, 65536 * 4, 32);
  rule("rule_rank_1", u16, 1, 0x7f0000000000, 7, 7, 64);
}

}  // namespace

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap*, CUtensorMapDataType type, cuuint32_t rank,
                                                   void* address, cuuint64_t const*, cuuint64_t const* strides,
                                                   cuuint32_t const* box, cuuint32_t const*, CUtensorMapInterleave,
                                                   CUtensorMapSwizzle, CUtensorMapL2promotion asked,
                                                   CUtensorMapFloatOOBfill) {
  promotions.push_back(bytes(cks::sm90::tma_l2_promotion(type, rank, address, strides, box, asked)));
  return CUDA_SUCCESS;
}

#include "cutlass/cuda_host_adapter.hpp"
#include "sm90_config.cuh"

namespace {

char const* hint(cute::TMA::CacheHintSm90 h) {
  using H = cute::TMA::CacheHintSm90;
  return h == H::EVICT_FIRST ? "first" : h == H::EVICT_LAST ? "last" : h == H::EVICT_NORMAL ? "normal" : "other";
}

using cks::sm90::GemmConfig;
using cks::sm90::Schedule;
using cutlass::half_t;
using cutlass::bfloat16_t;

// The op's problem (A: M x K row-major at `a`, leading dimension lda; B: K x N at `b`, column-major
// (tn) or row-major (nn) with leading dimension ldb), set up as sm90_gemm.cuh and
// sm90_partial_impl.cuh do, for the kernel's own operand order.
template <class Gemm>
void show(char const* name, int m, int n, int k, int64_t lda, int64_t ldb, std::uintptr_t a, std::uintptr_t b,
          int64_t l2_bytes = int64_t(50) << 20) {
  using Loop = cks::sm90::Mainloop<Gemm, 0>;
  using Element = typename Gemm::Element;
  typename Loop::Arguments args{};
  cute::Shape<int, int, int, int> problem{m, n, k, 1};
  if constexpr (Gemm::kSwapAB) {
    problem = cute::Shape<int, int, int, int>{n, m, k, 1};
    args.ptr_A = reinterpret_cast<Element const*>(b);
    cute::get<Gemm::kBColumnMajor ? 0 : 1>(args.dA) = ldb;
    args.ptr_B = reinterpret_cast<Element const*>(a);
    cute::get<0>(args.dB) = lda;
  } else {
    args.ptr_A = reinterpret_cast<Element const*>(a);
    cute::get<0>(args.dA) = lda;
    args.ptr_B = reinterpret_cast<Element const*>(b);
    cute::get<Gemm::kBColumnMajor ? 0 : 1>(args.dB) = ldb;
  }
  promotions.clear();
  typename Loop::Params params;
  {
    cks::sm90::MainloopPromotion<Gemm> promotion;  // as the kernels' launches do
    params = Loop::to_underlying_arguments(problem, args, nullptr);
  }
  if (params.hint_a != cute::TMA::CacheHintSm90::EVICT_NORMAL || params.hint_b != cute::TMA::CacheHintSm90::EVICT_NORMAL)
    std::printf("to_underlying_arguments_%s set a policy\n", name);
  Loop::set_l2_policy(params, cute::get<0>(problem), cute::get<1>(problem), int64_t(k) * n * sizeof(Element),
                      l2_bytes);
  std::printf("%s", name);
  for (int p : promotions) std::printf(" %d", p);
  std::printf("\nhints_%s %s %s\n", name, hint(params.hint_a), hint(params.hint_b));
}

}  // namespace

int main() {
  rules();
  std::uintptr_t const a = 0x7f0000000000, b = 0x7f4000000000;
  // The skinny pick: 128x128x64 in a 1x2 cluster, tn, K-major rows of 128 bytes.
  show<GemmConfig<half_t, true, 128, 128, 64, 1, 2, Schedule::kCooperative, 0>>(
      "coop_128x128x64_tn_k65536", 256, 256, 65536, 65536, 65536, a, b);
  show<GemmConfig<bfloat16_t, true, 128, 64, 64, 1, 1, Schedule::kCooperative, 0>>(
      "coop_128x64x64_tn_bf16_k8192", 128, 8192, 8192, 8192, 8192, a, b);
  // Rows only 16-byte aligned (K = 1000), and a base 128 bytes past a 256-byte boundary.
  show<GemmConfig<half_t, true, 128, 128, 64, 2, 1, Schedule::kCooperative, 0>>(
      "coop_128x128x64_tn_k1000", 4000, 4104, 1000, 1000, 1000, a, b);
  show<GemmConfig<half_t, true, 128, 128, 64, 2, 1, Schedule::kCooperative, 0>>(
      "coop_128x128x64_tn_a_plus_128", 4096, 4096, 4096, 4096, 4096, a + 128, b);
  // 128-deep K tiles (rows of 256 bytes) and the swapped decode tile.
  show<GemmConfig<half_t, true, 64, 128, 128, 1, 1, Schedule::kPingpong, 0>>(
      "pp_64x128x128_tn", 16, 4096, 14336, 14336, 14336, a, b);
  show<GemmConfig<half_t, true, 64, 16, 128, 1, 1, Schedule::kPingpong, 0, true>>(
      "pp_64x16x128_swap_tn", 16, 4096, 14336, 14336, 14336, a, b);
  // nn: B row-major (N contiguous), its boxes run along N.
  show<GemmConfig<half_t, false, 128, 128, 64, 1, 1, Schedule::kCooperative, 0>>(
      "coop_128x128x64_nn", 512, 512, 32768, 32768, 512, a, b);
  // The weight's policy at the rule's edges: two tile rows in a 2x1 cluster (B multicast: read
  // once), and the swapped tile with M = 64 (four tile columns of 16 read the same weight tile).
  show<GemmConfig<half_t, true, 128, 128, 64, 2, 1, Schedule::kCooperative, 0>>(
      "coop_128x128x64_c2x1_m256", 256, 4096, 8192, 8192, 8192, a, b);
  show<GemmConfig<half_t, true, 128, 128, 64, 2, 1, Schedule::kCooperative, 0>>(
      "coop_128x128x64_c2x1_m257", 257, 4096, 8192, 8192, 8192, a, b);
  show<GemmConfig<half_t, true, 64, 16, 128, 1, 1, Schedule::kPingpong, 0, true>>(
      "pp_64x16x128_swap_m64", 64, 4096, 14336, 14336, 14336, a, b);
  // A weight read once but smaller than the L2 (kept between calls); the same problem with the L2
  // unknown; a 256-row tile reading a 536 MB weight once.
  show<GemmConfig<half_t, true, 64, 16, 128, 1, 1, Schedule::kPingpong, 0, true>>(
      "pp_64x16x128_swap_m1_k4096", 1, 4096, 4096, 4096, 4096, a, b);
  show<GemmConfig<half_t, true, 64, 128, 128, 1, 1, Schedule::kPingpong, 0>>(
      "pp_64x128x128_l2_unknown", 16, 4096, 14336, 14336, 14336, a, b, 0);
  show<GemmConfig<half_t, true, 256, 128, 64, 1, 1, Schedule::kCooperative, 0>>(
      "coop_256x128x64_m256_k65536", 256, 4096, 65536, 65536, 65536, a, b);
  return 0;
}
