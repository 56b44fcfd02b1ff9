"""Two ncu text reports side by side, metric by metric (the first value of each metric name
in each file), for metrics whose values differ: what one kernel does that the other does not.
A script, not a test.

    python3 benchmarks/ncu_compare.py device-logs/ncu8s_chain.txt device-logs/ncu8s_plain.txt
"""

from __future__ import annotations

import re
import sys

ROW = re.compile(r"^\s+([a-z][\w.]+)\s+(\S+)?\s+([-\d.,]+)\s*$")


def metrics(path: str) -> dict:
    found = {}
    for line in open(path):
        m = ROW.match(line)
        if m and m.group(1) not in found:
            found[m.group(1)] = float(m.group(3).replace(",", ""))
    return found


def main(first: str, second: str) -> int:
    a, b = metrics(first), metrics(second)
    print(f"{'metric':86s} {first.rsplit('/', 1)[-1]:>14s} {second.rsplit('/', 1)[-1]:>14s}")
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)
        if x != y and (x or y):
            print(f"{name:86s} {x if x is not None else '-':>14} {y if y is not None else '-':>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
