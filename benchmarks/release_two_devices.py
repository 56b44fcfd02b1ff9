"""Session 28: what becomes of a DeviceArray output of device 1, on its legacy default stream, dropped with
device 0 current (two GPUs). Prints, over N drops of an 8 MB output, whether the next allocation on
another stream of device 1 got the dropped address while device 1's legacy stream was still busy, and
whether that memory, filled on the other stream, was then overwritten by the dropped output's kernels.

    python3 benchmarks/release_two_devices.py [N]
"""

import gc
import sys

import torch

import cutlass_splitk
from cutlass_splitk.runtime import cudacore


class CAI:
    """Only a CUDA array interface (v3, no producer stream) over ``ptr``."""

    def __init__(self, ptr, shape, typestr="<f2", strides=None, keep=None):
        self.keep = keep
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3,
                                         "strides": strides, "stream": None}


def cai(t):
    return CAI(t.data_ptr(), tuple(t.shape), strides=tuple(2 * x for x in t.stride()), keep=t)


def main(n: int) -> None:
    lib = cutlass_splitk.load("build/default")
    op = lib.linear_bias_gelu_f16
    d1 = torch.device("cuda", 1)
    m, nn, k = 1024, 4096, 1024  # an 8 MB output
    a, w, bias = (torch.randn(*s, device=d1, dtype=torch.float16) for s in ((m, k), (nn, k), (nn,)))
    busy = torch.ones(4096, 4096, device=d1, dtype=torch.float16)
    other = torch.cuda.Stream(d1)
    devices = lib.platform.devices
    torch.cuda.set_device(0)
    y = op(cai(a), cai(w.t()), bias=cai(bias))  # the workspace and the first pool growth
    del y
    gc.collect()
    torch.cuda.synchronize(d1)
    reused = clobbered = pending = 0
    for _ in range(n):
        with torch.cuda.device(d1):
            for _ in range(16):  # ~3 ms queued on device 1's legacy stream
                busy = busy @ busy * 0.0 + 1.0
        y = op(cai(a), cai(w.t()), bias=cai(bias))
        dropped = y.ptr
        del y  # freed here (no cycle holds it); no gc.collect(), which can outlast the queue
        block = devices.alloc(1, other.cuda_stream, m * nn * 2)
        reused += block.ptr == dropped
        pending += not torch.cuda.default_stream(d1).query()  # device 1's legacy stream still busy
        saved = devices.enter(1)
        try:
            d = cudacore.driver()
            cudacore.check(d.cuMemsetD8Async(d.CUdeviceptr(block.ptr), 0x3C, m * nn * 2, d.CUstream(other.cuda_stream)),
                           "cuMemsetD8Async")
        finally:
            devices.leave(saved)
        torch.cuda.synchronize(d1)
        got = torch.as_tensor(CAI(block.ptr, (m * nn * 2,), "|u1"), device=d1)
        clobbered += int(torch.count_nonzero(got != 0x3C).item() > 0)
        del block, got
        gc.collect()
    print(f"drops {n}: dropped address reused at once {reused}/{n}; new memory overwritten by the dropped "
          f"output's kernels {clobbered}/{n}; device 1's legacy stream still busy at the allocation {pending}/{n}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
