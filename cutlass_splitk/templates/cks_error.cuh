// cutlass-splitk: the error boundary of every entry point. A C++ exception or a failed CUDA
// call becomes a CksStatus (cks_abi.h) and a message for cks_last_error() (one per thread).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <exception>
#include <string>

#include "cks_abi.h"

namespace cks {

inline std::string& last_error() {
  static thread_local std::string message;
  return message;
}

inline int fail(int status, std::string message) {
  last_error() = std::move(message);
  return status;
}

template <class F>
int guarded(F&& f) noexcept {
  try {
    last_error().clear();
    return f();
  } catch (std::exception const& e) {
    return fail(CKS_ERROR_INTERNAL, std::string("C++ exception: ") + e.what());
  } catch (...) {
    return fail(CKS_ERROR_INTERNAL, "unknown C++ exception");
  }
}

inline int cuda_fail(cudaError_t err, char const* what) {
  return fail(CKS_ERROR_CUDA, std::string(what) + ": " + cudaGetErrorName(err) + ": " +
                                  cudaGetErrorString(err));
}

inline bool aligned(void const* p, int bytes) {
  return (reinterpret_cast<uintptr_t>(p) % uintptr_t(bytes)) == 0;
}

}  // namespace cks
