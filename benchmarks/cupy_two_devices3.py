"""Session 27, third diagnosis: the stream handle our C entry receives for CuPy arrays on device 1 called
with device 0 current, beside CuPy's current streams; and CUPTI's stream of each kernel."""
import cupy
import torch

import cutlass_splitk

lib = cutlass_splitk.load("build/default")
op = lib.linear_bias_gelu_f16
seen = []
for name, fn in list(op.bound.run.items()):
    def wrapped(args, stream, fn=fn, name=name):
        seen.append((name, stream))
        return fn(args, stream)
    op.bound.run[name] = wrapped
g = torch.Generator(device="cuda")
g.manual_seed(11)
a, w, bias = (torch.randn(*s, device="cuda", dtype=torch.float16, generator=g) for s in ((48, 4096), (512, 4096), (512,)))
ref = op(a, w.t(), bias=bias, mode="serial", split_k=4).cpu().numpy().view("uint16")
seen.clear()
with cupy.cuda.Device(1):
    s1 = cupy.cuda.Stream(non_blocking=True)
    src = [cupy.asarray(x.cpu().numpy()) for x in (a, w, bias)]
    cupy.cuda.Device().synchronize()
s0 = cupy.cuda.Stream(non_blocking=True)
print(f"s0 {s0.ptr:#x} s1 {s1.ptr:#x}")
with cupy.cuda.Device(0), s0:
    for r in range(4):
        with cupy.cuda.Device(1):
            s1.use()
            print(f"round {r} inside Device(1) after use: current(1) {cupy.cuda.get_current_stream(1).ptr:#x} "
                  f"current() {cupy.cuda.get_current_stream().ptr:#x}")
            ca, cw, cb = [x * 1 for x in src]
        print(f"round {r} outside: current(1) {cupy.cuda.get_current_stream(1).ptr:#x} "
              f"current() {cupy.cuda.get_current_stream().ptr:#x} device {cupy.cuda.runtime.getDevice()}")
        y = op(ca, cw.T, bias=cb, mode="serial", split_k=4)
        print(f"round {r}: C entry got {[(n[-20:], hex(s)) for n, s in seen]}")
        seen.clear()
        with cupy.cuda.Device(1):
            print(f"round {r} inside Device(1) again: current(1) {cupy.cuda.get_current_stream(1).ptr:#x} "
                  f"current() {cupy.cuda.get_current_stream().ptr:#x}")
        s1.synchronize()
