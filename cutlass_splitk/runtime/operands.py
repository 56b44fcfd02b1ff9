"""Checking a call's operands and turning them into what the C entry points take: pure
functions of the operands and the op's spec (nothing here launches, caches or allocates).

The operands are torch tensors or :class:`~.arrays.ArrayView` (any CUDA array): both answer
``shape``, ``stride()``, ``data_ptr()``, ``numel()``, ``element_size()`` and
``is_contiguous()``, which is all this module reads, so it needs no torch. Copying into
padded buffers is the caller's (``pad``: the torch path's or the array path's).

Every message names the op and the argument, what was expected and what was given.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple

from ..spec import BiasMode, Layout, OpSpec, Permute
from .errors import PaddingWarning

Array = Any  # a torch.Tensor or an arrays.ArrayView

MAX_DIM = 2**30  # M, N, K each (int32 in CksArgs, kept far from its end: cks_host.cuh's kMaxDim); M * N may exceed 2^31


@dataclass
class Operands:
    """The tensors of one launch and their leading dimensions, with N and K as launched
    (padded when the operands were copied into aligned buffers)."""

    a: Array
    b: Array
    lda: int
    ldb: int
    c: Optional[Array]  # None when beta == 0
    ldc: int
    bias: Optional[Array]
    e: Optional[Array]
    lde: int
    d: Array
    ldd: int
    n: int
    k: int


# --- geometry ----------------------------------------------------------------------------------


def extent(t: Optional[Array]) -> int:
    """Bytes from ``t``'s first element to past its last (0 for None or an empty tensor)."""
    if t is None or t.numel() == 0:
        return 0
    return (sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1) * t.element_size()


def overlaps(x: Array, y: Array) -> bool:
    """Whether two non-empty operands touch a common byte range (conservative: two
    interleaved views of one buffer count as overlapping; distinct allocations never do)."""
    a0, b0 = x.data_ptr(), y.data_ptr()
    return a0 < b0 + extent(y) and b0 < a0 + extent(x)


def row_major_ld(t: Array) -> Optional[int]:
    """Leading dimension if ``t`` (2-D) is row-major with unit column stride, else None."""
    rows, cols = t.shape
    if cols > 1 and t.stride(1) != 1:
        return None
    ld = t.stride(0) if rows > 1 else cols
    return ld if ld >= cols else None


def col_major_ld(t: Array) -> Optional[int]:
    """``row_major_ld(t.t())`` without building the transposed view (on every tn call)."""
    rows, cols = t.shape
    if rows > 1 and t.stride(0) != 1:
        return None
    ld = t.stride(1) if cols > 1 else rows
    return ld if ld >= rows else None


# --- checks ------------------------------------------------------------------------------------


def problem(op: str, a_shape: Sequence[int], b_shape: Sequence[int], beta: float, has_c: bool) -> Tuple[int, int, int]:
    """(M, N, K) of ``a @ b`` from the operands' 2-D shapes, checked: b's rows are a's columns,
    a nonzero beta comes with c, and each of M, N, K fits the kernels' 32-bit sizes."""
    m, k = a_shape
    if b_shape[0] != k:
        raise ValueError(f"{op}: a is ({m}, {k}) but b is {tuple(b_shape)}: b must be (K={k}, N)")
    if beta != 0.0 and not has_c:
        raise ValueError(f"{op}: beta={beta} needs c")
    n = b_shape[1]
    big = [f"{name}={x}" for name, x in (("M", m), ("N", n), ("K", k)) if x > MAX_DIM]
    if big:
        raise ValueError(f"{op}: {', '.join(big)}: M, N and K must each be at most 2^30 = {MAX_DIM} (the kernels' "
                         f"problem sizes are 32-bit); split the call along M or N")
    return m, n, k


def bias_length(bias: BiasMode, m: int, n: int) -> int:
    """The length of the bias vector: one per output column or per row."""
    return n if bias is BiasMode.PER_COL else m


def out_shape(op: str, permute: Permute, m: int, n: int, view: Any) -> Tuple[int, ...]:
    """The output's shape: (M, N), or the permuted layout ``view`` describes."""
    if permute is Permute.NONE:
        return (m, n)
    rank = 4 if permute is Permute.HEAD_SPLIT else 5
    form = "(B, S, H, D)" if rank == 4 else "(B, S, 3, H, D)"
    if (not isinstance(view, (tuple, list)) or len(view) != rank
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in view)):
        raise ValueError(f"{op}: view must be {form} with non-negative ints, got {view!r}")
    if rank == 5 and view[2] != 3:
        raise ValueError(f"{op}: view {tuple(view)} must have 3 at index 2 {form}")
    bsz, s = view[0], view[1]
    h, dh = view[-2], view[-1]
    if bsz * s != m or (3 if rank == 5 else 1) * h * dh != n:
        raise ValueError(f"{op}: view {tuple(view)} does not match the output (M={m}, N={n}): "
                         f"need B*S == M and {'3*' if rank == 5 else ''}H*D == N")
    return (bsz, h, s, dh) if rank == 4 else (3, bsz, h, s, dh)


