"""What a repeated call signature skips, shared by the torch fast path (:mod:`.fastpath`) and the
array fast path (:mod:`.array_fast`). Needs no torch.

A signature that ran in place twice on the full path has a :class:`Prepared`: the plan, the
bytes of its ``CksArgs`` around the pointer fields, and what the pointers must satisfy. Its
first run only notes it (:data:`SEEN`). A fast call reads the pointers, re-checks what depends
on them (:func:`overlap`; alignment in :func:`runner`), finds the stream's workspace and calls
the C entry point with ``head + pack(pointers) + mid + pack(workspace)``: a fresh ``bytes`` per
call, so concurrent threads share nothing mutable. Anything unusual (a misaligned pointer, an
overlap, a missing or too small workspace, a plan cache cleared since, the library rejecting
the problem) declines, and the op takes the full path, which raises, pads or re-plans exactly
as on a first call.

Host-time costs behind the choices (CPU tensors and a no-op C library,
benchmarks/host_overhead.py --fake): ``from_buffer_copy`` plus ten ctypes field writes ~0.8 µs
against ~0.25 µs for the bytes; a ctypes call with ``POINTER(CksArgs)`` / ``c_void_p(stream)``
arguments ~0.45 µs against ~0.2 µs with plain pointers.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

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

# run(pa, pb, pc, pbias, pe, pd, stream): True once launched, False to decline (full path)
Runner = Callable[[int, int, int, int, int, int, int], bool]

OPERANDS = ("c", "bias", "e", "out")  # the keyword arguments that are tensors / arrays
_PLAIN = (int, float, bool, str, type(None))


def plain_key(v: Any) -> Tuple[Any, Any]:
    """The key part of a keyword value that is not an operand: (type, value) for an immutable
    plain value (int, float, bool, str, None, or a tuple of them). Raises TypeError for anything
    else, which keeps the call off the fast paths: a value whose key would not change with its
    content (a 0-d tensor given as alpha, changed in place or replaced by one of the same shape)
    must be read again by the full path on every call."""
    t = type(v)
    if t in _PLAIN or t is tuple and all(type(x) in _PLAIN for x in v):
        return t, v
    raise TypeError(f"{t.__name__} keyword value: read on the full path")


class Seen:
    """A signature's first sighting: noted, not prepared (its ``call`` declines, so the op takes
    the full path, which prepares it when it comes again). Preparing costs the host more than
    the call it speeds up (an output template or allocator, the argument block's bytes, a
    closure: ~40 µs on the H100 machine), so a signature that never repeats (every new shape of
    a dynamic-shape caller) should not pay it: the same rule as the C side's graph recording."""

    __slots__ = ()

    @staticmethod
    def call(*args: Any) -> None:
        return None


SEEN = Seen()


def sighted(cache: Any, key: tuple, make: Callable[[], "Prepared"]) -> None:
    """Records a signature that ran in place on the full path in ``cache``: its first sighting
    as :data:`SEEN`, a later one as the Prepared that ``make`` builds."""
    cache.put(key, make() if cache.get(key) is not None else SEEN)


class Prepared:
    """What the full path established for a signature on its second sighting (see the module
    docstring); ``call`` is the fast call itself (its arguments are the path's own), a closure
    over these fields; ``new_out`` allocates the output."""

    __slots__ = ("plan", "generation", "variant", "split", "device", "device_index", "out_shape", "dtype", "head",
                 "mid", "lda", "ldb", "ldc", "lde", "ldd", "sem_bytes", "partial_bytes", "align_bytes",
                 "bias_aligned", "use_c", "c_may_alias_out", "spans", "template", "new_out", "call")

    def __init__(self, **fields: Any):
        self.template = self.new_out = self.call = None
        for name, value in fields.items():
            setattr(self, name, value)

    @property
    def args(self) -> abi.CksArgs:
        """The argument block with every non-pointer field set (pointers and workspace zero)."""
        raw = self.head + bytes(_POINTERS.size) + self.mid + bytes(_WORKSPACE.size)
        args = abi.CksArgs.from_buffer_copy(raw)
        args.lda, args.ldb, args.ldc, args.lde, args.ldd = self.lda, self.ldb, self.ldc, self.lde, self.ldd
        return args


