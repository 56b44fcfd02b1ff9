// generated from configs/default.yaml by cutlass-splitk; do not edit
// sm90 partial GEMM (f32 partials of K slices) for partial_f16_tn_sm90_t128x128x64_c1x1_coop_sauto_a8: one unit shared by every op
// of this config that uses it (same text, so the object cache compiles it once)
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/128, 128, 64, /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>>;
