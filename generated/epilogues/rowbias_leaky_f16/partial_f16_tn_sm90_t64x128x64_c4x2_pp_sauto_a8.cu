// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// sm90 partial GEMM (f32 partials of K slices) for partial_f16_tn_sm90_t64x128x64_c4x2_pp_sauto_a8: one unit shared by every op
// of this config that uses it (same text, so the object cache compiles it once)
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 128, 64, /*cluster=*/4, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>>;
