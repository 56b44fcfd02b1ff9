"""Diagnoses CuPy arrays on device 1 called with device 0 current (session 27): which stream the call
takes, and whether its output is right once both devices are drained (ordering) or wrong anyway."""
import sys

import cupy
import torch

import cutlass_splitk
from cutlass_splitk.runtime import arrays

lib = cutlass_splitk.load(sys.argv[1] if len(sys.argv) > 1 else "build/default")
op = lib.linear_bias_gelu_f16
print("cupy", cupy.__version__)
g = torch.Generator(device="cuda")
g.manual_seed(11)
a, w, bias = (torch.randn(*s, device="cuda", dtype=torch.float16, generator=g) for s in ((48, 4096), (512, 4096), (512,)))
hows = sys.argv[2].split(",") if len(sys.argv) > 2 else ["current", "explicit", "drain", "nobusy"]
for how in hows:
    for mode, split in ((None, None), ("serial", 4), ("parallel", 8)):
        kw = {} if mode is None else {"mode": mode, "split_k": split}
        ref = op(a, w.t(), bias=bias, **kw).cpu().numpy().view("uint16")
        with cupy.cuda.Device(1):
            s1 = cupy.cuda.Stream(non_blocking=True)
            src = [cupy.asarray(x.cpu().numpy()) for x in (a, w, bias)]
            cupy.cuda.Device().synchronize()
            busy = cupy.ones((4096, 4096), dtype=cupy.float16)
        s0 = cupy.cuda.Stream(non_blocking=True)
        bad = []
        with cupy.cuda.Device(0), s0:
            for r in range(4):
                with cupy.cuda.Device(1):
                    s1.use()
                    if how != "nobusy":
                        for _ in range(3):
                            busy = busy @ busy * 0.0 + 1.0
                    ca, cw, cb = [x * 1 for x in src]
                taken = arrays.call_stream("t", None, ca)
                extra = {"stream": s1.ptr} if how == "explicit" else {}
                y = op(ca, cw.T, bias=cb, **kw, **extra)
                if how == "drain":
                    cupy.cuda.Device(1).synchronize()
                    cupy.cuda.Device(0).synchronize()
                s1.synchronize()
                got = cupy.asnumpy(y).view("uint16")
                bad.append(int((got != ref).sum()))
                if bad[-1] and "verbose" in sys.argv:
                    inputs_ok = all(bool((x == z).all()) for x, z in zip((ca, cw, cb), src))
                    with cupy.cuda.Device(1):
                        again = op(ca, cw.T, bias=cb, **kw)
                        cupy.cuda.Device().synchronize()
                    print(f"  round {r}: ptrs a {ca.data.ptr:#x} b {cw.data.ptr:#x} bias {cb.data.ptr:#x} "
                          f"y {y.data.ptr:#x}; inputs right after draining: {inputs_ok}; called again inside "
                          f"Device(1): {int((cupy.asnumpy(again).view('uint16') != ref).sum())} wrong; "
                          f"first row {got[0, :4]} want {ref[0, :4]}", flush=True)
        with cupy.cuda.Device(1):
            cupy.cuda.Stream.null.use()
        print(f"{how:9s} {str(mode):9s} s1 {s1.ptr:#x} s0 {s0.ptr:#x} cupy(1) {cupy.cuda.get_current_stream(1).ptr:#x} "
              f"taken {taken:#x}; wrong elements per round {bad}", flush=True)
