"""Refit the dispatcher's time model (cutlass_splitk/runtime/timemodel.py) to sweeps: every
(variant, split) of one or more `cutlass-splitk bench --sweep --json` files, timed as graph
replays. Prints, for the current constants and for the best point of a small grid search
over one backend's constants, the worst and mean ratio heuristic-pick / best-candidate over
the swept shapes, restricted to the variants whose names contain one of --keep (default: all).
A `benchmarks/variant_ab.py --json` file (a list of records) is read as sweeps too. Ranked as the
runtime ranks them: sm80 variants only where no sm90 one runs; --tma-epilogue for sweeps of an op
without E or permute (EpilogueSpec.tma_in_kernel), with --activation where it has GELU (EpilogueSpec.transcendental);
--device h200 for sweeps run on an H200; --gpc-order for sweeps of libraries that ran the partial GEMMs in the GPC order
(session 29 on, the default since). A file named as PATH@FLAGS takes its own flags instead (comma-separated: tma,
act, h100 or h200, the latter without the GPC order unless gpc is among them; PATH@ for none), so that sweeps of ops
with and without the TMA epilogue, and of both devices, are fitted together.

    python3 benchmarks/fit_model.py benchmarks/explore_h100.json --backend sm80
    python3 benchmarks/fit_model.py benchmarks/explore_sm90_h100.json --backend sm90 --keep t64x128x128_c1x1_pp ...
    python3 benchmarks/fit_model.py benchmarks/sweep_lbg_session21_h200.json --tma-epilogue --activation --device h200 --samples 0
    python3 benchmarks/fit_model.py benchmarks/sweep_fresh_session30_h100.json --activation --gpc-order --samples 0
    python3 benchmarks/fit_model.py chain.json@act lbg.json@tma,act --gpc-order
    python3 benchmarks/fit_model.py benchmarks/sweep_moves_session46_h200.json@tma,act,h200,gpc --samples 0 --rounds 0

--protect LIMIT also counts every swept shape of the suite (benchmarks/bench_shapes.yaml's M, N, K) whose pick is more
than LIMIT times its best candidate as a miss, so that a fit cannot buy other shapes with the rows issue 12's targets
are measured on; --held-out PATH[@FLAGS]... scores further sweeps before and after the fit without fitting them
(session 38: `--only` its fourteen constants `--samples 0 --rounds 3 --protect 1.03`, session 38's held-out sweeps).
--splits-from CONFIG ranks only the records of the (variant, split) pairs that config's grids list, so that a sweep of
a build offering more splits scores a split list (session 47: split 1 on the parallel groups, before and after):

    python3 benchmarks/fit_model.py benchmarks/sweep_held_session47_h200.json@tma,act,h200,gpc --keep sm90 \
        --splits-from configs/default.yaml --samples 0 --rounds 0
"""

import argparse
import dataclasses
import json
import math
import random
import re
from pathlib import Path
from typing import Dict, List, Tuple

from cutlass_splitk.runtime import dispatch, timemodel
from cutlass_splitk.spec import KernelVariant, Schedule, Sm80Params, Sm90Params, SplitMode

SM80 = re.compile(r"_(serial|parallel)_t(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)x(\d+)_i(\d+)x(\d+)x(\d+)_s(\d+)_a(\d+)_z(\d+)$")
SM90 = re.compile(r"_(serial|parallel|stream_k)_sm90_t(\d+)x(\d+)x(\d+)_c(\d+)x(\d+)_(coop|pp)_s(\d+|auto)_a(\d+)(_swab)?$")
H100 = timemodel.DeviceInfo("H100", 132, 3.0e12, 2.95e12, 9, 0)
DEVICES = {"h100": H100, "h200": timemodel.DeviceInfo.from_properties("NVIDIA H200", 132, 9, 0)}


