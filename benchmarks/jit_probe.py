"""What the driver's PTX JIT costs an sm80 variant's first call on a GPU its library has no cubin for (an sm_90 GPU
running an op whose sm80 grids are built for sm_80 only): the first and second call of a forced sm80 variant and of
an sm90 one, wall time around a synchronize each. Run with CUDA_CACHE_DISABLE=1 for a cold JIT cache:

    CUDA_CACHE_DISABLE=1 python3 benchmarks/jit_probe.py build/default bias_gelu_mul_permute_f16 32 11008 1024
"""

import sys
import time

import torch

import cutlass_splitk
from variant_ab import view_for  # benchmarks/ is this script's directory


def timed(fn) -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def main(directory, op_name, m, n, k):
    m, n, k = int(m), int(n), int(k)
    lib = cutlass_splitk.load(directory)
    op = getattr(lib, op_name)
    a, b, kw = op.random_inputs(m, n, k, view=view_for(op, m, n))
    names = lib.variants(op_name)
    sm90 = next(v for v in names if "_serial_sm90_" in v)
    sm80 = [v for v in names if "_sm90_" not in v and "_serial_" in v]
    for label, name in [("sm90", sm90)] + [("sm80", v) for v in sm80]:
        first = timed(lambda: op(a, b, **kw, variant=name, split_k=1))
        second = timed(lambda: op(a, b, **kw, variant=name, split_k=1))
        print(f"{label} {name}: first call {first:.1f} ms, second {second:.3f} ms", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
