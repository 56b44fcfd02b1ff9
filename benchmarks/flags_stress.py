"""Round 61's counters under load (a script for the device machine, not a test): every parallel candidate of an
op, on several shapes back to back on one stream with no synchronisation between calls (so a counter left
non-zero, or zeroed too early, would let a reduction read partials before they are stored), repeated; each output
compared bit for bit with the same call made with the setting off (CUTLASS_SPLITK_TAIL is read at every call).

    python3 benchmarks/flags_stress.py build/r61 explore90r61_chain_f16 [--rounds 5]
"""

import argparse
import os
import sys

import torch

import cutlass_splitk
from cutlass_splitk.runtime.reference import random_inputs

sys.path.insert(0, os.path.dirname(__file__))
from variant_ab import view_for  # noqa: E402

SHAPES = ((256, 256, 65536), (300, 640, 1000), (512, 512, 32768), (200, 1024, 5000), (16, 4096, 14336))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("op")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    op = getattr(cutlass_splitk.load(args.directory), args.op)
    cands = [(v.name, s) for v in op.spec.variants if v.mode.value == "parallel" for s in v.splits]
    g = torch.Generator(device="cuda")
    g.manual_seed(61)
    problems = []
    for m, n, k in SHAPES:
        a, b, kw = random_inputs(op.spec, m, n, k, view=view_for(op, m, n), generator=g)
        problems.append(((m, n, k), a, b, kw))
    os.environ["CUTLASS_SPLITK_TAIL"] = "0"
    refs = {(shape, c): op(a, b, variant=c[0], split_k=c[1], mode="parallel", **kw).clone()
            for shape, a, b, kw in problems for c in cands}
    torch.cuda.synchronize()
    os.environ["CUTLASS_SPLITK_TAIL"] = "flags"
    calls = wrong = 0
    for _ in range(args.rounds):
        outs = []
        for c in cands:
            for shape, a, b, kw in problems:
                outs.append(((shape, c), op(a, b, variant=c[0], split_k=c[1], mode="parallel", **kw)))
        torch.cuda.synchronize()
        for key, out in outs:
            calls += 1
            if not torch.equal(out.view(torch.int16), refs[key].view(torch.int16)):
                wrong += 1
                print(f"DIFFERENT {key}")
    print(f"{calls} calls, {wrong} with other bits than the setting off")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
