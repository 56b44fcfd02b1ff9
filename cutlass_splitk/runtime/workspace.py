"""Workspace per (device, stream): semaphores (serial split-K) and partials (parallel split-K).

* Semaphores: int32, zero-filled when allocated. A completed serial launch leaves them zero,
  so a buffer is reused without a memset. One buffer per stream: two streams never share
  one, since their launches may overlap.
* Partials: float32, uninitialised, grown on demand.

Where the memory comes from is the workspace's allocator: torch's caching allocator for the
torch path (:class:`TorchMemory`), cuda.core's memory resources for any other CUDA array
(``core_memory.CoreMemory``). Buffers are allocated on the stream that uses them and released on
it, so stream-ordered reuse keeps a replaced buffer alive until the work queued before it is
done. Each buffer is a :class:`Block` (pointer, size, and the object owning the memory).

``SCRATCH`` hands out fresh torch buffers instead (semaphores zero-filled on the stream),
freed when the launch has been queued: what the torch.compile custom op uses, since cudagraph
trees do not allow an op to keep tensors from their pool alive between calls.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, Hashable, List, NamedTuple, Optional, Tuple


class Block(NamedTuple):
    ptr: int
    nbytes: int
    owner: Any  # keeps the memory alive; releases it when dropped


class _Buffers:
    """One (device, stream)'s buffers. Read without a lock on the fast path: a buffer is
    replaced by assigning a whole Block."""

    __slots__ = ("semaphores", "partials")

    def __init__(self) -> None:
        self.semaphores: Optional[Block] = None
        self.partials: Optional[Block] = None

    def blocks(self) -> List[Block]:
        return [b for b in (self.semaphores, self.partials) if b is not None]


EXACT_GROWTH_WORDS = 1 << 26  # buffers up to 256 MB grow to powers of two; larger ones by eighths


def _words(nbytes: int, minimum: int) -> int:
    """The words (4 bytes) a buffer of at least ``nbytes`` gets: the next power of two, so that a
    growing buffer is replaced a few times only; past ``EXACT_GROWTH_WORDS``, the next multiple of
    an eighth of the power of two below it (at most 12.5 % over: a 17 GB parallel split-K workspace
    must not ask for 34)."""
    words = max(minimum, -(-nbytes // 4), 1)
    if words <= EXACT_GROWTH_WORDS:
        return 1 << (words - 1).bit_length()
    step = 1 << ((words - 1).bit_length() - 4)
    return -(-words // step) * step


class TorchMemory:
    """Blocks from torch's caching allocator (``device``: a torch.device), allocated while
    the stream that uses them is current."""

    @staticmethod
    def zeros(device: Any, stream: int, words: int) -> Block:
        import torch

        t = torch.zeros(words, dtype=torch.int32, device=device)
        return Block(t.data_ptr(), words * 4, t)

    @staticmethod
    def empty(device: Any, stream: int, words: int) -> Block:
        import torch

        t = torch.empty(words, dtype=torch.float32, device=device)
        return Block(t.data_ptr(), words * 4, t)


class Workspace:
    """Owned by one Library per allocator; keyed by (device, raw cudaStream_t handle).

    An allocator with a ``retire(blocks)`` method (``CoreMemory``) frees there what no stream is
    vouched for: every set at ``release(None)`` and at the workspace's end (collected, or the
    interpreter exiting), since a set's stream may have been destroyed meanwhile."""

    def __init__(self, memory: Any = None):
        self.memory = memory if memory is not None else TorchMemory()
        self._buffers: Dict[Tuple[Hashable, int], _Buffers] = {}
        if hasattr(self.memory, "retire"):
            weakref.finalize(self, _retire_all, self._buffers, self.memory)
        self._lock = threading.Lock()
        self.generation = 0  # bumped by clear(), for whoever keeps a _Buffers
        self.on_change: List[Callable[[], None]] = []  # called when a block is replaced or cleared (native.py)

    def get(self, device: Hashable, stream: int) -> Optional[_Buffers]:
        """The buffers of (device, stream) if any (no lock: the fast path's read)."""
        return self._buffers.get((device, stream))

    def _get(self, device: Hashable, stream: int) -> _Buffers:
        buf = self._buffers.get((device, stream))
        if buf is None:
            with self._lock:
                buf = self._buffers.setdefault((device, stream), _Buffers())
        return buf

    def semaphores(self, device: Hashable, stream: int, nbytes: int) -> Block:
        return self._sized(device, stream, "semaphores", nbytes, self.memory.zeros, 1024)

    def partials(self, device: Hashable, stream: int, nbytes: int) -> Block:
        return self._sized(device, stream, "partials", nbytes, self.memory.empty, 1 << 16)

    def _sized(self, device: Hashable, stream: int, slot: str, nbytes: int, allocate: Callable[..., Block],
               minimum: int) -> Block:
        """(device, stream)'s buffer ``slot`` if it holds ``nbytes``, else a larger one. The old buffer
        goes first (freed on its stream, which is this one: the new one may reuse its memory), so that
        growing needs the new size only, not both; the fast paths hear of it even if the allocation fails."""
        buf = self._get(device, stream)
        block = getattr(buf, slot)
        if block is None or block.nbytes < nbytes:
            setattr(buf, slot, None)
            try:
                block = allocate(device, stream, _words(nbytes, minimum))
                setattr(buf, slot, block)
            finally:
                self._changed()
        return block

    def clear(self) -> None:
        self.release(None)

    def release(self, stream: Optional[int]) -> int:
        """Drops the buffers of ``stream`` (a raw handle) on every device, or all buffers where it
        is None; returns how many (device, stream) sets went. Each buffer of a given stream is freed
        on it, behind the work queued there; all of them (None) go through the allocator's
        ``retire`` where it has one (the devices synchronised, then freed on streams that surely
        exist). Fast paths holding a set fetch it again."""
        with self._lock:
            gone = [key for key in self._buffers if stream is None or key[1] == stream]
            blocks: List[Block] = []  # freed outside the lock: as this list goes, or retired
            for key in gone:
                buf = self._buffers.pop(key)
                blocks += buf.blocks()
                buf.semaphores = buf.partials = None  # a fast path still holding the set lets the memory go too
            self.generation += 1
        try:
            if stream is None and hasattr(self.memory, "retire"):
                self.memory.retire(blocks)
        finally:
            del blocks
            self._changed()
        return len(gone)

    def _changed(self) -> None:
        for hook in self.on_change:
            hook()


def _retire_all(buffers: Dict[Tuple[Hashable, int], _Buffers], memory: Any) -> None:
    """A workspace's end: its allocator retires every block left (errors are dropped: the
    process may be exiting)."""
    blocks = [b for buf in buffers.values() for b in buf.blocks()]
    buffers.clear()
    try:
        memory.retire(blocks)
    except Exception:  # noqa: BLE001
        pass


class _Scratch:
    """The Workspace interface with a fresh torch buffer per launch (stream-ordered reuse by
    the caching allocator makes freeing it right after the launch is queued safe)."""

    @staticmethod
    def semaphores(device: Any, stream: int, nbytes: int) -> Block:
        return TorchMemory.zeros(device, stream, max(1, -(-nbytes // 4)))

    @staticmethod
    def partials(device: Any, stream: int, nbytes: int) -> Block:
        return TorchMemory.empty(device, stream, max(1, -(-nbytes // 4)))


SCRATCH = _Scratch()
