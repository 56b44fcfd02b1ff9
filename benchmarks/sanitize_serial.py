"""Run under compute-sanitizer (memcheck, racecheck, synccheck) on the device machine:
every variant of two ops this GPU runs (sm80 and sm90, every mode) at odd sizes, results
checked against float64.

    compute-sanitizer --tool memcheck  python3 benchmarks/sanitize_serial.py build/default
    compute-sanitizer --tool racecheck python3 benchmarks/sanitize_serial.py build/default
    compute-sanitizer --tool memcheck  python3 benchmarks/sanitize_serial.py build/r43 explore90r43_chain_f16 --match c2x2

(other ops of the build after its directory; ``--match`` keeps the variants whose names contain that regular
expression)
"""

import argparse
import re
import sys

import torch

import cutlass_splitk
from cutlass_splitk.runtime import dispatch
from cutlass_splitk.runtime.reference import epilogue, random_inputs

OPS = ("linear_bias_gelu_f16", "bias_gelu_mul_permute_bf16")


def runnable(lib, op):
    """The op's variants this GPU has code for."""
    dev = lib.device_info(torch.cuda.current_device())
    return [v for v in op.spec.variants if dispatch.runs_on(v, op.spec.archs, dev)]


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory")
    ap.add_argument("ops", nargs="*", default=list(OPS))
    ap.add_argument("--match", default="", help="only the variants whose names contain this regular expression")
    args = ap.parse_args(argv)
    ops, match = args.ops, args.match
    lib = cutlass_splitk.load(args.directory)
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    failures = 0
    runs = 0
    for op_name in ops:
        op = getattr(lib, op_name)
        for v in [v for v in runnable(lib, op) if re.search(match, v.name)]:
            for (m, n, k, view) in ((37, 72, 1000, (1, 37, 3, 24)), (130, 136, 264, (2, 65, 17, 8))):
                split = max(v.splits)
                a, b, kw = random_inputs(op.spec, m, n, k, view=view, generator=g)
                ref = epilogue(op.spec.epilogue, a.double() @ b.double(), **kw)
                for _ in range(2):  # the second launch reuses the workspace the first left
                    out = op(a, b, split_k=split, variant=v.name, **kw)
                torch.cuda.synchronize()
                err = ((out.double() - ref).norm() / ref.norm()).item()
                runs += 1
                if not err < 1e-2:
                    failures += 1
                    print(f"FAIL {v.name} M={m} N={n} K={k} split={split}: rel err {err:.3g}")
    print(f"{runs} problems, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
