"""The repeated-signature call of the array path (CuPy, Numba, JAX, our DeviceArray, anything
with ``__cuda_array_interface__``), written for host time. Needs no torch.

The full array path reads every operand through cuda.core's StridedMemoryView (~10 µs per
operand on the H100 machine) and re-checks everything. Here each operand is read by a
:func:`reader` chosen once per Python type, which returns the pointer, the metadata the full
path's checks depend on (shape, strides, dtype, read-only), the device and the producer
stream to wait for:

* CuPy ``ndarray``: its attributes (``data.ptr``, ``shape``, ``strides``, ``dtype``,
  ``device.id``; ~1 µs); the producer is CuPy's current stream on the array's device.
* our :class:`~.dlpack.DeviceArray`: its fields; the producer is the stream it was made on.
* cuda.core's StridedMemoryView: its fields (a view made by the caller: no producer).
* anything else with ``__cuda_array_interface__``: the dict (shape, strides, typestr, data,
  mask, version 3's stream) and the device that owns the pointer (the driver's pointer query).
  Not a version-2 interface of an object that also exports DLPack (JAX): the full path reads
  that through DLPack, whose stream handshake orders the producer's pending writes, and
  version 2 promises nothing the fast path could keep without blocking the host.

The signature is the operands' types, metadata and devices plus the other keyword values
(``stream=`` is resolved per call, as on the full path). Like the torch path, its first run on
the full path only notes it (:data:`~.prepared.SEEN`), the second prepares it
(:func:`remember`), and later calls launch through :func:`.prepared.runner` after the same
producer-stream waits as the full path; anything unusual (an operand type without a reader,
a misaligned pointer, ``out`` overlapping an input, no workspace yet) takes the full path.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from . import arrays, cupy_streams
from .dlpack import DeviceArray
from .launcher import Launched, Request
from .prepared import OPERANDS, Prepared, overlap, plain_key, prepare, runner

if TYPE_CHECKING:
    from .op import Op

CUPY = "cupy"  # a reader's producer: CuPy's current stream at call time

# reader(obj, devices) -> (pointer, metadata, device, producer stream or None or CUPY); raises
# Decline for an object the fast path leaves to the full path
Reader = Callable[[Any, Any], Tuple[int, tuple, Optional[int], Any]]


class Decline(Exception):
    """An operand the fast path does not read (the full path does)."""


def _cupy(x: Any, devices: Any) -> Tuple[int, tuple, Optional[int], Any]:
    return x.data.ptr, (x.shape, x.strides, x.dtype.char), x.device.id, CUPY


def _device_array(x: DeviceArray, devices: Any) -> Tuple[int, tuple, Optional[int], Any]:
    return x.ptr, (x.shape, x.dtype), x.device, x.stream


def _smv(x: Any, devices: Any) -> Tuple[int, tuple, Optional[int], Any]:
    return x.ptr, (x.shape, x.strides, arrays.smv_dtype(x), x.readonly), arrays.smv_device(x, devices), None


def _cai(x: Any, devices: Any) -> Tuple[int, tuple, Optional[int], Any]:
    cai = x.__cuda_array_interface__
    ptr, readonly = cai["data"]
    ptr = int(ptr or 0)
    strides = cai.get("strides")
    version = int(cai.get("version", 3))
    if version < 3 and hasattr(x, "__dlpack__"):
        raise Decline
    meta = (tuple(cai["shape"]), None if strides is None else tuple(strides), cai["typestr"], bool(readonly),
            cai.get("mask") is None, version >= 3)
    return ptr, meta, devices.pointer_device(ptr) if ptr else None, cai.get("stream") if version >= 3 else None


@functools.lru_cache(maxsize=64)
def reader(cls: type) -> Optional[Reader]:
    """How an operand of type ``cls`` is read on the fast path, or None (the full path only)."""
    if cls.__module__.split(".")[0] == "cupy" and cls.__name__ == "ndarray":
        return _cupy
    if issubclass(cls, DeviceArray):
        return _device_array
    if hasattr(cls, "__cuda_array_interface__"):
        return _cai
    smv = arrays._smv_class()
    if smv is not None and issubclass(cls, smv):
        return _smv
    return None


def reader_of(obj: Any) -> Optional[Reader]:
    """:func:`reader` of ``obj``'s type, or the interface's reader for an object carrying
    ``__cuda_array_interface__`` as an instance attribute."""
    r = reader(type(obj))
    if r is None and hasattr(obj, "__cuda_array_interface__"):
        return _cai
    return r


class Signature:
    """A call's signature (``key``) and what the fast call needs of it: the pointers (a, b,
    then ``ptrs`` by keyword) and the producer streams to wait for."""

    __slots__ = ("key", "pa", "pb", "ptrs", "producers", "own")

    def __init__(self, key: tuple, pa: int, pb: int, ptrs: Dict[str, int], producers: List[Any],
                 own: Optional[List[Any]] = None):
        self.key, self.pa, self.pb, self.ptrs, self.producers = key, pa, pb, ptrs, producers
        self.own = own  # the operands, where one is a DeviceArray (for arrays.note_uses after the launch)


def signature(a: Any, b: Any, kwargs: Dict[str, Any], devices: Any) -> Optional[Signature]:
    """The call's Signature, or None where an operand has no reader or cannot be read (the
    full path then reports what is wrong)."""
    ra, rb = reader_of(a), reader_of(b)
    if ra is None or rb is None:
        return None
    try:
        pa, ma, da, sa = ra(a, devices)
        pb, mb, db, sb = rb(b, devices)
        key: List[Any] = [type(a), ma, da, type(b), mb, db]
        ptrs: Dict[str, int] = {}
        producers = [sa, sb]
        own = ra is _device_array or rb is _device_array
        operands = [a, b]
        for name, v in kwargs.items():
            if name == "stream":
                continue  # resolved per call
            if v is not None and name in OPERANDS:
                r = reader_of(v)
                if r is None:
                    return None
                p, m, d, s = r(v, devices)
                own = own or r is _device_array
                if name != "out":
                    operands.append(v)
                key += (name, type(v), m, d)
                ptrs[name] = p
                producers.append(s)
            else:
                key += (name, *plain_key(v))
        return Signature(tuple(key), pa, pb, ptrs, producers, operands if own else None)
    except Exception:  # a malformed interface: the full path says what is wrong
        return None


def remember(op: "Op", launched: Launched, r: Request, out_shape: Tuple[int, ...], align: int, c: Any,
             like: Any) -> Prepared:
    """The Prepared of an array call that ran in place on the full path (``like``: its ``a``,
    whose framework the output is allocated in)."""
    p = prepare(op, launched, r, out_shape, align, c, tuple(c.strides) if c is not None else None)
    p.new_out = _allocator(op, p, like)
    p.call = _fast_call(op, p)
    return p


def _allocator(op: "Op", p: Prepared, like: Any) -> Callable[[Any, int, Any], Tuple[Any, int]]:
    """new_out(a, stream, the call's stream= object) -> (the output, its pointer), where the full path
    allocates it: a CuPy array from CuPy's pool (cupy_streams.output, no device switch through
    cuda.core), otherwise arrays.new_output with the device made current."""
    shape, dtype, device, devices = p.out_shape, p.dtype, p.device_index, op.platform.devices
    if type(like).__module__.split(".")[0] == "cupy" and dtype == "float16":
        cupy_output = cupy_streams.output

        def cupy_out(a: Any, stream: int, given: Any) -> Tuple[Any, int]:
            arr = cupy_output(shape, device, stream)
            return arr, arr.data.ptr
        return cupy_out

    def new_out(a: Any, stream: int, given: Any) -> Tuple[Any, int]:
        saved = devices.enter(device)
        try:
            arr, view = arrays.new_output(a, shape, dtype, device, stream, devices, given)
        finally:
            devices.leave(saved)
        return arr, view.ptr
    return new_out


def _fast_call(op: "Op", p: Prepared) -> Callable[[Any, Dict[str, Any], Signature], Any]:
    """The call of a remembered signature, or None for the full path."""
    run = runner(op, p, op.library.array_workspace)
    note_uses = arrays.note_uses
    new_out, devices, name, stream_of = p.new_out, op.platform.devices, op.name, arrays.call_stream
    current_cupy_stream, device = cupy_streams.current_stream, p.device_index
    checked = [None]  # the last stream found to be of the call's device (replaced whole: threads race)

    def call(a: Any, kw: Dict[str, Any], sig: Signature) -> Any:
        given_stream = kw.get("stream")
        stream = stream_of(name, given_stream, a)
        if stream != checked[0]:
            arrays.check_stream_device(name, stream, device, devices)
            checked[0] = stream
        cupy_stream = None
        for producer in sig.producers:  # the full path's handshake (DLPack / CAI v3)
            if producer is not None:
                if producer == CUPY:  # CuPy's current stream on the call's device, read once per call
                    if cupy_stream is None:
                        cupy_stream = current_cupy_stream(device)
                    producer = cupy_stream
                if producer != stream:
                    devices.wait(stream, int(producer), device)
        ptrs, pa, pb = sig.ptrs, sig.pa, sig.pb
        pc, pbias, pe = ptrs.get("c", 0), ptrs.get("bias", 0), ptrs.get("e", 0)
        given = out = kw.get("out")
        if out is None:
            out, pd = new_out(a, stream, given_stream)
        else:
            pd = ptrs["out"]
            if overlap(p, pa, pb, pc, pbias, pe, pd):
                return None
        if not run(pa, pb, pc, pbias, pe, pd, stream):
            return None
        if sig.own is not None:
            note_uses(stream, sig.own, given, given_stream)
        return out

    return call
