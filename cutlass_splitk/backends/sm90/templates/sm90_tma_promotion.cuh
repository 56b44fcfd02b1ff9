// cutlass-splitk sm90 backend: the L2 promotion of each TMA descriptor CUTLASS encodes
// (sm90_driver.cuh's cuTensorMapEncodeTiled forwarder applies it). Host code, no CUTLASS.
//
// CUTLASS asks for 128 bytes everywhere. CKS_SM90_TMA_L2_PROMOTION = 0 (none), 64, 128 or 256
// forces one promotion for every descriptor (exploration builds); -1, the default, is the rule.
#pragma once

#ifndef CKS_SM90_TMA_L2_PROMOTION
#define CKS_SM90_TMA_L2_PROMOTION -1
#endif
#if CKS_SM90_TMA_L2_PROMOTION != -1 && CKS_SM90_TMA_L2_PROMOTION != 0 && CKS_SM90_TMA_L2_PROMOTION != 64 && \
    CKS_SM90_TMA_L2_PROMOTION != 128 && CKS_SM90_TMA_L2_PROMOTION != 256
#error "CKS_SM90_TMA_L2_PROMOTION must be -1 (the rule), 0, 64, 128 or 256 (bytes)"
#endif

#include <cuda.h>

#include <cstdint>

namespace cks {
namespace sm90 {

// Whether the descriptors this thread encodes now belong to a main loop the rule promotes. CUTLASS
// encodes a 128-deep K tile as two 64-wide boxes per stage, a descriptor identical to a 64-deep
// tile's, and round 14 measured the 256-byte promotion faster for 64-deep tiles only; so the code
// that encodes (sm90_config.cuh's MainloopPromotion, around to_underlying_arguments) says which
// it is. Off outside such a scope: CUTLASS's 128 bytes.
inline bool& promote_this_thread() {
  thread_local bool on = false;
  return on;
}

class TmaPromotionScope {
 public:
  explicit TmaPromotionScope(bool on) : saved_(promote_this_thread()) { promote_this_thread() = on; }
  ~TmaPromotionScope() { promote_this_thread() = saved_; }
  TmaPromotionScope(TmaPromotionScope const&) = delete;
  TmaPromotionScope& operator=(TmaPromotionScope const&) = delete;

 private:
  bool saved_;
};

// The L2 promotion of one TMA descriptor. Round 14 (H100, BENCHMARKS.md session 15): a 64-deep K
// tile's boxes (rows of 128 bytes of a 2-byte type) stream faster with a 256-byte promotion when
// every row starts on a 256-byte boundary (the skinny shapes' partial GEMM: 32.8 -> 30.9 us in
// ncu, the chain 1-4 % on the skinny and projection shapes), but 10 % slower when rows are only
// 16-byte aligned (4000 x 4104 x 1000: lda = 2000 bytes), and 128-deep tiles gained nothing or
// lost (up to 4 %). So: 256 bytes inside a promoting scope for such boxes; else `asked`.
inline CUtensorMapL2promotion tma_l2_promotion(CUtensorMapDataType type, cuuint32_t rank, void const* address,
                                               cuuint64_t const* strides, cuuint32_t const* box,
                                               CUtensorMapL2promotion asked) {
  if (CKS_SM90_TMA_L2_PROMOTION == 0) return CU_TENSOR_MAP_L2_PROMOTION_NONE;
  if (CKS_SM90_TMA_L2_PROMOTION == 64) return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  if (CKS_SM90_TMA_L2_PROMOTION == 128) return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  if (CKS_SM90_TMA_L2_PROMOTION == 256) return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  if (!promote_this_thread()) return asked;
  // 2-byte elements: CUTLASS's main loops encode f16 / bf16 operands as UINT16.
  bool const two_bytes = type == CU_TENSOR_MAP_DATA_TYPE_UINT16 || type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ||
                         type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (!two_bytes || rank < 2 || cuuint64_t(box[0]) * 2 != 128) return asked;
  if (reinterpret_cast<std::uintptr_t>(address) % 256 != 0) return asked;
  for (cuuint32_t i = 0; i + 1 < rank; ++i) {  // strides[i]: the byte stride of dimension i + 1
    if (strides[i] % 256 != 0) return asked;
  }
  return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

}  // namespace sm90
}  // namespace cks
