"""Round 70's table (session 48): per shape, the best swapped in-kernel candidate of a sweep of
benchmarks/explore_sm90_r70.yaml beside the shipped grid's candidates in earlier sweeps of the same shapes on the
same GPU type (every candidate timed as graph replays by `cutlass-splitk bench --sweep`), with the anchors both
sweeps share (the serial 128x64 and 128x128 2x1 tiles: how far the two runs' clocks differ) and cuBLAS's GEMM alone.

    python benchmarks/r70_table.py R70.json... --against benchmarks/sweep_split1_session47_h200.json ...
"""

from __future__ import annotations

import argparse
import json
from typing import Dict, List, Tuple

from fit_model import backend_of, group_key, row_times  # the refit's sweep reader and variant names

ANCHORS = ("serial_sm90_t128x64x64_c1x1_coop_sauto_a8", "serial_sm90_t128x128x64_c2x1_coop_sauto_a8")


def candidates(row: dict) -> Dict[str, float]:
    """{'<variant without the op's name>/<split>': graph us} of one swept row (fit_model's reader and names)."""
    return {f"{group_key(name)}/{split}": float(us) for (name, split), us in row_times(row).items()}


def rows(paths: List[str]) -> Dict[str, dict]:
    got: Dict[str, dict] = {}
    for path in paths:
        for row in json.load(open(path))["rows"]:
            got[row["shape"]] = row
    return got


def best(cands: Dict[str, float], keep) -> Tuple[str, float]:
    kept = {k: v for k, v in cands.items() if keep(k)}
    return min(kept.items(), key=lambda kv: kv[1]) if kept else ("-", float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("r70", nargs="+")
    ap.add_argument("--against", nargs="+", required=True)
    args = ap.parse_args()
    new, old = rows(args.r70), rows(args.against)
    print("| shape | best shipped (earlier sweep) | us | anchors now / then | best swapped in-kernel | us | "
          "swapped / shipped (anchor-scaled) | cuBLAS graph |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for shape, row in sorted(new.items(), key=lambda kv: (kv[1]["m"], kv[1]["n"], kv[1]["k"])):
        now = candidates(row)
        swapped = best(now, lambda k: "_swab" in k and not k.startswith("parallel"))
        then = candidates(old[shape]) if shape in old else {}
        shipped = best(then, lambda k: backend_of(k.rsplit("/", 1)[0]) == "sm90")  # the sweeps' sm80 kernels ran through PTX JIT
        drift = [now[a + "/1"] / then[a + "/1"] for a in ANCHORS if a + "/1" in now and a + "/1" in then]
        scale = sum(drift) / len(drift) if drift else float("nan")
        ratio = swapped[1] / (shipped[1] * scale) if then and drift else float("nan")
        if ratio == ratio:
            ratios.append(ratio)
        print(f"| {shape} | {shipped[0]} | {shipped[1]:.1f} | {' '.join(f'{x:.2f}' for x in drift) or '-'} | "
              f"{swapped[0]} | {swapped[1]:.1f} | {ratio:.2f} | {row['extra'].get('matmul_graph_us', float('nan')):.1f} |")
    if ratios:
        print(f"\nswapped / shipped: mean {sum(ratios) / len(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}, "
              f"{sum(r < 1 for r in ratios)} of {len(ratios)} faster")


if __name__ == "__main__":
    main()
