// Session 28's probe of the L2 request coalescer (LRC): when does it merge the TMA loads of different CTAs
// that ask for the same tile? cuBLAS's skinny GEMMs get their CTAs' own loads merged 2.5-fold, ours none
// (BENCHMARKS.md, session 28). Here 128 CTAs stream 64 x 64 f16 tiles (8 KB, 128-byte swizzle) with TMA, one
// thread each, STAGES loads in flight, no math; each group of `group` CTAs reads the same row block, tile after
// tile along K. What varies: which CTAs form a group (consecutive block indices, or one every 128 / group),
// whether a group is one cluster (its CTAs then run in one GPC; each still loads for itself: no multicast), and
// a start offset per member. ncu's lrc__* counters say how many of the loaded sectors reached L2.
//
//   nvcc -O2 -arch=sm_90a -o lrc_probe benchmarks/lrc_probe.cu
//   ncu --metrics lrc__lrc2xbar_sectors_op_read.sum,gpu__time_duration.sum ./lrc_probe MODE STAGGER_NS
//
// MODE 0: consecutive members, no cluster; 1: strided members, no cluster; 2: consecutive members, one cluster
// per group; 3: every CTA its own row block (nothing to merge: the baseline); 9 CTAS CLUSTER: where a launch's
// CTAs run (block index -> SM). A script, not a test.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

constexpr int kStages = 8;
constexpr int kTile = 64;                     // rows and f16 columns of a box (128 bytes a row)
constexpr int kBoxBytes = kTile * kTile * 2;  // 8 KB
constexpr int kCtas = 128;

__device__ __forceinline__ uint32_t smem_addr(void const* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__global__ void __launch_bounds__(32) probe(const __grid_constant__ CUtensorMap map, int tiles, int group, int mode,
                                            int stagger_ns) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bars[kStages];
  int const cta = blockIdx.x;
  int const groups = kCtas / group;
  int const gid = mode == 3 ? cta : (mode == 1 ? cta % groups : cta / group);
  int const member = mode == 1 ? cta / groups : cta % group;
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bars[s])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  if (stagger_ns > 0) {
    long long const until = clock64() + (long long)member * stagger_ns * 2;  // ~2 cycles a ns
    while (clock64() < until) {
    }
  }
  int const row = gid * kTile;
  for (int t = 0; t < tiles; ++t) {
    int const s = t % kStages;
    uint32_t const bar = smem_addr(&bars[s]);
    if (t >= kStages) wait_parity(bar, ((t / kStages) - 1) & 1);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kBoxBytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            smem_addr(smem + s * kBoxBytes)),
        "l"(&map), "r"(t * kTile), "r"(row), "r"(bar)
        : "memory");
  }
  for (int t = tiles > kStages ? tiles - kStages : 0; t < tiles; ++t)
    wait_parity(smem_addr(&bars[t % kStages]), (t / kStages) & 1);
}

// Where CTAs run: every CTA of a launch of `ctas` (one an SM: all the shared memory) in clusters of `cluster` writes
// its SM (%smid) at its block index. Clusters of 16 put 16 SMs of one GPC together.
__global__ void placement(int* sm_of_block) {
  extern __shared__ unsigned char smem[];
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) sm_of_block[blockIdx.x] = int(sm) + 0 * smem[0];
}

// A launch of `ctas` CTAs of 32 threads in clusters of `cluster` with `smem` bytes of dynamic shared memory (the
// kernel's limits raised for it); `attribute` holds the cluster shape.
template <class Kernel>
cudaLaunchConfig_t launch_config(Kernel kernel, int ctas, int cluster, int smem, cudaLaunchAttribute& attribute) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(ctas);
  config.blockDim = dim3(32);
  config.dynamicSmemBytes = smem;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

int place(int ctas, int cluster) {
  int* d = nullptr;
  cudaMalloc(&d, ctas * sizeof(int));
  int smem = 0;
  cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  cudaLaunchAttribute attribute;
  cudaLaunchConfig_t config = launch_config(placement, ctas, cluster, smem, attribute);
  cudaLaunchKernelEx(&config, placement, d);
  cudaError_t e = cudaDeviceSynchronize();
  int host[1024];
  cudaMemcpy(host, d, ctas * sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("placement of %d CTAs in clusters of %d (%s): block -> SM\n", ctas, cluster, cudaGetErrorString(e));
  for (int i = 0; i < ctas; ++i) std::printf("%d%c", host[i], (i + 1) % cluster == 0 ? '|' : ' ');
  std::printf("\n");
  cudaFree(d);
  return e == cudaSuccess ? 0 : 1;
}

int main(int argc, char** argv) {
  int const mode = argc > 1 ? std::atoi(argv[1]) : 0;
  if (mode == 9) return place(argc > 2 ? std::atoi(argv[2]) : 132, argc > 3 ? std::atoi(argv[3]) : 1);
  int const stagger = argc > 2 ? std::atoi(argv[2]) : 0;
  int const group = 4;
  int const tiles = 128;                                  // 1 MB a CTA
  int const rows = (mode == 3 ? kCtas : kCtas / group) * kTile;
  size_t const cols = size_t(tiles) * kTile;
  void* data = nullptr;
  cudaMalloc(&data, rows * cols * 2);
  cudaMemset(data, 1, rows * cols * 2);
  CUtensorMap map;
  cuuint64_t dims[2] = {cols, cuuint64_t(rows)};
  cuuint64_t strides[1] = {cols * 2};
  cuuint32_t box[2] = {kTile, kTile};
  cuuint32_t elem[2] = {1, 1};
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, cuuint64_t const*,
                              cuuint64_t const*, cuuint32_t const*, cuuint32_t const*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
  if (fn == nullptr) {
    std::printf("no cuTensorMapEncodeTiled\n");
    return 1;
  }
  CUresult r = reinterpret_cast<Encode>(fn)(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, data, dims, strides, box, elem,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed: %d\n", int(r));
    return 1;
  }
  cudaLaunchAttribute attribute;
  cudaLaunchConfig_t config = launch_config(probe, kCtas, mode == 2 ? group : 1, kStages * kBoxBytes, attribute);
  for (int i = 0; i < 3; ++i) cudaLaunchKernelEx(&config, probe, map, tiles, group, mode, stagger);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("mode %d stagger %d ns: %s\n", mode, stagger, cudaGetErrorString(e));
  cudaFree(data);
  return e == cudaSuccess ? 0 : 1;
}
