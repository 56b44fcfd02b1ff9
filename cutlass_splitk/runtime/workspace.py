"""Workspace per (device, stream), from torch's caching allocator.

* Semaphores (serial split-K): int32, zero-filled when allocated. A completed serial launch
  leaves them zero, so a buffer is reused without a memset. One buffer per stream: two
  streams never share one, since their launches may overlap.
* Partials (parallel split-K): float32, uninitialised, grown on demand.

Buffers are allocated on the stream that uses them, so the caching allocator's
stream-ordered reuse keeps a replaced buffer alive until the work queued before it is done.

``SCRATCH`` hands out fresh buffers instead (semaphores zero-filled on the stream), freed when
the launch has been queued: what the torch.compile custom op uses, since cudagraph trees do
not allow an op to keep tensors from their pool alive between calls.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import torch


@dataclass
class _Buffers:
    semaphores: Optional[torch.Tensor] = None
    partials: Optional[torch.Tensor] = None


@dataclass
class Workspace:
    """Owned by one Library; keyed by (device index, raw cudaStream_t handle). The caller
    allocates while that stream is current, so the tensors belong to it."""

    _buffers: Dict[Tuple[int, int], _Buffers] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _get(self, device: torch.device, stream: int) -> _Buffers:
        key = (device.index, stream)
        with self._lock:
            return self._buffers.setdefault(key, _Buffers())

    def semaphores(self, device: torch.device, stream: int, nbytes: int) -> torch.Tensor:
        buf = self._get(device, stream)
        if buf.semaphores is None or buf.semaphores.numel() * 4 < nbytes:
            words = max(1024, 1 << (max(nbytes // 4, 1) - 1).bit_length())
            buf.semaphores = torch.zeros(words, dtype=torch.int32, device=device)
        return buf.semaphores

    def partials(self, device: torch.device, stream: int, nbytes: int) -> torch.Tensor:
        buf = self._get(device, stream)
        if buf.partials is None or buf.partials.numel() * 4 < nbytes:
            words = max(1 << 16, 1 << (max(nbytes // 4, 1) - 1).bit_length())
            buf.partials = torch.empty(words, dtype=torch.float32, device=device)
        return buf.partials

    def clear(self) -> None:
        with self._lock:
            self._buffers.clear()


class _Scratch:
    """The Workspace interface with a fresh buffer per launch (stream-ordered reuse by the
    caching allocator makes freeing it right after the launch is queued safe)."""

    @staticmethod
    def semaphores(device: torch.device, stream: int, nbytes: int) -> torch.Tensor:
        return torch.zeros(max(1, -(-nbytes // 4)), dtype=torch.int32, device=device)

    @staticmethod
    def partials(device: torch.device, stream: int, nbytes: int) -> torch.Tensor:
        return torch.empty(max(1, -(-nbytes // 4)), dtype=torch.float32, device=device)


SCRATCH = _Scratch()
