"""Every (variant, split) of one op on a few shapes: L2-flushed time and CUDA-graph time, next to
torch.matmul's, plus a correctness check on the same shapes (float64 reference of the chain,
output poisoned first) and a bitwise digest of each output, so that runs of different builds
(or settings) can be compared for speed and for identical bits. A script, not a test.

    python3 benchmarks/variant_ab.py build/explore_sm90_r2 explore90r2_chain_f16 \
        --shape 4096,4096,4096 --shape 4096,4096,14336 --label base --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys

import torch

import cutlass_splitk
from cutlass_splitk.runtime import reference
from cutlass_splitk.runtime.reference import epilogue, relative_error
from cutlass_splitk.runtime.timing import flushed_timer, graph_time


def view_for(op, m, n):
    """A head-split view (B, S, H, D) with D = 128 (or the largest multiple of 8 dividing N)."""
    if op.spec.epilogue.permute.value == "none":
        return None
    d = next(d for d in (128, 64, 72, 40, 32, 16, 8) if n % d == 0)
    s = next(s for s in (128, 100, 64, 50, 37, 32, 16, 8, 4, 2, 1) if m % s == 0)
    if op.spec.epilogue.permute.value == "qkv_split":
        return (m // s, s, 3, n // (3 * d), d)
    return (m // s, s, n // d, d)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("op")
    p.add_argument("--shape", action="append", required=True, help="M,N,K (repeatable)")
    p.add_argument("--label", default="")
    p.add_argument("--json")
    p.add_argument("--no-check", action="store_true")
    p.add_argument("--match", help="only the variants whose name contains this regular expression")
    p.add_argument("--scalars", action="store_true",
                   help="call with alpha, and beta and C where the op takes them (reference.random_inputs)")
    p.add_argument("--flush", choices=["dirty", "clean"], default="dirty",
                   help="the flushed column's L2 flush (cutlass-splitk bench --flush; default: dirty)")
    args = p.parse_args(argv)
    lib = cutlass_splitk.load(args.dir)
    op = getattr(lib, args.op)
    bench = flushed_timer(1, clean=args.flush == "clean")
    print(f"# {args.label} device={torch.cuda.get_device_name()}", flush=True)
    rows = []
    for spec in args.shape:
        m, n, k = (int(x) for x in spec.split(","))
        view = view_for(op, m, n)
        torch.manual_seed(m * 31 + n * 7 + k)  # the same inputs in every run: digests compare
        a, b, kw = reference.random_inputs(op.spec, m, n, k, view=view, device="cuda", scalars=args.scalars)
        ref = None
        if not args.no_check:
            ref = epilogue(op.spec.epilogue, a.double() @ b.double(), alpha=kw.get("alpha", 1.0),
                           beta=kw.get("beta", 0.0), c=kw.get("c"), bias=kw.get("bias"),
                           e=kw.get("e"), view=kw.get("view"))
        mm = bench(lambda: torch.matmul(a, b))
        mm_graph = graph_time(lambda: torch.matmul(a, b))
        print(f"{m}x{n}x{k}: torch.matmul {mm:8.1f} us flushed, {mm_graph:8.1f} graph", flush=True)
        for v in op.spec.variants:
            if args.match and not re.search(args.match, v.name):
                continue
            for split in v.splits:
                out = op(a, b, split_k=split, variant=v.name, **kw)
                out.fill_(float("nan"))
                op(a, b, out=out, split_k=split, variant=v.name, **kw)
                torch.cuda.synchronize()
                err = None
                if ref is not None:
                    err = relative_error(out, ref)
                digest = hashlib.sha1(out.cpu().contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()[:12]  # bf16: no numpy dtype
                t = bench(lambda: op(a, b, out=out, split_k=split, variant=v.name, **kw))
                tg = graph_time(lambda: op(a, b, out=out, split_k=split, variant=v.name, **kw))
                ok = "" if err is None or (math.isfinite(err) and err < 1e-2) else "  WRONG"
                print(f"  {v.name:64s} split {split:2d}: {t:8.1f} flushed {tg:8.1f} graph  "
                      f"matmul/ours {mm / t:5.3f}  err {err if err is None else f'{err:.2e}'} {digest}{ok}",
                      flush=True)
                rows.append(dict(label=args.label, m=m, n=n, k=k, variant=v.name, split=split,
                                 flushed_us=t, graph_us=tg, matmul_us=mm, matmul_graph_us=mm_graph, err=err,
                                 digest=digest))
        del a, b, kw, ref
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if any(r["err"] is not None and not (r["err"] < 1e-2) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
