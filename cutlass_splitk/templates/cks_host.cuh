// cutlass-splitk: host-side helpers shared by every backend's entry points: the ABI check,
// selecting the caller's device and giving the caller its context back, raising a kernel's dynamic
// shared memory limit, the programmatic-dependent-launch setting, and turning a launch's error into
// a status.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cks_error.cuh"

namespace cks {

// A caller speaking another ABI gets CKS_ERROR_ABI, never "this variant cannot run".
inline int check_abi(CksArgs const& a) {
  if (a.abi_version == CKS_ABI_VERSION) return CKS_OK;
  return fail(CKS_ERROR_ABI, "ABI version " + std::to_string(a.abi_version) + " != library's " +
                                 std::to_string(CKS_ABI_VERSION) + ": rebuild the library");
}

// A driver function by name, found through the runtime (null where this driver does not give it).
inline void* driver_function(char const* name) {
  void* fn = nullptr;
#if CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  bool const ok = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
                  found == cudaDriverEntryPointSuccess;
#elif CUDART_VERSION >= 12000
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  bool const ok = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found) == cudaSuccess &&
                  found == cudaDriverEntryPointSuccess;
#else
  bool const ok = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault) == cudaSuccess;
#endif
  if (ok) return fn;
  cudaGetLastError();  // not sticky; a launch reports a real problem
  return nullptr;
}

// The driver's cuCtxGetCurrent / cuCtxSetCurrent (CUresult (*)(CUcontext*) / (CUcontext)), found once.
struct DriverContextApi {
  using Get = int (*)(void**);
  using Set = int (*)(void*);
  Get get = reinterpret_cast<Get>(driver_function("cuCtxGetCurrent"));
  Set set = reinterpret_cast<Set>(driver_function("cuCtxSetCurrent"));

  static DriverContextApi const& instance() {
    static DriverContextApi const api;
    return api;
  }
};

// The context the calling thread had before select_device switched devices in this call, for entry to
// give back (saved only where a call switches: a call on the current device costs no driver call).
struct CallerContext {
  void* context = nullptr;
  bool saved = false;
};
inline CallerContext& caller_context() {
  static thread_local CallerContext caller;
  return caller;
}

// The library links its own (static) CUDA runtime, which keeps its own current device, while the thread's
// current context is shared with the caller's runtime (torch's, CuPy's): select the call's device before
// touching the kernel or the stream, saving the caller's context first where that switches devices.
inline int select_device(CksArgs const& a) {
  int current = -1;
  cudaError_t err = cudaGetDevice(&current);
  if (err == cudaSuccess && current != a.device) {
    DriverContextApi const& api = DriverContextApi::instance();
    CallerContext& caller = caller_context();
    if (!caller.saved && api.get != nullptr && api.set != nullptr) caller.saved = api.get(&caller.context) == 0;
    err = cudaSetDevice(a.device);
  }
  return err == cudaSuccess ? CKS_OK : cuda_fail(err, "cudaSetDevice");
}

// Runs an entry point's body (guarded: no exception leaves the library) and gives the calling thread back the
// CUDA context it had where select_device switched devices. cudaSetDevice makes the call's device current on the
// thread, and the caller's runtime reads the same context: after a call on cuda:1 with cuda:0 current, torch would
// allocate its next tensors on cuda:1. The context goes back through the driver, as it was (none, another device's,
// or a context of the caller's own); none is created to restore one, as cudaSetDevice back to the previous device
// would create that device's primary context.
template <class F>
int entry(F&& body) noexcept {
  int const status = guarded(body);
  CallerContext& caller = caller_context();
  if (caller.saved) {
    DriverContextApi::instance().set(caller.context);
    caller.saved = false;
  }
  return status;
}

// Raises the kernel's dynamic shared memory limit once per device. The once-per-device flag
// is one per (Key, kernel type): callers pass their variant's config as Key. `device` is the
// current device (select_device made it so).
template <class Key, class KernelFn>
int configure(KernelFn kernel, int smem_bytes, int device) {
  static std::atomic<uint64_t> configured{0};
  if (smem_bytes < (48 << 10)) return CKS_OK;
  uint64_t bit = uint64_t(1) << (device & 63);
  if (configured.load(std::memory_order_acquire) & bit) return CKS_OK;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (err != cudaSuccess)
    return cuda_fail(err, ("cudaFuncSetAttribute(" + std::to_string(smem_bytes) +
                           " bytes of shared memory)").c_str());
  configured.fetch_or(bit, std::memory_order_release);
  return CKS_OK;
}

// A positive value that `query(value)` (true: the call succeeded) reads once per device, kept in `slots`; 0 where the
// query fails (asked again next time; its error is not left for the next launch to report).
template <class Query>
int once_per_device(std::atomic<int> (&slots)[64], int device, Query&& query) {
  std::atomic<int>& slot = slots[device & 63];
  int value = slot.load();
  if (value == 0) {
    if (!query(value) || value < 0) {
      cudaGetLastError();  // not sticky; a launch reports a real problem
      value = 0;
    }
    slot.store(value);
  }
  return value;
}

