"""Programmatic dependent launch for parallel split-K: the same (variant, split), timed as
CUDA-graph replays and with L2 flushed, with CUTLASS_SPLITK_PDL=0 (off), 1 (default: the
reduction launches as the GEMM's CTAs exit) and early (every GEMM CTA triggers it at its
start). The .so reads the variable at every launch. The three settings are timed interleaved,
in rotating order, three rounds; each column is the best of its rounds.

    PYTHONPATH=. python3 benchmarks/pdl_ab.py build/default bias_gelu_mul_permute_f16
"""

import os
import sys

import torch

import cutlass_splitk
from cutlass_splitk.bench import load_shapes
from cutlass_splitk.runtime.timing import flushed_timer, graph_time


ROUNDS = 3


def main(directory: str, op_name: str, shapes_file: str = "benchmarks/bench_shapes.yaml") -> None:
    lib = cutlass_splitk.load(directory)
    op = getattr(lib, op_name)
    bench = flushed_timer()
    dev = lib.device_info(torch.cuda.current_device())
    flags = ("0", "1", "early")
    print(f"{'shape':<20} {'variant / split':<36} " + " ".join(f"{'graph ' + f:>11}" for f in flags) + " "
          + " ".join(f"{'flush ' + f:>11}" for f in flags))
    for s in load_shapes(shapes_file):
        if s.m * s.n > 1024 * 1024:
            continue
        a, b, kw = op.random_inputs(s.m, s.n, s.k, view=s.view_for(op.spec.epilogue.permute))
        out = op(a, b, **kw)
        seen = set()
        for c in op.candidates(s.m, s.n, s.k, dev, mode="parallel")[:3]:
            if (c.variant.name, c.split) in seen:
                continue
            seen.add((c.variant.name, c.split))
            fn = lambda: op(a, b, out=out, split_k=c.split, variant=c.variant.name, **kw)  # noqa: E731
            graph = {f: float("inf") for f in flags}
            flushed = dict(graph)
            for r in range(ROUNDS):  # interleaved, rotating the order; best of the rounds
                for flag in flags[r % len(flags):] + flags[:r % len(flags)]:
                    os.environ["CUTLASS_SPLITK_PDL"] = flag
                    graph[flag] = min(graph[flag], graph_time(fn))
                    flushed[flag] = min(flushed[flag], bench(fn))
            times = {f: (graph[f], flushed[f]) for f in flags}
            short = c.variant.name.split("_parallel_")[1].split("_i16")[0]
            print(f"{s.name:<20} {short + ' / ' + str(c.split):<36} "
                  + " ".join(f"{times[f][0]:11.1f}" for f in flags) + " "
                  + " ".join(f"{times[f][1]:11.1f}" for f in flags))
    os.environ.pop("CUTLASS_SPLITK_PDL")


if __name__ == "__main__":
    main(*sys.argv[1:])
