// cutlass-splitk sm90 backend: host helpers shared by its kernels — the SM count for the
// persistent grid, the L2 size and the main loop's L2 policies, CUTLASS status → our status, the
// checks every mode shares, and the launch of a CUTLASS 3.x kernel (cluster dimensions, dynamic
// shared memory set once per device).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/kernel_hardware_info.h"

#include "cks_abi.h"
#include "cks_epilogue.cuh"
#include "cks_error.cuh"
#include "cks_host.cuh"

namespace cks {
namespace sm90 {

// The launch of `Kernel` over `grid`: its block, its dynamic shared memory and its cluster shape (in `attribute`,
// which the configuration points to).
template <class Kernel>
cudaLaunchConfig_t launch_config(dim3 grid, cudaStream_t stream, cudaLaunchAttribute& attribute) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = Kernel::get_block_shape();
  config.dynamicSmemBytes = size_t(Kernel::SharedStorageSize);
  config.stream = stream;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cute::size<0>(typename Kernel::DispatchPolicy::ClusterShape{});
  attribute.val.clusterDim.y = cute::size<1>(typename Kernel::DispatchPolicy::ClusterShape{});
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

// How many clusters of `Kernel` run at once on `device` (cudaOccupancyMaxActiveClusters with the kernel's own
// shared memory and block), asked once per device and kernel; 0 where the query fails. Both calls act on the
// current device, so `device` must be it (select_device); otherwise 0, asked again next time: raising the
// shared memory limit on another device would mark this one configured (a 2-GPU test found that).
template <class Kernel>
int max_active_clusters(int device) {
  static std::atomic<int> values[64];
  return once_per_device(values, device, [&](int& value) {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess || current != device) return false;
    if (configure<Kernel>(cutlass::device_kernel<Kernel>, Kernel::SharedStorageSize, device) != CKS_OK) return false;
    using Cluster = typename Kernel::DispatchPolicy::ClusterShape;
    cudaLaunchAttribute attribute;
    cudaLaunchConfig_t config =
        launch_config<Kernel>(dim3(cute::size<0>(Cluster{}), cute::size<1>(Cluster{}), 1), nullptr, attribute);
    return cudaOccupancyMaxActiveClusters(&value, cutlass::device_kernel<Kernel>, &config) == cudaSuccess;
  });
}

// What CUTLASS's tile schedulers size the persistent grid by: the device's SM count and, for kernels in
// clusters, how many clusters the device really runs at once. Without the latter CUTLASS estimates it from
// GPCs of 18 SMs: 116 CTAs in clusters of four on a 132-SM H100, which runs 30 such clusters (120 CTAs: its
// GPCs' SM counts are not all multiples of four), so 117-120 work units took two rounds (session 25).
template <class Kernel>
cutlass::KernelHardwareInfo hardware(int device) {
  cutlass::KernelHardwareInfo info;
  info.device_id = device;
  info.sm_count = device_attribute<cudaDevAttrMultiProcessorCount>(device);
  if constexpr (cute::size(typename Kernel::DispatchPolicy::ClusterShape{}) > 1) {
    info.max_active_clusters = max_active_clusters<Kernel>(device);
  }
  return info;
}

// The op's operands as a kernel's main loop takes them: `args`'s problem shape and main-loop pointers and
// strides. The op's A is M x K row-major, its B N x K column-major or K x N row-major; a swapped kernel
// (Gemm::kSwapAB) computes D^T = B^T A^T, its A the op's B (N x K), its B the op's A (K x M). Batch l of
// the kernel's problem (M, N, k, batches) starts a_batch / b_batch elements into the op's A / B (the
// partial GEMM's K slices; the in-kernel modes run one batch of all of K, strides 0).
template <class Gemm, class Arguments>
void set_operands(Arguments& args, CksArgs const& a, int k, int batches, int64_t a_batch, int64_t b_batch) {
  using Element = typename Gemm::Element;
  Element const* const pa = static_cast<Element const*>(a.a);
  Element const* const pb = static_cast<Element const*>(a.b);
  constexpr int kLdb = Gemm::kBColumnMajor ? 0 : 1;  // the mode of the op's B that ldb strides
  if constexpr (Gemm::kSwapAB) {
    args.problem_shape = {a.n, a.m, k, batches};
    args.mainloop.ptr_A = pb;
    cute::get<kLdb>(args.mainloop.dA) = a.ldb;
    cute::get<2>(args.mainloop.dA) = b_batch;
    args.mainloop.ptr_B = pa;
    cute::get<0>(args.mainloop.dB) = a.lda;
    cute::get<2>(args.mainloop.dB) = a_batch;
  } else {
    args.problem_shape = {a.m, a.n, k, batches};
    args.mainloop.ptr_A = pa;
    cute::get<0>(args.mainloop.dA) = a.lda;
    cute::get<2>(args.mainloop.dA) = a_batch;
    args.mainloop.ptr_B = pb;
    cute::get<kLdb>(args.mainloop.dB) = a.ldb;
    cute::get<2>(args.mainloop.dB) = b_batch;
  }
}

// The device's L2 size in bytes (0 where the query fails).
inline int64_t l2_bytes(int device) { return device_attribute<cudaDevAttrL2CacheSize>(device); }

// The main loop's L2 policy (sm90_mainloop.cuh) for the op `a`, in a kernel's parameters made by
// to_underlying_arguments: the kernel's problem is the op's (M, N), or (N, M) under kSwapAB.
template <class Gemm, class Kernel>
void set_l2_policy(typename Kernel::Params& params, CksArgs const& a) {
  int64_t const weight = int64_t(a.k) * a.n * int64_t(sizeof(typename Gemm::Element));
  Kernel::CollectiveMainloop::set_l2_policy(params.mainloop, Gemm::kSwapAB ? a.n : a.m, Gemm::kSwapAB ? a.m : a.n,
                                            weight, l2_bytes(a.device));
}

inline int status(cutlass::Status s, char const* what) {
  if (s == cutlass::Status::kSuccess) return CKS_OK;
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return cuda_fail(err, what);
  return fail(CKS_ERROR_INTERNAL, std::string(what) + ": " + cutlassGetStatusString(s));
}

// ABI, arguments, then the epilogue's own checks (permute view, C, E, bias); fills epi.
template <class Cfg>
int prepare(CksArgs const& a, typename FusedEpilogue<Cfg>::Params& epi) {
  if (int s = check_abi(a)) return s;
  std::string why = check_problem<Cfg>(a);
  if (why.empty()) why = FusedEpilogue<Cfg>::init_host(epi, a);
  return why.empty() ? CKS_OK : fail(CKS_ERROR_INVALID_PROBLEM, why);
}

inline int tiles(int extent, int tile) { return (extent + tile - 1) / tile; }

// Launches a CUTLASS 3.x kernel with its cluster shape on `device` (the current device); the
// dynamic shared memory limit is raised once per device and kernel (cks::configure). `cooperative`:
// all of its CTAs resident at once, or the launch fails.
template <class Kernel>
int launch(typename Kernel::Params const& params, int device, cudaStream_t stream, char const* what,
           bool cooperative = false) {
  if (int s = configure<Kernel>(cutlass::device_kernel<Kernel>, Kernel::SharedStorageSize, device)) return s;
  cudaLaunchAttribute attributes[2];
  cudaLaunchConfig_t config = launch_config<Kernel>(Kernel::get_grid_shape(params), stream, attributes[0]);
  if (cooperative) {
    attributes[1].id = cudaLaunchAttributeCooperative;
    attributes[1].val.cooperative = 1;
    config.numAttrs = 2;
  }
  return launched(cudaLaunchKernelEx(&config, cutlass::device_kernel<Kernel>, params), what);
}

}  // namespace sm90
}  // namespace cks
