// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// op relu_rowbias_add_f16: library-level entry points
#include "cks_error.cuh"
#include "cks_timemodel.h"

static char const kDescription[] = R"cks_json({"abi_version": 1, "archs": [90], "dtype": "f16", "epilogue": {"activation": "relu", "alpha": true, "beta": true, "bias": "per_row", "e_op": "add", "leaky_slope": 0.01, "permute": "none"}, "layout": "tn", "name": "relu_rowbias_add_f16", "variants": [{"alignment": 8, "backend": "sm80", "instruction": [16, 8, 16], "mode": "serial", "name": "relu_rowbias_add_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "splits": [1, 3, 8], "stages": 3, "swizzle": 1, "tile": [64, 64, 64], "warp": [32, 32, 64]}, {"alignment": 8, "backend": "sm80", "instruction": [16, 8, 16], "mode": "parallel", "name": "relu_rowbias_add_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "splits": [2, 5, 16], "stages": 3, "swizzle": 1, "tile": [64, 64, 64], "warp": [32, 32, 64]}, {"alignment": 2, "backend": "sm80", "instruction": [16, 8, 16], "mode": "serial", "name": "relu_rowbias_add_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a2_z1", "splits": [1, 3, 8], "stages": 3, "swizzle": 1, "tile": [64, 64, 64], "warp": [32, 32, 64]}, {"alignment": 2, "backend": "sm80", "instruction": [16, 8, 16], "mode": "parallel", "name": "relu_rowbias_add_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a2_z1", "splits": [2, 5, 16], "stages": 3, "swizzle": 1, "tile": [64, 64, 64], "warp": [32, 32, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "serial", "name": "relu_rowbias_add_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8", "schedule": "cooperative", "splits": [1, 3, 8], "stages": 0, "tile": [128, 64, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "parallel", "name": "relu_rowbias_add_f16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8", "schedule": "cooperative", "splits": [2, 5, 16], "stages": 0, "tile": [128, 64, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "stream_k", "name": "relu_rowbias_add_f16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8", "schedule": "cooperative", "splits": [1], "stages": 0, "tile": [128, 64, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "serial", "name": "relu_rowbias_add_f16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8", "schedule": "pingpong", "splits": [1], "stages": 0, "tile": [64, 128, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "parallel", "name": "relu_rowbias_add_f16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8", "schedule": "pingpong", "splits": [2, 5], "stages": 0, "tile": [64, 128, 64]}]})cks_json";

extern "C" CKS_EXPORT int cks_abi_version(void) { return CKS_ABI_VERSION; }
extern "C" CKS_EXPORT char const* cks_describe(void) { return kDescription; }
extern "C" CKS_EXPORT char const* cks_last_error(void) { return cks::last_error().c_str(); }

// The dispatcher's time model over this op's variants (cks_timemodel.h; runtime/dispatch.py).
extern "C" CKS_EXPORT int cks_rank(CksModel const* model, CksModelVariant const* variants, int variant_count,
                                   int32_t const* splits, int64_t m, int64_t n, int64_t k, int32_t only_split,
                                   CksRanked* out, int capacity) {
  return cks::model::rank(*model, variants, variant_count, splits, m, n, k, only_split, out, capacity);
}
