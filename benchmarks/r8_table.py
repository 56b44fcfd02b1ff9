"""Joins variant_ab.py records of the same op built with different settings (one JSON per
setting, its label the setting's name) into one table per shape: each (variant, split) a row,
each setting a column of flushed / graph µs, and whether every setting gave the same bits
(digest) and passed the float64 check. A script, not a test.

    python3 benchmarks/r8_table.py device-logs/r8_*.json
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def short(variant: str) -> str:
    """The variant's name without the op prefix and the defaults."""
    parts = variant.split("_")
    keep = [p for p in parts if p[:1] in "tc" and any(ch.isdigit() for ch in p) or p in ("serial", "streamk", "parallel", "pp", "coop")]
    return "_".join(keep) or variant


def main(files) -> int:
    cells = defaultdict(dict)  # (m, n, k, variant, split) -> label -> row
    labels = []
    for f in files:
        for r in json.load(open(f)):
            if r["label"] not in labels:
                labels.append(r["label"])
            cells[(r["m"], r["n"], r["k"], r["variant"], r["split"])][r["label"]] = r
    bad = 0
    shape = None
    for key in sorted(cells):
        m, n, k, variant, split = key
        row = cells[key]
        if (m, n, k) != shape:
            shape = (m, n, k)
            mm = next(iter(row.values()))
            print(f"\n{m}x{n}x{k}  (torch.matmul {mm['matmul_us']:.1f} flushed, {mm['matmul_graph_us']:.1f} graph)")
            print(f"  {'variant':34s} split " + " ".join(f"{lab:>15s}" for lab in labels) + "  same bits")
        digests = {r["digest"] for r in row.values()}
        wrong = [lab for lab, r in row.items() if r["err"] is None or not r["err"] < 1e-2]
        bad += len(wrong) + (len(digests) > 1)
        cols = " ".join(f"{row[lab]['flushed_us']:7.1f}/{row[lab]['graph_us']:7.1f}" if lab in row else f"{'':>15s}"
                        for lab in labels)
        print(f"  {short(variant):34s} {split:5d} {cols}  {'yes' if len(digests) == 1 else 'NO'}"
              f"{'  WRONG: ' + ','.join(wrong) if wrong else ''}")
    print(f"\n{bad} wrong or differing cells")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
