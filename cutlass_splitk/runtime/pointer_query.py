"""Where a pointer lives, asked of libcuda directly (cuPointerGetAttributes through ctypes):
cuda.bindings 13.x reads the device ordinal back from a field the driver never wrote, so through
it every pointer reads as device 0 (NVIDIA/cuda-python#2928; seen with cuda.bindings 13.3.1 on
two H100s). :meth:`.cudacore.Devices.pointer_device` uses this where libcuda can be loaded."""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Callable, Optional, Tuple

CU_MEMORYTYPE_DEVICE = 2  # CUmemorytype


@functools.lru_cache(maxsize=1)
def libcuda_query() -> Optional[Callable[[int], Tuple[int, int]]]:
    """query(ptr) -> (memory type, device ordinal), one cuPointerGetAttributes call; None where
    libcuda cannot be loaded."""
    try:
        lib = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
    except OSError:
        return None
    fn = lib.cuPointerGetAttributes
    fn.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64]
    fn.restype = ctypes.c_int
    attributes = (ctypes.c_int * 2)(2, 9)  # CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL

    def query(ptr: int) -> Tuple[int, int]:
        kind, ordinal = ctypes.c_uint(0), ctypes.c_int(-2)
        data = (ctypes.c_void_p * 2)(ctypes.addressof(kind), ctypes.addressof(ordinal))
        if fn(2, attributes, data, ptr) != 0:  # not a pointer CUDA knows (no error for host memory)
            return 0, -2
        return kind.value, ordinal.value

    return query
