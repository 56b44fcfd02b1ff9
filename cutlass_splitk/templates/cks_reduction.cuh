// cutlass-splitk: parallel split-K's second kernel, shared by every backend. A GEMM writes
// float32 partials (slice s of partition s at partials + s * slice_stride, leading dimension
// ld); reduce_epilogue_kernel sums them and applies the whole FusedEpilogue, including the
// permuted store, in one pass. launch_reduction() launches it after the GEMM on the same
// stream, with programmatic dependent launch where pdl_mode() allows.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cutlass/cutlass.h"
#include "cutlass/array.h"

#include "cks_epilogue.cuh"
#include "cks_host.cuh"

namespace cks {

// Programmatic dependent launch (sm_90+): the reduction is launched with
// programmaticStreamSerializationAllowed and waits for the GEMM's memory before reading
// partials, so its launch overlaps the GEMM's tail. By default the GEMM triggers it
// implicitly (as its CTAs exit); with CUTLASS_SPLITK_PDL=early every GEMM CTA triggers at
// its start, so the reduction's CTAs become resident while the last wave runs. Both
// instructions are no-ops where the launch did not ask for PDL.
CUTLASS_DEVICE void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
CUTLASS_DEVICE void pdl_wait_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Threads along x own one kV-vector of output each and sum its partitions with 16-byte,
// streamed (evict-first) loads, several partitions in flight. Only where there are too few
// vectors to fill the GPU do blockDim.y > 1 threads split the partitions between them and
// meet in shared memory (reduce_threads_y).
static int const kReduceThreadsX = 64;
static int const kReduceThreadsYMax = 4;
static int64_t const kReduceTargetThreads = 65536;
// The kernel's own shared memory (partial_sums below), per block.
template <class Cfg>
constexpr int kReduceStaticSmem =
    int(sizeof(typename FusedEpilogue<Cfg>::Vec)) * kReduceThreadsX * (kReduceThreadsYMax - 1);

inline int reduce_threads_y(int64_t vectors, int partitions) {
  int y = 1;
  while (y < kReduceThreadsYMax && y < partitions && vectors * y < kReduceTargetThreads) y *= 2;
  return y;
}

template <class Cfg>
__global__ void __launch_bounds__(kReduceThreadsX* kReduceThreadsYMax)
    reduce_epilogue_kernel(typename FusedEpilogue<Cfg>::Params p, float const* partials,
                           int64_t ld, int64_t slice_stride, int slices) {
  using Epi = FusedEpilogue<Cfg>;
  static int const kV = Epi::kV;
  static int const kChunk = kV < 4 ? kV : 4;  // 16-byte loads where the vector allows
  using Vec = typename Epi::Vec;
  __shared__ Vec partial_sums[kReduceThreadsYMax - 1][kReduceThreadsX];
  static_assert(sizeof(partial_sums) == kReduceStaticSmem<Cfg>, "the launch's shared memory cap counts these");

  // An output may hold 2^31 elements or more: the vector's index in 64 bits there, in 32 (one division
  // instruction sequence instead of the 64-bit routine) where every index fits (a uniform branch)
  int const vecs_per_row = p.n / kV;
  int64_t const vectors = int64_t(p.m) * vecs_per_row;
  int64_t const vec = int64_t(blockIdx.x) * kReduceThreadsX + threadIdx.x;
  bool const active = vec < vectors;
  int row = 0, col = 0;
  if (active) {
    if (vectors <= INT32_MAX) {
      int const v = int(vec);
      row = v / vecs_per_row;
      col = (v - row * vecs_per_row) * kV;
    } else {
      row = int(vec / vecs_per_row);
      col = int(vec - int64_t(row) * vecs_per_row) * kV;
    }
  }
  int const ys = blockDim.y;

  // The epilogue's own inputs (C, bias, E) are not written by the GEMM, which ran after
  // everything before it on the stream: load them before waiting for it, so their latency
  // overlaps the GEMM's tail and the partials' loads instead of following them.
  bool const applies = active && threadIdx.y == 0;
  typename Epi::Sources sources;
  if (applies) Epi::load_sources(p, row, col, sources);
  pdl_wait_primary();
  Vec acc;
  acc.clear();
  if (active) {
    float const* src = partials + int64_t(row) * ld + col;
#pragma unroll 4
    for (int s = threadIdx.y; s < slices; s += ys) {
      float const* q = src + s * slice_stride;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; i += kChunk) {
        cutlass::Array<float, kChunk> x = load_vec<float, kChunk, true>(q + i);
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < kChunk; ++j) acc[i + j] += x[j];
      }
    }
  }
  if (threadIdx.y > 0) partial_sums[threadIdx.y - 1][threadIdx.x] = acc;
  __syncthreads();
  if (!applies) return;
  for (int y = 0; y < ys - 1; ++y) {
    Vec const& other = partial_sums[y][threadIdx.x];
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kV; ++i) acc[i] += other[i];
  }
  Epi::apply_and_store(p, row, col, sources, acc);
}

// What a device offers reduce_spread_smem (its attributes; any 0: unknown, no cap).
struct SpreadDevice {
  int sms, smem_per_sm, smem_optin, threads_per_sm, reserved_smem_per_block;
};

