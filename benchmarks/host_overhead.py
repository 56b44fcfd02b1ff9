"""Where the host time of one op call goes: the full Python call, the bare C entry point
(ctypes, arguments prepared once), and torch.matmul for comparison. Host microseconds per
call, device work not awaited (queue kept short by syncing every 50 calls).

    PYTHONPATH=. python3 benchmarks/host_overhead.py build/default
"""

import ctypes
import sys

import torch

import cutlass_splitk
from cutlass_splitk.runtime import abi
from cutlass_splitk.runtime.timing import host_time


def per_call(fn, reps=500):
    return host_time(fn, reps, sync_every=50)


def main(directory):
    lib = cutlass_splitk.load(directory)
    op = lib.bias_gelu_mul_permute_f16
    m, n, k = 16, 4096, 1024
    a = torch.randn(m, k, device="cuda", dtype=torch.half)
    w = torch.randn(n, k, device="cuda", dtype=torch.half)
    bias = torch.randn(n, device="cuda", dtype=torch.half)
    e = torch.randn(m, n, device="cuda", dtype=torch.half)
    out = torch.empty(1, 32, 16, 128, device="cuda", dtype=torch.half)
    kw = dict(bias=bias, e=e, view=(1, 16, 32, 128), out=out)
    for mode, split in (("serial", 1), ("serial", 4), ("parallel", 4)):
        full = per_call(lambda: op(a, w.t(), split_k=split, mode=mode, **kw))
        kw_alloc = {k: v for k, v in kw.items() if k != "out"}
        alloc = per_call(lambda: op(a, w.t(), split_k=split, mode=mode, **kw_alloc))
        plan = next(p for key, p in op.launcher.plans.items() if key.split_k == split and key.mode == mode)
        args = abi.CksArgs(abi_version=abi.ABI_VERSION, m=m, n=n, k=k, split_k=split, permute_s=16, permute_h=32,
                           device=0, a=a.data_ptr(), lda=k, b=w.data_ptr(), ldb=k, bias=bias.data_ptr(),
                           e=e.data_ptr(), lde=n, d=out.data_ptr(), ldd=n, alpha=1.0)
        ws = lib.workspace
        stream = torch.cuda.current_stream().cuda_stream
        if plan.semaphore_bytes:
            sem = ws.semaphores(a.device, stream, plan.semaphore_bytes)
            args.semaphores, args.semaphore_bytes = sem.data_ptr(), sem.numel() * 4
        if plan.partial_bytes:
            part = ws.partials(a.device, stream, plan.partial_bytes)
            args.partials, args.partial_bytes = part.data_ptr(), part.numel() * 4
        run = op.bound.run[plan.variant]
        ref = ctypes.byref(args)
        s = ctypes.c_void_p(stream)
        bare = per_call(lambda: run(ref, s))
        query = op.bound.query[plan.variant]
        q = abi.CksQuery()
        qref = ctypes.byref(q)
        bare_query = per_call(lambda: query(ref, qref))
        print(f"{mode:>8} split {split}: full call {full:6.1f} us ({alloc:6.1f} us allocating out), bare C run {bare:6.1f} us, "
              f"bare C query {bare_query:6.1f} us ({plan.variant})")
    x = torch.randn(16, 1024, device="cuda", dtype=torch.half)
    print(f"torch.matmul: {per_call(lambda: torch.matmul(x, w.t())):6.1f} us; "
          f"torch.empty: {per_call(lambda: torch.empty(16, 16, device='cuda')):6.1f} us")


if __name__ == "__main__":
    main(*sys.argv[1:])
