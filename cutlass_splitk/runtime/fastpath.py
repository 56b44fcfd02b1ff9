"""The repeated-signature call of the torch path, written for host time.

A torch call whose signature (shapes, strides, dtypes and devices of the tensors, the other
keyword values) ran in place twice has a :class:`Prepared` (its first run only notes it:
:data:`SEEN`): the plan, the bytes of its ``CksArgs`` around the pointer fields, what the
pointers must satisfy, and a 1-element template the output is allocated from. :func:`call`
then only reads the pointers, re-checks what depends on them (alignment, ``out`` overlapping an
input), finds the stream's workspace and calls the C entry point with
``head + pack(pointers) + mid + pack(workspace)``: a fresh
``bytes`` per call, so concurrent threads share nothing mutable. Anything unusual (a misaligned
pointer, an overlap, a missing or too small workspace, a plan cache cleared since, the library
rejecting the problem) returns None, and the op takes the full path, which raises, pads or
re-plans exactly as on a first call.

Host-time costs behind the choices (CPU tensors and a no-op C library, this file's
benchmarks/host_overhead.py --fake): ``torch.empty(shape, dtype=, device=)`` ~1.5 µs against
~0.85 µs for ``torch.empty_like`` of an expanded 1-element template; ``from_buffer_copy`` plus
ten ctypes field writes ~0.8 µs against ~0.25 µs for the bytes; a ctypes call with
``POINTER(CksArgs)`` / ``c_void_p(stream)`` arguments ~0.45 µs against ~0.2 µs with plain
pointers.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

import torch

from ..spec import BiasMode, Permute
from . import abi, operands
from .launcher import Launched, Request

if TYPE_CHECKING:
    from .op import Op

_A, _ALPHA, _SEM = abi.CksArgs.a.offset, abi.CksArgs.alpha.offset, abi.CksArgs.semaphores.offset
_POINTERS = struct.Struct("<QqQqQqQQqQq")  # a, lda, b, ldb, c, ldc, bias, e, lde, d, ldd
_WORKSPACE = struct.Struct("<QqQq")  # semaphores, semaphore_bytes, partials, partial_bytes
# The whole CksArgs in one pack: head (abi_version .. device), the pointers, mid (alpha ..
# reserved1), the workspace.
_ARGS = struct.Struct(f"<{_A}s{_POINTERS.format[1:]}{_SEM - _ALPHA}s{_WORKSPACE.format[1:]}")
assert abi.CksArgs.ldd.offset + 8 == _ALPHA and _A + _POINTERS.size == _ALPHA, "CksArgs layout changed"
assert _ARGS.size == abi.ctypes.sizeof(abi.CksArgs), "CksArgs layout changed"
_empty_like = torch.empty_like
_Tensor = torch.Tensor


def kwargs_key(kwargs: Dict[str, Any]) -> List[Any]:
    """The keyword part of a signature, flat: name, then shape, strides, dtype, device of a
    tensor, or type and value of anything else (a torch.Size is never a type, so the two
    cannot be confused)."""
    key: List[Any] = []
    for name, v in kwargs.items():
        if isinstance(v, _Tensor):
            key += (name, v.shape, v.stride(), v.dtype, v.get_device())
        else:
            key += (name, type(v), v)
    return key


class Seen:
    """A signature's first sighting: noted, not prepared (its ``call`` declines, so the op takes
    the full path, which prepares it when it comes again). Preparing costs the host more than
    the call it speeds up (a 1-element output template, the argument block's bytes, a closure:
    ~40 µs on the H100 machine), so a signature that never repeats (every new shape of a
    dynamic-shape caller) should not pay it: the same rule as the C side's graph recording."""

    __slots__ = ()

    @staticmethod
    def call(a: Any, b: Any, kw: Dict[str, Any]) -> None:
        return None


SEEN = Seen()


class Prepared:
    """What the full path established for a signature on its second sighting (see the module
    docstring);
    ``call(a, b, kwargs)`` is the fast call itself, a closure over these fields."""

    __slots__ = ("plan", "generation", "variant", "split", "device", "device_index", "template", "out_shape",
                 "dtype", "head", "mid", "lda", "ldb", "ldc", "lde", "ldd", "sem_bytes", "partial_bytes",
                 "align_bytes", "bias_aligned", "use_c", "c_may_alias_out", "spans", "call")

    def __init__(self, **fields: Any):
        for name, value in fields.items():
            setattr(self, name, value)

    @property
    def args(self) -> abi.CksArgs:
        """The argument block with every non-pointer field set (pointers and workspace zero)."""
        raw = self.head + bytes(_POINTERS.size) + self.mid + bytes(_WORKSPACE.size)
        args = abi.CksArgs.from_buffer_copy(raw)
        args.lda, args.ldb, args.ldc, args.lde, args.ldd = self.lda, self.ldb, self.ldc, self.lde, self.ldd
        return args

    def new_out(self) -> torch.Tensor:
        if self.template is not None:
            return _empty_like(self.template)
        return torch.empty(self.out_shape, dtype=self.dtype, device=self.device)


def _template(out: torch.Tensor, shape: Tuple[int, ...]) -> Optional[torch.Tensor]:
    """A 1-element tensor expanded to ``shape``: ``empty_like`` of it is a contiguous
    ``shape`` tensor and costs less than ``torch.empty`` with keywords. None where that does
    not hold."""
    t = out.new_empty(1).expand(shape)
    probe = _empty_like(t)
    return t if probe.is_contiguous() and probe.shape == shape else None


