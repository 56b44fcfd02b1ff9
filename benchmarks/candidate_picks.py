"""Where a candidate config moves the time model's pick (no GPU): for one op, the dispatcher's ranking over the
variants of a baseline config and of a candidate config on the bench suite, benchmarks/extra_shapes.yaml and any
swept shapes given; prints every shape whose pick changes, with the model's times, and where a sweep measured both
picks (`cutlass-splitk bench --sweep --json`), the measured times. A candidate whose new variants are picked only on
shapes a sweep has measured them on changes nothing unmeasured.

    python3 benchmarks/candidate_picks.py configs/default.yaml benchmarks/default_r70_candidate.yaml \\
        --op bias_gelu_mul_permute_f16 --sweeps benchmarks/sweep_r70_session49_h100.json --device h100
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Dict, List, Tuple

import yaml

from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import dispatch

from fit_model import DEVICES, group_key, load  # the refit's device models, variant names and sweep reader

HERE = Path(__file__).parent


def op_of(path: str, name: str):
    for op in load_config(path).ops:
        if op.name == name:
            return op
    raise SystemExit(f"{path}: no op {name}")


def shapes(swept) -> List[Tuple[int, int, int]]:
    """The bench suite's shapes, extra_shapes.yaml's and those of ``swept`` (fit_model.load's records), each once."""
    out = []
    for f in ("bench_shapes.yaml", "extra_shapes.yaml"):
        out += [(s["m"], s["n"], s["k"]) for s in yaml.safe_load(open(HERE / f))["shapes"]]
    out += [mnk for mnk, _, _ in swept]
    return list(dict.fromkeys(out))


def measured(swept) -> Dict[Tuple[Tuple[int, int, int], str, int], float]:
    """(shape, variant without the op's name, split) -> graph us of ``swept`` (fit_model.load's records; a later
    sweep's time of a pair wins): a sweep of another op with the same grids (an exploration's) counts."""
    return {(mnk, group_key(name), split): us for mnk, _, times in swept for (name, split), us in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("baseline")
    ap.add_argument("candidate")
    ap.add_argument("--op", default="bias_gelu_mul_permute_f16")
    ap.add_argument("--sweeps", nargs="*", default=[])
    ap.add_argument("--device", choices=sorted(DEVICES), default="h100")
    args = ap.parse_args()
    dev = DEVICES[args.device]
    base, cand = op_of(args.baseline, args.op), op_of(args.candidate, args.op)
    spec = cand.epilogue
    kw = dict(archs=tuple(cand.archs), tma_epilogue=spec.tma_in_kernel, activation=spec.transcendental)
    new = {v.name for v in cand.variants} - {v.name for v in base.variants}
    swept = load(args.sweeps)
    times, every = measured(swept), shapes(swept)
    moved = 0
    for m, n, k in every:
        a = dispatch.rank(base.variants, m, n, k, dev, **kw)[0]
        b = dispatch.rank(cand.variants, m, n, k, dev, **kw)[0]
        if (a.variant.name, a.split) == (b.variant.name, b.split):
            continue
        moved += 1
        strip = lambda c: group_key(c.variant.name)
        ta, tb = times.get(((m, n, k), strip(a), a.split)), times.get(((m, n, k), strip(b), b.split))
        meas = f"measured {ta:.1f} -> {tb:.1f} us ({tb / ta:.2f}x)" if ta and tb else "not measured"
        print(f"{m}x{n}x{k}: {strip(a)}/{a.split} -> {strip(b)}/{b.split}"
              f"{' (new)' if b.variant.name in new else ''}; {meas}")
    print(f"{moved} shapes of {len(every)} change pick; new variants: {len(new)}")


if __name__ == "__main__":
    main()
