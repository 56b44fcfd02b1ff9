"""Session 27's diagnoses of CuPy arrays on device 1 called with device 0 current (each device with a
non-default CuPy stream current), run on a two-GPU machine (benchmarks/device_s27.sh). Each case writes
the operands on CuPy's stream of device 1 behind a queue of work, calls linear_bias_gelu_f16 and compares
with torch's call on device 0. Cases (merged into this one script after the session's runs, which used
one script each):

  drain [HOWS] [verbose]  the stream the call takes and the wrong elements per round, HOWS from current
                          (CuPy's stream), explicit (stream=), drain (both devices drained before reading),
                          nobusy (no queue); verbose: pointers, inputs and a second call where one is wrong
  profile                 the stream handed to the C entry, outputs with and without out=, and the CUDA
                          stream of every kernel (torch.profiler, /tmp/s27/cupy_trace.json)
  entry                   CuPy's current streams of device 1 around each call beside the C entry's stream
  first-fix               the first fix alone (the output allocated inside `with Device(i), stream:`),
                          every stream the call resolves, and the kernels' CUDA streams
"""
import json
import sys

import cupy
import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_splitk
from cutlass_splitk.runtime import array_fast, arrays, cupy_streams

MODES = ((None, None), ("serial", 4), ("parallel", 8))


def modes_kw(mode, split):
    return {} if mode is None else {"mode": mode, "split_k": split}


class Case:
    """The op with its C entry's streams logged, torch's inputs and references on device 0, and the
    operands' sources, a stream s1 and a queue of work on device 1 (with a stream s0 of device 0)."""

    def __init__(self, op, seen, seed=11):
        self.op, self.seen = op, seen
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        shapes = ((48, 4096), (512, 4096), (512,))
        self.a, self.w, self.bias = (torch.randn(*s, device="cuda", dtype=torch.float16, generator=g) for s in shapes)
        with cupy.cuda.Device(1):
            self.s1 = cupy.cuda.Stream(non_blocking=True)
            self.src = [cupy.asarray(x.cpu().numpy()) for x in (self.a, self.w, self.bias)]
            self.busy = cupy.ones((4096, 4096), dtype=cupy.float16)
            cupy.cuda.Device().synchronize()
        self.s0 = cupy.cuda.Stream(non_blocking=True)

    def ref(self, **kw):
        return self.op(self.a, self.w.t(), bias=self.bias, **kw).cpu().numpy().view("uint16")

    def write(self, queue=True):
        """s1 made current on device 1 (``use()``), the queue, then the operands written on s1."""
        with cupy.cuda.Device(1):
            self.s1.use()
            for _ in range(3 if queue else 0):
                self.busy = self.busy @ self.busy * 0.0 + 1.0
            return [x * 1 for x in self.src]

    def call(self, ca, cw, cb, **kw):
        self.seen.clear()
        return self.op(ca, cw.T, bias=cb, **kw)

    @staticmethod
    def done():
        with cupy.cuda.Device(1):
            cupy.cuda.Stream.null.use()


def logged_op(lib):
    """linear_bias_gelu_f16 with the stream its C entry is handed appended to a list, per call."""
    op, seen = lib.linear_bias_gelu_f16, []
    for name, fn in list(op.bound.run.items()):
        def wrapped(args, stream, fn=fn):
            seen.append(stream)
            return fn(args, stream)
        op.bound.run[name] = wrapped
    return op, seen


def bits(y):
    return cupy.asnumpy(y).view("uint16")


def device1_streams(path):
    """The CUDA stream (CUPTI's id) of every kernel, memset and copy on device 1 in a trace."""
    events = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    return " ".join(f"{e['name'][:12]}@{e['args'].get('stream')}" for e in events if e["args"].get("device") == 1)


def drain(lib, hows, verbose):
    print("cupy", cupy.__version__)
    for how in hows:
        for mode, split in MODES:
            c, kw = Case(*lib), modes_kw(mode, split)
            ref, bad = c.ref(**kw), []
            with cupy.cuda.Device(0), c.s0:
                for r in range(4):
                    ca, cw, cb = c.write(queue=how != "nobusy")
                    taken = arrays.call_stream("t", None, ca)
                    y = c.call(ca, cw, cb, **kw, **({"stream": c.s1.ptr} if how == "explicit" else {}))
                    if how == "drain":
                        cupy.cuda.Device(1).synchronize()
                        cupy.cuda.Device(0).synchronize()
                    c.s1.synchronize()
                    got = bits(y)
                    bad.append(int((got != ref).sum()))
                    if bad[-1] and verbose:
                        inputs_ok = all(bool((x == z).all()) for x, z in zip((ca, cw, cb), c.src))
                        with cupy.cuda.Device(1):
                            again = c.call(ca, cw, cb, **kw)
                            cupy.cuda.Device().synchronize()
                        print(f"  round {r}: y {y.data.ptr:#x}; inputs right after draining: {inputs_ok}; called "
                              f"again inside Device(1): {int((bits(again) != ref).sum())} wrong; first row "
                              f"{got[0, :4]} want {ref[0, :4]}", flush=True)
            c.done()
            print(f"{how:9s} {str(mode):9s} s1 {c.s1.ptr:#x} taken {taken:#x}; wrong elements per round {bad}",
                  flush=True)


