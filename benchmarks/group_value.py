"""What each variant group of a config is worth on recorded sweeps (no GPU): per group, on how many shape rows it is
the only best (variant, split) among the config's offered pairs, and how much slower the best of the other groups is
there; with --backends, the rows where the config's best sm80 candidate beats its best sm90 one (an sm_90 GPU runs
the sm80 variants a sweep forces through the driver's PTX JIT). A group that is nowhere the only best can leave the
grid at no measured cost; one that is costs that much on those shapes (session 50):

    python3 benchmarks/group_value.py configs/default.yaml --sweeps benchmarks/sweep_*session4[1-9]*.json \\
        benchmarks/round6[89]_session4*.json --modes serial --backends
"""

from __future__ import annotations

import argparse
from typing import Dict, List, Sequence, Tuple

from fit_model import backend_of, group_key, load, offered_splits, restrict  # the refit's reader, names, split lists

Pair = Tuple[str, int]  # (group key, split)


def rows(sweeps: Sequence[str], offered: set) -> List[Tuple[Tuple[int, int, int], str, Dict[Pair, float]]]:
    """Every swept row with the offered (group key, split) pairs it timed: [(m, n, k), label, {pair: us}]."""
    out = []
    for mnk, label, times in restrict(load(list(sweeps)), offered):
        if times:
            out.append((mnk, label, {(group_key(name), split): us for (name, split), us in times.items()}))
    return out


def complete(table, offered: set, share: float):
    """The rows that timed at least ``share`` of the config's groups of each backend they timed: an exploration that
    timed a few anchors beside its own tiles does not say whether a group of the config is redundant."""
    groups: Dict[str, set] = {}
    for g, _ in offered:
        groups.setdefault(backend_of(g), set()).add(g)
    out = []
    for row in table:
        timed: Dict[str, set] = {}
        for g, _ in row[2]:
            timed.setdefault(backend_of(g), set()).add(g)
        if all(len(gs) >= share * len(groups[b]) for b, gs in timed.items()):
            out.append(row)
    return out


def only_best(table, group: str) -> List[Tuple[float, Tuple[int, int, int]]]:
    """(the best other group's time / the best time, shape) of every row where ``group`` alone is the best, worst
    first, among the candidates of its backend; rows with nothing else of that backend are left out."""
    out = []
    for mnk, _, times in table:
        mine = [us for (g, _), us in times.items() if g == group]
        rest = [us for (g, _), us in times.items() if g != group and backend_of(g) == backend_of(group)]
        if mine and rest and min(rest) > min(mine):
            out.append((min(rest) / min(mine), mnk))
    return sorted(out, reverse=True)


def sm80_wins(table) -> List[Tuple[float, Tuple[int, int, int], Pair, float, Pair, float]]:
    """(best sm80 / best sm90, shape, sm80 pair, us, sm90 pair, us) of every row where an sm80 candidate is faster."""
    out = []
    for mnk, _, times in table:
        best = {}
        for pair, us in times.items():
            b = backend_of(pair[0])
            if b not in best or us < best[b][1]:
                best[b] = (pair, us)
        if len(best) == 2 and best["sm80"][1] < best["sm90"][1]:
            out.append((best["sm80"][1] / best["sm90"][1], mnk, *best["sm80"], *best["sm90"]))
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--sweeps", nargs="+", required=True)
    ap.add_argument("--modes", nargs="*", default=["serial", "stream_k", "parallel"],
                    help="the groups to report, by split mode (a group key starts with it)")
    ap.add_argument("--backends", action="store_true", help="also list the rows where sm80 beats sm90")
    ap.add_argument("--share", type=float, default=0.8,
                    help="rows count that timed at least this share of the config's groups of a backend (default 0.8)")
    args = ap.parse_args()
    offered = offered_splits(args.config)
    every = rows(args.sweeps, offered)
    table = complete(every, offered, args.share)
    print(f"{len(table)} shape rows of {len(every)} timed at least {args.share:.0%} of the config's groups")
    for g in sorted({g for _, _, t in table for g, _ in t}):
        if g.split("_", 1)[0] in args.modes:
            losses = only_best(table, g)
            worst = ", ".join(f"{r:.2f} {'x'.join(map(str, mnk))}" for r, mnk in losses[:3]) or "-"
            print(f"{g:52s} only best on {len(losses):3d}; without it: {worst}")
    if args.backends:
        wins = sm80_wins(table)
        print(f"sm80 ahead of sm90 on {len(wins)} rows")
        for r, mnk, p80, us80, p90, us90 in wins:
            print(f"{r:.2f} {'x'.join(map(str, mnk))}: {p80[0]}/{p80[1]} {us80:.1f} us, {p90[0]}/{p90[1]} {us90:.1f} us")


if __name__ == "__main__":
    main()
