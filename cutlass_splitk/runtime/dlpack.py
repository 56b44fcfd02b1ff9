"""The arrays the library allocates for callers that are not torch (and not CuPy or Numba, which
get their own arrays): :class:`DeviceArray`, C-contiguous memory from cuda.core exported through
DLPack (``torch.from_dlpack``, ``cupy.from_dlpack``, ``jax.dlpack.from_dlpack``,
``numpy.from_dlpack`` for host memory) and ``__cuda_array_interface__`` (CuPy, Numba).

The DLPack capsules are built here with ctypes (``DLManagedTensor`` or, when the consumer asks
for version 1, ``DLManagedTensorVersioned``), so any cuda.core version will do and the export
is testable on the CPU (a host-memory DeviceArray exports as kDLCPU).
"""

from __future__ import annotations

import ctypes
import math
import threading
from typing import Any, Dict, Optional, Tuple

from .workspace import Block

KDL_CPU, KDL_CUDA = 1, 2
DTYPES = {"float16": (2, 16, "<f2"), "bfloat16": (4, 16, "<V2")}  # name -> (DLPack code, bits, CAI typestr)
READ_ONLY = 1


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]


_LIVE: Dict[int, Tuple[Any, ...]] = {}  # address of an exported tensor -> what keeps it valid
_LIVE_LOCK = threading.Lock()
_NAMES = (ctypes.create_string_buffer(b"dltensor"), ctypes.create_string_buffer(b"dltensor_versioned"))


@_DELETER
def _delete(address: int) -> None:  # the tensor's deleter: its consumer is done with it
    with _LIVE_LOCK:
        _LIVE.pop(address, None)


@_DELETER
def _destroy_capsule(capsule: int) -> None:  # a capsule nobody consumed
    for name in _NAMES:
        if _capsule_is_valid(capsule, name):
            _delete(_capsule_pointer(capsule, name))


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _DELETER]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


def capsule(owner: Any, ptr: int, shape: Tuple[int, ...], dtype: str, device: Tuple[int, int],
            versioned: bool, readonly: bool = False) -> Any:
    """A DLPack capsule of the C-contiguous array at ``ptr``; ``owner`` stays alive until the
    consumer calls the deleter (or the capsule is dropped unconsumed)."""
    code, bits, _ = DTYPES[dtype]
    n = len(shape)
    sizes = (ctypes.c_int64 * max(n, 1))(*shape)
    strides = (ctypes.c_int64 * max(n, 1))(*contiguous_strides(shape))
    managed = _ManagedVersioned() if versioned else _Managed()
    if versioned:
        managed.major, managed.minor = 1, 0
        managed.flags = READ_ONLY if readonly else 0
    t = managed.dl_tensor
    t.data = ptr or None
    t.device.device_type, t.device.device_id = device
    t.ndim = n
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = ctypes.cast(sizes, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    managed.deleter = _delete
    address = ctypes.addressof(managed)
    with _LIVE_LOCK:
        _LIVE[address] = (managed, sizes, strides, owner)
    return _capsule_new(address, _NAMES[1] if versioned else _NAMES[0], _destroy_capsule)


def contiguous_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """Row-major strides in elements."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class DeviceArray:
    """A C-contiguous CUDA array the library allocated: ``ptr``, ``shape``, ``dtype``
    (``"float16"`` / ``"bfloat16"``), ``device`` (index) and ``stream`` (the stream last written
    on: DLPack and CUDA-array-interface consumers wait for it). Also usable as an op's input."""

    def __init__(self, block: Block, shape: Tuple[int, ...], dtype: str, device: int, stream: int,
                 devices: Any, device_type: int = KDL_CUDA):
        self.block = block
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.stream = stream
        self.devices = devices
        self.device_type = device_type
        self.stream_owner: Any = None  # the stream= object of the call that last wrote it as out=, held

    ptr = property(lambda self: self.block.ptr)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = 2
    nbytes = property(lambda self: self.size * 2)

    def used_on(self, stream: int, wrote: bool = False, keep: Any = None) -> None:
        """One of our ops queued work with this array on ``stream`` (writing it where ``wrote``): its
        memory is freed only after that work, and a writer's stream is the one later readers wait for
        (``keep``: the writer's stream object, held so that it outlives the waits on it)."""
        if wrote:
            self.stream = stream
            self.stream_owner = None if isinstance(keep, int) else keep
        self.devices.order_release(self.block, stream, self.device)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device}, ptr={self.ptr:#x})"

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        return {"shape": self.shape, "typestr": DTYPES[self.dtype][2], "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": self.stream or 1}

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (self.device_type, self.device if self.device_type == KDL_CUDA else 0)

    def __dlpack__(self, *, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"DeviceArray lives on {self.__dlpack_device__()}, not {tuple(dl_device)}")
        if copy:
            raise BufferError("DeviceArray exports its own memory only (copy=True is not supported)")
        if self.device_type == KDL_CUDA and stream != -1:
            # None and 1: the legacy default stream; 2: the per-thread one; else a handle
            previous = self.devices.enter(self.device)
            try:
                self.devices.wait(1 if stream is None else stream, self.stream or 1)
            finally:
                self.devices.leave(previous)
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        return capsule(self, self.ptr, self.shape, self.dtype, self.__dlpack_device__(), versioned)
