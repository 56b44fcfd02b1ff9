"""Where the fused chain loses: every row of the `cutlass-splitk bench --sweep --json` files given (one op, graph
replays of every candidate, cuBLAS's GEMM alone and the eager chain beside), summarised by M·N class: how many rows
the dispatcher's pick (L2 flushed) is slower than the eager chain, and the best swept candidate over cuBLAS's GEMM
alone (both graph replays). Session 40 (BENCHMARKS.md) ran it on the H100 sweeps of sessions 37-40.

    python3 benchmarks/against_eager.py benchmarks/sweep_changed_picks_session3*_h100.json --worst 12
"""

import argparse
import json
import statistics
from typing import Dict, List, Tuple

CLASSES = (("skinny (M·N <= 1024², K >= 8192)", lambda m, n, k: m * n <= 1024 ** 2 and k >= 8192),
           ("small (M·N <= 1024², K < 8192)", lambda m, n, k: m * n <= 1024 ** 2),
           ("medium (M·N up to 16M)", lambda m, n, k: m * n <= 16 * 1024 ** 2),
           ("large", lambda m, n, k: True))


def rows(paths: List[str]) -> List[Dict]:
    out, seen = [], set()
    for path in paths:
        data = json.load(open(path))
        for r in data.get("rows", []) if isinstance(data, dict) else []:
            extra = r.get("extra", {})
            swept = {key: us for key, us in extra.items() if "/split" in key}
            key = (r["m"], r["n"], r["k"], r["dtype"], path)
            if not (swept and r.get("eager_us") and "matmul_graph_us" in extra) or key in seen:
                continue
            seen.add(key)
            best = min(swept, key=swept.get)
            out.append(dict(m=r["m"], n=r["n"], k=r["k"], vs_eager=r["ours_us"] / r["eager_us"],
                            best_vs_cublas=swept[best] / extra["matmul_graph_us"], best=best.split("_sm90_")[-1],
                            file=path.rsplit("/", 1)[-1]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--worst", type=int, default=10, help="list this many rows, slowest against the eager chain first")
    args = ap.parse_args()
    table = rows(args.json)
    print("| class | rows | ours slower than eager | best candidate / cuBLAS GEMM (graph): median, max |")
    print("|---|---|---|---|")
    left = list(table)
    for name, test in CLASSES:
        mine = [r for r in left if test(r["m"], r["n"], r["k"])]
        left = [r for r in left if r not in mine]
        if mine:
            ratios = [r["best_vs_cublas"] for r in mine]
            print(f"| {name} | {len(mine)} | {sum(r['vs_eager'] > 1 for r in mine)} | "
                  f"{statistics.median(ratios):.2f}, {max(ratios):.2f} |")
    print()
    for r in sorted(table, key=lambda r: -r["vs_eager"])[:args.worst]:
        print(f"{r['m']} x {r['n']} x {r['k']}: ours / eager {r['vs_eager']:.2f}, best / cuBLAS {r['best_vs_cublas']:.2f} "
              f"({r['best']}; {r['file']})")


if __name__ == "__main__":
    main()
