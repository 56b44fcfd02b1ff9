// Probe for cks_activation.cuh's activate_all (the activation chosen at run time, which the sm90
// partial GEMM's tail applies for any op): for each activation, the inputs where it differs in any
// bit from activate<A>, the compiled-in one, over every 4099th float bit pattern and a grid on
// [-12, 12]. Built for the host by tests/test_epilogue_ptx.py. Prints one line per activation:
// its index, the mismatches and the inputs evaluated.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cks_activation.cuh"

struct Vec4 {  // what activate_all needs of a vector
  static constexpr int kElements = 4;
  float v[4];
  __host__ __device__ float& operator[](int i) { return v[i]; }
};

template <cks::Act A>
unsigned long long mismatches(float const* x, int n, unsigned long long& count) {
  unsigned long long bad = 0;
  for (int i = 0; i + 4 <= n; i += 4) {
    Vec4 got;
    std::memcpy(got.v, x + i, sizeof(got.v));
    cks::activate_all(A, got, 0.125f);
    for (int j = 0; j < 4; ++j) {
      float want = cks::activate<A>(x[i + j], 0.125f);
      bad += std::memcmp(&want, &got.v[j], sizeof(float)) != 0;
      ++count;
    }
  }
  return bad;
}

int main() {
  static float x[(1u << 20) + 200000];
  int n = 0;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 4099) {
    uint32_t b = uint32_t(bits);
    std::memcpy(&x[n++], &b, sizeof(float));
  }
  for (int i = -96000; i <= 96000; ++i) x[n++] = float(i) / 8000.f;
  n -= n % 4;
  using cks::Act;
  unsigned long long count;
#define ROW(A)                                          \
  count = 0;                                            \
  std::printf("%d %llu ", int(A), mismatches<A>(x, n, count)); \
  std::printf("%llu\n", count);
  ROW(Act::kIdentity)
  ROW(Act::kRelu)
  ROW(Act::kGelu)
  ROW(Act::kGeluTanh)
  ROW(Act::kSilu)
  ROW(Act::kSigmoid)
  ROW(Act::kLeakyRelu)
  return 0;
}
