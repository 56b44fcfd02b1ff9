// cutlass-splitk: the epilogue's activation functions (float in, float out), shared by every
// backend and split-K strategy. Self-contained (no CUTLASS), so that a host program can
// evaluate the same formulas (tests/data/activation_probe.cu).
//
// GELU, GELU-tanh, SiLU and sigmoid are written around one ex2 and one reciprocal each (the
// SFU's ex2.approx / rcp.approx on the device), without the cancellation of 1 + erf(x) and
// 1 + tanh(x) for negative x:
//
//   gelu(x)      = x * Phi(x),      Phi(x) = erfc(-x / sqrt 2) / 2, with erfc(z) = t exp(-z^2 + P(t)),
//                  t = 1 / (1 + z / 2), z >= 0 (the form of Numerical Recipes' erfcc), P of degree 5
//                  fitted by benchmarks/fit_gelu.py (relative error of erfc 7.7e-6 on 0 <= z <= 9.5);
//   gelu_tanh(x) = x * sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3)  (= x (1 + tanh u) / 2);
//   silu(x)      = x * sigmoid(x);  sigmoid(x) = 1 / (1 + exp(-x)).
//
// Relative to the exact function (float64), wherever its value is at least 1e-3 in magnitude,
// GELU is within 1.2e-5 and the others within 1e-6; down to 1e-30 (where the exponent's argument
// nears 100 and its own rounding shows) all are within 2.5e-5 (every float checked on the GPU:
// tests/gpu/test_gpu_activation.py). The outputs are f16 / bf16, which round to 2^-11 / 2^-8
// relative (4.9e-4 / 3.9e-3). Results the float range cannot hold as a normal number flush to
// zero (ftz), as erff's 1 + erf(x) did for every x < -5.9. NaN stays NaN; gelu(-inf),
// gelu_tanh(-inf) and silu(-inf) are NaN (-inf * 0), as with the textbook formulas; +inf maps to
// +inf (sigmoid: 1, and 0 at -inf). The former formulas (erff, tanhf, expf and IEEE division)
// left the fused chain's in-kernel epilogue ~39 instructions per output on the H100, ~27 of them
// GELU's; now ~26 (ncu, BENCHMARKS.md sessions 12 and 16).
#pragma once

#include <cmath>

namespace cks {

enum class Act { kIdentity, kRelu, kGelu, kGeluTanh, kSilu, kSigmoid, kLeakyRelu };

namespace act_detail {

// 2^x and 1/x: the SFU's approximations on the device (max error ~2 ulp, subnormal results
// flushed to zero), the C library's on the host.
__host__ __device__ __forceinline__ float exp2_fast(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return std::exp2(x);
#endif
}

__host__ __device__ __forceinline__ float rcp_fast(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return 1.f / x;
#endif
}

// sigmoid(y) where w = -y * log2(e) is given: 1 / (1 + 2^w).
__host__ __device__ __forceinline__ float sigmoid_of_log2(float w) { return rcp_fast(1.f + exp2_fast(w)); }

constexpr float kLog2e = 1.44269504088896340736f;

}  // namespace act_detail

// Phi(x) * x with Phi the standard normal CDF: Phi(x) = erfc(|x| / sqrt 2) / 2 for x < 0, one
// minus that for x >= 0. The polynomial (benchmarks/fit_gelu.py prints it) is in base 2 and
// halves erfc through its constant term.
__host__ __device__ __forceinline__ float gelu_erf(float x) {
  using namespace act_detail;
  float t = rcp_fast(fmaf(fabsf(x), 0.353553390593273762f, 1.f));  // 1 / (1 + |x| / (2 sqrt 2))
  float p = 3.301025331e-01f;
  p = fmaf(p, t, -1.023222446e+00f);
  p = fmaf(p, t, 6.846259236e-01f);
  p = fmaf(p, t, 3.670491576e-01f);
  p = fmaf(p, t, 1.468689799e+00f);
  float q = fmaf(x * (-0.5f * kLog2e), x, -2.827233791e+00f);  // -z^2 log2(e) + P(0) log2(e) - 1
  float h = t * exp2_fast(fmaf(p, t, q));                        // erfc(|x| / sqrt 2) / 2
  return x * (x < 0.f ? h : 1.f - h);
}

__host__ __device__ __forceinline__ float gelu_tanh(float x) {
  using namespace act_detail;
  // w = -2 u log2(e), u = sqrt(2 / pi) (x + 0.044715 x^3)
  constexpr float k1 = -2.f * 0.79788456080286535588f * kLog2e;
  constexpr float k3 = k1 * 0.044715f;
  return x * sigmoid_of_log2(x * fmaf(x * x, k3, k1));
}

__host__ __device__ __forceinline__ float silu(float x) {
  return x * act_detail::sigmoid_of_log2(x * -act_detail::kLog2e);
}

__host__ __device__ __forceinline__ float sigmoid(float x) {
  return act_detail::sigmoid_of_log2(x * -act_detail::kLog2e);
}

// NaN propagates as in torch.nn.functional.
template <Act A>
__host__ __device__ __forceinline__ float activate(float x, float arg) {
  if constexpr (A == Act::kIdentity) {
    return x;
  } else if constexpr (A == Act::kRelu) {
    return x < 0.f ? 0.f : x;
  } else if constexpr (A == Act::kGelu) {
    return gelu_erf(x);
  } else if constexpr (A == Act::kGeluTanh) {
    return gelu_tanh(x);
  } else if constexpr (A == Act::kSilu) {
    return silu(x);
  } else if constexpr (A == Act::kSigmoid) {
    return sigmoid(x);
  } else {  // kLeakyRelu
    return x < 0.f ? x * arg : x;
  }
}

// activate<act> on every value of v, the activation chosen at run time (once per vector: the
// branch is uniform where every thread runs the same op).
template <class Vec>
__host__ __device__ __forceinline__ void activate_all(Act act, Vec& v, float arg) {
  constexpr int kN = int(Vec::kElements);
  switch (act) {
#define CKS_ACTIVATE_ALL(A)                                     \
  case A:                                                       \
    _Pragma("unroll") for (int i = 0; i < kN; ++i) v[i] = activate<A>(v[i], arg); \
    return;
    CKS_ACTIVATE_ALL(Act::kIdentity)
    CKS_ACTIVATE_ALL(Act::kRelu)
    CKS_ACTIVATE_ALL(Act::kGelu)
    CKS_ACTIVATE_ALL(Act::kGeluTanh)
    CKS_ACTIVATE_ALL(Act::kSilu)
    CKS_ACTIVATE_ALL(Act::kSigmoid)
    CKS_ACTIVATE_ALL(Act::kLeakyRelu)
#undef CKS_ACTIVATE_ALL
  }
}

}  // namespace cks
