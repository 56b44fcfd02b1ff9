"""Parallel split-K: time the reduction kernel alone (torch.profiler kernel durations) and
compare its bandwidth with a device-to-device copy.

    PYTHONPATH=. python3 benchmarks/reduction_bw.py build/default bias_gelu_mul_permute_f16
"""

import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_splitk
from cutlass_splitk.bench import load_shapes
from cutlass_splitk.runtime.timing import event_times


def copy_bandwidth() -> float:
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    (us,) = event_times(lambda: [dst.copy_(src) for _ in range(10)], reps=1)
    return 2 * src.numel() * 10 / (us * 1e-6)


def main(directory: str, op_name: str, shapes_file: str = "benchmarks/bench_shapes.yaml") -> None:
    lib = cutlass_splitk.load(directory)
    op = getattr(lib, op_name)
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw / 1e12:.2f} TB/s")
    print(f"{'shape':<20} {'split':>5} {'reduce us':>9} {'bytes MB':>8} {'GB/s':>6} {'of copy':>7}")
    for s in load_shapes(shapes_file):
        a, b, kw = op.random_inputs(s.m, s.n, s.k, view=s.view_for(op.spec.epilogue.permute))
        for split in (4, 16):
            op(a, b, split_k=split, mode="parallel", **kw)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(20):
                    op(a, b, split_k=split, mode="parallel", **kw)
                torch.cuda.synchronize()
            times = [getattr(ev, "device_time", 0) or getattr(ev, "cuda_time", 0) for ev in prof.events()
                     if "reduce_epilogue_kernel" in ev.name]
            times = [t for t in times if t > 0]
            if not times:
                print(f"{s.name:<20} {split:>5} no reduction kernel seen")
                continue
            us = statistics.median(times)
            nparts = op.candidates(s.m, s.n, s.k, lib.device_info(torch.cuda.current_device()),
                                   split_k=split, mode="parallel")[0].parts
            nbytes = nparts * s.m * s.n * 4 + s.m * s.n * 2 * 2 + s.n * 2
            rate = nbytes / (us * 1e-6)
            print(f"{s.name:<20} {split:>5} {us:9.2f} {nbytes / 1e6:8.2f} {rate / 1e9:6.0f} {rate / bw:7.1%}")


if __name__ == "__main__":
    main(*sys.argv[1:])
