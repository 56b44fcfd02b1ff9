"""Where a time-model change moves the heuristic's pick, and a sample of those shapes drawn before they are swept
(how sessions 39-42 scored each change on held-out shapes: BENCHMARKS.md). Run ``picks`` once under each model, then
``diff``:

    PYTHONPATH=/tmp/old-tree python3 benchmarks/pick_moves.py picks before.json   # e.g. a git worktree of the old model
    python3 benchmarks/pick_moves.py picks after.json [--set SM90_WEIGHT_REREAD=0.6 ...]
    python3 benchmarks/pick_moves.py diff before.json after.json --draw 16 --seed 20264201

``picks`` ranks every op of configs/default.yaml on the bench suite's and the extra shapes (an H100 and an H200, both
with the GPC order on, as the libraries run there), and the chain op on a grid of 2288 shapes (M 1-3584, N 256-13824,
K 1024-32768; the H100, or the H200 with ``--grid-device h200``: the GPU the sweeps will run on), as the runtime ranks
them (dispatch.rank with each op's epilogue flags). ``diff`` lists what
moved and exits with 1 if a suite or extra-shape pick moved (those rows need a bench run on the GPU); with ``--draw`` it
prints a random sample of the moved grid shapes as persweep's ``SHAPES`` (device_lib.sh).
"""

import argparse
import dataclasses
import itertools
import json
import random
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import yaml

from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import dispatch, timemodel

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parent / "configs" / "default.yaml"
GRID_OP = "bias_gelu_mul_permute_f16"
GRID_M = (1, 8, 16, 32, 48, 64, 96, 128, 176, 256, 320, 400, 512, 640, 720, 832, 1024, 1280, 1552, 2048, 2560, 3584)
GRID_N = (256, 512, 960, 1536, 2304, 3584, 4096, 5120, 6144, 7168, 8192, 11008, 13824)
GRID_K = (1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768)


def devices() -> Dict[str, timemodel.DeviceInfo]:
    h100 = timemodel.DeviceInfo.from_properties("NVIDIA H100 80GB HBM3", 132, 9, 0, 120)
    h200 = timemodel.DeviceInfo.from_properties("NVIDIA H200", 132, 9, 0, 120)
    return {"h100": dataclasses.replace(h100, gpc_order=True), "h200": dataclasses.replace(h200, gpc_order=True)}


def named_shapes() -> List[Tuple[int, int, int]]:
    shapes = []
    for name in ("bench_shapes.yaml", "extra_shapes.yaml"):
        shapes += [(s["m"], s["n"], s["k"]) for s in yaml.safe_load((HERE / name).read_text())["shapes"]]
    return shapes


def named_labels() -> set:
    """The named shapes as the picks' keys spell them (MxNxK)."""
    return {f"{m}x{n}x{k}" for m, n, k in named_shapes()}


def picks(config: Path = CONFIG, grid_device: str = "h100") -> Dict[str, str]:
    """'op|device|MxNxK' -> 'variant split' for the named shapes (every op, both devices) and the grid (the chain
    op on ``grid_device``)."""
    out = {}
    named, grid = named_shapes(), list(itertools.product(GRID_M, GRID_N, GRID_K))
    for op in load_config(config).ops:
        for name, dev in devices().items():
            shapes = named + (grid if (op.name, name) == (GRID_OP, grid_device) else [])
            for m, n, k in shapes:
                best = dispatch.rank(op.variants, m, n, k, dev, archs=op.archs, tma_epilogue=op.epilogue.tma_in_kernel,
                                     activation=op.epilogue.transcendental)[0]
                out[f"{op.name}|{name}|{m}x{n}x{k}"] = f"{best.variant.name} {best.split}"
    return out


def moved(before: Dict[str, str], after: Dict[str, str]) -> Tuple[List[str], List[str]]:
    """(named-shape keys whose pick moved, grid keys whose pick moved), sorted."""
    named = named_labels()
    keys = sorted(key for key in before if before[key] != after.get(key))
    on_named = [key for key in keys if key.split("|")[2] in named]
    return on_named, [key for key in keys if key not in on_named]


def draw(keys: List[str], count: int, seed: int) -> List[str]:
    """``count`` of ``keys`` at random (all of them if fewer), in the order drawn."""
    return random.Random(seed).sample(keys, min(count, len(keys)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("picks", help="the picks under the model on sys.path, to a JSON file")
    p.add_argument("out")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a timemodel constant, changed")
    p.add_argument("--grid-device", choices=sorted(devices()), default="h100", help="the device the grid is ranked for")
    d = sub.add_parser("diff", help="what moved between two picks files")
    d.add_argument("before")
    d.add_argument("after")
    d.add_argument("--draw", type=int, default=0)
    d.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.cmd == "picks":
        for item in args.set:
            name, _, value = item.partition("=")
            if not hasattr(timemodel, name):
                ap.error(f"--set {item}: timemodel has no {name}")
            setattr(timemodel, name, float(value))
        Path(args.out).write_text(json.dumps(picks(grid_device=args.grid_device), indent=0, sort_keys=True))
        return 0
    before, after = (json.loads(Path(f).read_text()) for f in (args.before, args.after))
    on_named, on_grid = moved(before, after)
    named = named_labels()
    grid = sum(key.startswith(f"{GRID_OP}|") and key.split("|")[2] not in named for key in before)
    print(f"{len(on_grid)} of {grid} grid shapes moved (the grid's others are suite or extra shapes); "
          f"{len(on_named)} suite or extra-shape picks moved")
    for key in on_named:
        print(f"  MOVED {key}: {before[key]} -> {after[key]}")
    if args.draw:
        sample = draw(on_grid, args.draw, args.seed)
        for key in sample:
            print(f"  {key.split('|')[2]}: {before[key]} -> {after[key]}")
        print("SHAPES=\"" + " ".join(key.split("|")[2].replace("x", ",") for key in sample) + "\"")
    return 1 if on_named else 0


if __name__ == "__main__":
    sys.exit(main())
