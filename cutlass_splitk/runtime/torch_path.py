"""The torch path's full call: torch tensors checked (:func:`check_tensor`), the epilogue of
a zero product in torch (K = 0), padding with torch buffers, the launch on torch's current
stream with workspace from torch's caching allocator, and what a repeated call of the same
signature may skip (:func:`.fastpath.remember`).

Imported only when torch is (the op then routes torch tensors here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

import torch

from ..spec import BiasMode, Layout, OpSpec, Permute
from . import dispatch, fastpath, operands, reference, torch_op
from .launcher import Request
from .reference import TORCH_DTYPES

if TYPE_CHECKING:
    from .op import Op


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


def call(op: "Op", a: Any, b: Any, kwargs: Dict[str, Any], sig: Optional[tuple], scratch: bool = False) -> Any:
    """Validates everything, plans on a new problem, and remembers the signature ``sig``
    for the fast path when the operands ran in place (noted the first time, prepared the
    second: fastpath.Seen). ``scratch``: take the workspace per
    call rather than from the library's cache (see torch_op.register)."""
    if torch.compiler.is_compiling():
        if kwargs.get("out") is not None:
            raise TypeError(f"{op.name}(): out= is not supported under torch.compile")
        return torch_op.compiled_call(op, a, b, kwargs)
    ep = op.spec.epilogue
    dtype = TORCH_DTYPES[op.spec.dtype]
    (alpha, beta, slope, c, bias, e, view, out, split_k, mode, variant), pool = op.read_keywords(kwargs)
    accept_cpu = op.platform.accepts_cpu

    def check(name: str, t: Any, ndim: int, device: Optional[torch.device], shape: Any = None) -> None:
        check_tensor(op.name, name, t, dtype, ndim, device, shape, accept_cpu)

    check("a", a, 2, None)
    device = a.device
    check("b", b, 2, device)
    m, n, k = operands.problem(op.name, a.shape, b.shape, beta, c is not None)
    if c is not None:
        check("c", c, 2, device, (m, n))
    if bias is not None:
        check("bias", bias, 1, device, (operands.bias_length(ep.bias, m, n),))
    if e is not None:
        check("e", e, 2, device, (m, n))
    out_shape = op.out_shape(m, n, view)
    if out is not None:
        check("out", out, len(out_shape), device, out_shape)
        operands.check_out_overlap(op.name, ep.permute, out, a, b, c, bias, e)
    else:
        # a's dtype and device (checked): new_empty costs torch 0.6-2 µs less than torch.empty(...);
        # a plain tensor whatever a's class (a subclass's new_empty would keep it)
        out = a.new_empty(out_shape) if type(a) is torch.Tensor else torch.empty(out_shape, dtype=dtype, device=device)
    if m == 0 or n == 0:
        return out
    if k == 0:  # the product is zero; the epilogue still applies
        zero = torch.zeros(m, n, dtype=torch.float32, device=out.device)
        return out.copy_(reference.epilogue(ep, zero, beta=beta, c=c, bias=bias, e=e, view=view, slope=slope))

    align = dispatch.min_alignment(pool)
    ops = operands.prepare(op.spec, a, b, c, bias, e, out, m, n, k, beta, align, pad)
    request = Request(ops, m, alpha, beta, slope, view, device, op.platform.device_index(device), pool,
                      split_k, mode, variant, scratch)
    launched = op.launcher.launch(request)
    if ops.d is not out:
        out.copy_(ops.d[:, :n] if ep.permute is Permute.NONE else ops.d.view(out_shape))
    elif sig is not None and launched is not None:
        # the first sighting is noted, a later one prepares the fast path (see fastpath.Seen)
        fastpath.sighted(op.prepared, sig, lambda: fastpath.remember(op, launched, request, out_shape, align, c, a, b,
                                                                                kwargs))
    return out


def pad(spec: OpSpec, o: operands.Operands, m: int, kp: int, np_: int, al: int) -> operands.Operands:
    """Copies the operands into zero-padded, aligned torch buffers (the slow path)."""
    ep = spec.epilogue
    dtype = TORCH_DTYPES[spec.dtype]
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
    return operands.Operands(a, b, kp, ldb, c, np_, bias, e, np_, d, np_, np_, kp)
