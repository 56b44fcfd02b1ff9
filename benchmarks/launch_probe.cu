// Host cost of the CUDA calls an sm90 entry point makes, one at a time, on this machine
// (issue 15: where a repeated call's C-side microseconds go). Build and run:
//   nvcc -std=c++17 -O2 -gencode arch=compute_90a,code=sm_90a benchmarks/launch_probe.cu -o launch_probe
//   ./launch_probe [--isolated]
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

template <int kBytes>
struct Blob {
  char bytes[kBytes];
};

template <int kBytes>
__global__ void empty_kernel(Blob<kBytes> blob) {
  if (blob.bytes[0] == 42 && threadIdx.x == 1000) printf("never\n");
}

static bool g_isolated = false;  // time each call alone, the stream drained before it

static double per_call_us(std::function<void()> const& fn, cudaStream_t stream, int calls = 2000) {
  std::vector<double> runs;
  if (g_isolated) {
    for (int i = 0; i < calls; ++i) {
      cudaStreamSynchronize(stream);
      auto start = std::chrono::steady_clock::now();
      fn();
      auto stop = std::chrono::steady_clock::now();
      runs.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
    cudaStreamSynchronize(stream);
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
  }
  for (int r = 0; r < 7; ++r) {
    cudaStreamSynchronize(stream);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn();
    auto stop = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / calls);
    cudaStreamSynchronize(stream);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

template <int kBytes>
static void launches(cudaStream_t stream) {
  Blob<kBytes> blob{};
  auto kernel = empty_kernel<kBytes>;
  std::printf("kernel parameters of %d bytes:\n", kBytes);
  std::printf("  %-58s %6.2f us\n", "<<<132, 384, 0, stream>>>",
              per_call_us([&] { kernel<<<132, 384, 0, stream>>>(blob); }, stream));
  for (int variant = 0; variant < 4; ++variant) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(132);
    config.blockDim = dim3(384);
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    char const* what = "cudaLaunchKernelEx, no attribute";
    if (variant == 1 || variant == 2) {
      attribute[0].id = cudaLaunchAttributeClusterDimension;
      attribute[0].val.clusterDim.x = unsigned(variant);  // 1x1x1, then 2x1x1
      attribute[0].val.clusterDim.y = 1;
      attribute[0].val.clusterDim.z = 1;
      what = variant == 1 ? "cudaLaunchKernelEx, cluster 1x1x1" : "cudaLaunchKernelEx, cluster 2x1x1";
    } else if (variant == 3) {
      attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attribute[0].val.programmaticStreamSerializationAllowed = 1;
      what = "cudaLaunchKernelEx, programmatic serialization (PDL)";
    }
    config.attrs = attribute;
    config.numAttrs = variant == 0 ? 0 : 1;
    std::printf("  %-58s %6.2f us\n", what,
                per_call_us([&] { cudaLaunchKernelEx(&config, kernel, blob); }, stream));
  }
}

// What the parallel split-K plan launches (a 1,280-byte-parameter GEMM with a cluster
// attribute, then a small reduction with PDL), and serial split-K's memset + GEMM: as separate
// calls, and as one CUDA graph of the same work captured once and launched per call.
static void pairs(cudaStream_t stream) {
  Blob<1280> gemm{};
  Blob<256> reduce{};
  void* turnstiles = nullptr;
  cudaMalloc(&turnstiles, 4096);
  cudaLaunchConfig_t g = {};
  g.gridDim = dim3(132);
  g.blockDim = dim3(384);
  g.stream = stream;
  cudaLaunchAttribute ga[1];
  ga[0].id = cudaLaunchAttributeClusterDimension;
  ga[0].val.clusterDim.x = 1;
  ga[0].val.clusterDim.y = 1;
  ga[0].val.clusterDim.z = 1;
  g.attrs = ga;
  g.numAttrs = 1;
  cudaLaunchConfig_t r = {};
  r.gridDim = dim3(256);
  r.blockDim = dim3(128);
  r.stream = stream;
  cudaLaunchAttribute ra[1];
  ra[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  ra[0].val.programmaticStreamSerializationAllowed = 1;
  r.attrs = ra;
  r.numAttrs = 1;
  auto two = [&] {
    cudaLaunchKernelEx(&g, empty_kernel<1280>, gemm);
    cudaLaunchKernelEx(&r, empty_kernel<256>, reduce);
  };
  auto memset_gemm = [&] {
    cudaMemsetAsync(turnstiles, 0, 4096, stream);
    cudaLaunchKernelEx(&g, empty_kernel<1280>, gemm);
  };
  std::printf("plans:\n");
  std::printf("  %-58s %6.2f us\n", "GEMM (1280 B, cluster) + reduction (PDL): two launches", per_call_us(two, stream));
  std::printf("  %-58s %6.2f us\n", "memset + GEMM (1280 B, cluster)", per_call_us(memset_gemm, stream));
  for (int which = 0; which < 2; ++which) {
    cudaStream_t capture;
    cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking);
    g.stream = r.stream = capture;
    cudaGraph_t graph = nullptr;
    cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal);
    if (which == 0) {
      cudaLaunchKernelEx(&g, empty_kernel<1280>, gemm);
      cudaLaunchKernelEx(&r, empty_kernel<256>, reduce);
    } else {
      cudaMemsetAsync(turnstiles, 0, 4096, capture);
      cudaLaunchKernelEx(&g, empty_kernel<1280>, gemm);
    }
    cudaError_t err = cudaStreamEndCapture(capture, &graph);
    cudaGraphExec_t exec = nullptr;
    if (err == cudaSuccess) err = cudaGraphInstantiate(&exec, graph, 0);
    g.stream = r.stream = stream;
    char const* what = which == 0 ? "the same two as one graph (cudaGraphLaunch)" : "memset + GEMM as one graph";
    if (err != cudaSuccess) {
      std::printf("  %-58s failed: %s\n", what, cudaGetErrorString(err));
      cudaGetLastError();
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    cudaGraphExec_t timed = nullptr;
    cudaGraphInstantiate(&timed, graph, 0);
    double instantiate = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::printf("  %-58s %6.2f us\n", what, per_call_us([&] { cudaGraphLaunch(exec, stream); }, stream));
    std::printf("  %-58s %6.2f us\n", "  (capture not timed; one cudaGraphInstantiate)", instantiate);
    cudaGraphExecDestroy(timed);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(capture);
  }
  cudaStreamCaptureStatus status;
  std::printf("  %-58s %6.2f us\n", "cudaStreamIsCapturing",
              per_call_us([&] { cudaStreamIsCapturing(stream, &status); }, stream));
  CUfunction fn = nullptr;
  void* pfn = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fn), reinterpret_cast<void const*>(empty_kernel<1280>)) ==
          cudaSuccess &&
      cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &pfn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
      pfn) {
    auto launch = reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(pfn);
    CUlaunchConfig config = {};
    config.gridDimX = 132;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 384;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream;
    CUlaunchAttribute attribute[1];
    attribute[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute[0].value.clusterDim.x = attribute[0].value.clusterDim.y = attribute[0].value.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    void* params[] = {&gemm};
    std::printf("  %-58s %6.2f us\n", "cuLaunchKernelEx (driver, 1280 B, cluster)",
                per_call_us([&] { launch(&config, fn, params, nullptr); }, stream));
  }
  cudaFree(turnstiles);
}

