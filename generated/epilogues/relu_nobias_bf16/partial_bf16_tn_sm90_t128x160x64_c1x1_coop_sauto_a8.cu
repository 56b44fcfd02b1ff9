// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// sm90 partial GEMM (f32 partials of K slices) for partial_bf16_tn_sm90_t128x160x64_c1x1_coop_sauto_a8: one unit shared by every op
// of this config that uses it (same text, so the object cache compiles it once)
// tile N 160: CUTLASS's extended wgmma shapes (m64nNk16 for any N),
// without which its builder would take a narrower instruction
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::bfloat16_t, /*B column-major=*/true,
    /*tile=*/128, 160, 64, /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>>;