def prepare(op: "Op", launched: Launched, r: Request, out_shape: Tuple[int, ...], align: int, c: Any,
            c_strides: Optional[Tuple[int, ...]]) -> Prepared:
    """The Prepared of a launch of the full path (``c``: the caller's C, whose strides
    ``c_strides`` tell whether it may alias the output)."""
    raw = bytes(launched.args)
    o, ep, a = r.operands, op.spec.epilogue, launched.args
    size = operands.extent
    return Prepared(
        plan=launched.plan, generation=op.launcher.plans.generation, variant=launched.plan.variant,
        split=launched.plan.split, device=r.device, device_index=r.device_index, out_shape=out_shape,
        dtype=o.d.dtype, head=raw[:_A], mid=raw[_ALPHA:_SEM], lda=a.lda, ldb=a.ldb, ldc=a.ldc, lde=a.lde, ldd=a.ldd,
        sem_bytes=launched.plan.semaphore_bytes, partial_bytes=launched.plan.partial_bytes, align_bytes=align * 2,
        bias_aligned=ep.bias is BiasMode.PER_COL, use_c=o.c is not None,
        c_may_alias_out=c is not None and ep.permute is Permute.NONE and c_strides == tuple(o.d.stride()),
        spans=(size(o.a), size(o.b), size(c), size(o.bias), size(o.e), size(o.d)))


def runner(op: "Op", p: Prepared, workspace: Any) -> Runner:
    """The launch of a prepared call with the caller's pointers on ``stream`` (buffers from
    ``workspace``): a closure over everything it reads, for host time (cell reads instead of
    attribute lookups). Declines (False) on a misaligned pointer, a cleared plan cache, a
    missing or too small workspace, or the library rejecting the problem; raises on a failure."""
    plans, generation = op.launcher.plans, p.generation
    bound, variant = op.bound, p.variant  # bound.run is read per call: wrappers may replace it
    use_c, bias_aligned, align = p.use_c, p.bias_aligned, p.align_bytes
    device, need_sem, need_part = p.device, p.sem_bytes, p.partial_bytes
    head, mid, lda, ldb, ldc, lde, ldd = p.head, p.mid, p.lda, p.ldb, p.ldc, p.lde, p.ldd
    pack = _ARGS.pack
    last = [(None, None, None)]  # (stream, its buffers, workspace generation): replaced whole (threads race)

    def run(pa: int, pb: int, pc: int, pbias: int, pe: int, pd: int, stream: int) -> bool:
        if plans.generation != generation:
            return False
        if not use_c:
            pc = 0  # c is not read (beta == 0)
        if (pa | pb | pd | pe | pc | (pbias if bias_aligned else 0)) % align:
            return False
        if need_sem or need_part:
            cached_stream, bufs, cached_generation = last[0]
            if cached_stream != stream or cached_generation != workspace.generation:
                bufs = workspace.get(device, stream)
                if bufs is None:
                    return False
                last[0] = (stream, bufs, workspace.generation)
            sem, part = bufs.semaphores, bufs.partials  # held until the launch is queued
            if need_sem and (sem is None or sem.nbytes < need_sem) or need_part and (part is None
                                                                                     or part.nbytes < need_part):
                return False
            args = pack(head, pa, lda, pb, ldb, pc, ldc, pbias, pe, lde, pd, ldd, mid,
                        sem.ptr if need_sem else 0, sem.nbytes if need_sem else 0,
                        part.ptr if need_part else 0, part.nbytes if need_part else 0)
        else:
            args = pack(head, pa, lda, pb, ldb, pc, ldc, pbias, pe, lde, pd, ldd, mid, 0, 0, 0, 0)
        status = bound.run[variant](args, stream)
        if status == 0:
            return True
        if status == abi.STATUS_INVALID_PROBLEM:
            return False
        raise op.launcher.run_error(variant, p.split, abi.CksArgs.from_buffer_copy(args), status)

    return run


def overlap(p: Prepared, pa: int, pb: int, pc: int, pbias: int, pe: int, pd: int) -> bool:
    """Whether ``out`` (at ``pd``) overlaps an input (c may alias it exactly where allowed)."""
    sa, sb, sc, sbias, se, sd = p.spans
    end = pd + sd
    return bool(sd and ((sa and pa < end and pd < pa + sa) or (sb and pb < end and pd < pb + sb)
                        or (sbias and pbias < end and pd < pbias + sbias) or (se and pe < end and pd < pe + se)
                        or (sc and pc < end and pd < pc + sc and not (pc == pd and p.c_may_alias_out))))
