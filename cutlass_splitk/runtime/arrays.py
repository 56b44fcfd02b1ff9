"""Any CUDA array as an operand: objects exporting DLPack or ``__cuda_array_interface__``
(CuPy, JAX, Numba, cuda.core's StridedMemoryView, torch, our own DeviceArray), read through
cuda.core's :class:`StridedMemoryView` into an :class:`ArrayView`.

Where cuda.core cannot read an object (no cuda-python, or no driver: the CPU tests), a
``__cuda_array_interface__`` is parsed here instead (:func:`from_cai`; where the pointer lives
is then asked of the platform). Both give the same ArrayView, which answers the handful of
torch.Tensor methods :mod:`.operands` reads, so the argument checks are shared with torch.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Dict, Iterable, Optional, Tuple

from ..spec import DType
from . import cudacore, cupy_streams
from .dlpack import KDL_CUDA, DeviceArray, contiguous_strides

KDL_CUDA_MANAGED = 13

DTYPE_NAMES = {DType.F16: "float16", DType.BF16: "bfloat16"}
_CAI_KINDS = {"f": "float", "i": "int", "u": "uint", "c": "complex"}


class ArrayView:
    """What an operand is: pointer, shape, strides (elements), dtype name, the device index
    (None: host memory), read-only, and the object keeping the memory alive."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "itemsize", "device", "readonly", "owner")

    def __init__(self, ptr: int, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: str, itemsize: int,
                 device: Optional[int], readonly: bool, owner: Any):
        self.ptr, self.shape, self.strides = ptr, shape, strides
        self.dtype, self.itemsize, self.device, self.readonly, self.owner = dtype, itemsize, device, readonly, owner

    def stride(self, dim: Optional[int] = None) -> Any:
        return self.strides if dim is None else self.strides[dim]

    def data_ptr(self) -> int:
        return self.ptr

    def numel(self) -> int:
        return math.prod(self.shape)

    def element_size(self) -> int:
        return self.itemsize

    def dim(self) -> int:
        return len(self.shape)

    def is_contiguous(self) -> bool:
        return all(st == want for size, st, want in zip(self.shape, self.strides, contiguous_strides(self.shape))
                   if size > 1)


def is_array(obj: Any) -> bool:
    """Whether ``obj`` offers one of the protocols the array path reads."""
    return (isinstance(obj, DeviceArray) or hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack__")
            or _is_smv(obj))


@functools.lru_cache(maxsize=None)
def _smv_class() -> Any:
    try:
        from .cudacore import core

        try:
            from cuda.core.utils import StridedMemoryView
        except ImportError:
            from cuda.core.experimental.utils import StridedMemoryView
        core()
        return StridedMemoryView
    except Exception:  # no cuda-python here: only __cuda_array_interface__ is read (by from_cai)
        return None


def _is_smv(obj: Any) -> bool:
    cls = _smv_class()
    return cls is not None and isinstance(obj, cls)


def device_hint(obj: Any, devices: Any) -> Optional[int]:
    """The CUDA device ``obj`` is on (``__dlpack_device__``, else where its CUDA array interface's
    pointer lives, our DeviceArray's field), or None. Read before ``obj`` itself: producers order
    their writes in the handshake through the current device's stream (CuPy) or a stream of theirs
    that the current device has to be able to wait for, so the array's device has to be current."""
    if isinstance(obj, DeviceArray):
        return obj.device
    try:
        get = getattr(obj, "__dlpack_device__", None)
        if get is not None:
            kind, index = get()
            index = int(getattr(index, "id", index))  # CuPy gives its Device object
            return index if int(kind) in (KDL_CUDA, KDL_CUDA_MANAGED) else None
        cai = getattr(obj, "__cuda_array_interface__", None)
        ptr = int(cai["data"][0] or 0) if cai is not None else 0
        return devices.pointer_device(ptr) if ptr else None
    except Exception:  # a malformed export: reading the array reports it
        return None


