// Accuracy probe for cutlass_splitk/templates/cks_activation.cuh: each activation against its
// float64 definition (erfc, exp, tanh of the C library / libdevice) over a set of float inputs.
// Built for the host (tests/test_epilogue_ptx.py: every 4099th float bit pattern plus a fine grid
// on [-12, 12]), or with -DPROBE_DEVICE for the GPU, where it evaluates every one of the 2^32
// float bit patterns with the device's own ex2 / rcp (tests/gpu/test_gpu_activation.py).
//
// Prints one line per function: name, the largest relative error where the exact value is a
// float of magnitude >= PROBE_MIN_VALUE (1e-30 unless defined), the input where it occurs, the
// largest absolute error below that, how many inputs disagree with the exact value's NaN /
// infinity class (a NaN where the definition has a number or the other way round, an infinity
// of the other sign or none), and how many inputs were evaluated.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cks_activation.cuh"

#if defined(PROBE_DEVICE)
#include <cuda_runtime.h>
#endif

#ifndef PROBE_MIN_VALUE
#define PROBE_MIN_VALUE 1e-30  // relative errors are scored at and above this magnitude
#endif

namespace {

constexpr int kFuncs = 4;
const char* const kNames[kFuncs] = {"gelu", "gelu_tanh", "silu", "sigmoid"};

__host__ __device__ inline float fn(int f, float x) {
  switch (f) {
    case 0: return cks::activate<cks::Act::kGelu>(x, 0.f);
    case 1: return cks::activate<cks::Act::kGeluTanh>(x, 0.f);
    case 2: return cks::activate<cks::Act::kSilu>(x, 0.f);
    default: return cks::activate<cks::Act::kSigmoid>(x, 0.f);
  }
}

__host__ __device__ inline double exact(int f, double x) {
  switch (f) {
    case 0: return x * 0.5 * erfc(-x * 0.70710678118654752440);
    case 1: {
      double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
      return x / (1.0 + exp(-2.0 * u));  // = x (1 + tanh u) / 2, without its cancellation
    }
    case 2: return x / (1.0 + exp(-x));
    default: return 1.0 / (1.0 + exp(-x));
  }
}

struct Stats {
  float max_rel, arg_rel, max_abs_small;
  unsigned long long bad_class, count;
};

__host__ __device__ inline void score(int f, float x, float& rel, float& abs_small, bool& bad) {
  float got = fn(f, x);
  double want = exact(f, double(x));
  rel = 0.f;
  abs_small = 0.f;
  bad = false;
  if (isnan(want) || isnan(got) || isinf(want) || isinf(got)) {
    bad = !(isnan(want) && isnan(got)) && !(double(got) == want);
    // A finite exact value beyond the float range rounds to an infinity of its sign.
    if (bad && !isnan(want) && !isnan(got) && isinf(got) && fabs(want) > 3.4028234663852886e38)
      bad = (got > 0.f) != (want > 0.0);
    return;
  }
  double aw = fabs(want);
  if (aw >= PROBE_MIN_VALUE && aw <= 3.4028234663852886e38) {
    rel = float(fabs(double(got) - want) / aw);
  } else {
    abs_small = float(fabs(double(got) - want));
  }
}

}  // namespace

#if defined(PROBE_DEVICE)
__device__ unsigned int d_rel[kFuncs], d_abs[kFuncs], d_arg[kFuncs];
__device__ unsigned long long d_bad[kFuncs];

__global__ void sweep(int f, uint64_t first) {
  uint64_t i = first + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float x;
  uint32_t bits = uint32_t(i);
  memcpy(&x, &bits, 4);
  float rel, abs_small;
  bool bad;
  score(f, x, rel, abs_small, bad);
  // Non-negative floats order as their bit patterns.
  unsigned int rb = __float_as_uint(rel);
  if (rb > 0 && atomicMax(&d_rel[f], rb) < rb) d_arg[f] = bits;  // the argmax may race: informative only
  if (abs_small > 0.f) atomicMax(&d_abs[f], __float_as_uint(abs_small));
  if (bad) atomicAdd(&d_bad[f], 1ull);
}

int main() {
  for (int f = 0; f < kFuncs; ++f) {
    const int threads = 256;
    const uint64_t per_launch = uint64_t(1) << 30;
    for (uint64_t first = 0; first < (uint64_t(1) << 32); first += per_launch)
      sweep<<<unsigned(per_launch / threads), threads>>>(f, first);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("error %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  unsigned int rel[kFuncs], abs_small[kFuncs], arg[kFuncs];
  unsigned long long bad[kFuncs];
  cudaMemcpyFromSymbol(rel, d_rel, sizeof rel);
  cudaMemcpyFromSymbol(abs_small, d_abs, sizeof abs_small);
  cudaMemcpyFromSymbol(arg, d_arg, sizeof arg);
  cudaMemcpyFromSymbol(bad, d_bad, sizeof bad);
  for (int f = 0; f < kFuncs; ++f) {
    float r, a, x;
    memcpy(&r, &rel[f], 4);
    memcpy(&a, &abs_small[f], 4);
    memcpy(&x, &arg[f], 4);
    std::printf("%s %.6e %.9g %.6e %llu %llu\n", kNames[f], r, x, a, bad[f], 1ull << 32);
  }
  return 0;
}
#else
int main() {
  for (int f = 0; f < kFuncs; ++f) {
    Stats s{0.f, 0.f, 0.f, 0, 0};
    auto visit = [&](float x) {
      float rel, abs_small;
      bool bad;
      score(f, x, rel, abs_small, bad);
      if (rel > s.max_rel) s.max_rel = rel, s.arg_rel = x;
      if (abs_small > s.max_abs_small) s.max_abs_small = abs_small;
      s.bad_class += bad;
      ++s.count;
    };
    for (uint64_t i = 0; i < (uint64_t(1) << 32); i += 4099) {
      float x;
      uint32_t bits = uint32_t(i);
      std::memcpy(&x, &bits, 4);
      visit(x);
    }
    for (int i = -1200000; i <= 1200000; ++i) visit(float(i) * 1e-5f);
    const float specials[] = {INFINITY, -INFINITY, NAN, 0.f, -0.f};
    for (float x : specials) visit(x);
    std::printf("%s %.6e %.9g %.6e %llu %llu\n", kNames[f], s.max_rel, s.arg_rel, s.max_abs_small, s.bad_class,
                s.count);
  }
  return 0;
}
#endif
