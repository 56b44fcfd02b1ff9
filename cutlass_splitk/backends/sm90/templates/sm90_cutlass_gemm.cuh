// cutlass-splitk sm90 backend: the CUTLASS 3.x GEMM pieces it instantiates, included one by one.
// CUTLASS's umbrella headers (cutlass/gemm/collective/collective_builder.hpp,
// cutlass/gemm/kernel/gemm_universal.hpp) also pull in every sm70-sm120 collective, builder and
// kernel; the sm90 units never use those, and parsing them cost ~2.6 s of each unit's ~15 s of
// headers (cudafe++, cicc and the host compiler each parse them) on the 2-core build machine
// (BENCHMARKS.md, session 46). What the sm90 builder picks for our configs: the TMA
// warp-specialised SS main loop and the cooperative and ping-pong kernels; a config that needed
// another would fail to compile (CUTLASS declares the primary templates without a definition), not
// pick something else.
#pragma once

#include "cutlass/gemm/collective/collective_mma_decl.hpp"
#include "cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder_decl.hpp"
#include "cutlass/gemm/collective/builders/sm90_gmma_builder.inl"
#include "cutlass/gemm/kernel/gemm_universal_decl.h"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
#include "cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_cooperative.hpp"
#include "cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp"
