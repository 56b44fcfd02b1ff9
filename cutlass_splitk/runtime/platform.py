"""What the runtime asks of the machine, behind one replaceable object: the current device
and stream of the torch path, a device's properties for the dispatch model, the device key of
the tuning cache, whether tensors must be on a CUDA device, and (``devices``) the array path's
CUDA access (:class:`~.cudacore.Devices`: pointers, streams, cuda.core memory).

Device properties come from cuda.core (:func:`~.cudacore.hardware`), so dispatching needs no
torch; torch is imported only for the torch path's current device and stream, and only when it
is installed (:func:`torch_or_none`).

A :class:`~cutlass_splitk.runtime.library.Library` takes a platform (default
:class:`CudaPlatform`); the CPU tests pass one that accepts CPU tensors, models a GPU and
fakes device memory with host memory.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import warnings
from typing import Any, Callable, Dict, Optional

from . import clusters, cudacore
from .dispatch import DeviceInfo
from .placement import Placement, measure as measure_placement

PLACEMENT_TRIES = 8  # measurements of a device's placement that may come back unsteady before it is given up


@functools.lru_cache(maxsize=None)
def torch_or_none() -> Any:
    """The torch module if it can be imported, else None (the runtime then takes non-torch
    arrays only)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def driver_version() -> int:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        return v.value if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else 0
    except OSError:
        return 0


class CudaPlatform:
    """The real one: device properties from cuda.core, torch's current device and streams
    for torch tensors, cuda.core / cuda.bindings for every other array."""

    #: Whether operands may be CPU tensors (never, for a real launch).
    accepts_cpu = False

    def __init__(self, devices: Any = None) -> None:
        self.devices = devices if devices is not None else cudacore.Devices()
        self._hardware: Dict[int, cudacore.Hardware] = {}
        self.hardware_source: Dict[int, str] = {}
        self._keys: Dict[int, str] = {}
        self._infos: Dict[int, DeviceInfo] = {}  # device_info's, read on every new problem
        self._placements: Dict[int, Optional[Placement]] = {}  # final answers (None: given up)
        self._placement_tries: Dict[int, int] = {}
        self.placement_error: Dict[int, str] = {}  # why a device has no placement, where the driver refused
        self._lock = threading.Lock()
        self._raw_stream: Optional[Callable[[int], int]] = None

    def current_device(self) -> int:
        torch = torch_or_none()
        if torch is not None:
            return torch.cuda.current_device()
        return self.devices.current_device()

    def device_index(self, device: Any) -> int:
        """The CUDA device index the library launches on for operands on ``device`` (a
        torch.device)."""
        return device.index

    def stream(self, index: int) -> int:
        """The raw cudaStream_t of the device's current torch stream (cheap: no Stream object); without
        torch, 0: the legacy default stream, the array path's default too."""
        return self.stream_function()(index)

    def stream_function(self) -> Callable[[int], int]:
        """``stream`` as the cheapest callable: torch's own C function where a subclass does
        not override ``stream`` (the fast path calls it on every launch)."""
        if type(self).stream is not CudaPlatform.stream:
            return self.stream
        raw = self._raw_stream
        if raw is None:
            torch = torch_or_none()
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None) if torch is not None else lambda i: 0
            if raw is None:
                def raw(i: int) -> int:
                    return int(torch.cuda.current_stream(i).cuda_stream)
            self._raw_stream = raw
        return raw

    def hardware(self, index: int) -> cudacore.Hardware:
        """The device's properties (name, SMs, compute capability, L2, shared memory per SM,
        DRAM bandwidth), read once through cuda.core (through torch, with a warning, where
        cuda.core cannot and torch is installed: ``hardware_source`` says which)."""
        with self._lock:
            if index not in self._hardware:
                self._hardware[index] = self._read_hardware(index)
            return self._hardware[index]

    def _read_hardware(self, index: int) -> cudacore.Hardware:
        try:
            hw = cudacore.hardware(index)
            self.hardware_source[index] = "cuda.core"
            return hw
        except Exception as exc:
            torch = torch_or_none()
            if torch is None:
                raise
            warnings.warn(f"cuda.core could not read device {index}'s properties ({type(exc).__name__}: {exc}); "
                          "using torch's", RuntimeWarning, stacklevel=4)
        p = torch.cuda.get_device_properties(index)
        self.hardware_source[index] = "torch"
        return cudacore.Hardware(p.name, p.multi_processor_count, p.major, p.minor, p.L2_cache_size,
                                 getattr(p, "shared_memory_per_multiprocessor", 0), 0.0)

    def device_info(self, index: int) -> DeviceInfo:
        """The time model's view of the device (one object per device: the launcher's cached
        rankings recognise it by identity)."""
        info = self._infos.get(index)
        if info is None:
            hw = self.hardware(index)
            quads = clusters.cluster4_ctas(index, hw.major)  # CTAs in clusters of four (0: the driver cannot say)
            info = DeviceInfo.from_properties(hw.name, hw.sm_count, hw.major, hw.minor, quads)
            info = self._infos.setdefault(index, info)
        return info

    def placement(self, index: int, stream: int = 0) -> Optional[Placement]:
        """Where device ``index`` puts the clusters of a launch (:mod:`.placement`), measured
        behind ``stream`` the first time it is asked outside a capture; None until then, and
        for good where the driver refuses the probe or it came back unsteady PLACEMENT_TRIES times."""
        with self._lock:
            if index in self._placements:
                return self._placements[index]
            tries = self._placement_tries.get(index, 0) + 1
            try:
                found = measure_placement(index, stream)
            except Exception as exc:  # an old driver or cuda.bindings, no JIT: CUTLASS's order serves
                self.placement_error[index] = f"{type(exc).__name__}: {exc}"
                found, tries = None, PLACEMENT_TRIES
            self._placement_tries[index] = tries
            if found is not None or tries >= PLACEMENT_TRIES:
                self._placements[index] = found
            return found

    def device_key(self, index: int) -> str:
        """The device part of a tuning cache key: name, compute capability, CUDA (torch's
        build when torch is installed, else cuda-python's) and driver."""
        with self._lock:
            if index not in self._keys:
                hw = self._hardware.get(index) or self._read_hardware(index)
                self._hardware[index] = hw
                torch = torch_or_none()
                cuda = torch.version.cuda if torch is not None else cudacore.runtime_version()
                self._keys[index] = f"{hw.name}|sm{hw.major}{hw.minor}|cuda{cuda}|driver{driver_version()}"
            return self._keys[index]
