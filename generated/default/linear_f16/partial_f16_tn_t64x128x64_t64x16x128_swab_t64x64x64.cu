// generated from configs/default.yaml by cutlass-splitk; do not edit
// sm90 partial GEMMs (f32 partials of K slices), f16 tn, tiles t64x128x64, t64x16x128_swab, t64x64x64: one unit shared by every op
// of this config that uses the same ones (same text, so the object cache compiles it once)
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 128, 64, /*cluster=*/1, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>>;
template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 16, 128, /*cluster=*/1, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0, /*swap AB=*/true>>;
template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 64, 64, /*cluster=*/1, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>>;
