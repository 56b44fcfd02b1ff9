"""A/B of the sm90 plan cache: the bare C entry with one argument block (plan cached) against
300 blocks that differ in the output address (more than the cache holds: plan built every
call), interleaved in 15 rounds of 300 calls, each call timed alone with the device idle.
    PYTHONPATH=. python3 benchmarks/plan_cache_ab.py
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

import cutlass_splitk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host_overhead import K, M, N, cycling_run, per_call  # noqa: E402


def main(directory: str = "build/default", rounds: int = 15, calls: int = 300) -> None:
    lib = cutlass_splitk.load(directory)
    op = lib.linear_f16
    a = torch.randn(M, K, device="cuda", dtype=torch.half)
    wt = torch.randn(N, K, device="cuda", dtype=torch.half).t()
    sync = torch.cuda.synchronize
    for kw in ({}, {"split_k": 1, "mode": "serial"}):  # the dispatcher's plan, then one launch
        op(a, wt, **kw)
        prep = list(op.prepared.values())[-1]
        stream = op.platform.stream(prep.device_index)
        miss, block = cycling_run(op, prep, a, wt, stream, calls)
        run = op.bound.run[prep.variant]
        medians = {"hit": [], "miss": []}
        for _ in range(rounds):  # interleaved, so that drifts of the host hit both alike
            medians["hit"].append(per_call(lambda: run(block, stream), sync, calls=calls, runs=1))
            medians["miss"].append(per_call(miss, sync, calls=calls, runs=1))
        hit, missed = medians["hit"], medians["miss"]
        print(f"{prep.variant} split {prep.split}: plan cached {statistics.median(hit):.2f} us "
              f"(rounds {min(hit):.2f}-{max(hit):.2f}); plan built every call {statistics.median(missed):.2f} us "
              f"(rounds {min(missed):.2f}-{max(missed):.2f})")


if __name__ == "__main__":
    main(*sys.argv[1:2])