def rounds(c, use_out, n=8):
    kw, ref, out = modes_kw("serial", 4), c.ref(**modes_kw("serial", 4)), None
    bad = []
    with cupy.cuda.Device(0), c.s0:
        for _ in range(n):
            ca, cw, cb = c.write()
            if use_out:
                with cupy.cuda.Device(1):
                    out = cupy.full((48, 512), float("nan"), dtype=cupy.float16)
            y = c.call(ca, cw, cb, out=out, **kw)
            kept = cupy.cuda.get_current_stream(1) == c.s1
            c.s1.synchronize()
            with cupy.cuda.Device(1):
                second = torch.from_dlpack(y.copy()).cpu().numpy().view("uint16")
            bad.append((int((bits(y) != ref).sum()), int((second != ref).sum()), [hex(x) for x in c.seen], kept))
    c.done()
    return bad


def profiled(lib):
    for use_out in (False, True):
        c = Case(*lib)
        print(f"s1 {c.s1.ptr:#x} out= {use_out}: (wrong, wrong by a second reader, C entry's streams, s1 kept "
              f"current) per round {rounds(c, use_out)}", flush=True)
    c = Case(*lib)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        bad = rounds(c, False, n=4)
    torch.cuda.synchronize()
    print("profiled rounds:", bad)
    prof.export_chrome_trace("/tmp/s27/cupy_trace.json")
    print(device1_streams("/tmp/s27/cupy_trace.json"))


def entry(lib):
    c = Case(*lib)
    print(f"s0 {c.s0.ptr:#x} s1 {c.s1.ptr:#x}")
    with cupy.cuda.Device(0), c.s0:
        for r in range(4):
            ca, cw, cb = c.write(queue=False)
            print(f"round {r} before: current(1) {cupy.cuda.get_current_stream(1).ptr:#x} "
                  f"current() {cupy.cuda.get_current_stream().ptr:#x} device {cupy.cuda.runtime.getDevice()}")
            c.call(ca, cw, cb, **modes_kw("serial", 4))
            print(f"round {r}: C entry got {[hex(s) for s in c.seen]}; after: current(1) "
                  f"{cupy.cuda.get_current_stream(1).ptr:#x}")
            c.s1.synchronize()
    c.done()


def first_fix(lib):
    def old_output(shape, device, stream):  # the first fix's allocation, inside a with-block
        if cupy.cuda.runtime.getDevice() == device and cupy_streams.current_stream(device) == stream:
            return cupy.empty(shape, dtype=cupy.float16)
        s = cupy.cuda.Stream.null if stream == 0 else cupy.cuda.ExternalStream(stream)
        with cupy.cuda.Device(device), s:
            return cupy.empty(shape, dtype=cupy.float16)

    trail = []
    current, call_stream = cupy_streams.current_stream, arrays.call_stream

    def logged_current(device):
        got = current(device)
        trail.append(f"current_stream({device})={got:#x}")
        return got

    def logged_call_stream(op, given, a):
        got = call_stream(op, given, a)
        trail.append(f"call_stream={got:#x}")
        return got

    cupy_streams.output, cupy_streams.current_stream, arrays.call_stream = old_output, logged_current, logged_call_stream
    kw = modes_kw("serial", 4)
    for attempt in range(3):  # each on a new s1: the fast path prepared on the first one
        c = Case(*lib)
        ref, log = c.ref(**kw), []
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with cupy.cuda.Device(0), c.s0:
                for r in range(6):
                    ca, cw, cb = c.write()
                    before = cupy.cuda.get_current_stream(1).ptr
                    sig = array_fast.signature(ca, cw.T, dict(bias=cb, **kw), c.op.platform.devices)
                    prep = c.op._array_lookup(sig.key)
                    trail.clear()
                    y = c.call(ca, cw, cb, **kw)
                    after = cupy.cuda.get_current_stream(1).ptr
                    c.s1.synchronize()
                    log.append(f"round {r}: current(1) {before:#x} -> {after:#x}, C entry got {[hex(x) for x in c.seen]}, "
                               f"wrong {int((bits(y) != ref).sum())}; prepared {type(prep).__name__}; {trail}")
            c.done()
            torch.cuda.synchronize(1)
        print(f"attempt {attempt}: s1 {c.s1.ptr:#x}")
        print("\n".join(log))
        path = f"/tmp/s27/trace_first_fix_{attempt}.json"
        prof.export_chrome_trace(path)
        print(device1_streams(path))


def main(argv):
    lib = logged_op(cutlass_splitk.load("build/default"))  # (op, the C entry's streams)
    case = argv[0] if argv else "drain"
    if case == "drain":
        hows = argv[1].split(",") if len(argv) > 1 else ["current", "explicit", "drain", "nobusy"]
        drain(lib, hows, "verbose" in argv)
    elif case == "profile":
        profiled(lib)
    elif case == "entry":
        entry(lib)
    elif case == "first-fix":
        first_fix(lib)
    else:
        raise SystemExit(f"unknown case {case!r}: drain, profile, entry or first-fix")


if __name__ == "__main__":
    main(sys.argv[1:])
