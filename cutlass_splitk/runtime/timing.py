"""Timing on the device, written once: CUDA events around calls, CUDA-graph replays, host time
per call, and the L2-flushed timer of ``cutlass-splitk bench``. Used by tuning, bench and
``benchmarks/*.py``. All results are microseconds.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, List, Optional, Sequence

import torch

Fn = Callable[[], object]


def event_times(fn: Fn, reps: int, before: Optional[Fn] = None) -> List[float]:
    """Device microseconds of each of ``reps`` calls of ``fn`` (CUDA events on the current
    stream around each call; ``before`` runs first, outside the timed region)."""
    times = []
    for _ in range(reps):
        if before is not None:
            before()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    return times


def median_time(fn: Fn, reps: int = 10, warmup: int = 0, before: Optional[Fn] = None) -> float:
    """Median of :func:`event_times` after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    return statistics.median(event_times(fn, reps, before))


def graph_time(fn: Fn, reps: int = 20) -> float:
    """Median device time of one call, from replays of a CUDA graph of ``reps`` calls: no
    launch or Python overhead, and no L2 flush between calls (inputs stay L2-warm when they
    fit)."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    graph.replay()
    return median_time(graph.replay, reps=7) / reps


def host_time(fn: Fn, reps: int = 200, sync_every: Optional[int] = None) -> float:
    """Host microseconds per call (the Python dispatch overhead), device work not awaited;
    with ``sync_every``, the queue is drained (untimed) every that many calls."""
    fn()
    torch.cuda.synchronize()
    chunk = sync_every or reps
    total = 0.0
    done = 0
    while done + chunk <= reps:
        start = time.perf_counter()
        for _ in range(chunk):
            fn()
        total += time.perf_counter() - start
        torch.cuda.synchronize()
        done += chunk
    return total / max(done, 1) * 1e6


def flushed_timer(repeat: int = 1, clean: bool = False) -> Callable[[Fn], float]:
    """Returns f -> microseconds: the median of one timing run with L2 flushed before each
    call (``triton.testing.do_bench`` when Triton is installed, else CUDA events after writing
    a 256 MiB buffer), the smallest of ``repeat`` such medians (host-side jitter, e.g.
    torch.compile's guards racing the flush, only ever adds time).

    Writing the buffer (do_bench's flush too) leaves L2 full of dirty lines, which the timed call
    writes back as its own loads evict them, unless its loads are marked to be evicted first (the
    sm90 main loops' streamed weights). ``clean``: CUDA events after *reading* a 256 MiB buffer
    instead, so every call starts from an L2 holding clean lines only (BENCHMARKS.md, session 18)."""
    single = flushed_single(clean)
    return lambda fn: min(single(fn) for _ in range(max(1, repeat)))


def rounds_times(fns: Sequence[Fn], repeat: int, single: Callable[[Fn], float]) -> List[float]:
    """``single`` (one timing run of a function, in microseconds) for several functions compared with
    each other: ``repeat`` rounds, each timing every function once, round r starting with function r
    (mod their count); per function the smallest of its runs. A long sweep leaves the GPU hot and its
    clocks lower for a while: timed one after another, the first function would pay for it alone
    (session 19: a 4096 x 4096 x 14336 chain read 882.6 us right after a sweep and 761.2 unswept), and
    a compute-bound kernel timed first on a cool GPU gains what the next one loses (session 38: 4096^3
    213 us as graph replays, then 242-245 in every later run of the same process)."""
    best = [float("inf")] * len(fns)
    for r in range(max(1, repeat)):
        for j in range(len(fns)):
            i = (r + j) % len(fns)
            best[i] = min(best[i], single(fns[i]))
    return best


def flushed_times(fns: Sequence[Fn], repeat: int = 1, clean: bool = False,
                  single: Optional[Callable[[Fn], float]] = None) -> List[float]:
    """:func:`flushed_timer` for several functions compared with each other, in rounds
    (:func:`rounds_times`)."""
    return rounds_times(fns, repeat, single or flushed_single(clean))


def flushed_single(clean: bool) -> Callable[[Fn], float]:
    """One flushed timing run of a function: its median, in microseconds (see flushed_timer). Its
    flush buffer (256 MiB) lives as long as the returned function: make it once per benchmark."""
    if clean:
        source = torch.ones(256 << 20, dtype=torch.int8, device="cuda")
        return lambda fn: median_time(fn, reps=50, warmup=5, before=lambda: torch.sum(source, dtype=torch.int32))
    try:
        from triton.testing import do_bench

        return lambda fn: float(do_bench(fn, warmup=25, rep=100, return_mode="median")) * 1e3
    except ImportError:
        flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
        return lambda fn: median_time(fn, reps=50, warmup=5, before=flush.zero_)