def variant(name: str, splits: Tuple[int, ...] = ()) -> KernelVariant:
    """The variant a generated name describes (both backends' naming schemes)."""
    m = SM90.search(name)
    if m:
        g = m.groups()
        n = [int(x) for x in g[1:6]]
        params = Sm90Params((n[3], n[4]), Schedule.COOPERATIVE if g[6] == "coop" else Schedule.PINGPONG,
                            0 if g[7] == "auto" else int(g[7]), g[9] is not None)
        return KernelVariant(name[: m.start()], SplitMode(g[0]), tuple(n[0:3]), int(g[8]), params, splits)
    m = SM80.search(name)
    g = m.groups()
    n = list(map(int, g[1:]))
    return KernelVariant(name[: m.start()], SplitMode(g[0]), tuple(n[0:3]), n[10],
                         Sm80Params(tuple(n[3:6]), tuple(n[6:9]), n[9], n[11]), splits)


def row_times(row: dict) -> Dict[Tuple[str, int], float]:
    """(variant, split) -> graph us of one row of `cutlass-splitk bench --sweep --json` (its "NAME/splitS" entries)."""
    times = {}
    for key, us in row["extra"].items():
        if "/split" in key:
            name, split = key.rsplit("/split", 1)
            times[(name, int(split))] = us
    return times


def load(paths: List[str]) -> List[Tuple[Tuple[int, int, int], str, Dict[Tuple[str, int], float]]]:
    shapes = []
    for path in paths:
        data = json.load(open(path))
        if isinstance(data, list):  # benchmarks/variant_ab.py --json: one record per (shape, variant, split)
            by_shape: Dict[Tuple[int, int, int], Dict[Tuple[str, int], float]] = {}
            for r in data:
                by_shape.setdefault((r["m"], r["n"], r["k"]), {})[(r["variant"], r["split"])] = r["graph_us"]
            shapes += [(mnk, "x".join(map(str, mnk)) + " " + path.rsplit("/", 1)[-1], times)
                       for mnk, times in by_shape.items()]
            continue
        for row in data["rows"]:
            times = row_times(row)
            if times:
                shapes.append(((row["m"], row["n"], row["k"]), row["shape"] + " " + row["dtype"], times))
    return shapes


def file_flags(arg: str, tma: bool, activation: bool, device: str, gpc_order: bool) -> Tuple[str, Tuple[bool, bool, str, bool]]:
    """A sweep argument PATH[@FLAGS] -> (PATH, (tma, activation, device, GPC order)). Without '@' the command line's
    --tma-epilogue, --activation, --device and --gpc-order (the latter for H100 sweeps only); with it the flags alone:
    tma, act, h100 or h200 (else --device), and the GPC order where --gpc-order is given and the device is an H100,
    or where the flags say gpc (H200 sweeps of libraries that ran it: session 46's)."""
    path, at, flags = arg.partition("@")
    if not at:
        return path, (tma, activation, device, gpc_order and device == "h100")
    f = flags.split(",")
    name = next((d for d in DEVICES if d in f), device)
    return path, ("tma" in f, "act" in f, name, "gpc" in f or (gpc_order and name == "h100"))


SUITE = str(Path(__file__).resolve().parent / "bench_shapes.yaml")


def suite_labels(path: str = SUITE) -> set:
    """How score() labels the bench suite's shapes: by name (bench's suite runs) or MxNxK (--shape runs, variant_ab)."""
    import yaml

    shapes = yaml.safe_load(open(path))["shapes"]
    return {s["name"] for s in shapes} | {f"{s['m']}x{s['n']}x{s['k']}" for s in shapes}


def ratio_of(line: str) -> float:
    """The pick-over-best ratio of one of score()'s lines."""
    return float(line.split("ratio")[1].split()[0])


def group_key(name: str) -> str:
    """A generated variant name without its op's name: ``parallel_sm90_t128x80x64_c1x2_coop_sauto_a8_swab``."""
    m = SM90.search(name) or SM80.search(name)
    return name[m.start() + 1:]


def backend_of(key: str) -> str:
    """The backend of a variant name or group key: ``sm90`` or ``sm80``."""
    return "sm90" if SM90.search("_" + key) else "sm80"


def offered_splits(config: str) -> set:
    """(group key, split) of every variant the config's ops build, at the splits its grids list."""
    from cutlass_splitk.config import load_config

    return {(group_key(v.name), s) for op in load_config(Path(config)).ops for v in op.variants for s in v.splits}