def check_out_overlap(op: str, permute: Permute, out: Array, a: Array, b: Array, c: Optional[Array],
                      bias: Optional[Array], e: Optional[Array]) -> None:
    """``out`` must not overlap an input; it may alias ``c`` exactly (same pointer and
    strides, unpermuted output)."""
    if not out.numel():
        return
    for name, t in (("a", a), ("b", b), ("bias", bias), ("e", e)):
        if t is not None and t.numel() and overlaps(out, t):
            raise ValueError(f"{op}: out overlaps {name}; pass a separate output tensor")
    if c is not None and c.numel() and overlaps(out, c) and not (
            permute is Permute.NONE and out.data_ptr() == c.data_ptr() and out.stride() == c.stride()):
        raise ValueError(f"{op}: out partially overlaps c; out may alias c only exactly "
                         "(same pointer and strides, unpermuted output)")


def _layout_error(op: str, name: str, t: Array, want: str, fix: str) -> ValueError:
    return ValueError(f"{op}: {name} must be {want}, got shape {tuple(t.shape)} with strides "
                      f"{tuple(t.stride())}; {fix}")


# --- operands as launched ------------------------------------------------------------------------


Pad = Callable[[OpSpec, Operands, int, int, int, int], Operands]  # (spec, operands, m, kp, np, align)


def prepare(spec: OpSpec, a: Array, b: Array, c: Optional[Array], bias: Optional[Array], e: Optional[Array],
            out: Array, m: int, n: int, k: int, beta: float, align: int, pad: Pad) -> Operands:
    """The operands' leading dimensions (raising for a layout the kernels cannot read), then
    the operands themselves when ``align``-element aligned, else ``pad``'s copies (with a
    PaddingWarning). K = 0 always pads (to K = ``align`` zero columns: the kernels then
    compute the epilogue of a zero product)."""
    op = spec.name
    lda = row_major_ld(a)
    if lda is None:
        raise _layout_error(op, "a", a, "row-major (stride(1) == 1)", "pass a.contiguous()")
    if spec.layout is Layout.TN:
        ldb = col_major_ld(b)
        if ldb is None:
            raise _layout_error(op, "b", b, "column-major (K, N) for layout tn",
                                "pass weight.t() of a contiguous (N, K) weight")
    else:
        ldb = row_major_ld(b)
        if ldb is None:
            raise _layout_error(op, "b", b, "row-major (K, N) for layout nn", "pass b.contiguous()")
    ldc = lde = 0
    if c is not None:
        ldc = row_major_ld(c)
        if ldc is None:
            raise _layout_error(op, "c", c, "row-major (stride(1) == 1)", "pass c.contiguous()")
    if e is not None:
        lde = row_major_ld(e)
        if lde is None:
            raise _layout_error(op, "e", e, "row-major (stride(1) == 1)", "pass e.contiguous()")
    if bias is not None and bias.numel() > 1 and bias.stride(0) != 1:
        raise _layout_error(op, "bias", bias, "contiguous", "pass bias.contiguous()")
    if spec.epilogue.permute is Permute.NONE:
        ldd = row_major_ld(out)
        if ldd is None:
            raise _layout_error(op, "out", out, "row-major (stride(1) == 1)", "pass a contiguous out")
    else:
        if not out.is_contiguous():
            raise _layout_error(op, "out", out, "contiguous", "pass a contiguous out")
        ldd = n
    ops = Operands(a, b, lda, ldb, c if beta != 0.0 else None, ldc, bias, e, lde, out, ldd, n, k)
    if k and aligned(ops, align, spec.epilogue.bias is BiasMode.PER_COL):
        return ops
    kp = max(align, -(-k // align) * align)
    np_ = -(-n // align) * align
    if spec.epilogue.permute is not Permute.NONE and np_ != n:
        raise ValueError(f"{spec.name}: N={n} must be a multiple of {align} for the permuted output "
                         f"(the head size D must be a multiple of {align})")
    if k:
        warnings.warn(f"{spec.name}: M={m} N={n} K={k} is not {align}-element aligned (sizes, strides or "
                      f"pointers); operands are copied into padded buffers", PaddingWarning, stacklevel=5)
    return pad(spec, ops, m, kp, np_, align)


def aligned(o: Operands, al: int, bias_per_col: bool) -> bool:
    """Whether sizes, leading dimensions and pointers are all ``al``-element aligned (the
    bias pointer only counts when it is read in vectors: per column)."""
    nbytes = al * 2
    lds = [o.lda, o.ldb, o.ldd] + ([o.ldc] if o.c is not None else []) + ([o.lde] if o.e is not None else [])
    ptrs = [o.a, o.b, o.d, o.c, o.e] + ([o.bias] if bias_per_col else [])
    return (o.k % al == 0 and o.n % al == 0 and all(ld % al == 0 for ld in lds)
            and all(t is None or t.data_ptr() % nbytes == 0 for t in ptrs))
