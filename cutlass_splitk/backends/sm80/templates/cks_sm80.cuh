// cutlass-splitk sm80 backend: the hand-written logic behind every generated group unit
// (the one header group.cu.in includes).
//
// A generated .cu only names a VariantConfig and exports SerialGemm<Config> or
// ParallelGemm<Config> through the C ABI in cks_abi.h; everything that computes lives in
// these headers and the shared ones (cutlass_splitk/templates):
//
//   cks_error.cuh      error boundary (cks_last_error, status codes)         shared
//   cks_activation.cuh the activations (one ex2 + one reciprocal each)       shared
//   cks_epilogue.cuh   FusedEpilogue: act, E_op, bias, permute; vector I/O   shared
//   cks_host.cuh       ABI check, device selection, smem limit, PDL setting  shared
//   cks_reduction.cuh  parallel split-K's reduction kernel and its launch    shared
//   cks_replay.cuh     a repeated argument block's launches replayed as a graph shared
//   sm80_config.cuh    VariantConfig
//   sm80_serial.cuh    SerialVisitor, SerialSplitKKernel
//   sm80_gemm.cuh      Common, SerialGemm, ParallelGemm
//
// Both split-K strategies compute the same function,
//   F = permute( E_op( act( alpha * (A x B) + beta * C + bias ), E ) ),
// through the same FusedEpilogue helpers:
//   * serial: GemmSplitKSerial semantics. Partition k waits on a per-tile semaphore, adds
//     alpha * acc_k to the running partial (stored in D, in the output element type, at the
//     final - possibly permuted - address), and releases k + 1. Partition 0 adds beta * C and
//     the bias; only the last partition applies the activation and E_op and releases 0, so
//     the semaphores are zero again for the next launch.
//   * parallel: a CUTLASS GemmUniversal in kGemmSplitKParallel mode writes float32 partials,
//     then reduce_epilogue_kernel sums them and applies the whole epilogue in one pass.
#pragma once

#include "cks_abi.h"
#include "cks_error.cuh"
#include "cks_epilogue.cuh"
#include "cks_host.cuh"
#include "cks_reduction.cuh"
#include "cks_replay.cuh"
#include "sm80_config.cuh"
#include "sm80_serial.cuh"
#include "sm80_gemm.cuh"
