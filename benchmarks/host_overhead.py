"""Host time of an op call (issue 15's budget): a repeated-signature call of linear_f16
(16 x 4096 x 4096) against torch.matmul in the same process, where that time goes, and the
first call of a new shape.

    PYTHONPATH=. python3 benchmarks/host_overhead.py build/default [--json out.json]
    PYTHONPATH=. python3 benchmarks/host_overhead.py --fake     # no GPU: CPU tensors, a no-op C library

Host time is measured per call with the device idle: the queue is drained, then one call is
timed (perf_counter around the call alone), 7 x 200 times; the figure is the median. Timing
200 calls back to back instead (the first version of this script) gives the host's time only
while the launch queue has room: once it is full, each call waits for a kernel to finish and
the figure is the GPU's throughput. Both are printed for ours and torch.matmul (the
back-to-back figure as "back to back"). The GPU run ends with PASS or FAIL against the budget: repeated call <= 10 us
and <= 0.6x torch.matmul's, the two timed in alternating blocks of repeated calls
(``alternating``: the host's clock and other tenants drift between separate measurements by
more than the difference being judged); first call of a new shape (no autotuning) < 100 us.
``interleaved`` (call by call, each of ours after a torch.matmul) is printed too: stricter, since
torch's dispatcher evicts our code from the CPU caches between calls.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

M, N, K = 16, 4096, 4096
RESULTS: dict = {}


def per_call(fn, sync=lambda: None, calls=200, runs=7) -> float:
    """Host time of one call with the device idle (median over runs x calls)."""
    fn()
    sync()
    clock = time.perf_counter
    times = []
    for _ in range(runs * calls):
        sync()
        start = clock()
        fn()
        times.append(clock() - start)
    sync()
    return statistics.median(times) * 1e6


def _paired(fn, other, sync, block: int, rounds: int) -> tuple:
    """Host time of one call of ``fn`` and of ``other``, each call alone with the device idle,
    taking turns in blocks of ``block`` calls for ``rounds`` rounds: the medians (µs)."""
    fn()
    other()
    sync()
    clock = time.perf_counter
    times = ([], [])
    for _ in range(rounds):
        for f, t in ((fn, times[0]), (other, times[1])):
            for _ in range(block):
                sync()
                start = clock()
                f()
                t.append(clock() - start)
    sync()
    return statistics.median(times[0]) * 1e6, statistics.median(times[1]) * 1e6


def alternating(fn, other, sync=lambda: None, calls=200, runs=7) -> tuple:
    """Host time of one call of ``fn`` and of ``other`` as per_call measures it (each call alone,
    the device idle, the same call repeated: the issue's "repeated call"), in blocks of ``calls``
    that alternate between the two, so that the host's drift (its clock, other tenants) weighs
    on both alike: the medians."""
    return _paired(fn, other, sync, calls, runs)


def interleaved(fn, other, sync=lambda: None, calls=200, runs=7) -> tuple:
    """The same, alternating call by call: each call of ``fn`` follows one of ``other``, whose
    code evicts ``fn``'s from the CPU caches (what a model whose GEMMs sit between other torch
    ops sees; stricter than the issue's repeated call): the medians."""
    return _paired(fn, other, sync, 1, runs * calls)


def back_to_back(fn, sync=lambda: None, calls=200, runs=7) -> float:
    """Time per call of ``calls`` calls in a row (bounded below by the kernels' GPU time once
    the launch queue is full)."""
    fn()
    sync()
    times = []
    for _ in range(runs):
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    sync()
    return statistics.median(times)


def report(name: str, us: float, note: str = "") -> None:
    RESULTS[name] = round(us, 2)
    print(f"  {name:<52} {us:8.2f} us  {note}")


def first_calls(op, make, sync, shapes) -> float:
    """Median host time of the first call of each new (M, N, K) (planning included)."""
    times = []
    for m, n, k in shapes:
        a, b = make(m, n, k)
        sync()
        start = time.perf_counter()
        op(a, b)
        times.append((time.perf_counter() - start) * 1e6)
        sync()
    return statistics.median(times)


def bare_args(op, prep, a, b, out, stream) -> bytes:
    """The CksArgs bytes the fast path would pass for ``prep`` (workspace included)."""
    from cutlass_splitk.runtime import fastpath

    sem = part = None
    bufs = op.library.workspace.get(prep.device, stream)
    if bufs is not None:
        sem, part = bufs.semaphores, bufs.partials
    return fastpath._ARGS.pack(prep.head, a.data_ptr(), prep.lda, b.data_ptr(), prep.ldb, 0, prep.ldc, 0, 0,
                               prep.lde, out.data_ptr(), prep.ldd, prep.mid,
                               sem.ptr if prep.sem_bytes else 0, sem.nbytes if prep.sem_bytes else 0,
                               part.ptr if prep.partial_bytes else 0, part.nbytes if prep.partial_bytes else 0)


def common(op, a, wt, sync, empty_like_template) -> None:
    out = op(a, wt)
    path = "C call path" if op.native is not None else "no C call path: Python fast path"
    report("ours: op(a, w.t()) repeated", per_call(lambda: op(a, wt), sync), path)
    report("ours: op(a, w.t(), out=out) repeated", per_call(lambda: op(a, wt, out=out), sync), path)
    if op.native is not None:
        native = op.native
        op.native = None
        report("ours: op(a, w.t()) repeated, Python fast path", per_call(lambda: op(a, wt), sync), "op.native = None")
        op.native = native
        print(f"    (C call path: entries, launched, declined = {native.stats()})")
    prep = next(iter(op.prepared.values()))
    print(f"    (plan: {prep.variant} split {prep.split})")
    stream = op.platform.stream(prep.device_index)
    for label, kw in (("the plan", None), ("serial split 1", {"split_k": 1, "mode": "serial"}),
                      ("parallel split 4", {"split_k": 4, "mode": "parallel"})):
        if kw is not None:
            op(a, wt, out=out, **kw)
            op(a, wt, out=out, **kw)
            prep = list(op.prepared.values())[-1]
        args = bare_args(op, prep, a, wt, out, stream)
        run = op.bound.run[prep.variant]
        assert run(args, stream) == 0, op.bound.last_error()
        report(f"  bare C run, {label} (ctypes, prebuilt args)", per_call(lambda: run(args, stream), sync),
               f"{prep.variant} split {prep.split}")
    floor = op.bound.handle.cks_abi_version
    report("  ctypes floor (cks_abi_version())", per_call(floor, sync))
    report("  signature key (a, b)", per_call(lambda: (a.shape, a.stride(), a.dtype, a.get_device(), wt.shape,
                                                        wt.stride(), wt.dtype, wt.get_device()), sync))
    report("  torch.empty_like(template)", per_call(lambda: torch.empty_like(empty_like_template), sync))
    report("  torch.empty(shape, dtype=, device=)",
           per_call(lambda: torch.empty((M, N), dtype=torch.float16, device=a.device), sync))
    report("  a.new_empty(shape)", per_call(lambda: a.new_empty((M, N)), sync))
    if a.is_cuda:
        report("  torch.empty(shape, dtype=, device=index)",
               per_call(lambda: torch.empty((M, N), dtype=torch.float16, device=prep.device_index), sync))
    report("  platform.stream(device)", per_call(lambda: op.platform.stream(prep.device_index), sync))
    report("  torch.compiler.is_compiling()", per_call(torch.compiler.is_compiling, sync))
    report("  a.data_ptr() x3", per_call(lambda: (a.data_ptr(), wt.data_ptr(), out.data_ptr()), sync))


def gpu(directory: str) -> int:
    import cutlass_splitk

    lib = cutlass_splitk.load(directory)
    op = lib.linear_f16
    sync = torch.cuda.synchronize
    a = torch.randn(M, K, device="cuda", dtype=torch.half)
    w = torch.randn(N, K, device="cuda", dtype=torch.half)
    wt = w.t()
    print(f"{torch.cuda.get_device_name()}: linear_f16 M={M} N={N} K={K}, torch {torch.__version__}")
    matmul = per_call(lambda: torch.matmul(a, wt), sync)
    common(op, a, wt, sync, torch.empty(1, device="cuda", dtype=torch.half).expand(M, N))
    report("torch.matmul(a, w.t())", matmul)
    report("ours: op(a, w.t()) back to back", back_to_back(lambda: op(a, wt), sync), "(GPU-bound once the queue is full: see the docstring)")
    report("torch.matmul(a, w.t()) back to back", back_to_back(lambda: torch.matmul(a, wt), sync))
    report("torch.nn.functional.linear(a, w)", per_call(lambda: torch.nn.functional.linear(a, w), sync))
    tiny = torch.empty(16, device="cuda")
    report("  calibration: torch tiny.zero_() (one fill launch)", per_call(tiny.zero_, sync))
    report("ours: op(a, w.t()) with w.t() per call", per_call(lambda: op(a, w.t()), sync))
    report("torch.matmul(a, w.t()) with w.t() per call", per_call(lambda: torch.matmul(a, w.t()), sync))
    ours = per_call(lambda: op(a, wt), sync)  # again, after matmul warmed everything
    report("ours: op(a, w.t(), split_k=1, mode='serial') repeated (one launch)",
           per_call(lambda: op(a, wt, split_k=1, mode="serial"), sync))
    report("ours: op(a, w.t()) repeated, second run", ours)

    def make(m, n, k):
        return (torch.randn(m, k, device="cuda", dtype=torch.half),
                torch.randn(n, k, device="cuda", dtype=torch.half).t())

    shapes = [(m, 4096, 4096) for m in range(17, 47)]
    first = first_calls(op, make, sync, shapes)
    report("first call of a new shape (M = 17..46)", first, "planning + launch, no autotuning")
    _plan_misses(op, a, wt, sync)
    _profile_first_calls(op, make, sync, [(m, 4096, 4096) for m in range(77, 107)])
    bias_op = getattr(lib, "linear_bias_gelu_f16", None)  # absent from a linear_f16-only build
    if bias_op is not None:
        bias = torch.randn(N, device="cuda", dtype=torch.half)
        report("ours: linear_bias_gelu_f16(a, w.t(), bias=)", per_call(lambda: bias_op(a, wt, bias=bias), sync))
    _arrays(lib, a, w, sync)
    mine, theirs = interleaved(lambda: op(a, wt), lambda: torch.matmul(a, wt), sync)
    report("ours: op(a, w.t()) repeated, interleaved with torch.matmul", mine)
    report("torch.matmul(a, w.t()), interleaved with ours", theirs)
    RESULTS["ratio, interleaved"] = round(mine / theirs, 3)
    print(f"  {'  ratio, interleaved':<52} {mine / theirs:8.2f}x")
    best, matmul = alternating(lambda: op(a, wt), lambda: torch.matmul(a, wt), sync)
    report("ours: op(a, w.t()) repeated, blocks alternating with torch.matmul's", best)
    report("torch.matmul(a, w.t()) repeated, blocks alternating with ours", matmul)
    # the verdict: the repeated call, both measured over the same stretch of time
    ratio = best / matmul
    ok = best <= 10.0 and ratio <= 0.6 and first < 100.0
    print(f"repeated call {best:.2f} us = {ratio:.2f}x torch.matmul ({matmul:.2f} us); first call {first:.1f} us: "
          f"{'PASS' if ok else 'FAIL'} (budget: <= 10 us and <= 0.6x; first call < 100 us)")
    RESULTS.update(ratio=round(ratio, 3), budget_pass=ok, device=torch.cuda.get_device_name())
    return 0 if ok else 1


def cycling_run(op, prep, a, wt, stream, outputs=300):
    """A bare C call of ``prep``'s variant that writes to the next of ``outputs`` output
    addresses on every call (more than the library's plan cache holds: each call builds its
    launch plan), and the argument block of the first address (for calls that hit the cache)."""
    outs = [torch.empty(M, N, device=a.device, dtype=torch.half) for _ in range(outputs)]
    blocks = [bare_args(op, prep, a, wt, out, stream) for out in outs]
    run = op.bound.run[prep.variant]
    state = {"i": 0}

    def call():
        state["i"] = (state["i"] + 1) % outputs
        return run(blocks[state["i"]], stream)

    return call, blocks[0]


def _plan_misses(op, a, wt, sync) -> None:
    """The bare C entry point when every call has a new output address: what a call costs when
    its launch plan must be built."""
    op(a, wt)
    prep = next(iter(op.prepared.values()))
    call, _ = cycling_run(op, prep, a, wt, op.platform.stream(prep.device_index))
    assert call() == 0, op.bound.last_error()
    report("  bare C run, a new output address every call", per_call(call, sync),
           f"{prep.variant} split {prep.split} (plan built every call)")


def _profile_first_calls(op, make, sync, shapes) -> None:
    """Where a first call's host time goes (cProfile over first calls of new shapes)."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    for m, n, k in shapes:
        a, b = make(m, n, k)
        sync()
        profile.enable()
        op(a, b)
        profile.disable()
        sync()
    print(f"  profile of {len(shapes)} first calls (cumulative, top 25):")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(25)


def _arrays(lib, a, w, sync) -> None:
    """The same call with non-torch arrays (host time; informational)."""
    op = lib.linear_f16
    try:
        import cupy
    except ImportError:
        print("  (cupy not installed: array-path timings skipped)")
        return
    ca, cw = cupy.from_dlpack(a), cupy.from_dlpack(w)
    cwt = cw.T
    op(ca, cwt)
    report("array path: CuPy op(a, w.T)", per_call(lambda: op(ca, cwt), sync))
    out = cupy.empty((M, N), dtype=cupy.float16)
    report("array path: CuPy op(a, w.T, out=out)", per_call(lambda: op(ca, cwt, out=out), sync))


def fake() -> int:
    """The CPU side of the call with CPU tensors and a no-op C library (ctypes included)."""
    from fakelib import FakePlatform, build_fake, build_pycall, calls, fake_op, with_native

    from cutlass_splitk.config import load_config

    root = Path(__file__).resolve().parents[1]
    spec = next(o for o in load_config(root / "configs" / "default.yaml").ops if o.name == "linear_f16")

    with tempfile.TemporaryDirectory() as tmp:
        op = fake_op(spec, build_fake(spec, Path(tmp)), FakePlatform())
        try:
            with_native(op, build_pycall(Path(tmp)))
        except (FileNotFoundError, OSError) as exc:
            print(f"(no C call path: {exc})")
        a = torch.randn(M, K, dtype=torch.half)
        wt = torch.randn(N, K, dtype=torch.half).t()
        print(f"fake library, CPU tensors: linear_f16 M={M} N={N} K={K}, torch {torch.__version__}, "
              f"python {sys.version.split()[0]}")
        common(op, a, wt, lambda: None, torch.empty(1, dtype=torch.half).expand(M, N))
        shapes = [(m, 4096, 4096) for m in range(17, 47)]
        first = first_calls(op, lambda m, n, k: (torch.randn(m, k, dtype=torch.half),
                                                 torch.randn(n, k, dtype=torch.half).t()), lambda: None, shapes)
        report("first call of a new shape (M = 17..46)", first, "planning + fake launch")
        _plan_misses(op, a, wt, lambda: None)
        _profile_first_calls(op, lambda m, n, k: (torch.randn(m, k, dtype=torch.half),
                                                  torch.randn(n, k, dtype=torch.half).t()), lambda: None,
                             [(m, 4096, 4096) for m in range(77, 107)])
        print(f"  ({calls(op)} calls reached the fake library)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="build/default")
    parser.add_argument("--fake", action="store_true", help="no GPU: CPU tensors and a no-op C library")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    gc.collect()
    rc = fake() if args.fake else gpu(args.directory)
    if args.json:
        Path(args.json).write_text(json.dumps(RESULTS, indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
