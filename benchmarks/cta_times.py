"""When each CTA of an sm90 partial GEMM starts and ends, and on which GPC (round 53). A script, not a test.

Needs a library built with ``CUTLASS_SPLITK_NVCC_FLAGS=-DCKS_PROBE_CTA_TIMES`` from a tree with
``benchmarks/r53_cta_times.patch`` applied: the scheduler then printf's ``CKS_T S slot sm ns`` at each CTA's start
and ``CKS_T E slot sm ns`` after each unit's epilogue (%globaltimer).

    PYTHONPATH=. python3 benchmarks/cta_times.py build/r53 explore90r53_chain_f16 256,256,65536:t64x64x64_c1x2:8 \\
        [...] [--calls 6] [--json out.json]

For each case: warm-up calls, then ``--calls`` calls back to back (no sync between them); the device's printf
output is caught in a file and split into launches. Per launch, relative to its first CTA's start (µs): the last
start, the ends' quantiles, and per GPC (runtime/placement.py's grouping of the SMs) how many CTAs ran there and when
its CTAs ended. The medians over the launches after the first are printed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile

import torch

import cutlass_splitk
from cutlass_splitk.runtime import placement, reference
from variant_ab import view_for  # benchmarks/ is this script's directory


def capture(fn):
    """Runs fn with fd 1 redirected to a file; returns the CKS_T lines written (the device's printf included)."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+") as f:
        os.dup2(f.fileno(), 1)
        try:
            fn()
            torch.cuda.synchronize()
            libc.fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return [line.split() for line in f if line.startswith("CKS_T")]


def launches(lines, calls):
    """The events split into `calls` launches: [(starts, ends)], each a list of (slot, sm, ns) sorted by time."""
    starts = sorted(((int(s), int(sm), int(t)) for _, tag, s, sm, t in lines if tag == "S"), key=lambda e: e[2])
    ends = sorted(((int(s), int(sm), int(t)) for _, tag, s, sm, t in lines if tag == "E"), key=lambda e: e[2])
    ns, ne = len(starts) // calls, len(ends) // calls
    return [(starts[i * ns:(i + 1) * ns], ends[i * ne:(i + 1) * ne]) for i in range(calls)]


def summary(starts, ends, gpc_of):
    t0 = starts[0][2]
    rel = sorted((t - t0) / 1e3 for _, _, t in ends)
    q = lambda p: rel[min(len(rel) - 1, int(p * len(rel)))]
    per = {}
    for _, sm, t in ends:
        per.setdefault(gpc_of.get(sm, -1), []).append((t - t0) / 1e3)
    return dict(last_start=(starts[-1][2] - t0) / 1e3, end_min=rel[0], end_med=q(0.5), end_p90=q(0.9), end_max=rel[-1],
                gpcs={g: dict(ctas=len(v), med=statistics.median(v), max=max(v)) for g, v in sorted(per.items())})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("op")
    p.add_argument("cases", nargs="+", help="M,N,K:VARIANT:SPLIT")
    p.add_argument("--calls", type=int, default=6)
    p.add_argument("--json")
    args = p.parse_args(argv)
    lib = cutlass_splitk.load(args.dir)
    op = getattr(lib, args.op)
    where = placement.measure(torch.cuda.current_device())
    gpcs = [list(g) for g in where.gpcs] if where else []
    gpc_of = {sm: i for i, g in enumerate(gpcs) for sm in g}
    print("GPCs:", " ".join(f"{i}:{len(g)}" for i, g in enumerate(gpcs)), flush=True)
    rows = []
    for case in args.cases:
        shape, variant, split = case.split(":")
        m, n, k = (int(x) for x in shape.split(","))
        torch.manual_seed(m + n + k)
        a, b, kw = reference.random_inputs(op.spec, m, n, k, view=view_for(op, m, n), device="cuda")
        name = next(v.name for v in op.spec.variants if variant in v.name)
        out = op(a, b, split_k=int(split), variant=name, **kw)
        out.fill_(float("nan"))
        op(a, b, out=out, split_k=int(split), variant=name, **kw)
        want = reference.epilogue(op.spec.epilogue, a.double() @ b.double(), bias=kw.get("bias"), e=kw.get("e"),
                                  view=kw.get("view"))
        err = reference.relative_error(out, want)

        def calls():
            for _ in range(args.calls):
                op(a, b, out=out, split_k=int(split), variant=name, **kw)

        capture(calls)  # warm-up
        split_up = launches(capture(calls), args.calls)
        per = [summary(st, en, gpc_of) for st, en in split_up[1:]]
        med = lambda key: statistics.median(x[key] for x in per)
        head = (f"{shape:>16} {variant} s{split}: err {err:.1e}{' WRONG' if not err < 1e-2 else ''}, "
                f"CTAs {len(split_up[0][0])}, units {len(split_up[0][1])}"
                f" | last start {med('last_start'):5.2f} | ends min {med('end_min'):6.2f} med {med('end_med'):6.2f}"
                f" p90 {med('end_p90'):6.2f} max {med('end_max'):6.2f} us")
        print(head, flush=True)
        gs = sorted({g for x in per for g in x["gpcs"]})
        for g in gs:
            v = [x["gpcs"][g] for x in per if g in x["gpcs"]]
            print(f"    GPC {g:2d} ({len(gpcs[g]) if 0 <= g < len(gpcs) else '?':>2} SMs): "
                  f"{statistics.median(x['ctas'] for x in v):4.0f} units, end med "
                  f"{statistics.median(x['med'] for x in v):6.2f} max {statistics.median(x['max'] for x in v):6.2f}",
                  flush=True)
        rows.append(dict(m=m, n=n, k=k, variant=variant, split=int(split), err=err, launches=per))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(gpcs=gpcs, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
