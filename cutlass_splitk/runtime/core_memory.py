"""Stream-ordered device memory of the array path: who gives a cuda.core Buffer back, and on
which stream (:class:`Release`), and the Workspace allocator over :class:`~.cudacore.Devices`
(:class:`CoreMemory`). Imports nothing from CUDA itself: the Buffers and streams come in."""

from __future__ import annotations

from typing import Any, Dict, Iterable

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
    * ``keep``: the caller's stream object (a cuda.core, CuPy or Numba stream): held until the free,
      so that dropping it cannot destroy the stream this buffer is freed on first.
    * :meth:`retire` frees at once on the legacy default stream instead, for a caller that has
      synchronised the device: the workspace's sets whose streams may be gone (no stream vouched for).
    """

    def __init__(self, buffer: Any, stream: Any, handle: int, device: int, devices: Any, keep: Any = None):
        self.buffer, self.stream, self.handle, self.device, self.devices = buffer, stream, handle, device, devices
        self.keep = keep
        self.events: Dict[int, Any] = {}  # stream handle -> (event, its context) recorded behind our use there

    def after(self, stream: int, event: Any) -> None:
        """The free waits for ``event`` (recorded on ``stream``; it replaces that stream's earlier one)."""
        previous = self.events.pop(stream, None)
        self.events[stream] = event
        if previous is not None:
            self.devices.drop_event(previous)

    def retire(self) -> None:
        """Frees the buffer now, on its device's legacy default stream, not on its own (which may have
        been destroyed): only once the device has been synchronised, so that no queued work uses it."""
        buffer, self.buffer = self.buffer, None
        events, self.events = self.events, {}
        if buffer is None:
            return
        previous = self.devices.enter(self.device)
        try:
            for event in events.values():
                self.devices.drop_event(event)
            buffer.close(self.devices.stream_object(self.device, 0))
        finally:
            self.devices.leave(previous)

    def __del__(self) -> None:
        if self.buffer is None:  # retired
            return
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

    def retire(self, blocks: Iterable[Block]) -> None:
        """Frees ``blocks`` whose streams nobody vouches for (``Workspace.release(None)``, the
        workspace's end): each device they are on is synchronised (its queued work, on every stream,
        is done), then each is freed on that device's legacy default stream, which exists as long as
        the context does (freeing on a stream that was destroyed crashes the process). A device that
        fails to synchronise (its context is broken: nothing of it runs any more) has its blocks freed
        all the same, and the first such error is raised after every block is freed."""
        releases = [b.owner for b in blocks if isinstance(b.owner, Release)]
        failed = None
        for device in sorted({r.device for r in releases}):
            try:
                self.devices.synchronize(device)
            except Exception as exc:  # noqa: BLE001 (a broken context: its memory is freed anyway, then raised)
                failed = failed or exc
        for r in releases:
            try:
                r.retire()
            except Exception as exc:  # noqa: BLE001 (the others are freed first)
                failed = failed or exc
        if failed is not None:
            raise failed
