// generated from configs/epilogues.yaml by cutlass-splitk; do not edit
// op rowbias_leaky_f16: library-level entry points
#include "cks_error.cuh"
// cks_rank_v10: the dispatcher's time model over this op's variants (runtime/dispatch.py)
#define CKS_TIMEMODEL_EXPORT CKS_EXPORT
#include "cks_timemodel.h"

static char const kDescription[] = R"cks_json({"abi_version": 1, "archs": [], "dtype": "f16", "epilogue": {"activation": "leaky_relu", "alpha": true, "beta": true, "bias": "per_row", "e_op": "none", "leaky_slope": 0.2, "permute": "none"}, "layout": "tn", "name": "rowbias_leaky_f16", "variants": [{"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "serial", "name": "rowbias_leaky_f16_serial_sm90_t128x64x64_c1x1_coop_sauto_a8", "schedule": "cooperative", "splits": [1, 3, 8], "stages": 0, "tile": [128, 64, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "parallel", "name": "rowbias_leaky_f16_parallel_sm90_t128x64x64_c1x1_coop_sauto_a8", "schedule": "cooperative", "splits": [2, 5, 16], "stages": 0, "tile": [128, 64, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "stream_k", "name": "rowbias_leaky_f16_stream_k_sm90_t128x64x64_c1x1_coop_sauto_a8", "schedule": "cooperative", "splits": [1], "stages": 0, "tile": [128, 64, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "serial", "name": "rowbias_leaky_f16_serial_sm90_t64x128x64_c1x1_pp_sauto_a8", "schedule": "pingpong", "splits": [1], "stages": 0, "tile": [64, 128, 64]}, {"alignment": 8, "backend": "sm90", "cluster": [1, 1], "mode": "parallel", "name": "rowbias_leaky_f16_parallel_sm90_t64x128x64_c1x1_pp_sauto_a8", "schedule": "pingpong", "splits": [2, 5], "stages": 0, "tile": [64, 128, 64]}]})cks_json";

extern "C" CKS_EXPORT int cks_abi_version(void) { return CKS_ABI_VERSION; }
extern "C" CKS_EXPORT char const* cks_describe(void) { return kDescription; }
extern "C" CKS_EXPORT char const* cks_last_error(void) { return cks::last_error().c_str(); }
