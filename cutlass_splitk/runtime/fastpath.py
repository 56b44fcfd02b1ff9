"""The repeated-signature call of the torch path, written for host time.

A torch call whose signature (shapes, strides, dtypes and devices of the tensors, the other
keyword values) ran in place twice has a :class:`~.prepared.Prepared` (its first run only notes
it: :data:`~.prepared.SEEN`). :func:`remember` adds what the torch path needs to it: a 1-element
template the output is allocated from, and the fast call, which reads the pointers, checks
``out`` against the inputs and launches through :func:`.prepared.runner` on torch's current
stream with the library's workspace. Anything unusual returns None, and the op takes the full
path (see :mod:`.prepared`).

Host-time cost behind the template (CPU tensors, benchmarks/host_overhead.py --fake):
``torch.empty(shape, dtype=, device=)`` ~1.5 µs against ~0.85 µs for ``torch.empty_like`` of an
expanded 1-element template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

import torch

from .launcher import Launched, Request
from .prepared import _ARGS, OPERANDS, SEEN, Prepared, Seen, overlap, plain_key, prepare, runner, sighted

if TYPE_CHECKING:
    from .op import Op

__all__ = ["SEEN", "Prepared", "Seen", "kwargs_key", "remember", "sighted", "stream_function", "_ARGS"]

_empty_like = torch.empty_like
_Tensor = torch.Tensor


def kwargs_key(kwargs: Dict[str, Any]) -> List[Any]:
    """The keyword part of a signature, flat: name, then shape, strides, dtype, device of an
    operand tensor (c, bias, e, out), or type and value of a plain value (:func:`.prepared.plain_key`:
    anything else raises TypeError, and the call takes the full path). A torch.Size is never a
    type, so the two cannot be confused."""
    key: List[Any] = []
    for name, v in kwargs.items():
        if name in OPERANDS and isinstance(v, _Tensor):
            key += (name, v.shape, v.stride(), v.dtype, v.get_device())
        else:
            key += (name, *plain_key(v))
    return key


def _template(out: torch.Tensor, shape: Tuple[int, ...]) -> Optional[torch.Tensor]:
    """A 1-element tensor expanded to ``shape``: ``empty_like`` of it is a contiguous
    ``shape`` tensor and costs less than ``torch.empty`` with keywords. None where that does
    not hold."""
    t = out.new_empty(1).expand(shape)
    probe = _empty_like(t)
    return t if probe.is_contiguous() and probe.shape == shape else None


def remember(op: "Op", launched: Launched, r: Request, out_shape: Tuple[int, ...], align: int,
             c: Optional[torch.Tensor], a: Any, b: Any, kwargs: Dict[str, Any]) -> Prepared:
    """The Prepared of a call (``a``, ``b``, ``kwargs``) that ran in place on the full path, also
    registered with the op's C call path where it has one."""
    p = prepare(op, launched, r, out_shape, align, c, tuple(c.stride()) if c is not None else None)
    p.template = template = _template(r.operands.d, out_shape)
    dtype, device = p.dtype, p.device
    p.new_out = (lambda: _empty_like(template)) if template is not None else \
        (lambda: torch.empty(out_shape, dtype=dtype, device=device))
    p.call = _fast_call(op, p)
    if op.native is not None:
        op.native.register(a, b, kwargs, p)
    return p


def _fast_call(op: "Op", p: Prepared) -> Callable[[Any, Any, Dict[str, Any]], Optional[torch.Tensor]]:
    """The call of a remembered signature, or None for the full path."""
    run = runner(op, p, op.library.workspace)
    template, new_out = p.template, p.new_out
    stream_of, index = stream_function(op.platform), p.device_index
    empty_like = _empty_like

    def call(a: Any, b: Any, kw: Dict[str, Any]) -> Optional[torch.Tensor]:
        if kw:
            out, c, bias, e = kw.get("out"), kw.get("c"), kw.get("bias"), kw.get("e")
        else:
            out = c = bias = e = None
        pc = c.data_ptr() if c is not None else 0
        pbias = bias.data_ptr() if bias is not None else 0
        pe = e.data_ptr() if e is not None else 0
        pa, pb = a.data_ptr(), b.data_ptr()
        if out is None:
            out = empty_like(template) if template is not None else new_out()
        elif overlap(p, pa, pb, pc, pbias, pe, out.data_ptr()):
            return None
        return out if run(pa, pb, pc, pbias, pe, out.data_ptr(), stream_of(index)) else None

    return call


def stream_function(platform: Any) -> Callable[[int], int]:
    """The platform's current-stream query as the cheapest callable it offers."""
    fn = getattr(platform, "stream_function", None)
    return fn() if fn is not None else platform.stream
