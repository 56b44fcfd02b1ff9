"""Where the time of one sm90 partial GEMM goes inside its CTAs (round 57). A script, not a test.

Needs a library built with ``CUTLASS_SPLITK_NVCC_FLAGS=-DCKS_PROBE_TIMES`` from a tree with
``benchmarks/r57_probe_times.patch`` applied (one partial tile per op: ``benchmarks/explore_sm90_r57.yaml``). Each CTA
writes %globaltimer into a device array: 0 its prologue (load_init, thread 0), 1 the producer's entry into load(),
2 after its first k-tile's copies, 3 after its last, 4 after the unit's epilogue (round 57b's build also 5 when load()'s
tensors and multicast masks are set up, 6 when the first stage is acquired); ``cks_probe_read`` copies the array.

    PYTHONPATH=. python3 benchmarks/probe_times.py build/r57 r57_t64x64 256,256,65536:8 [--calls 8] [--json out.json]

For each case: one checked call (against float64), then ``--calls`` calls, each followed by a read of the array.
Per launch, relative to the earliest prologue mark (µs): the medians over the CTAs of each mark, the latest
prologue and first-issue marks, and the last unit's end; then the medians of those over the launches after the first.
Beside it, the same calls' CUDA-event time of the partial GEMM alone (CUTLASS_SPLITK_GRAPHS=0, torch.profiler).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
from pathlib import Path

import torch

import cutlass_splitk
from cutlass_splitk.runtime import reference
from variant_ab import view_for  # benchmarks/ is this script's directory

EVENTS, CTAS = 7, 1024  # a library with the first five marks only leaves the last two rows zero
NAMES = ("prologue", "producer in", "first issued", "last issued", "unit end", "producer set up", "first acquired")


def read(fn) -> list:
    buf = (ctypes.c_ulonglong * (EVENTS * CTAS))()
    torch.cuda.synchronize()
    status = fn(buf)
    assert status == 0, status
    return [list(buf[e * CTAS:(e + 1) * CTAS]) for e in range(EVENTS)]


def summarise(times, ctas):
    """Medians over the CTAs that ran a unit in this launch (their end mark after its first prologue mark)."""
    t0 = min(times[0][:ctas])
    busy = [c for c in range(ctas) if times[4][c] >= t0]
    marks = [e for e in range(EVENTS) if any(times[e][:ctas])]
    rel = {e: [(times[e][c] - t0) / 1e3 for c in (range(ctas) if e == 0 else busy)] for e in marks}
    order = sorted(marks, key=lambda e: statistics.median(rel[e]))
    out = {NAMES[e]: statistics.median(rel[e]) for e in order}
    out["prologue, last"] = max(rel[0])
    out["first issued, last"] = max(rel[2])
    out["unit end, first"] = min(rel[4])
    out["unit end, last"] = max(rel[4])
    out["busy CTAs"] = len(busy)
    return out


def kernel_us(op, a, b, kw, split, name, out) -> float:
    """The partial GEMM's device time (median of 8 calls, torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        op(a, b, out=out, split_k=split, variant=name, **kw)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(8):
            op(a, b, out=out, split_k=split, variant=name, **kw)
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events() if "device_kernel" in e.name or "GemmUniversal" in e.name]
    return statistics.median(times) if times else float("nan")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("op")
    p.add_argument("cases", nargs="+", help="M,N,K:SPLIT")
    p.add_argument("--calls", type=int, default=8)
    p.add_argument("--json")
    args = p.parse_args(argv)
    lib = cutlass_splitk.load(args.dir)
    op = getattr(lib, args.op)
    so = ctypes.CDLL(str(Path(args.dir) / f"lib{args.op}.so"))
    fn = so.cks_probe_read
    fn.argtypes = [ctypes.c_void_p]
    fn.restype = ctypes.c_int
    name = op.spec.variants[0].name
    rows = []
    for case in args.cases:
        shape, split = case.split(":")
        split = int(split)
        m, n, k = (int(x) for x in shape.split(","))
        torch.manual_seed(m + n + k)
        a, b, kw = reference.random_inputs(op.spec, m, n, k, view=view_for(op, m, n), device="cuda")
        out = op(a, b, split_k=split, variant=name, **kw)
        out.fill_(float("nan"))
        op(a, b, out=out, split_k=split, variant=name, **kw)
        want = reference.epilogue(op.spec.epilogue, a.double() @ b.double(), bias=kw.get("bias"), e=kw.get("e"),
                                  view=kw.get("view"))
        err = reference.relative_error(out, want)
        ctas = None
        per = []
        for _ in range(args.calls):
            op(a, b, out=out, split_k=split, variant=name, **kw)
            t = read(fn)
            if ctas is None:  # the CTAs that wrote: the grid (every CTA writes mark 0)
                ctas = sum(1 for x in t[0] if x)
            per.append(summarise(t, ctas))
        med = {key: statistics.median(x[key] for x in per[1:]) for key in per[0]}
        dev_us = kernel_us(op, a, b, kw, split, name, out)
        print(f"{args.op} {shape} s{split}: err {err:.1e}{' WRONG' if not err < 1e-2 else ''}, {ctas} CTAs, "
              f"partial GEMM {dev_us:.2f} us (profiler)", flush=True)
        print("    " + " | ".join(f"{key} {val:6.2f}" for key, val in med.items()), flush=True)
        rows.append(dict(op=args.op, m=m, n=n, k=k, split=split, err=err, ctas=ctas, kernel_us=dev_us, median=med,
                         launches=per))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