def remember(op: "Op", launched: Launched, r: Request, out_shape: Tuple[int, ...], align: int,
             c: Optional[torch.Tensor]) -> Prepared:
    raw = bytes(launched.args)
    o, ep = r.operands, op.spec.epilogue
    a = launched.args
    size = operands.extent
    p = Prepared(
        plan=launched.plan, generation=op.launcher.plans.generation, variant=launched.plan.variant,
        split=launched.plan.split, device=r.device, device_index=r.device_index, template=_template(o.d, out_shape),
        out_shape=out_shape, dtype=o.d.dtype, head=raw[:_A], mid=raw[_ALPHA:_SEM], lda=a.lda, ldb=a.ldb,
        ldc=a.ldc, lde=a.lde, ldd=a.ldd, sem_bytes=launched.plan.semaphore_bytes,
        partial_bytes=launched.plan.partial_bytes, align_bytes=align * 2, bias_aligned=ep.bias is BiasMode.PER_COL,
        use_c=o.c is not None,
        c_may_alias_out=c is not None and ep.permute is Permute.NONE and c.stride() == o.d.stride(),
        spans=(size(o.a), size(o.b), size(c), size(o.bias), size(o.e), size(o.d)))
    p.call = _fast_call(op, p)
    return p


def _fast_call(op: "Op", p: Prepared) -> Callable[[Any, Any, Dict[str, Any]], Optional[torch.Tensor]]:
    """The call of a remembered signature, or None for the full path: a closure over
    everything it reads, for host time (cell reads instead of attribute lookups)."""
    plans, generation = op.launcher.plans, p.generation
    bound, variant = op.bound, p.variant  # bound.run is read per call: wrappers may replace it
    template, new_out = p.template, p.new_out
    use_c, bias_aligned, align = p.use_c, p.bias_aligned, p.align_bytes
    stream_of, index = stream_function(op.platform), p.device_index
    workspace, device = op.library.workspace, p.device
    need_sem, need_part = p.sem_bytes, p.partial_bytes
    head, mid, lda, ldb, ldc, lde, ldd = p.head, p.mid, p.lda, p.ldb, p.ldc, p.lde, p.ldd
    pack, empty_like = _ARGS.pack, _empty_like
    last = [(None, None, None)]  # (stream, its buffers, workspace generation): replaced whole (threads race)

    def call(a: Any, b: Any, kw: Dict[str, Any]) -> Optional[torch.Tensor]:
        if plans.generation != generation:
            return None
        if kw:
            out, c, bias, e = kw.get("out"), kw.get("c"), kw.get("bias"), kw.get("e")
        else:
            out = c = bias = e = None
        if out is None:
            out = empty_like(template) if template is not None else new_out()
            pc = c.data_ptr() if c is not None else 0
        else:
            pc = c.data_ptr() if c is not None else 0
            if _overlap(p, a.data_ptr(), b.data_ptr(), pc, bias.data_ptr() if bias is not None else 0,
                        e.data_ptr() if e is not None else 0, out.data_ptr()):
                return None
        pa, pb, pd = a.data_ptr(), b.data_ptr(), out.data_ptr()
        pbias = bias.data_ptr() if bias is not None else 0
        pe = e.data_ptr() if e is not None else 0
        if not use_c:
            pc = 0  # c is not read (beta == 0)
        if (pa | pb | pd | pe | pc | (pbias if bias_aligned else 0)) % align:
            return None
        stream = stream_of(index)
        if need_sem or need_part:
            cached_stream, bufs, cached_generation = last[0]
            if cached_stream != stream or cached_generation != workspace.generation:
                bufs = workspace.get(device, stream)
                if bufs is None:
                    return None
                last[0] = (stream, bufs, workspace.generation)
            sem, part = bufs.semaphores, bufs.partials  # held until the launch is queued
            if need_sem and (sem is None or sem.nbytes < need_sem) or need_part and (part is None
                                                                                     or part.nbytes < need_part):
                return None
            args = pack(head, pa, lda, pb, ldb, pc, ldc, pbias, pe, lde, pd, ldd, mid,
                        sem.ptr if need_sem else 0, sem.nbytes if need_sem else 0,
                        part.ptr if need_part else 0, part.nbytes if need_part else 0)
        else:
            args = pack(head, pa, lda, pb, ldb, pc, ldc, pbias, pe, lde, pd, ldd, mid, 0, 0, 0, 0)
        status = bound.run[variant](args, stream)
        if status == 0:
            return out
        if status == abi.STATUS_INVALID_PROBLEM:
            return None
        raise op.launcher.run_error(variant, p.split, abi.CksArgs.from_buffer_copy(args), status)

    return call


def stream_function(platform: Any) -> Callable[[int], int]:
    """The platform's current-stream query as the cheapest callable it offers."""
    fn = getattr(platform, "stream_function", None)
    return fn() if fn is not None else platform.stream


def _overlap(p: Prepared, pa: int, pb: int, pc: int, pbias: int, pe: int, pd: int) -> bool:
    """Whether ``out`` (at ``pd``) overlaps an input (c may alias it exactly where allowed)."""
    sa, sb, sc, sbias, se, sd = p.spans
    end = pd + sd
    return bool(sd and ((sa and pa < end and pd < pa + sa) or (sb and pb < end and pd < pb + sb)
                        or (sbias and pbias < end and pd < pbias + sbias) or (se and pe < end and pd < pe + se)
                        or (sc and pc < end and pd < pc + sc and not (pc == pd and p.c_may_alias_out))))