int main(int argc, char** argv) {
  g_isolated = argc > 1 && std::string(argv[1]) == "--isolated";
  std::printf("%s\n", g_isolated ? "each call timed alone, the stream drained before it (median of 2000)"
                                  : "2000 calls back to back, per call (median of 7 runs)");
  cudaStream_t stream;
  cudaSetDevice(0);
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaFree(nullptr);
  void* buffer = nullptr;
  cudaMalloc(&buffer, 1 << 20);
  launches<64>(stream);
  launches<1024>(stream);
  launches<4000>(stream);
  pairs(stream);
  std::printf("other calls:\n");
  int device = 0;
  std::printf("  %-58s %6.2f us\n", "cudaGetDevice", per_call_us([&] { cudaGetDevice(&device); }, stream));
  std::printf("  %-58s %6.2f us\n", "cudaSetDevice(current)", per_call_us([&] { cudaSetDevice(0); }, stream));
  int value = 0;
  std::printf("  %-58s %6.2f us\n", "cudaDeviceGetAttribute(compute capability major)",
              per_call_us([&] { cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0); }, stream));
  std::printf("  %-58s %6.2f us\n", "cudaGetLastError", per_call_us([&] { cudaGetLastError(); }, stream));
  std::printf("  %-58s %6.2f us\n", "cudaMemsetAsync(64 bytes)",
              per_call_us([&] { cudaMemsetAsync(buffer, 0, 64, stream); }, stream));
  void* pfn = nullptr;
  cudaDriverEntryPointQueryResult found;
  std::printf("  %-58s %6.2f us\n", "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)",
              per_call_us([&] {
                cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pfn, 12000, cudaEnableDefault, &found);
              }, stream));
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pfn);
  CUtensorMap map;
  cuuint64_t dims[2] = {4096, 16};
  cuuint64_t strides[1] = {4096 * 2};
  cuuint32_t box[2] = {64, 64};
  cuuint32_t element_strides[2] = {1, 1};
  std::printf("  %-58s %6.2f us\n", "cuTensorMapEncodeTiled (2-D f16, 128B swizzle)",
              per_call_us([&] {
                encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buffer, dims, strides, box, element_strides,
                       CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
              }, stream));
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
