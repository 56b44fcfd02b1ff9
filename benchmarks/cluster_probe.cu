// How many thread-block clusters of each size an H100 runs at once (session 25, `device_s25.sh occ`).
//
// Round 36 (session 22) found the 128x128 partial tile in clusters of four running one wave up to 112 CTAs and
// two from 120 on, while cuBLAS's split-K kernels ran 120 CTAs in clusters of four and eight in one wave
// (session 24's ncu). This probe separates the hardware from our kernels: for cluster sizes 1, 2, 4, 8 (and 16,
// non-portable) and a CTA of 384 threads with 48 KB to 227 KB of dynamic shared memory (one CTA per SM from
// 116 KB on), it prints cudaOccupancyMaxActiveClusters, then launches grids of 96 to 136 CTAs of a kernel that
// spins for a fixed time and reports how many waves the grid took (elapsed / spin time) and how many SMs it
// used. Build: nvcc -O2 -arch=sm_90a -o cluster_probe benchmarks/cluster_probe.cu
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::printf("error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); return 1; } } while (0)

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

__global__ void __launch_bounds__(384, 1) spin(unsigned long long spin_ns, unsigned* sm_of_cta) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %smid;" : "=r"(sm));
    smem[0] = 1;
    sm_of_cta[blockIdx.y * gridDim.x + blockIdx.x] = sm;
    unsigned long long start = global_ns();
    while (global_ns() - start < spin_ns) {
    }
  }
  __syncthreads();
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs, %zu B shared memory per block (opt-in)\n", prop.name, prop.multiProcessorCount,
              prop.sharedMemPerBlockOptin);
  CHECK(cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)prop.sharedMemPerBlockOptin));
  CHECK(cudaFuncSetAttribute(spin, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  unsigned* d_sm;
  CHECK(cudaMalloc(&d_sm, 1024 * sizeof(unsigned)));
  unsigned h_sm[1024];
  const unsigned long long spin_ns = 200000;  // 200 us: launch overhead is noise beside it
  const int smems[] = {48 << 10, 100 << 10, 200 << 10, (int)prop.sharedMemPerBlockOptin};
  const int clusters[][2] = {{1, 1}, {2, 1}, {4, 1}, {2, 2}, {1, 4}, {8, 1}, {16, 1}};
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  for (int smem : smems) {
    for (auto const& c : clusters) {
      int size = c[0] * c[1];
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = c[0];
      attr[0].val.clusterDim.y = c[1];
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      cfg.blockDim = dim3(384, 1, 1);
      cfg.dynamicSmemBytes = smem;
      cfg.gridDim = dim3(c[0] * 8, c[1], 1);
      int max_clusters = -1;
      cudaError_t e = cudaOccupancyMaxActiveClusters(&max_clusters, spin, &cfg);
      if (e != cudaSuccess) {
        cudaGetLastError();
        std::printf("smem %6d cluster %dx%d: occupancy query failed: %s\n", smem, c[0], c[1], cudaGetErrorString(e));
        continue;
      }
      std::printf("smem %6d cluster %dx%d: max active clusters %d (%d CTAs)\n", smem, c[0], c[1], max_clusters,
                  max_clusters * size);
      for (int ctas = 96; ctas <= 136; ctas += 4) {
        if (ctas % size) continue;
        // the grid: ctas CTAs as (ctas / c[1]) x c[1], each cluster c[0] x c[1]
        if ((ctas / c[1]) % c[0]) continue;
        cfg.gridDim = dim3(ctas / c[1], c[1], 1);
        float best = 1e30f;
        for (int rep = 0; rep < 2; ++rep) {
          CHECK(cudaEventRecord(t0));
          e = cudaLaunchKernelEx(&cfg, spin, spin_ns, d_sm);
          CHECK(cudaEventRecord(t1));
          if (e != cudaSuccess) break;
          CHECK(cudaEventSynchronize(t1));
          float ms;
          CHECK(cudaEventElapsedTime(&ms, t0, t1));
          best = ms < best ? ms : best;
        }
        if (e != cudaSuccess) {
          cudaGetLastError();
          std::printf("    %3d CTAs: launch failed: %s\n", ctas, cudaGetErrorString(e));
          continue;
        }
        CHECK(cudaMemcpy(h_sm, d_sm, ctas * sizeof(unsigned), cudaMemcpyDeviceToHost));
        int seen[1024] = {0}, distinct = 0;
        for (int i = 0; i < ctas; ++i) distinct += !seen[h_sm[i] % 1024]++;
        std::printf("    %3d CTAs: %.2f waves (%.1f us), %d distinct SMs\n", ctas, best * 1e6f / spin_ns, best * 1e3f,
                    distinct);
      }
    }
  }
  return 0;
}
