"""Choosing a variant, a split mode and a split factor for one problem: every (variant, split)
the call allows and the device can run, ranked by the time model (timemodel.py), smallest
predicted time first; plus the validation of a call's split_k / mode / variant.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Tuple

from ..spec import Backend, KernelVariant, SplitMode
from .timemodel import Candidate, DeviceInfo, predict_splits

__all__ = ["Candidate", "DeviceInfo", "allowed", "filter_variants", "native_backends", "ptx_backends", "rank", "runs_on",
           "why_not"]


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
         split: Optional[int] = None, archs: Optional[Sequence[int]] = None) -> List[Candidate]:
    """All (variant, split) candidates, best first. ``split`` restricts the split factor;
    with ``archs`` (the op's sm80 targets) only variants with native code for ``dev`` are
    ranked, or, where there are none, the sm80 variants its PTX JIT can run."""
    variants = list(variants)
    if archs is not None:
        backends = native_backends(archs, dev)
        native = [v for v in variants if v.params.BACKEND in backends]
        if not native:
            backends = ptx_backends(archs, dev)
            native = [v for v in variants if v.params.BACKEND in backends]
        variants = native
    out: List[Candidate] = []
    for v in variants:
        if split is None:
            out += predict_splits(v, m, n, k, v.splits, dev)
        elif split in v.splits:
            out += predict_splits(v, m, n, k, (split,), dev)
    out.sort(key=_order)
    return out


def _order(c: Candidate) -> Tuple[float, str, int]:
    return c.predicted_us, c.variant.name, c.split


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
