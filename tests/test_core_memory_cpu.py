"""The array path's workspace memory on the CPU (runtime/core_memory.py): a set freed for a given
stream goes back on that stream behind the events of other streams' uses; every set freed at once
(``release_workspace()`` with no stream, or the workspace's end) goes back on each device's legacy
default stream after that device is synchronised, never on its own stream, which may have been
destroyed (freeing on a destroyed stream crashed the process)."""

from __future__ import annotations

import gc

import pytest

from cutlass_splitk.runtime.core_memory import CoreMemory, Release
from cutlass_splitk.runtime.errors import KernelError
from cutlass_splitk.runtime.workspace import Block, Workspace

LEGACY = "legacy"


class Buffer:
    """A cuda.core Buffer's close(), recorded in the log as ("close", pointer, stream object)."""

    def __init__(self, ptr, log):
        self.ptr, self.log = ptr, log

    def close(self, stream=None):
        self.log.append(("close", self.ptr, stream))


class Devices:
    """The methods of cudacore.Devices that Release and CoreMemory call, recorded in order in ``log``;
    allocations are Releases of recorded Buffers (stream objects: ("stream", handle))."""

    def __init__(self, fail_sync=()):
        self.log, self.fail_sync, self.next_ptr = [], set(fail_sync), 0x1000

    def alloc(self, index, stream, nbytes, keep=None):
        self.next_ptr += 0x1000
        release = Release(Buffer(self.next_ptr, self.log), ("stream", stream), stream, index, self, keep)
        return Block(self.next_ptr, nbytes, release)

    def memset(self, ptr, nbytes, stream):
        pass

    def enter(self, index):
        self.log.append(("enter", index))
        return index

    def leave(self, previous):
        self.log.append(("leave", previous))

    def synchronize(self, index):
        self.log.append(("sync", index))
        if index in self.fail_sync:
            raise KernelError("cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS")

    def stream_object(self, index, handle):
        assert handle == 0
        return LEGACY

    def wait_event(self, stream, event):
        self.log.append(("wait", stream, event))

    def drop_event(self, event):
        self.log.append(("drop", event))


def filled(devices, keys):
    """A Workspace over CoreMemory(devices) with semaphores and partials for each (device, stream)."""
    work = Workspace(CoreMemory(devices))
    ptrs = {}
    for device, stream in keys:
        ptrs[device, stream] = (work.semaphores(device, stream, 64).ptr, work.partials(device, stream, 4096).ptr)
    devices.log.clear()
    return work, ptrs


def closes(log):
    """The (pointer, stream object) of each free, sorted."""
    return sorted((e[1], e[2]) for e in log if e[0] == "close")


def test_release_of_one_stream_frees_on_that_stream_without_a_sync():
    devices = Devices()
    work, ptrs = filled(devices, [(0, 7), (1, 7), (0, 9)])
    work.get(0, 7).partials.owner.after(11, "event-on-11")  # a use on stream 11: the free waits for it
    assert work.release(7) == 2
    gc.collect()
    assert closes(devices.log) == sorted((p, ("stream", 7)) for key in ((0, 7), (1, 7)) for p in ptrs[key])
    assert ("wait", 7, "event-on-11") in devices.log
    assert not [e for e in devices.log if e[0] == "sync"]
    assert work.get(0, 9) is not None


def test_release_of_every_set_syncs_each_device_once_then_frees_on_the_legacy_stream():
    devices = Devices()
    work, ptrs = filled(devices, [(1, 7), (0, 7), (0, 9)])
    work.get(0, 9).partials.owner.after(11, "event-on-11")
    assert work.release(None) == 3
    syncs = [e for e in devices.log if e[0] == "sync"]
    assert syncs == [("sync", 0), ("sync", 1)]
    first_close = min(i for i, e in enumerate(devices.log) if e[0] == "close")
    assert first_close > max(i for i, e in enumerate(devices.log) if e[0] == "sync")
    assert closes(devices.log) == sorted((p, LEGACY) for pair in ptrs.values() for p in pair)
    assert ("drop", "event-on-11") in devices.log and not [e for e in devices.log if e[0] == "wait"]
    device_of = {p: d for (d, _), pair in ptrs.items() for p in pair}
    for i, e in enumerate(devices.log):  # each free with its own device current (the legacy stream is the context's)
        if e[0] == "close":
            assert [x for x in devices.log[:i] if x[0] == "enter"][-1] == ("enter", device_of[e[1]])
    devices.log.clear()
    gc.collect()
    assert devices.log == []  # nothing is freed twice


def test_a_failed_sync_still_frees_every_block_then_raises():
    devices = Devices(fail_sync={0})
    work, ptrs = filled(devices, [(0, 7), (1, 7)])
    with pytest.raises(KernelError, match="cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        work.release(None)
    assert [e for e in devices.log if e[0] == "sync"] == [("sync", 0), ("sync", 1)]
    assert closes(devices.log) == sorted((p, LEGACY) for pair in ptrs.values() for p in pair)
    assert work.get(0, 7) is None and work.get(1, 7) is None


def test_the_workspaces_end_frees_every_set_on_the_legacy_stream():
    devices = Devices()
    work, ptrs = filled(devices, [(0, 7), (0, 9)])
    del work
    gc.collect()
    assert [e for e in devices.log if e[0] == "sync"] == [("sync", 0)]
    assert closes(devices.log) == sorted((p, LEGACY) for pair in ptrs.values() for p in pair)


def test_a_grown_buffer_is_freed_on_its_own_stream():
    devices = Devices()
    work, ptrs = filled(devices, [(0, 7)])
    work.partials(0, 7, 1 << 20)
    gc.collect()
    assert closes(devices.log) == [(ptrs[0, 7][1], ("stream", 7))]


def test_a_release_holds_the_stream_object_it_was_given():
    keep = object()
    block = Devices().alloc(0, 5, 64, keep)
    assert block.owner.keep is keep
