"""Runs the chain op a few times on one shape so ncu can profile its kernels:

    ncu --clock-control none --launch-skip 2 --launch-count 2 --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats \
        python3 benchmarks/profile_shape.py build/default 1024 1024 16384 [op] [variant]

(op defaults to bias_gelu_mul_permute_f16; with a variant, that variant at split 1 (or the split
given after it) instead of the dispatcher's pick.) With ``cublas`` for the directory, torch.matmul
of the same f16 shape (a @ w.t()) instead, its last call inside an NVTX range "cublas"
(``ncu --nvtx --nvtx-include cublas/`` profiles that call's kernels only).
"""

import sys

import torch

import cutlass_splitk
from variant_ab import view_for  # benchmarks/ is this script's directory


def main(directory, m, n, k, op_name="bias_gelu_mul_permute_f16", variant=None, split=1):
    m, n, k = int(m), int(n), int(k)
    if directory == "cublas":
        a = torch.randn(m, k, device="cuda", dtype=torch.half)
        w = torch.randn(n, k, device="cuda", dtype=torch.half)
        for _ in range(2):
            torch.matmul(a, w.t())
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("cublas")
        torch.matmul(a, w.t())
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        return
    lib = cutlass_splitk.load(directory)
    op = getattr(lib, op_name)
    view = view_for(op, m, n)
    a, b, kw = op.random_inputs(m, n, k, view=view)
    pick = {"variant": variant, "split_k": int(split)} if variant else {}
    print(variant or op.candidates(m, n, k, lib.device_info(torch.cuda.current_device()))[0].describe())
    for _ in range(3):
        op(a, b, **kw, **pick)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(*sys.argv[1:])
