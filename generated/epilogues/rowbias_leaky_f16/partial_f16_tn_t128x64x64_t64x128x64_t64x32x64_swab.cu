// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// sm90 partial GEMMs (f32 partials of K slices), f16 tn, tiles t128x64x64, t64x128x64, t64x32x64_swab: one unit shared by every op
// of this config that uses the same ones (same text, so the object cache compiles it once)
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/128, 64, 64, /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>>;
template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 128, 64, /*cluster=*/1, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0>>;
template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 128, 64, /*cluster=*/1, 4, cks::sm90::Schedule::kPingpong, /*stages=*/0>>;
template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 128, 64, /*cluster=*/4, 2, cks::sm90::Schedule::kPingpong, /*stages=*/0>>;
template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/64, 32, 64, /*cluster=*/2, 1, cks::sm90::Schedule::kPingpong, /*stages=*/0, /*swap AB=*/true>>;
