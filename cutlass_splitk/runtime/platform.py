"""What the runtime asks of the machine, behind one replaceable object: the current device
and stream, a device's properties for the dispatch model, the device key of the tuning
cache, and whether tensors must be on a CUDA device.

A :class:`~cutlass_splitk.runtime.library.Library` takes a platform (default
:class:`CudaPlatform`); the CPU tests pass one that accepts CPU tensors and models a GPU.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Dict

import torch

from .dispatch import DeviceInfo


def driver_version() -> int:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        return v.value if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else 0
    except OSError:
        return 0


class CudaPlatform:
    """The real one: torch's CUDA devices and current streams."""

    #: Whether operands may be CPU tensors (never, for a real launch).
    accepts_cpu = False

    def __init__(self) -> None:
        self._infos: Dict[int, DeviceInfo] = {}
        self._keys: Dict[int, str] = {}
        self._lock = threading.Lock()

    def current_device(self) -> int:
        return torch.cuda.current_device()

    def device_index(self, device: torch.device) -> int:
        """The CUDA device index the library launches on for operands on ``device``."""
        return device.index

    def stream(self, index: int) -> int:
        """The raw cudaStream_t of the device's current stream (cheap: no Stream object)."""
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return int(raw(index))
        return int(torch.cuda.current_stream(index).cuda_stream)

    def device_info(self, index: int) -> DeviceInfo:
        with self._lock:
            if index not in self._infos:
                p = torch.cuda.get_device_properties(index)
                self._infos[index] = DeviceInfo.from_properties(p.name, p.multi_processor_count, p.major, p.minor)
            return self._infos[index]

    def device_key(self, index: int) -> str:
        """The device part of a tuning cache key: name, compute capability, CUDA and driver."""
        with self._lock:
            if index not in self._keys:
                p = torch.cuda.get_device_properties(index)
                self._keys[index] = (f"{p.name}|sm{p.major}{p.minor}|cuda{torch.version.cuda}|"
                                     f"driver{driver_version()}")
            return self._keys[index]
