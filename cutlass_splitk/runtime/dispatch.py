"""Choosing a variant, a split mode and a split factor for one problem: every (variant, split)
the call allows and the device can run, ranked by the time model (timemodel.py), smallest
predicted time first; plus the validation of a call's split_k / mode / variant.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence

from ..spec import Backend, KernelVariant, SplitMode
from .timemodel import Candidate, DeviceInfo, predict

__all__ = ["Candidate", "DeviceInfo", "allowed", "filter_variants", "rank", "runs_on", "why_not"]


def runs_on(v: KernelVariant, archs: Sequence[int], dev: DeviceInfo) -> bool:
    """Whether ``v`` has native code for ``dev``: sm90 variants are sm_90a cubins (compute
    capability 9.0 only); an sm80 variant needs a cubin of the same major version and no
    newer minor."""
    if v.backend is Backend.SM90:
        return (dev.major, dev.minor) == (9, 0)
    return any(a // 10 == dev.major and a % 10 <= dev.minor for a in archs)


def runs_through_ptx(v: KernelVariant, archs: Sequence[int], dev: DeviceInfo) -> bool:
    """Whether ``v`` can run on ``dev`` through the driver's PTX JIT: sm80 libraries embed PTX
    of their newest target by default, which any newer GPU compiles (once, slowly, on first
    use)."""
    return v.backend is Backend.SM80 and bool(archs) and dev.major * 10 + dev.minor >= max(archs)


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
        native = [v for v in variants if runs_on(v, archs, dev)]
        variants = native or [v for v in variants if runs_through_ptx(v, archs, dev)]
    out = []
    for v in variants:
        for s in v.splits:
            if split is not None and s != split:
                continue
            out.append(predict(v, m, n, k, s, dev))
    out.sort(key=lambda c: (c.predicted_us, c.variant.name, c.split))
    return out


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
