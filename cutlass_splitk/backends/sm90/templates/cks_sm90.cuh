// cutlass-splitk sm90 backend (CUTLASS 3.x: TMA + wgmma, sm_90a): the one header a generated
// group unit includes. Logic lives in these headers and the shared ones
// (cutlass_splitk/templates):
//
//   sm90_driver.cuh                 cuTensorMapEncodeTiled resolved once (first: before CUTLASS)
//   sm90_tma_promotion.cuh          the L2 promotion of each TMA descriptor (the forwarder's rule)
//   cks_error.cuh, cks_host.cuh     error boundary, ABI check, device, PDL setting   shared
//   cks_activation.cuh              the activations (one ex2 + one reciprocal each)  shared
//   cks_epilogue.cuh                FusedEpilogue: act, E_op, bias, permute          shared
//   cks_reduction.cuh               parallel split-K's reduction kernel + launch    shared
//   cks_plan_cache.cuh              launch plans remembered per entry point          shared
//   cks_replay.cuh                  a repeated argument block replayed as a CUDA graph  shared
//   sm90_mainloop.cuh               CUTLASS's main loop, the weight streamed with EVICT_FIRST
//   sm90_config.cuh                 GemmConfig, VariantConfig, the main loop
//   sm90_launch.cuh                 SM count, checks, kernel launch with clusters
//   sm90_permuted_store.cuh         the TMA epilogue's head/qkv-split store (a visitor node)
//   sm90_tma_epilogue.cuh           CUTLASS's TMA epilogue (serial, stream-K)
//   sm90_partial.cuh                PartialGemm (declared; its own unit defines it)
//   sm90_gemm.cuh                   SplitKGemm (serial, stream-K), ParallelGemm
#pragma once

#include "sm90_driver.cuh"

#include "cks_abi.h"
#include "cks_error.cuh"
#include "cks_epilogue.cuh"
#include "cks_host.cuh"
#include "cks_reduction.cuh"
#include "cks_replay.cuh"
#include "sm90_config.cuh"
#include "sm90_launch.cuh"
#include "sm90_tma_epilogue.cuh"
#include "sm90_partial.cuh"
#include "sm90_gemm.cuh"