def view(op: str, name: str, obj: Any, consumer_stream: int, devices: Any) -> ArrayView:
    """``obj`` as an ArrayView. Producers are asked to order their pending writes before
    ``consumer_stream`` (DLPack's and the CUDA array interface's stream handshake). Raises
    TypeError for an object that is not an array, ValueError for one that cannot be read."""
    if isinstance(obj, DeviceArray):
        devices.wait(consumer_stream, obj.stream, obj.device)
        return ArrayView(obj.ptr, obj.shape, contiguous_strides(obj.shape), obj.dtype, 2, obj.device, False, obj)
    if not is_array(obj):
        raise TypeError(f"{op}: {name} must be a CUDA array (DLPack or __cuda_array_interface__), "
                        f"got {type(obj).__name__}")
    smv = _smv_class()
    if smv is not None and getattr(devices, "strided_memory_view", True):
        stream_ptr = _dlpack_stream(obj, consumer_stream)
        try:
            if isinstance(obj, smv):
                v = obj
            elif hasattr(smv, "from_any_interface"):  # cuda.core >= 0.6 (the constructor is deprecated there)
                v = smv.from_any_interface(obj, stream_ptr=stream_ptr)
            else:
                v = smv(obj, stream_ptr=stream_ptr)
        except Exception as exc:  # read the interface ourselves below, or report why not
            if not hasattr(obj, "__cuda_array_interface__"):
                raise ValueError(f"{op}: {name} ({type(obj).__name__}) cannot be read as a CUDA array: "
                                 f"{type(exc).__name__}: {exc}") from None
        else:
            return from_smv(op, name, v, devices)
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cai(op, name, obj.__cuda_array_interface__, obj, consumer_stream, devices)
    raise ValueError(f"{op}: {name} ({type(obj).__name__}) exports DLPack only, which needs cuda-python "
                     "(cuda.core) to read")


def _dlpack_stream(obj: Any, consumer_stream: int) -> int:
    """The consumer stream as DLPack wants it: 1 for the legacy default stream (0 is not
    allowed), -1 (no handshake) for memory without CUDA streams (host arrays)."""
    device = getattr(obj, "__dlpack_device__", None)
    if device is not None and not hasattr(obj, "__cuda_array_interface__"):
        try:
            if device()[0] not in (KDL_CUDA, KDL_CUDA_MANAGED):
                return -1
        except Exception:  # the import below reports what is wrong with the object
            pass
    return consumer_stream or 1


def smv_dtype(v: Any) -> Tuple[str, int]:
    """(dtype name, itemsize) of a StridedMemoryView (bfloat16 without ml_dtypes included)."""
    try:
        dtype = v.dtype
    except NotImplementedError as exc:  # cuda.core knows bfloat16 only through ml_dtypes
        if "bfloat16" in str(exc):
            return "bfloat16", 2
        raise
    if dtype is None:
        return "unknown", 0
    try:
        return _dtype_name(dtype)
    except TypeError:  # an unhashable dtype object
        return str(dtype), int(dtype.itemsize)


@functools.lru_cache(maxsize=64)
def _dtype_name(dtype: Any) -> Tuple[str, int]:
    """(name, itemsize) of a numpy dtype: str() of one costs ~3 µs on the H100 host, and the
    array path reads one per operand per call; the handful a process sees are named once."""
    return str(dtype), int(dtype.itemsize)


def from_smv(op: str, name: str, v: Any, devices: Any) -> ArrayView:
    dtype, itemsize = smv_dtype(v)
    shape = tuple(int(s) for s in v.shape)
    strides = v.strides
    strides = contiguous_strides(shape) if strides is None else tuple(int(s) for s in strides)
    return ArrayView(int(v.ptr), shape, strides, dtype, itemsize, smv_device(v, devices), bool(v.readonly), v)


def smv_device(v: Any, devices: Any) -> Optional[int]:
    """The device of a StridedMemoryView's memory: where its pointer lives (cuda.core takes a view
    read from a CUDA array interface for device 0 where cuda.bindings misreads the ordinal, see
    runtime/pointer_query.py), its own device_id for one without a pointer."""
    if not v.is_device_accessible:
        return None
    ptr = int(v.ptr)
    device = devices.pointer_device(ptr) if ptr else None
    if device is None and v.device_id >= 0:
        return int(v.device_id)
    return device


def cai_dtype(typestr: str) -> Tuple[str, int]:
    """(dtype name, itemsize) of a ``__cuda_array_interface__`` typestr: ``<f2`` is float16;
    ``<V2`` is taken for bfloat16 (what ml_dtypes' bfloat16 reports); others are named like
    numpy's (``float32``, ``int8``, ...)."""
    try:
        kind, size = typestr[1], int(typestr[2:])
    except (IndexError, ValueError):
        return typestr, 0
    if kind == "V" and size == 2:
        return "bfloat16", 2
    if kind == "b" and size == 1:
        return "bool", 1
    return (f"{_CAI_KINDS[kind]}{8 * size}" if kind in _CAI_KINDS else typestr), size