def restrict(shapes, offered: set):
    """The loaded sweeps with only the (group key, split) records in ``offered`` (offered_splits: a config's split lists,
    where the sweep ran more)."""
    return [(mnk, label, {key: us for key, us in times.items() if (group_key(key[0]), key[1]) in offered})
            for mnk, label, times in shapes]


def score(shapes, keep, dev: timemodel.DeviceInfo = H100, tma: bool = False,
          activation: bool = False) -> Tuple[float, float, List[str]]:
    ratios, lines = [], []
    for (m, n, k), label, times in shapes:
        cands = {key: us for key, us in times.items() if any(s in key[0] for s in keep)}
        if not cands:
            continue
        by_variant: Dict[str, List[int]] = {}
        for name, split in cands:
            by_variant.setdefault(name, []).append(split)
        vs = [variant(name, tuple(sorted(splits))) for name, splits in by_variant.items()]
        pick = dispatch.rank(vs, m, n, k, dev, archs=(80,), tma_epilogue=tma, activation=activation)[0]
        best = min(cands.values())
        got = cands[(pick.variant.name, pick.split)]
        ratios.append(got / best)
        lines.append(f"{label:<28} pick {got:8.1f} best {best:8.1f} ratio {got / best:5.2f}  "
                     f"{pick.variant.mode.value} {pick.variant.group} split {pick.split}")
    return max(ratios), sum(ratios) / len(ratios), lines


