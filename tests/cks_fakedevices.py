"""Host memory standing in for CUDA device memory, for the array path's CPU tests.

``FakeDevices`` has the methods of ``cutlass_splitk.runtime.cudacore.Devices``: memory it
allocates, and memory registered with ``register``, counts as device memory of a chosen device
(``pointer_device``); everything else is host memory. Copies and memsets run at once (ctypes);
stream waits and context switches are recorded. DeviceArrays it backs export as kDLCPU, so
``numpy.from_dlpack`` reads them. ``FakeArray`` is a CUDA-array-interface object over such memory.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from cutlass_splitk.runtime.dlpack import KDL_CPU
from cutlass_splitk.runtime.workspace import Block


class FakeDevices:
    dlpack_device_type = KDL_CPU
    strided_memory_view = True  # cuda.core is tried first, as on a GPU (it cannot read device pointers here)

    def __init__(self, current: int = 0):
        self.current = current
        self.ranges: Dict[int, Tuple[int, int]] = {}  # start -> (end, device)
        self.waits: List[Tuple[int, int]] = []
        self.wait_devices: List[Optional[int]] = []  # the device each wait named its legacy handles on
        self.stream_devices: Dict[int, int] = {}  # stream handle -> its device (others: unknown)
        self.allocations: List[Tuple[int, int, int]] = []  # (device, stream, nbytes)
        self.entered: List[int] = []
        self.alloc_streams: Dict[int, int] = {}  # pointer -> the stream it was allocated (and is freed) on
        self.release_orders: List[Tuple[int, int]] = []  # (pointer, stream whose work its free waits for)
        self.kept: Dict[int, Any] = {}  # pointer -> the stream object its free holds (alloc's keep)
        self.copies = 0

    def register(self, ptr: int, nbytes: int, device: int = 0) -> None:
        self.ranges[ptr] = (ptr + max(nbytes, 1), device)

    def current_device(self) -> int:
        return self.current

    def enter(self, index: int) -> Any:
        self.entered.append(index)
        return None

    def leave(self, previous: Any) -> None:
        pass

    def pointer_device(self, ptr: int) -> Optional[int]:
        for start, (end, device) in self.ranges.items():
            if start <= ptr < end:
                return device
        return None

    def stream_device(self, handle: int) -> Optional[int]:
        return self.stream_devices.get(handle)

    def alloc(self, index: int, stream: int, nbytes: int, keep: Any = None) -> Block:
        if nbytes <= 0:
            return Block(0, 0, None)
        buf = (ctypes.c_char * nbytes)()
        ctypes.memset(buf, 0x7F, nbytes)  # never zero by accident
        ptr = ctypes.addressof(buf)
        self.register(ptr, nbytes, index)
        self.allocations.append((index, stream, nbytes))
        self.alloc_streams[ptr] = stream
        self.kept[ptr] = keep
        return Block(ptr, nbytes, buf)

    def order_release(self, block: Block, stream: int, device: int) -> None:
        if self.alloc_streams.get(block.ptr, stream) != stream:
            self.release_orders.append((block.ptr, stream))

    def memset(self, ptr: int, nbytes: int, stream: int) -> None:
        ctypes.memset(ptr, 0, nbytes)

    def copy2d(self, dst: int, dpitch: int, src: int, spitch: int, width: int, rows: int, stream: int) -> None:
        self.copies += 1
        for r in range(rows):
            ctypes.memmove(dst + r * dpitch, src + r * spitch, width)

    def wait(self, consumer: int, producer: int, device: Optional[int] = None) -> None:
        if consumer != producer:
            self.waits.append((consumer, producer))
            self.wait_devices.append(device)


class FakeArray:
    """A numpy array's memory seen through ``__cuda_array_interface__`` (registered as device
    memory of ``device`` unless ``host``). ``cai`` overrides entries of the interface."""

    def __init__(self, values: np.ndarray, devices: Optional[FakeDevices] = None, device: int = 0,
                 host: bool = False, **cai: Any):
        self.data = data = values
        if devices is not None and not host:
            devices.register(data.ctypes.data, data.nbytes, device)
        typestr = "<V2" if data.dtype == np.uint16 else data.dtype.str  # uint16 storage stands for bfloat16
        self._cai = {"shape": data.shape, "typestr": typestr, "data": (data.ctypes.data, False), "version": 3,
                     "strides": data.strides, "stream": None}
        self._cai.update(cai)

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        return dict(self._cai)


def f16(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float16)
