"""Session 27, second diagnosis of CuPy arrays on device 1 called with device 0 current: which streams the
kernels ran on (torch.profiler's CUPTI records: ours beside CuPy's), whether a fresh out= gives right results,
and whether a second reader agrees."""
import sys

import cupy
import torch

import cutlass_splitk

lib = cutlass_splitk.load("build/default")
op = lib.linear_bias_gelu_f16
seen = []
for name, fn in list(op.bound.run.items()):
    def wrapped(args, stream, fn=fn):
        seen.append(stream)
        return fn(args, stream)
    op.bound.run[name] = wrapped
try:
    import inspect
    print("Stream.from_external:", inspect.signature(cupy.cuda.Stream.from_external))
except Exception as exc:
    print("Stream.from_external:", repr(exc), getattr(cupy.cuda.Stream.from_external, "__doc__", "")[:600])
g = torch.Generator(device="cuda")
g.manual_seed(11)
a, w, bias = (torch.randn(*s, device="cuda", dtype=torch.float16, generator=g) for s in ((48, 4096), (512, 4096), (512,)))
ref = op(a, w.t(), bias=bias, mode="serial", split_k=4).cpu().numpy().view("uint16")
kw = {"mode": "serial", "split_k": 4}


def rounds(use_out, profile=False, n=8):
    with cupy.cuda.Device(1):
        s1 = cupy.cuda.Stream(non_blocking=True)
        src = [cupy.asarray(x.cpu().numpy()) for x in (a, w, bias)]
        cupy.cuda.Device().synchronize()
        busy = cupy.ones((4096, 4096), dtype=cupy.float16)
    s0 = cupy.cuda.Stream(non_blocking=True)
    bad = []
    with cupy.cuda.Device(0), s0:
        for r in range(n):
            with cupy.cuda.Device(1):
                s1.use()
                for _ in range(3):
                    busy = busy @ busy * 0.0 + 1.0
                ca, cw, cb = [x * 1 for x in src]
                out = cupy.full((48, 512), float("nan"), dtype=cupy.float16) if use_out else None
            seen.clear()
            y = op(ca, cw.T, bias=cb, out=out, **kw)
            kept = cupy.cuda.get_current_stream(1) == s1
            s1.synchronize()
            got = cupy.asnumpy(y).view("uint16")
            with cupy.cuda.Device(1):
                second = torch.from_dlpack(y.copy()).cpu().numpy().view("uint16")
            bad.append((int((got != ref).sum()), int((second != ref).sum()), [hex(x) for x in seen], kept))
    with cupy.cuda.Device(1):
        cupy.cuda.Stream.null.use()
    return s1, bad


pass
for use_out in (False, True):
    s1, bad = rounds(use_out)
    print(f"s1 {s1.ptr:#x} out= {use_out}: wrong (asnumpy, torch reader of a copy) per round {bad}", flush=True)

from torch.profiler import ProfilerActivity, profile  # noqa: E402

with profile(activities=[ProfilerActivity.CUDA]) as prof:
    s1, bad = rounds(False, n=4)
torch.cuda.synchronize()
print("profiled rounds:", bad)
for ev in prof.events():
    if ev.device_type.name == "CUDA":
        print(f"  device {ev.device_index} stream? {getattr(ev, 'stream', None)} {ev.name[:90]} "
              f"start {ev.time_range.start:.0f} end {ev.time_range.end:.0f}")
try:
    prof.export_chrome_trace("/tmp/s27/cupy_trace.json")
except Exception as exc:
    print("trace export failed:", exc)