// The reduction's blocks spread over the SMs. Launched with PDL, they become resident while the
// GEMM runs, wherever an SM is free: where a one-round GEMM fills nearly every SM (128 CTAs on an
// H100's 132 SMs), the few idle SMs take as many blocks as their threads allow (8 of 128 each) and,
// once the GEMM ends, read a quarter of the partials alone. So each block then claims unused
// dynamic shared memory that caps an SM at its even share of the blocks (one of 128). Where the
// GEMM leaves many SMs idle or runs several rounds (its CTAs ending apart), blocks resident early
// on any SM beat a cap that leaves some to launch after the GEMM's end: no cap. H100, round 52
// (BENCHMARKS.md, session 32): 0.5-1.7 us less per call on the suite's skinny and decode picks,
// 1-7 % slower on two-round candidates and on a 64-CTA GEMM when capped, hence the rule.
// Returns the dynamic shared memory a block asks for (0: no cap), for `blocks` blocks of
// `threads_per_block` threads and `static_smem` bytes after a GEMM of `gemm_ctas` CTAs that runs in
// one round (0: not one round).
inline int reduce_spread_smem(SpreadDevice const& d, int gemm_ctas, unsigned blocks, int threads_per_block,
                              int static_smem) {
  if (gemm_ctas <= 0 || d.sms <= 0 || (d.sms - gemm_ctas) * 8 > d.sms) return 0;  // over an eighth of the SMs idle
  if (d.smem_per_sm <= 0 || d.smem_optin <= static_smem || d.threads_per_sm <= 0) return 0;
  int const per_sm = int((blocks + unsigned(d.sms) - 1) / unsigned(d.sms));
  if (per_sm * threads_per_block >= d.threads_per_sm) return 0;  // the threads cap it already
  // Whole 256-byte units, so that the allocation's rounding cannot leave room for one block fewer.
  int const bytes = (d.smem_per_sm / per_sm - d.reserved_smem_per_block - static_smem) & ~255;
  int const most = (d.smem_optin - static_smem) & ~255;
  return bytes <= 0 ? 0 : (bytes < most ? bytes : most);
}

inline SpreadDevice spread_device(int device) {
  return SpreadDevice{device_attribute<cudaDevAttrMultiProcessorCount>(device),
                      device_attribute<cudaDevAttrMaxSharedMemoryPerMultiprocessor>(device),
                      device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(device),
                      device_attribute<cudaDevAttrMaxThreadsPerMultiProcessor>(device),
                      device_attribute<cudaDevAttrReservedSharedMemoryPerBlock>(device)};
}

template <class Cfg>
struct ReduceSpread {};  // configure()'s once-per-device key of the reduction kernel's shared memory limit

// Launches the reduction of ``partitions`` slices of float32 partials of the problem ``a`` into
// its epilogue ``epi`` (FusedEpilogue<Cfg>::init_host's for ``a``, which the caller's checks
// filled) on ``stream``, after the GEMM already queued there (with PDL unless pdl is kOff).
// ``gemm_ctas``: that GEMM's CTAs where it runs in one round (reduce_spread_smem), else 0.
// The kernel is instantiated per EpilogueKey<Cfg> (what the epilogue does), so the GEMM configs of one
// op share it.
template <class Cfg>
int launch_reduction(typename FusedEpilogue<Cfg>::Params const& epi, CksArgs const& a, float const* partials,
                     int64_t ld, int64_t slice_stride, int partitions, cudaStream_t stream, Pdl pdl,
                     int gemm_ctas = 0) {
  using Key = EpilogueKey<Cfg>;
  static_assert(std::is_same<typename FusedEpilogue<Key>::Params, typename FusedEpilogue<Cfg>::Params>::value,
                "the key's epilogue takes the same parameters");
  int64_t const vectors = int64_t(a.m) * (a.n / Key::kAlignment);
  if ((vectors + kReduceThreadsX - 1) / kReduceThreadsX > int64_t(INT32_MAX))
    return fail(CKS_ERROR_INVALID_PROBLEM, "the output is too large for the reduction's grid (M * N / alignment over 2^37)");
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned((vectors + kReduceThreadsX - 1) / kReduceThreadsX));
  config.blockDim = dim3(kReduceThreadsX, reduce_threads_y(vectors, partitions));
  config.stream = stream;
  if (pdl != Pdl::kOff && gemm_ctas > 0) {  // only then can there be a cap: no attribute reads otherwise
    SpreadDevice const d = spread_device(a.device);
    int const smem = reduce_spread_smem(d, gemm_ctas, config.gridDim.x, int(config.blockDim.x * config.blockDim.y),
                                        kReduceStaticSmem<Key>);
    if (smem > 0) {
      if (int s = configure<ReduceSpread<Key>>(reduce_epilogue_kernel<Key>, d.smem_optin - kReduceStaticSmem<Key>,
                                               a.device))
        return s;
      config.dynamicSmemBytes = size_t(smem);
    }
  }
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = pdl == Pdl::kOff ? 0 : 1;
  return launched(cudaLaunchKernelEx(&config, reduce_epilogue_kernel<Key>, epi, partials, ld, slice_stride,
                                     partitions),
                  "parallel split-K reduction launch");
}

}  // namespace cks
