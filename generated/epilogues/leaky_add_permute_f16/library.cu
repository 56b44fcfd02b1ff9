// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// op leaky_add_permute_f16: library-level entry points
#include "cks_error.cuh"

static char const kDescription[] = R"cks_json({"abi_version": 1, "archs": [90], "dtype": "f16", "epilogue": {"activation": "leaky_relu", "alpha": true, "beta": false, "bias": "per_row", "e_op": "add", "leaky_slope": 0.1, "permute": "head_split"}, "layout": "tn", "name": "leaky_add_permute_f16", "variants": [{"alignment": 8, "instruction": [16, 8, 16], "mode": "serial", "name": "leaky_add_permute_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "splits": [1, 3, 8], "stages": 3, "swizzle": 1, "tile": [64, 64, 64], "warp": [32, 32, 64]}, {"alignment": 8, "instruction": [16, 8, 16], "mode": "parallel", "name": "leaky_add_permute_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "splits": [2, 5, 16], "stages": 3, "swizzle": 1, "tile": [64, 64, 64], "warp": [32, 32, 64]}]})cks_json";

extern "C" CKS_EXPORT int cks_abi_version(void) { return CKS_ABI_VERSION; }
extern "C" CKS_EXPORT char const* cks_describe(void) { return kDescription; }
extern "C" CKS_EXPORT char const* cks_last_error(void) { return cks::last_error().c_str(); }
