// Probe for cks_reduction.cuh's reduce_spread_smem (the dynamic shared memory that caps how many
// PDL-launched reduction blocks share an SM), built for the host by tests/test_reduction_spread.py:
// one line per case of an H100-like device (132 SMs, 228 KB of shared memory and 2048 threads per
// SM, 227 KB per block, 1 KB reserved per block): the GEMM's one-round CTAs, the reduction's blocks
// and threads per block, the bytes asked for, and how many such blocks then fit on an SM by their
// shared memory (0 where nothing is asked for).
#include <cstdio>

#include "cks_reduction.cuh"

int main() {
  cks::SpreadDevice const h100{132, 233472, 232448, 2048, 1024};
  int const static_smem = 6144;  // the kernel's partial_sums for 8-wide float vectors
  struct Case {
    int ctas;
    unsigned blocks;
    int threads;
  } const cases[] = {{128, 128, 256}, {128, 512, 64}, {128, 2048, 64}, {128, 8192, 64}, {64, 512, 64},
                     {0, 128, 256},   {116, 128, 256}, {115, 128, 256}, {132, 264, 256}, {132, 132, 256}};
  for (Case const& c : cases) {
    int const bytes = cks::reduce_spread_smem(h100, c.ctas, c.blocks, c.threads, static_smem);
    int const fit = bytes > 0 ? h100.smem_per_sm / (bytes + static_smem + h100.reserved_smem_per_block) : 0;
    std::printf("%d %u %d %d %d\n", c.ctas, c.blocks, c.threads, bytes, fit);
  }
  return 0;
}
