// cutlass-splitk sm90 backend: the one CUDA driver function CUTLASS calls on the host,
// cuTensorMapEncodeTiled (a TMA descriptor per operand per launch), resolved once per process.
//
// Without CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, CUTLASS looks the function up by name with
// cudaGetDriverEntryPointByVersion on every call (NVIDIA/cutlass#3003); with it, CUTLASS calls
// the symbol directly, which would tie the library to libcuda at link time (and a CPU machine
// could no longer load it). So the macro is set and the symbol is defined here, local to the
// library (hidden; weak, since every sm90 unit of a library includes it), as a forwarder to the
// driver's function looked up once through the runtime. Must come before any CUTLASS header.
//
// The forwarder also chooses each descriptor's L2 promotion (sm90_tma_promotion.cuh).
#pragma once

#if defined(CUTLASS_CUDA_DRIVER_WRAPPER_CALL)
#error "sm90_driver.cuh must be included before any CUTLASS header"
#endif
#define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL 1

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <atomic>

#include "sm90_tma_promotion.cuh"

extern "C" __attribute__((weak, visibility("hidden"))) CUresult CUDAAPI cuTensorMapEncodeTiled(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    cuuint64_t const* globalDim, cuuint64_t const* globalStrides, cuuint32_t const* boxDim,
    cuuint32_t const* elementStrides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  static std::atomic<PFN_cuTensorMapEncodeTiled_v12000> resolved{nullptr};
  PFN_cuTensorMapEncodeTiled_v12000 fn = resolved.load(std::memory_order_acquire);
  if (fn == nullptr) {
    void* pfn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pfn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || pfn == nullptr) {
      cudaGetLastError();  // not sticky; CUTLASS reports the failed encoding
      return CUDA_ERROR_NOT_FOUND;
    }
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pfn);
    resolved.store(fn, std::memory_order_release);
  }
  return fn(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim,
            elementStrides, interleave, swizzle,
            cks::sm90::tma_l2_promotion(tensorDataType, tensorRank, globalAddress, globalStrides, boxDim, l2Promotion),
            oobFill);
}

#include "cutlass/cuda_host_adapter.hpp"
