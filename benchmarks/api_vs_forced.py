"""The dispatcher's pick timed through the API (no variant or split given) and forced (the same variant and
split given), alternating, as CUDA-graph replays (runtime.timing.graph_time, bench's "graph" column and its
--sweep). Session 38 saw the two differ by 2-3 us on a few skinny shapes across sessions' sweeps (160 x 2560 x
12288: 32.6 against 29.4 us); this tells a measurement-order effect from a difference in what runs.

    python3 benchmarks/api_vs_forced.py build/default bias_gelu_mul_permute_f16 160,2560,12288 512,512,32768
"""

import argparse

import torch

import cutlass_splitk
from cutlass_splitk.bench import Shape
from cutlass_splitk.runtime.timing import graph_time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("op")
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    op = getattr(cutlass_splitk.load(args.build), args.op)
    dev = op.device_info(torch.cuda.current_device())
    for text in args.shapes:
        shape = Shape.parse(text)  # as bench --shape reads it (the permuted ops' view included)
        m, n, k = shape.m, shape.n, shape.k
        a, b, kw = op.random_inputs(m, n, k, view=shape.view_for(op.spec.epilogue.permute))
        out = op(a, b, **kw)
        pick = op.candidates(m, n, k, dev)[0]
        name, split = pick.variant.name, pick.split
        forced = op(a, b, split_k=split, variant=name, **kw)
        same = torch.equal(out, forced)
        times = {"api": [], "forced": []}
        for _ in range(args.rounds):
            times["api"].append(graph_time(lambda: op(a, b, out=out, **kw)))
            times["forced"].append(graph_time(lambda: op(a, b, out=out, split_k=split, variant=name, **kw)))
        row = "  ".join(f"{key} " + " ".join(f"{t:6.1f}" for t in ts) for key, ts in times.items())
        print(f"{text:18} {name.split('_sm90_')[-1]} split {split}: {row}  bitwise equal: {same}", flush=True)


if __name__ == "__main__":
    main()
