"""A/B of the sm90 plan cache: the bare C entry with one argument block (plan cached) against
300 blocks that differ in the output address (more than the cache holds: plan built every
call), interleaved in 15 rounds of 300 calls, each call timed alone with the device idle.
    PYTHONPATH=. python3 benchmarks/plan_cache_ab.py
"""
import statistics, sys, time
sys.path.insert(0, "benchmarks")
import torch, cutlass_splitk
from host_overhead import bare_args, M, N, K
lib = cutlass_splitk.load("build/default")
op = lib.linear_f16
a = torch.randn(M, K, device="cuda", dtype=torch.half)
wt = torch.randn(N, K, device="cuda", dtype=torch.half).t()
for kw in ({}, {"split_k": 1, "mode": "serial"}):
    op(a, wt, **kw); op(a, wt, **kw)
    prep = list(op.prepared.values())[-1]
    stream = op.platform.stream(prep.device_index)
    outs = [torch.empty(M, N, device="cuda", dtype=torch.half) for _ in range(300)]
    blocks = [bare_args(op, prep, a, wt, o, stream) for o in outs]
    run = op.bound.run[prep.variant]
    sync = torch.cuda.synchronize
    clock = time.perf_counter
    hit, miss = [], []
    for rnd in range(15):
        for which, store in (("hit", hit), ("miss", miss)):
            ts = []
            for i in range(300):
                blk = blocks[0] if which == "hit" else blocks[i]
                sync(); t = clock(); run(blk, stream); ts.append(clock() - t)
            store.append(statistics.median(ts) * 1e6)
    print(f"{prep.variant} split {prep.split}: plan cached {statistics.median(hit):.2f} us "
          f"(rounds {min(hit):.2f}-{max(hit):.2f}); plan built every call {statistics.median(miss):.2f} us "
          f"(rounds {min(miss):.2f}-{max(miss):.2f})")
