"""Where a call's time goes, kernel by kernel: CUDA-graph replays of 20 back-to-back calls of
torch.matmul (cuBLAS) and of one (variant, split) of an op, traced with torch.profiler (CUPTI),
each kernel's mean duration and the mean gap from the previous kernel's end to its start.
A script, not a test.

    PYTHONPATH=. python3 benchmarks/kernel_timeline.py build/default bias_gelu_mul_permute_f16 \\
        256,256,65536:VARIANT:SPLIT [...] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_splitk
from cutlass_splitk.runtime import reference

CALLS = 20


def short(name: str) -> str:
    for key, label in (("nvjet", "cublas gemm"), ("splitKreduce", "cublas reduce"), ("GemmUniversal", "our gemm"),
                       ("reduce_epilogue_kernel", "our reduce")):
        if key in name:
            return label
    return name[:40]


def timeline(fn, replays: int = 5):
    """Per kernel label: (mean duration, mean gap before it) over `replays` replays of a graph of CALLS calls, and
    the mean period of one call (first kernel start to the next call's first kernel start)."""
    fn()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        fn()
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(CALLS):
                fn()
    torch.cuda.current_stream().wait_stream(s)
    g.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            g.replay()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    kernels = sorted((e["ts"], e["dur"], short(e["name"])) for e in events if e.get("cat") == "kernel")
    durs, gaps = collections.defaultdict(list), collections.defaultdict(list)
    for (t0, d0, _), (t1, d1, n1) in zip(kernels, kernels[1:]):
        gaps[n1].append(t1 - (t0 + d0))
    for t, d, n in kernels:
        durs[n].append(d)
    first = kernels[0][2]
    starts = [t for t, _, n in kernels if n == first]
    period = statistics.median(b - a for a, b in zip(starts, starts[1:]))
    return {n: (statistics.median(durs[n]), statistics.median(gaps[n]) if gaps[n] else 0.0) for n in durs}, period


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("op")
    p.add_argument("cases", nargs="+", help="M,N,K:VARIANT:SPLIT")
    p.add_argument("--json")
    args = p.parse_args(argv)
    lib = cutlass_splitk.load(args.dir)
    op = getattr(lib, args.op)
    rows = []
    for case in args.cases:
        shape, variant, split = case.split(":")
        m, n, k = (int(x) for x in shape.split(","))
        d = next(d for d in (128, 64, 32, 16, 8) if n % d == 0)
        s = next(s for s in (128, 64, 32, 16, 8, 4, 2, 1) if m % s == 0)
        view = (m // s, s, n // d, d)
        torch.manual_seed(m + n + k)
        a, b, kw = reference.random_inputs(op.spec, m, n, k, view=view, device="cuda")
        name = next(v.name for v in op.spec.variants if variant in v.name)
        out = op(a, b, split_k=int(split), variant=name, **kw)
        for who, fn in (("cublas", lambda: torch.matmul(a, b)),
                        ("ours", lambda: op(a, b, out=out, split_k=int(split), variant=name, **kw))):
            per, period = timeline(fn)
            line = "  ".join(f"{n}: {d:6.2f} us (gap before {g:5.2f})" for n, (d, g) in per.items())
            label = variant + " s" + split if who == "ours" else ""
            print(f"{shape:>18} {who:6} {label:34} period {period:6.2f}  {line}", flush=True)
            rows.append(dict(m=m, n=n, k=k, who=who, variant=variant, split=int(split), period_us=period,
                             kernels={n: dict(duration_us=d, gap_before_us=g) for n, (d, g) in per.items()}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
