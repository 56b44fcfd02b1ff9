"""Which GPCs share an L2 partition (round 54). A script, not a test.

An H100's L2 is two partitions; an SM reaches the far one through the L2 fabric. ncu of the skinny partial GEMMs
(session 33) counts 0.9 M sectors that both partitions' SMs read in ours against 0.1 M in cuBLAS's
(``lts__t_sectors_srcunit_ltcfabric_lookup_hit``). This measures, for SMs A and B (one per GPC found by
runtime/placement.py), the mean latency of B's dependent loads over 2048 lines that A has just loaded from DRAM:
where B's partition keeps copies of what its own SMs fetched from the far one, B finds every line near if A is in
its partition, and about half the lines far if A is not.

    PYTHONPATH=. python3 benchmarks/l2_halves.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json

import cupy as cp
import numpy as np
import torch

from cutlass_splitk.runtime import placement

SOURCE = r"""
extern "C" __global__ void pair(const unsigned* __restrict__ chain, unsigned first, int n, int sm_a, int sm_b,
                                volatile int* flag, unsigned long long* out) {
  extern __shared__ char hold[];  // one CTA per SM
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x != 0 || (int(sm) != sm_a && int(sm) != sm_b)) return;
  hold[0] = 0;
  if (int(sm) == sm_a && sm_a != sm_b) {
    unsigned i = first;
    for (int k = 0; k < n; ++k) i = __ldcg(chain + i);
    out[1] = i;
    __threadfence();
    *flag = 1;
    return;
  }
  if (sm_a != sm_b) while (*flag == 0) {}
  __threadfence();
  unsigned i = first;
  long long t0 = clock64();
  for (int k = 0; k < n; ++k) i = __ldcg(chain + i);
  long long t1 = clock64();
  out[0] = (unsigned long long)(t1 - t0);
  out[2] = i;
}
"""


def latencies(gpcs, rows=None, lines: int = 2048) -> np.ndarray:
    """Cycles per dependent load of B (one SM of GPC j) over lines A (one SM of GPC i, for i in ``rows``) has just
    loaded from DRAM; the diagonal: B alone. Rows not asked for stay 0."""
    reps = [g[len(g) // 2] for g in gpcs]
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    kernel = cp.RawModule(code=SOURCE).get_function("pair")
    smem = 200 * 1024
    kernel.max_dynamic_shared_size_bytes = smem
    stride = 32  # unsigned ints: 128 bytes per line
    region = lines * stride
    regions = 512
    buf = cp.zeros(regions * region, dtype=cp.uint32)
    flush = cp.zeros(64 * 1024 * 1024, dtype=cp.uint32)  # 256 MB
    rng = np.random.default_rng(0)
    flag = cp.zeros(1, dtype=cp.int32)
    out = cp.zeros(3, dtype=cp.uint64)
    lat = np.zeros((len(reps), len(reps)))
    use = 0
    for ia in (range(len(reps)) if rows is None else rows):
        for ib, b in enumerate(reps):
            base = (use % regions) * region
            use += 1
            order = rng.permutation(lines)
            idx = base + order * stride
            chain = np.zeros(region, dtype=np.uint32)
            chain[order * stride] = np.roll(idx, -1)
            buf[base:base + region] = cp.asarray(chain)
            flush.fill(1)  # evict the chain from L2
            flag.fill(0)
            cp.cuda.Device().synchronize()
            kernel((sms,), (32,), (buf, np.uint32(idx[0]), np.int32(lines), np.int32(reps[ia]), np.int32(b), flag,
                                   out), shared_mem=smem)
            cp.cuda.Device().synchronize()
            lat[ia, ib] = float(out[0].get()) / lines
    return lat


def second_half(gpcs) -> set:
    """The GPCs whose SMs find the first GPC's fresh lines far (above the midpoint of row 0's latencies)."""
    row = latencies(gpcs, rows=[0])[0]
    others = [row[j] for j in range(1, len(gpcs))]
    cut = (min(others) + max(others)) / 2
    return {j for j in range(1, len(gpcs)) if row[j] > cut}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=2048)
    p.add_argument("--json")
    args = p.parse_args(argv)
    gpcs = [list(g) for g in placement.measure(torch.cuda.current_device()).gpcs]
    lat = latencies(gpcs, lines=args.lines)
    print("GPCs (SMs):", " ".join(f"{i}:{len(g)}" for i, g in enumerate(gpcs)))
    print("cycles per dependent load of B (row: A's GPC, column: B's GPC; diagonal: B alone, from DRAM)")
    print("      " + "".join(f"{j:6d}" for j in range(len(gpcs))))
    for i in range(len(gpcs)):
        print(f"{i:4d}  " + "".join(f"{lat[i, j]:6.0f}" for j in range(len(gpcs))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(gpcs=gpcs, latency=lat.tolist()), f, indent=1)


if __name__ == "__main__":
    main()
