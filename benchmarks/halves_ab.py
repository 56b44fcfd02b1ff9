"""Round 54: the partial GEMM's units dealt to the GPCs of one L2 partition first (sm90_gpc_order.h's kSecondHalf),
against the shipped GPC order, on one build, in turn. A script, not a test.

The runtime places the device at the first call; this then sets each library's placement itself
(``cks_sm90_set_placement``) with the GPC labels as measured (off) and with the second partition's labels marked
(on; l2_halves.second_half), and times every (variant, split) of the op in CUDA-graph replays, with digests of
the outputs (the order keeps the bits) and, in the first round, the error against the float64 chain.

    PYTHONPATH=. python3 benchmarks/halves_ab.py build/r54 explore90r54_chain_f16 --shape 256,256,65536 ... \\
        [--rounds 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import statistics

import torch

import cutlass_splitk
from cutlass_splitk.runtime import placement, reference
from cutlass_splitk.runtime.timing import graph_time
from l2_halves import second_half
from variant_ab import view_for


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("op")
    p.add_argument("--shape", action="append", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--json")
    p.add_argument("--profile", metavar="MODE:VARIANT:SPLIT",
                   help="for ncu: only this candidate (on the first shape), three calls with the order MODE (on/off)")
    args = p.parse_args(argv)
    lib = cutlass_splitk.load(args.dir)
    op = getattr(lib, args.op)
    dev = torch.cuda.current_device()
    shapes = [tuple(int(x) for x in s.split(",")) for s in args.shape]
    data = {}
    for m, n, k in shapes:
        torch.manual_seed(m * 31 + n * 7 + k)
        a, b, kw = reference.random_inputs(op.spec, m, n, k, view=view_for(op, m, n), device="cuda")
        ref = reference.epilogue(op.spec.epilogue, a.double() @ b.double(), bias=kw.get("bias"), e=kw.get("e"),
                                 view=kw.get("view"))
        data[(m, n, k)] = (a, b, kw, ref, torch.matmul(a, b))
    a, b, kw, _, _ = data[shapes[0]]
    op(a, b, **kw)  # places the device
    where = placement.measure(dev)
    second = second_half([list(g) for g in where.gpcs])
    print(f"# {torch.cuda.get_device_name()}: {where.describe()}; second L2 partition: GPCs {sorted(second)}", flush=True)
    setter = ctypes.CDLL(os.path.join(args.dir, f"lib{args.op}.so")).cks_sm90_set_placement
    setter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p]

    def place(on: bool) -> None:
        for cluster, groups in where.groups.items():
            marked = bytes((g | 0x80) if on and g in second else g for g in groups)
            assert setter(dev, cluster, len(marked), marked) == 0

    if args.profile:
        mode, variant, split = args.profile.split(":")
        place(mode == "on")
        name = next(v.name for v in op.spec.variants if variant in v.name)
        out = op(a, b, split_k=int(split), variant=name, **kw)
        for _ in range(3):
            op(a, b, out=out, split_k=int(split), variant=name, **kw)
        torch.cuda.synchronize()
        return 0
    rows, digests, wrong = [], {}, 0
    for rnd in range(args.rounds):
        for mode in ("off", "on") if rnd % 2 == 0 else ("on", "off"):
            place(mode == "on")
            for (m, n, k) in shapes:
                a, b, kw, ref, _ = data[(m, n, k)]
                mm = graph_time(lambda: torch.matmul(a, b))
                for v in op.spec.variants:
                    for split in v.splits:
                        out = op(a, b, split_k=split, variant=v.name, **kw)
                        out.fill_(float("nan"))
                        op(a, b, out=out, split_k=split, variant=v.name, **kw)
                        torch.cuda.synchronize()
                        digest = hashlib.sha1(out.cpu().view(torch.uint8).numpy().tobytes()).hexdigest()[:12]
                        key = (m, n, k, v.name, split)
                        same = digests.setdefault(key, digest) == digest
                        err = reference.relative_error(out, ref) if rnd == 0 else None
                        bad = (err is not None and not err < 1e-2) or not same
                        wrong += bad
                        t = graph_time(lambda: op(a, b, out=out, split_k=split, variant=v.name, **kw))
                        rows.append(dict(round=rnd, mode=mode, m=m, n=n, k=k, variant=v.name, split=split,
                                         graph_us=t, matmul_graph_us=mm, err=err, digest=digest))
                        if bad:
                            print(f"WRONG {mode} {m}x{n}x{k} {v.name} s{split} err {err} same bits {same}", flush=True)
    print(f"{'shape':>18} {'best off':>9} {'best on':>9} {'on/off':>7} {'median on/off':>13}  cuBLAS  best on")
    for (m, n, k) in shapes:
        t = {}
        for r in rows:
            if (r["m"], r["n"], r["k"]) == (m, n, k):
                t.setdefault((r["variant"], r["split"]), {}).setdefault(r["mode"], []).append(r["graph_us"])
        med = {c: {mo: statistics.median(v) for mo, v in d.items()} for c, d in t.items()}
        off = min(med, key=lambda c: med[c]["off"])
        on = min(med, key=lambda c: med[c]["on"])
        ratio = statistics.median(d["on"] / d["off"] for d in med.values())
        mm = statistics.median(r["matmul_graph_us"] for r in rows if (r["m"], r["n"], r["k"]) == (m, n, k))
        name = on[0].split("sm90_")[-1]
        print(f"{m:>5}x{n}x{k:<6} {med[off]['off']:9.2f} {med[on]['on']:9.2f} {med[on]['on'] / med[off]['off']:7.3f}"
              f" {ratio:13.3f}  {mm:6.2f}  {name} s{on[1]}", flush=True)
    print(f"wrong: {wrong}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(second_half=sorted(second), rows=rows), f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