template <cudaDeviceAttr kAttribute>
int device_attribute(int device) {
  static std::atomic<int> values[64];
  return once_per_device(values, device,
                         [&](int& value) { return cudaDeviceGetAttribute(&value, kAttribute, device) == cudaSuccess; });
}

// Whether environment variable `name` is set to exactly `value` (read at every call).
inline bool env_is(char const* name, char const* value) {
  char const* env = std::getenv(name);
  return env != nullptr && std::strcmp(env, value) == 0;
}

// Programmatic dependent launch between a partial GEMM and the reduction: on sm_90+
// devices unless CUTLASS_SPLITK_PDL=0; CUTLASS_SPLITK_PDL=early also triggers it at the
// start of every GEMM CTA (read at every launch, for A/B timing and debugging; the variable is
// read once per call and compared twice, hence no env_is).
enum class Pdl { kOff, kOn, kEarly };
inline Pdl pdl_mode(int device) {
  char const* env = std::getenv("CUTLASS_SPLITK_PDL");
  if (env != nullptr && std::strcmp(env, "0") == 0) return Pdl::kOff;
  // The device's major compute capability, read once per device (0: not read yet).
  static std::atomic<int> majors[64];
  std::atomic<int>& slot = majors[device & 63];
  int major = slot.load(std::memory_order_relaxed);
  if (major == 0) {
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();  // not sticky; do not let the launch check report it
      return Pdl::kOff;
    }
    slot.store(major, std::memory_order_relaxed);
  }
  if (major < 9) return Pdl::kOff;
  return env != nullptr && std::strcmp(env, "early") == 0 ? Pdl::kEarly : Pdl::kOn;
}

// Parallel split-K's reduction inside the partial GEMM (sm90: sm90_tail.cuh), where a launch runs
// in one round: opt-in, CUTLASS_SPLITK_TAIL=1 (read at every call, like CUTLASS_SPLITK_PDL), else
// the reduction kernel follows the GEMM. Off by default: on the H100 it is 3-7 us slower than the
// reduction kernel on every one-round candidate measured (BENCHMARKS.md, session 31).
// CUTLASS_SPLITK_TAIL=free launches it without the cooperative attribute that guarantees its CTAs
// are resident at once (for A/B timing only).
enum class TailMode { kOff, kOn, kFree };
inline TailMode tail_mode() {
  char const* env = std::getenv("CUTLASS_SPLITK_TAIL");
  if (env == nullptr) return TailMode::kOff;
  if (std::strcmp(env, "1") == 0) return TailMode::kOn;
  return std::strcmp(env, "free") == 0 ? TailMode::kFree : TailMode::kOff;
}

// The largest M, N or K (runtime/operands.py's MAX_DIM): far from int32's end, so that rounding a dimension up
// to whole tiles and clusters never overflows; M * N may exceed 2^31 (offsets are 64-bit).
constexpr int32_t kMaxDim = int32_t(1) << 30;

// The checks every backend makes of the problem and the A, B operands (sizes, pointers and
// leading dimensions aligned to the variant's kAlignment); an empty string when it can run.
template <class Cfg>
std::string check_problem(CksArgs const& a) {
  using Element = typename Cfg::Element;
  int const kAlign = Cfg::kAlignment;
  if (a.m <= 0 || a.n <= 0 || a.k <= 0)
    return "M, N, K must be positive (empty problems are handled by the caller)";
  if (a.split_k < 1) return "split_k must be >= 1";
  if (a.m > kMaxDim || a.n > kMaxDim || a.k > kMaxDim)
    return "M, N and K must each be at most 2^30 (32-bit tile arithmetic; the output may exceed 2^31 elements)";
  int const bytes = kAlign * int(sizeof(Element));
  if (!a.a || !aligned(a.a, bytes) || a.lda % kAlign || a.lda < a.k)
    return "A must be " + std::to_string(bytes) + "-byte aligned with lda a multiple of " +
           std::to_string(kAlign) + " and >= K";
  int64_t const b_contig = Cfg::kBColumnMajor ? a.k : a.n;
  if (!a.b || !aligned(a.b, bytes) || a.ldb % kAlign || a.ldb < b_contig)
    return "B must be " + std::to_string(bytes) + "-byte aligned with ldb a multiple of " +
           std::to_string(kAlign) + " and >= " + std::to_string(b_contig);
  if (a.k % kAlign)
    return "K = " + std::to_string(a.k) + " must be a multiple of " + std::to_string(kAlign);
  return std::string();
}

// The status of a `<<<>>>` launch, which returns nothing: CUDA's last error (read and cleared).
inline int launched(char const* what) {
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? CKS_OK : cuda_fail(err, what);
}

// The status of a launch from the launch call's own result: a launch error (including a
// sticky error of earlier work) is also recorded as CUDA's last error, which is read and
// cleared so that it cannot surface in a later call.
inline int launched(cudaError_t err, char const* what) {
  if (err == cudaSuccess) return CKS_OK;
  cudaGetLastError();
  return cuda_fail(err, what);
}

}  // namespace cks