def from_cai(op: str, name: str, cai: Dict[str, Any], owner: Any, consumer_stream: int, devices: Any) -> ArrayView:
    """A ``__cuda_array_interface__`` (version 2 or 3) read without cuda.core."""
    try:
        shape = tuple(int(s) for s in cai["shape"])
        typestr = str(cai["typestr"])
        ptr, readonly = cai["data"]
        ptr = int(ptr or 0)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{op}: {name} has a malformed __cuda_array_interface__ ({type(exc).__name__}: {exc})") from None
    if cai.get("mask") is not None:
        raise ValueError(f"{op}: {name} is a masked array (__cuda_array_interface__ 'mask'); pass its data")
    dtype, itemsize = cai_dtype(typestr)
    strides = cai.get("strides")
    if strides is None:
        strides = contiguous_strides(shape)
    else:
        if itemsize <= 0 or any(int(s) % itemsize for s in strides):
            raise ValueError(f"{op}: {name} has strides {tuple(strides)} (bytes), not multiples of its "
                             f"{itemsize}-byte {dtype} elements")
        strides = tuple(int(s) // itemsize for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"{op}: {name} has shape {shape} but strides {strides}")
    device = devices.pointer_device(ptr) if ptr else None
    producer = cai.get("stream") if int(cai.get("version", 3)) >= 3 else None
    if producer is not None:  # CAI v3: the consumer waits for the producer's stream
        devices.wait(consumer_stream, int(producer), device)
    return ArrayView(ptr, shape, strides, dtype, itemsize, device, bool(readonly), owner)


def call_stream(op: str, given: Any, a: Any) -> int:
    """The call's stream: ``stream=`` as a raw handle, else CuPy's current stream on the device
    of CuPy arrays (CuPy keeps one per device), else the legacy default stream."""
    if given is not None:
        try:
            return cudacore.stream_handle(given)
        except TypeError:
            raise TypeError(f"{op}: stream must be an int handle >= 0 or an object with __cuda_stream__, "
                            f"got {given!r}") from None
    if type(a).__module__.split(".")[0] == "cupy":
        return cupy_streams.current_stream(a.device.id)
    return 0


def check_stream_device(op: str, stream: int, device: Optional[int], devices: Any) -> None:
    """A stream of another device than the operands' cannot run the call: say so (the launch would
    fail with an invalid-argument error). The legacy and per-thread handles (0-2) are the device's."""
    if stream > 2 and device is not None:
        owner = devices.stream_device(stream)
        if owner is not None and owner != device:
            raise ValueError(f"{op}: stream={stream:#x} is a stream of cuda:{owner} but the operands are on "
                             f"cuda:{device}; pass a stream of cuda:{device}, or none (CuPy's current stream "
                             "there for CuPy arrays, else its legacy default stream)")


def note_uses(stream: int, inputs: Iterable[Any], out: Any, given: Any = None) -> None:
    """After a launch on ``stream``: our DeviceArrays among its inputs and its ``out`` are freed only
    after it (the pool hands memory freed on a stream out again to that stream's next allocation,
    even while another stream's kernels still read or write it), and ``out`` was last written there
    (``given``: the call's ``stream=`` object, which ``out`` then holds: its readers wait for that stream)."""
    for x in inputs:
        if isinstance(x, DeviceArray):
            x.used_on(stream)
    if isinstance(out, DeviceArray):
        out.used_on(stream, wrote=True, keep=given)


def new_output(like: Any, shape: Tuple[int, ...], dtype: str, device: int, stream: int,
               devices: Any, keep: Any = None) -> Tuple[Any, ArrayView]:
    """The output in the framework of ``like`` (a): CuPy (allocated on ``stream`` in CuPy's
    pool), Numba, else a DeviceArray of cuda.core memory, freed on ``stream`` (``keep``: the
    caller's ``stream=`` object, held until then, so that dropping it first cannot destroy that
    stream under the free)."""
    framework = type(like).__module__.split(".")[0]
    strides = contiguous_strides(shape)
    if framework == "cupy" and dtype == "float16":
        arr = cupy_streams.output(shape, device, stream)
        return arr, ArrayView(int(arr.data.ptr), shape, strides, dtype, 2, device, False, arr)
    if framework.startswith("numba") and dtype == "float16":
        import numpy
        from numba import cuda

        with cuda.gpus[device]:
            arr = cuda.device_array(shape, dtype=numpy.float16)
        ptr = int(arr.__cuda_array_interface__["data"][0])
        return arr, ArrayView(ptr, shape, strides, dtype, 2, device, False, arr)
    block = devices.alloc(device, stream, 2 * math.prod(shape), None if isinstance(keep, int) else keep)
    arr = DeviceArray(block, shape, dtype, device, stream, devices, getattr(devices, "dlpack_device_type", KDL_CUDA))
    return arr, ArrayView(block.ptr, shape, strides, dtype, 2, device, False, arr)
