"""Checking a call's tensors and turning them into what the C entry points take: pure
functions of the tensors and the op's spec (nothing here launches or caches).

Every message names the op and the argument, what was expected and what was given.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import torch

from ..spec import BiasMode, DType, Layout, OpSpec, Permute
from .errors import PaddingWarning

TORCH_DTYPES = {DType.F16: torch.float16, DType.BF16: torch.bfloat16}


@dataclass
class Operands:
    """The tensors of one launch and their leading dimensions, with N and K as launched
    (padded when the operands were copied into aligned buffers)."""

    a: torch.Tensor
    b: torch.Tensor
    lda: int
    ldb: int
    c: Optional[torch.Tensor]  # None when beta == 0
    ldc: int
    bias: Optional[torch.Tensor]
    e: Optional[torch.Tensor]
    lde: int
    d: torch.Tensor
    ldd: int
    n: int
    k: int


# --- geometry ----------------------------------------------------------------------------------


def extent(t: Optional[torch.Tensor]) -> int:
    """Bytes from ``t``'s first element to past its last (0 for None or an empty tensor)."""
    if t is None or t.numel() == 0:
        return 0
    return (sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1) * t.element_size()


def overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether two non-empty tensors of one storage touch a common byte range (conservative:
    two interleaved views of one buffer count as overlapping)."""
    if x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr():
        return False
    a0, b0 = x.data_ptr(), y.data_ptr()
    return a0 < b0 + extent(y) and b0 < a0 + extent(x)


def row_major_ld(t: torch.Tensor) -> Optional[int]:
    """Leading dimension if ``t`` (2-D) is row-major with unit column stride, else None."""
    rows, cols = t.shape
    if cols > 1 and t.stride(1) != 1:
        return None
    ld = t.stride(0) if rows > 1 else cols
    return ld if ld >= cols else None


def col_major_ld(t: torch.Tensor) -> Optional[int]:
    """``row_major_ld(t.t())`` without building the transposed view (on every tn call)."""
    rows, cols = t.shape
    if rows > 1 and t.stride(0) != 1:
        return None
    ld = t.stride(1) if cols > 1 else rows
    return ld if ld >= rows else None


# --- checks ------------------------------------------------------------------------------------


def check_tensor(op: str, name: str, t: Any, dtype: torch.dtype, ndim: int, device: Optional[torch.device],
                 shape: Optional[Sequence[int]] = None, accept_cpu: bool = False) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype != dtype:
        raise TypeError(f"{op}: {name} must be {dtype}, got {t.dtype}")
    if not accept_cpu and t.device.type != "cuda":
        raise ValueError(f"{op}: {name} must be on a CUDA device, got {t.device}")
    if device is not None and t.device != device:
        raise ValueError(f"{op}: {name} is on {t.device} but a is on {device}")
    if t.dim() != ndim:
        raise ValueError(f"{op}: {name} must be {ndim}-D, got shape {tuple(t.shape)}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{op}: {name} must have shape {tuple(shape)}, got {tuple(t.shape)}")


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


def check_out_overlap(op: str, permute: Permute, out: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
                      c: Optional[torch.Tensor], bias: Optional[torch.Tensor], e: Optional[torch.Tensor]) -> None:
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


def _layout_error(op: str, name: str, t: torch.Tensor, want: str, fix: str) -> ValueError:
    return ValueError(f"{op}: {name} must be {want}, got shape {tuple(t.shape)} with strides "
                      f"{tuple(t.stride())}; {fix}")


# --- operands as launched ------------------------------------------------------------------------


def prepare(spec: OpSpec, dtype: torch.dtype, a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor],
            bias: Optional[torch.Tensor], e: Optional[torch.Tensor], out: torch.Tensor, m: int, n: int, k: int,
            beta: float, align: int) -> Operands:
    """The operands' leading dimensions (raising for a layout the kernels cannot read), then
    the operands themselves when ``align``-element aligned, else padded copies (with a
    PaddingWarning)."""
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
    if aligned(ops, align, spec.epilogue.bias is BiasMode.PER_COL):
        return ops
    return padded(spec, dtype, ops, m, align)


def aligned(o: Operands, al: int, bias_per_col: bool) -> bool:
    """Whether sizes, leading dimensions and pointers are all ``al``-element aligned (the
    bias pointer only counts when it is read in vectors: per column)."""
    nbytes = al * 2
    lds = [o.lda, o.ldb, o.ldd] + ([o.ldc] if o.c is not None else []) + ([o.lde] if o.e is not None else [])
    ptrs = [o.a, o.b, o.d, o.c, o.e] + ([o.bias] if bias_per_col else [])
    return (o.k % al == 0 and o.n % al == 0 and all(ld % al == 0 for ld in lds)
            and all(t is None or t.data_ptr() % nbytes == 0 for t in ptrs))


def padded(spec: OpSpec, dtype: torch.dtype, o: Operands, m: int, al: int) -> Operands:
    """Copies the operands into zero-padded, aligned buffers (the slow path)."""
    ep = spec.epilogue
    kp = -(-o.k // al) * al
    np_ = -(-o.n // al) * al
    if ep.permute is not Permute.NONE and np_ != o.n:
        raise ValueError(f"{spec.name}: N={o.n} must be a multiple of {al} for the permuted output "
                         f"(the head size D must be a multiple of {al})")
    warnings.warn(f"{spec.name}: M={m} N={o.n} K={o.k} is not {al}-element aligned (sizes, strides or "
                  f"pointers); operands are copied into padded buffers", PaddingWarning, stacklevel=5)
    dev = o.a.device

    def pad2(t: Optional[torch.Tensor], rows: int, cols: int) -> Optional[torch.Tensor]:
        if t is None:
            return None
        buf = torch.zeros(rows, cols, dtype=dtype, device=dev)
        buf[: t.shape[0], : t.shape[1]] = t
        return buf

    a = pad2(o.a, m, kp)
    if spec.layout is Layout.TN:
        b = pad2(o.b.t(), np_, kp).t()
        ldb = kp
    else:
        b = pad2(o.b, kp, np_)
        ldb = np_
    c = pad2(o.c, m, np_)
    e = pad2(o.e, m, np_)
    bias = o.bias
    if bias is not None:
        length = np_ if ep.bias is BiasMode.PER_COL else bias.shape[0]
        bias = torch.zeros(length, dtype=dtype, device=dev)
        bias[: o.bias.shape[0]] = o.bias
    if ep.permute is Permute.NONE:
        d = torch.empty(m, np_, dtype=dtype, device=dev)
    else:
        d = torch.empty(m * np_, dtype=dtype, device=dev).view(m, np_)
    return Operands(a, b, kp, ldb, c, np_, bias, e, np_, d, np_, np_, kp)
