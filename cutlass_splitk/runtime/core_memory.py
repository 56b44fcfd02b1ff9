"""Stream-ordered device memory of the array path: who gives a cuda.core Buffer back, and on
which stream (:class:`Release`), and the Workspace allocator over :class:`~.cudacore.Devices`
(:class:`CoreMemory`). Imports nothing from CUDA itself: the Buffers and streams come in."""

from __future__ import annotations

from typing import Any, Dict

from .workspace import Block


class Release:
    """Owns one cuda.core Buffer, allocated on the stream ``handle`` (``stream``: cuda.core's object
    for it) of device ``device``; gives it back on that stream when dropped.

    * The legacy and per-thread default handles (0-2) name the current context's stream, so the
      buffer's own device is made current for the free: a free ordered on another device's stream
      lets the pool hand the memory out again while this device's queued work still writes it.
    * Work that our ops queued on other streams with the memory (``events``: one event per such
      stream, recorded behind its latest use there; :meth:`after` adds one) is waited for by the
      release's stream before the free, for the same reason: the pool may hand memory freed on a
      stream out again at once to that stream's next allocation.
    """

    def __init__(self, buffer: Any, stream: Any, handle: int, device: int, devices: Any):
        self.buffer, self.stream, self.handle, self.device, self.devices = buffer, stream, handle, device, devices
        self.events: Dict[int, Any] = {}  # stream handle -> (event, its context) recorded behind our use there

    def after(self, stream: int, event: Any) -> None:
        """The free waits for ``event`` (recorded on ``stream``; it replaces that stream's earlier one)."""
        previous = self.events.pop(stream, None)
        self.events[stream] = event
        if previous is not None:
            self.devices.drop_event(previous)

    def __del__(self) -> None:
        previous = None
        try:
            if self.handle <= 2 or self.events:
                previous = self.devices.enter(self.device)
            for event in self.events.values():
                self.devices.wait_event(self.handle, event)
            try:
                self.buffer.close(self.stream)
            except Exception:  # the stream is gone: release on the buffer's own (default) stream
                self.buffer.close()
        except Exception:  # interpreter shutdown, or the context is gone
            pass
        finally:
            if previous is not None:
                try:
                    self.devices.leave(previous)
                except Exception:
                    pass


class CoreMemory:
    """The Workspace allocator of the array path: cuda.core memory (``device``: an index)."""

    def __init__(self, devices: Any):
        self.devices = devices

    def zeros(self, device: int, stream: int, words: int) -> Block:
        block = self.devices.alloc(device, stream, words * 4)
        self.devices.memset(block.ptr, words * 4, stream)
        return block

    def empty(self, device: int, stream: int, words: int) -> Block:
        return self.devices.alloc(device, stream, words * 4)
