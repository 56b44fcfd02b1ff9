"""Choosing a variant, a split mode and a split factor for one problem: every (variant, split)
the call allows and the device can run, ranked by the time model (timemodel.py), smallest
predicted time first; plus the validation of a call's split_k / mode / variant.

:func:`rank` evaluates the model in Python (with each candidate's figures, for ``explain``);
:class:`NativeRanking` gets the same order from the library's ``cks_rank_v16`` (the model in C,
templates/cks_timemodel.h), which is what a call's first launch of a new problem uses.
"""

from __future__ import annotations

import ctypes
import operator
import struct
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..spec import Backend, KernelVariant, Schedule, SplitMode
from . import abi, timemodel
from .timemodel import Candidate, DeviceInfo, predict_splits

__all__ = ["Candidate", "DeviceInfo", "NativeRanking", "allowed", "filter_variants", "hopper_first", "min_alignment",
           "native_backends", "ptx_backends", "rank", "runnable", "runs_on", "why_not"]


def native_backends(archs: Sequence[int], dev: DeviceInfo) -> Tuple[Backend, ...]:
    """The backends whose variants have native code for ``dev``: sm90 variants are sm_90a
    cubins (compute capability 9.0 only); sm80 variants need a cubin of the same major version
    and no newer minor. (A tuple: ``in`` compares enum members by identity there, where a set
    would call Enum's Python-level ``__hash__``.)"""
    native: Tuple[Backend, ...] = ()
    if (dev.major, dev.minor) == (9, 0):
        native += (Backend.SM90,)
    if any(a // 10 == dev.major and a % 10 <= dev.minor for a in archs):
        native += (Backend.SM80,)
    return native


def ptx_backends(archs: Sequence[int], dev: DeviceInfo) -> Tuple[Backend, ...]:
    """The backends whose variants can run on ``dev`` through the driver's PTX JIT: sm80
    libraries embed PTX of their newest target by default, which any newer GPU compiles (once,
    slowly, on first use)."""
    return (Backend.SM80,) if archs and dev.major * 10 + dev.minor >= max(archs) else ()


def runs_on(v: KernelVariant, archs: Sequence[int], dev: DeviceInfo) -> bool:
    """Whether ``v`` has native code for ``dev``."""
    return v.backend in native_backends(archs, dev)


def why_not(variants: Sequence[KernelVariant], archs: Sequence[int], dev: DeviceInfo) -> str:
    """Why none of ``variants`` runs on ``dev`` (for the error message)."""
    parts = []
    if any(v.backend is Backend.SM90 for v in variants):
        parts.append("its sm90 variants are built for sm_90a (compute capability 9.0)")
    if any(v.backend is Backend.SM80 for v in variants):
        parts.append("its sm80 variants for " + ", ".join(f"sm_{a}" for a in archs))
    return "; ".join(parts)


def rank(variants: Iterable[KernelVariant], m: int, n: int, k: int, dev: DeviceInfo,
         split: Optional[int] = None, archs: Optional[Sequence[int]] = None,
         tma_epilogue: bool = False, activation: bool = False) -> List[Candidate]:
    """All (variant, split) candidates, best first. ``split`` restricts the split factor;
    with ``archs`` (the op's sm80 targets) only variants with native code for ``dev`` are
    ranked, or, where there are none, the sm80 variants its PTX JIT can run. ``tma_epilogue``:
    the op's EpilogueSpec.tma_in_kernel (its sm90 in-kernel modes' TMA epilogue costs less); ``activation``:
    its EpilogueSpec.transcendental (a ping-pong tile's epilogue may outlast the other tile's MMAs).
    On an sm_90 GPU where sm90 and sm80 variants both run natively (sm80 grids built for sm_90), every sm90
    candidate comes first (:func:`hopper_first`)."""
    variants = list(variants) if archs is None else runnable(variants, archs, dev)
    out: List[Candidate] = []
    for v in variants:
        if split is None:
            out += predict_splits(v, m, n, k, v.splits, dev, tma_epilogue, activation)
        elif split in v.splits:
            out += predict_splits(v, m, n, k, (split,), dev, tma_epilogue, activation)
    out.sort(key=_order)
    return hopper_first(out, lambda c: c.variant) if Backend.SM90 in native_backends((), dev) else out


def runnable(variants: Iterable[KernelVariant], archs: Sequence[int], dev: DeviceInfo) -> List[KernelVariant]:
    """The variants with native code for ``dev`` or, where there are none, the sm80 variants its
    PTX JIT can run."""
    variants = list(variants)
    backends = native_backends(archs, dev)
    native = [v for v in variants if v.params.BACKEND in backends]
    if not native:
        backends = ptx_backends(archs, dev)
        native = [v for v in variants if v.params.BACKEND in backends]
    return native


def hopper_first(ranked: List[Any], variant: Callable[[Any], KernelVariant]) -> List[Any]:
    """``ranked`` (best first) with its sm90 candidates ahead of its sm80 ones, each in their order, for a
    Hopper GPU on which both run natively. The model ranks the wgmma kernels against each other; it prices
    the mma.sync ones as on an A100-class GPU, and ranking the two together misjudged 16 of 191 recorded H100
    shapes by up to 1.44x where the sm90 candidates alone miss 8 by at most 1.20 (BENCHMARKS.md, session 24).
    The sm80 candidates stay in the order: fallbacks for problems no sm90 variant takes, and timed by tuning."""
    backends = {variant(c).backend for c in ranked}
    if len(backends) < 2:
        return ranked
    return [c for c in ranked if variant(c).backend is Backend.SM90] + \
        [c for c in ranked if variant(c).backend is not Backend.SM90]


_RANKED = struct.Struct("<iiiid")  # CksRanked
assert _RANKED.size == ctypes.sizeof(abi.CksRanked), "CksRanked layout changed"
_C_MODES = {SplitMode.SERIAL: 0, SplitMode.PARALLEL: 1, SplitMode.STREAM_K: 2}


class NativeRanking:
    """``rank(variants, ..., archs)``'s order of (variant name, split), computed by a library's
    ``cks_rank_v16`` (the time model in C; the same doubles, so the same order: tests/test_timemodel_c.py).
    Built once per (variant pool, device): the model's constants, the runnable variants' figures
    and their splits as ctypes arrays."""

    def __init__(self, fn: Callable[..., int], variants: Iterable[KernelVariant], archs: Sequence[int],
                 dev: DeviceInfo, tma_epilogue: bool = False, activation: bool = False):
        pool = runnable(variants, archs, dev)
        self._fn = fn
        self._names = [v.name for v in pool]
        order = {v.name: i for i, v in enumerate(sorted(pool, key=_tie))}
        self._model = abi.CksModel(*(getattr(timemodel, name.upper()) for name in abi.MODEL_CONSTANTS),
                                   dev.bandwidth, dev.mma_flops_per_sm, dev.sm_count, dev.cluster4_ctas,
                                   int(dev.gpc_order))
        splits: List[int] = []
        rows = []
        for v in pool:
            tm, tn, tk = v.tile
            cm, cn, flags = 1, 1, 0
            sm90 = v.backend is Backend.SM90
            if sm90:  # tile and cluster over the op's output (swap_ab exchanges the kernel's)
                (tm, tn), (cm, cn) = v.params.output_tile(v.tile), v.params.output_cluster()
                flags = ((abi.MODEL_SWAP_AB if v.params.swap_ab else 0) | (abi.MODEL_TMA_EPILOGUE if tma_epilogue else 0)
                         | (abi.MODEL_PINGPONG if v.params.schedule is Schedule.PINGPONG else 0)
                         | (abi.MODEL_ACTIVATION if activation else 0))
            rows.append((90 if sm90 else 80, _C_MODES[v.mode], tm, tn, tk, cm, cn, timemodel.occupancy(v),
                         timemodel.tile_efficiency(v), order[v.name], len(splits), len(v.splits), flags))
            splits += v.splits
        self._variants = (abi.CksModelVariant * max(1, len(rows)))(*rows)
        self._splits = (ctypes.c_int32 * max(1, len(splits)))(*splits)
        self._count = len(rows)
        self._capacity = len(splits)
        self._pool = pool if len({v.backend for v in pool}) > 1 else None  # hopper_first's reorder, where needed

    def order(self, m: int, n: int, k: int, split: Optional[int] = None) -> List[Tuple[str, int]]:
        """(variant name, split), best first."""
        names = self._names
        return [(names[v], s) for v, s, _, _, _ in self._rank(m, n, k, split)]

    def scored(self, m: int, n: int, k: int, split: Optional[int] = None) -> List[Tuple[str, int, int, float]]:
        """(variant name, split, partitions, predicted µs), best first."""
        names = self._names
        return [(names[v], s, parts, us) for v, s, parts, _, us in self._rank(m, n, k, split)]

    def _rank(self, m: int, n: int, k: int, split: Optional[int]) -> Iterator[Tuple[int, int, int, int, float]]:
        out = (abi.CksRanked * max(1, self._capacity))()
        count = self._fn(ctypes.byref(self._model), self._variants, self._count, self._splits, m, n, k, split or 0,
                         out, self._capacity)
        if count < 0:
            raise RuntimeError(f"cks_rank_v16: {self._capacity} candidates did not fit")  # a bug, not an input error
        # the CksRanked rows as tuples (struct unpacks them in C; ctypes field reads cost ~0.1 us each)
        rows = _RANKED.iter_unpack(memoryview(out).cast("B")[:count * _RANKED.size])
        pool = self._pool
        return rows if pool is None else iter(hopper_first(list(rows), lambda row: pool[row[0]]))


def _tie(v: KernelVariant) -> Tuple[float, str]:
    """Among candidates predicted equal: the variant whose CTAs read fewer operand rows per k from L2
    (a cluster multicasts one operand's tiles: the 128x256 tile in a 2x1 cluster reads 128 + 256 / 2 rows,
    in 1x2 128 / 2 + 256; round 38 measured 2x1 up to 16 % faster where neither pads a tile, level on the
    squares), then the name (sm80 variants: the name)."""
    if v.backend is not Backend.SM90:
        return 0.0, v.name
    (tm, tn), (cm, cn) = v.params.output_tile(v.tile), v.params.output_cluster()
    return tm / cn + tn / cm, v.name


def _order(c: Candidate) -> Tuple[float, Tuple[float, str], int]:
    return c.predicted_us, _tie(c.variant), c.split


_ALIGNMENT = operator.attrgetter("alignment")


def min_alignment(variants: Iterable[KernelVariant]) -> int:
    """The smallest alignment (elements) among ``variants``: what a call's operands must meet
    to run without padding (attrgetter: the full path reads it on every first call)."""
    return min(map(_ALIGNMENT, variants))


def filter_variants(variants: Sequence[KernelVariant], mode: Optional[SplitMode] = None,
                    name: Optional[str] = None, split: Optional[int] = None) -> List[KernelVariant]:
    return [v for v in variants
            if (mode is None or v.mode is mode) and (name is None or v.name == name)
            and (split is None or split in v.splits)]


def allowed(op: str, variants: Sequence[KernelVariant], split_k: Any = None, mode: Any = None,
            variant: Any = None) -> List[KernelVariant]:
    """The variants of ``op`` a call's ``split_k`` / ``mode`` / ``variant`` allow (None: any).
    Raises ValueError for an invalid choice or one nothing was built for."""
    if split_k is not None and (isinstance(split_k, bool) or not isinstance(split_k, int) or split_k < 1):
        raise ValueError(f"{op}: split_k must be a positive int, got {split_k!r}")
    mode_enum = None
    if mode is not None:
        try:
            mode_enum = SplitMode(mode)
        except ValueError:
            raise ValueError(f"{op}: mode={mode!r} is not one of "
                             + ", ".join(repr(m.value) for m in SplitMode)) from None
    if variant is not None and variant not in {v.name for v in variants}:
        raise ValueError(f"{op}: variant={variant!r} was not built; built variants: "
                         + ", ".join(v.name for v in variants))
    pool = filter_variants(variants, mode_enum, variant, split_k)
    if not pool:
        offered = sorted({s for v in filter_variants(variants, mode_enum, variant) for s in v.splits})
        raise ValueError(f"{op}: split_k={split_k} is not available"
                         + (f" in mode {mode}" if mode else "") + f"; built split factors: {offered}")
    return pool
