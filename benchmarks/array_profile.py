"""Where the array path's host time goes (issue 15, informational): CuPy operands through
linear_f16, each piece timed alone with the device idle, and a profile of 300 calls.

    PYTHONPATH=. python3 benchmarks/array_profile.py build/linear
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time

import cupy

import cutlass_splitk
from cutlass_splitk.runtime import arrays


def per_call(fn, calls=1000) -> float:
    fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(calls):
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main(directory: str) -> None:
    lib = cutlass_splitk.load(directory)
    op = lib.linear_f16
    a = cupy.random.standard_normal((16, 4096), dtype=cupy.float32).astype(cupy.float16)
    w = cupy.random.standard_normal((4096, 4096), dtype=cupy.float32).astype(cupy.float16)
    wt = w.T
    devices = op.platform.devices
    stream = int(cupy.cuda.get_current_stream().ptr)
    o = cupy.empty((16, 4096), dtype=cupy.float16)
    rows = [
        ("op(a, w.T) (repeated: the array fast path)", lambda: op(a, wt)),
        ("op(a, w.T, out=o) (repeated)", lambda: op(a, wt, out=o)),
        ("cupy.matmul(a, w.T) (cuBLAS through CuPy)", lambda: cupy.matmul(a, wt)),
        ("arrays.view(a) (StridedMemoryView)", lambda: arrays.view("op", "a", a, stream, devices)),
        ("arrays.from_cai(a.__cuda_array_interface__)",
         lambda: arrays.from_cai("op", "a", a.__cuda_array_interface__, a, stream, devices)),
        ("a.__cuda_array_interface__", lambda: a.__cuda_array_interface__),
        ("devices.pointer_device(ptr)", lambda: devices.pointer_device(a.data.ptr)),
        ("cupy.cuda.get_current_stream().ptr", lambda: cupy.cuda.get_current_stream().ptr),
        ("cupy.empty((16, 4096), float16)", lambda: cupy.empty((16, 4096), dtype=cupy.float16)),
        ("devices.enter/leave(current)", lambda: devices.leave(devices.enter(devices.current_device()))),
    ]
    for name, fn in rows:
        print(f"  {name:<48} {per_call(fn):8.2f} us")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(300):
        op(a, wt)
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(22)


if __name__ == "__main__":
    main(sys.argv[1])
