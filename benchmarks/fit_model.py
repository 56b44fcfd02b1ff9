"""Refit the dispatcher's time model (cutlass_splitk/runtime/dispatch.py) to a sweep: every
(variant, split) of one or more `cutlass-splitk bench --sweep --json` files, timed as graph
replays. Prints, for the current constants and for the best found by a small grid search,
the worst and mean ratio heuristic-pick / best-candidate over the swept shapes, restricted to
the variants given by --keep (default: all swept).

    python3 benchmarks/fit_model.py benchmarks/explore_h100.json [--keep t32x64x64_w32x32x64_i16x8x16_s6 ...]
"""

import argparse
import itertools
import json
import re
from typing import Dict, List, Tuple

from cutlass_splitk.runtime import dispatch
from cutlass_splitk.spec import KernelVariant, SplitMode

NAME = re.compile(r"_(serial|parallel)_t(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)x(\d+)_i(\d+)x(\d+)x(\d+)_s(\d+)_a(\d+)_z(\d+)$")
H100 = dispatch.DeviceInfo("H100", 132, 3.0e12, 2.95e12)


def variant(name: str) -> KernelVariant:
    g = NAME.search(name).groups()
    n = list(map(int, g[1:]))
    return KernelVariant(name[: NAME.search(name).start()], SplitMode(g[0]), tuple(n[0:3]), tuple(n[3:6]),
                         tuple(n[6:9]), n[9], n[10], n[11], ())


def load(paths: List[str]) -> List[Tuple[Tuple[int, int, int], str, Dict[Tuple[str, int], float]]]:
    shapes = []
    for path in paths:
        for row in json.load(open(path))["rows"]:
            times = {}
            for key, us in row["extra"].items():
                if "/split" in key:
                    name, split = key.rsplit("/split", 1)
                    times[(name, int(split))] = us
            if times:
                shapes.append(((row["m"], row["n"], row["k"]), row["shape"] + " " + row["dtype"], times))
    return shapes


def score(shapes, keep) -> Tuple[float, float, List[str]]:
    ratios, lines = [], []
    for (m, n, k), label, times in shapes:
        cands = {key: us for key, us in times.items() if any(s in key[0] for s in keep)}
        if not cands:
            continue
        by_variant: Dict[str, List[int]] = {}
        for name, split in cands:
            by_variant.setdefault(name, []).append(split)
        vs = [KernelVariant(v.op, v.mode, v.tile, v.warp, v.instruction, v.stages, v.alignment, v.swizzle,
                            tuple(sorted(splits)))
              for v, splits in ((variant(name), splits) for name, splits in by_variant.items())]
        pick = dispatch.rank(vs, m, n, k, H100)[0]
        best = min(cands.values())
        got = cands[(pick.variant.name, pick.split)]
        ratios.append(got / best)
        lines.append(f"{label:<28} pick {got:8.1f} best {best:8.1f} ratio {got / best:5.2f}  "
                     f"{pick.variant.mode.value} {pick.variant.group} split {pick.split}")
    return max(ratios), sum(ratios) / len(ratios), lines


GRID = {
    "L2_FACTOR": [2.0, 3.0, 4.0, 6.0],
    "REDUCE_LAUNCH_US": [0.5, 1.0, 2.5],
    "FIXUP_LATENCY_US": [1.5, 3.0],
    "EFF_EXPONENT": [0.1, 0.15, 0.2, 0.25, 0.35],
    "WAVE_OVERHEAD_US": [0.0, 2.0, 4.0],
    "REDUCE_BW_FRACTION": [0.6, 1.0],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--keep", nargs="*", default=[""])
    args = ap.parse_args()
    shapes = load(args.json)
    worst, mean, lines = score(shapes, args.keep)
    print(f"current constants: worst {worst:.3f}, mean {mean:.3f}")
    print("\n".join(lines))
    best = None
    for values in itertools.product(*GRID.values()):
        for key, value in zip(GRID, values):
            setattr(dispatch, key, value)
        w, mu, _ = score(shapes, args.keep)
        if best is None or (w, mu) < best[0]:
            best = ((w, mu), dict(zip(GRID, values)))
    print(f"best grid point: worst {best[0][0]:.3f}, mean {best[0][1]:.3f}: {best[1]}")
    for key, value in best[1].items():
        setattr(dispatch, key, value)
    print("\n".join(score(shapes, args.keep)[2]))


if __name__ == "__main__":
    main()
