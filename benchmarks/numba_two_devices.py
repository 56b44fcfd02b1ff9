"""Session 27: Numba arrays and streams on device 1 called with device 0 current. Which context Numba's
stream of device 1 belongs to (its own or the primary one, which torch, CuPy and the library use), and
what a call does on that stream and on the legacy default stream."""
import numpy as np
import torch
from cuda.bindings import driver as d
from numba import cuda

import cutlass_splitk


def ok(r):
    err = r[0] if isinstance(r, tuple) else r
    assert err == d.CUresult.CUDA_SUCCESS, err
    return r[1] if isinstance(r, tuple) and len(r) == 2 else r


lib = cutlass_splitk.load("build/default")
op = lib.linear_bias_gelu_f16
torch.zeros(1, device="cuda:1")  # the primary context of device 1 made by the runtime (as torch does)
primary1 = ok(d.cuDevicePrimaryCtxRetain(ok(d.cuDeviceGet(1))))
with cuda.gpus[1]:
    s = cuda.stream()
    numba_ctx = ok(d.cuCtxGetCurrent())
    h = s.handle
    handle = int(h.value if hasattr(h, "value") else h)
    stream_ctx = ok(d.cuStreamGetCtx(d.CUstream(handle)))
    x = cuda.to_device(np.ones((4, 4), np.float16), stream=s)
print(f"primary context of device 1 {int(primary1):#x}; Numba's current inside gpus[1] {int(numba_ctx):#x}; "
      f"its stream's context {int(stream_ctx):#x}; numba {cuda.__name__} ctx object {cuda.current_context()}")
print("x's pointer on device", lib.platform.devices.pointer_device(x.__cuda_array_interface__["data"][0]))
g = torch.Generator(device="cuda")
g.manual_seed(15)
a, w, bias = (torch.randn(*sh, device="cuda", dtype=torch.float16, generator=g) for sh in ((48, 4096), (512, 4096), (512,)))
with cuda.gpus[1]:
    na, nw, nb = (cuda.to_device(v, stream=s) for v in (a.cpu().numpy(), np.asfortranarray(w.cpu().numpy().T),
                                                       bias.cpu().numpy()))
    s.synchronize()
for mode, split in ((None, None), ("serial", 4), ("parallel", 8)):
    kw = {} if mode is None else {"mode": mode, "split_k": split}
    ref = op(a, w.t(), bias=bias, **kw).cpu().numpy().view(np.uint16)
    for stream in (None, handle):
        try:
            y = op(na, nw, bias=nb, stream=stream, **kw)
            torch.cuda.synchronize(1)
            with cuda.gpus[1]:
                got = y.copy_to_host().view(np.uint16)
            print(f"{mode} stream={stream}: wrong {int((got != ref).sum())}")
        except Exception as exc:
            print(f"{mode} stream={stream}: {type(exc).__name__}: {exc}")
