// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// sm90 partial GEMM (f32 partials of K slices) for partial_bf16_tn_sm90_t128x64x64_c2x4_coop_sauto_a8: one unit shared by every op
// of this config that uses it (same text, so the object cache compiles it once)
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::bfloat16_t, /*B column-major=*/true,
    /*tile=*/128, 64, 64, /*cluster=*/2, 4, cks::sm90::Schedule::kCooperative, /*stages=*/0>>;