# The constants each backend's fit may move (the values listed are documentation of the ranges
# tried before; the fit multiplies the current value, or tries the listed ones where it is 0).
GRIDS = {
    "sm80": {
        "L2_FACTOR": [2.0, 3.0, 4.0, 6.0],
        "REDUCE_LAUNCH_US": [0.5, 1.0, 2.5],
        "FIXUP_LATENCY_US": [1.5, 3.0],
        "EFF_EXPONENT": [0.1, 0.15, 0.2, 0.25, 0.35],
        "WAVE_OVERHEAD_US": [0.0, 2.0, 4.0],
        "REDUCE_BW_FRACTION": [0.6, 1.0],
    },
    "sm90": {
        "SM90_FLOPS_PER_SM": [4.5e12, 5.3e12, 6.0e12],
        "SM90_BW_FRACTION": [0.7, 0.8, 0.9],
        "SM90_SM_BYTES_PER_S": [30e9, 45e9, 60e9],
        "SM90_K_DEPTH_EXPONENT": [0.0, 0.5, 1.0],
        "SM90_L2_FACTOR": [2.0, 3.0, 4.0],
        "SM90_WAVE_OVERHEAD_US": [0.5, 1.5, 3.0],
        "SM90_EFF_EXPONENT": [0.0, 0.1, 0.2],
        "SM90_FIXUP_US_PER_ELEMENT": [1.0 / 16384, 3.0 / 16384, 6.0 / 16384],
        "SM90_EPILOGUE_US_PER_ELEMENT": [0.5 / 16384, 2.0 / 16384, 4.0 / 16384],
        "SM90_STREAMK_US": [2.0, 6.0, 12.0],
        "SM90_STREAMK_FRACTION": [0.05, 0.1, 0.15],
        "SM90_MEMSET_US": [1.0, 2.0, 4.0],
        "SM90_FIXUP_LATENCY_US": [0.5, 1.0, 2.0],
        "SM90_BOX_BYTES_PER_S": [60e9, 72e9, 100e9],
        "SM90_OOB_BYTES_PER_S": [20e9, 25e9, 35e9],
        "SM90_WEIGHT_REREAD": [0.1, 0.2, 0.4],
        "SM90_GPC_BOX_GAIN": [1.65, 1.75, 1.9],
        "SM90_UNDERFILL_EXPONENT": [0.3, 0.5],
        "SM90_UNDERFILL_MAX": [1.5, 1.85],
        "SM90_REDUCE_LAUNCH_US": [0.5, 1.0],
        "SM90_FIXUP_WAVE": [0.2, 0.4, 0.8],
    },
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--keep", nargs="*", default=[""])
    ap.add_argument("--backend", choices=sorted(GRIDS), default="sm90")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--samples", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tma-epilogue", action="store_true", help="the swept op has no E and no permute")
    ap.add_argument("--activation", action="store_true", help="the swept op's epilogue has GELU, SiLU or sigmoid")
    ap.add_argument("--device", choices=sorted(DEVICES), default="h100")
    ap.add_argument("--gpc-order", action="store_true", help="the sweeps ran the partial GEMMs in the GPC order")
    ap.add_argument("--only", nargs="*", default=None, help="fit these of the backend's constants, keep the others")
    ap.add_argument("--protect", type=float, default=None,
                    help="count a suite shape whose pick is over this times its best as a miss too")
    ap.add_argument("--held-out", nargs="*", default=[], help="sweeps scored before and after the fit, not fitted")
    ap.add_argument("--splits-from", metavar="CONFIG", default=None,
                    help="rank only the (variant, split) records this config builds (a sweep of a build with more splits)")
    args = ap.parse_args()
    offered = offered_splits(args.splits_from) if args.splits_from else None

    def load_sets(args_json):
        sets: Dict[Tuple[bool, bool, str, bool], List[str]] = {}  # (tma, activation, device, GPC order) -> files
        for arg in args_json:
            path, key = file_flags(arg, args.tma_epilogue, args.activation, args.device, args.gpc_order)
            sets.setdefault(key, []).append(path)
        return [(restrict(load(paths), offered) if offered else load(paths), tma, act,
                 dataclasses.replace(DEVICES[name], gpc_order=gpc))
                for (tma, act, name, gpc), paths in sets.items()]

    loaded, held = load_sets(args.json), load_sets(args.held_out)
    suite = suite_labels() if args.protect is not None else set()

    def score_all(sets=None):
        results = [score(shapes, args.keep, d, tma, act) for shapes, tma, act, d in (sets or loaded)]
        lines = [line for r in results for line in r[2]]
        return max(r[0] for r in results), sum(r[1] * len(r[2]) for r in results) / len(lines), lines

    def suite_misses(lines) -> int:  # the suite's rows over --protect
        return sum(line.split()[0] in suite and ratio_of(line) > args.protect
                   for line in lines)

    def report_held(when):
        if held:
            w, mu, lines = score_all(held)
            over = sum(ratio_of(line) > 1.10 for line in lines)
            print(f"held out, {when}: worst {w:.3f}, mean {mu:.4f}, {over} over 1.10 ({len(lines)} records)")

    worst, mean, lines = score_all()
    print(f"current constants: worst {worst:.3f}, mean {mean:.3f}")
    print("\n".join(lines))
    report_held("current constants")
    # Random search in log space around the current constants (fractions capped at 1), then
    # coordinate descent from the best sample: minimise (worst ratio, mean ratio).
    names = [n for n in GRIDS[args.backend] if args.only is None or n in args.only]
    start = {n: getattr(timemodel, n) for n in names}
    rng = random.Random(args.seed)

    def trial(values):
        for n, v in values.items():
            setattr(timemodel, n, min(v, 1.0) if "FRACTION" in n else v)
        w, mu, lines = score_all()
        misses = sum(ratio_of(line) > 1.10 for line in lines) + suite_misses(lines)
        return (misses, w, mu)

    best_values, best = dict(start), trial(start)
    grid = GRIDS[args.backend]  # a constant at 0 (a term switched off) is tried at its listed values instead
    for _ in range(args.samples):
        values = {n: v * math.exp(rng.uniform(-1.0, 1.0)) if v else rng.choice(grid[n]) for n, v in start.items()}
        got = trial(values)
        if got < best:
            best_values, best = values, got
    for _ in range(args.rounds):
        improved = False
        for n in names:
            tries = [best_values[n] * f for f in (0.7, 0.85, 0.93, 1.07, 1.2, 1.4)] if best_values[n] else grid[n]
            for value in tries:
                values = dict(best_values, **{n: value})
                got = trial(values)
                if got < best:
                    best_values, best, improved = values, got, True
        if not improved:
            break
    trial(best_values)
    protected = f" (or suite shapes over {args.protect})" if suite else ""
    print(f"fitted: {best[0]} shapes over 1.10{protected}, worst {best[1]:.3f}, mean {best[2]:.3f}: "
          + ", ".join(f"{n} = {getattr(timemodel, n):.4g}" for n in names))
    print("\n".join(score_all()[2]))
    report_held("fitted constants")


if __name__ == "__main__":
    main()
