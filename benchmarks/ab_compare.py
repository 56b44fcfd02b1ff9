"""Two builds' variant_ab.py records side by side (device_lib.sh's ``ab``: each build run in turn, one JSON per build
and run). Per candidate: the mean of the runs' graph and flushed times per build and their ratio (new / old); per
shape: the median ratio over its candidates and each build's best candidate; and whether every output had the same
bits in both builds and was within 1e-2 of float64. A script, not a test.

    python3 benchmarks/ab_compare.py --old /tmp/s34/r58_r58n*.json --new /tmp/s34/r58_r58[0-9]*.json [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict


def load(paths):
    times = defaultdict(lambda: {"graph": [], "flushed": [], "digest": set(), "err": []})
    for path in paths:
        for r in json.load(open(path)):
            key = (r["m"], r["n"], r["k"], r["variant"], r["split"])
            t = times[key]
            t["graph"].append(r["graph_us"])
            t["flushed"].append(r["flushed_us"])
            t["digest"].add(r["digest"])
            t["err"].append(r["err"])
            t["matmul"] = (r["matmul_us"], r["matmul_graph_us"])
    return times


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", nargs="+", required=True)
    p.add_argument("--new", nargs="+", required=True)
    p.add_argument("--json")
    args = p.parse_args(argv)
    old, new = load(args.old), load(args.new)
    keys = sorted(set(old) & set(new))
    mean = statistics.fmean
    rows, shapes = [], defaultdict(list)
    for key in keys:
        o, n = old[key], new[key]
        row = dict(m=key[0], n=key[1], k=key[2], variant=key[3], split=key[4],
                   old_graph=mean(o["graph"]), new_graph=mean(n["graph"]),
                   old_flushed=mean(o["flushed"]), new_flushed=mean(n["flushed"]),
                   same_bits=o["digest"] == n["digest"] and len(o["digest"]) == 1,
                   worst_err=max(e for e in o["err"] + n["err"] if e is not None) if any(
                       e is not None for e in o["err"] + n["err"]) else None,
                   matmul=n.get("matmul"))
        rows.append(row)
        shapes[key[:3]].append(row)
    print(f"{'shape':>18} {'cands':>5} {'graph new/old':>14} {'flushed new/old':>16} "
          f"{'best graph old -> new (us)':>28} {'best flushed old -> new':>24} {'cuBLAS graph/flushed':>21}")
    for shape, rs in sorted(shapes.items()):
        g = statistics.median(r["new_graph"] / r["old_graph"] for r in rs)
        f = statistics.median(r["new_flushed"] / r["old_flushed"] for r in rs)
        bo = min(rs, key=lambda r: r["old_graph"])
        bn = min(rs, key=lambda r: r["new_graph"])
        fo = min(r["old_flushed"] for r in rs)
        fn = min(r["new_flushed"] for r in rs)
        mm = rs[0]["matmul"]
        print(f"{'x'.join(map(str, shape)):>18} {len(rs):5d} {g:14.3f} {f:16.3f} "
              f"{bo['old_graph']:8.2f} -> {bn['new_graph']:6.2f} ({bn['variant'][-24:]} s{bn['split']}) "
              f"{fo:8.2f} -> {fn:6.2f} {mm[1]:9.2f} / {mm[0]:6.2f}")
    allg = [r["new_graph"] / r["old_graph"] for r in rows]
    allf = [r["new_flushed"] / r["old_flushed"] for r in rows]
    print(f"all {len(rows)} candidates: graph new/old median {statistics.median(allg):.3f} "
          f"(min {min(allg):.3f}, max {max(allg):.3f}); flushed median {statistics.median(allf):.3f} "
          f"(min {min(allf):.3f}, max {max(allf):.3f}); same bits: {sum(r['same_bits'] for r in rows)}/{len(rows)}; "
          f"worst error {max((r['worst_err'] or 0) for r in rows):.2e}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
