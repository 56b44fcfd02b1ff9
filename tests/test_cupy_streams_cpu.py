"""runtime/cupy_streams.py on the CPU, against a model of CuPy's stream bookkeeping (cupy/cuda/stream.pyx):
one current stream per device, ``Stream.use()`` replacing it, a ``with stream:`` block pushing it and, on
exit, rewinding the device's current stream to the top of its with-stack (which drops a stream made
current by ``use()``). The GPU tests run the real CuPy (tests/gpu/test_gpu_arrays.py); these keep the
session-27 fixes from regressing where no GPU runs: the output allocated on the call's stream and device
with the caller's CuPy state left as it was, and CuPy's current stream read per device."""

from __future__ import annotations

import sys
import types

import pytest

from cutlass_splitk.runtime import arrays, cupy_streams


class FakeStream:
    def __init__(self, cupy, ptr, device=-1):
        self.cupy, self.ptr, self.device_id = cupy, ptr, device

    def use(self):
        device = self.device_id if self.device_id >= 0 else self.cupy.device
        self.cupy.current[device] = self
        return self

    def __enter__(self):
        device = self.device_id if self.device_id >= 0 else self.cupy.device
        self.cupy.stacks[device].append(self)
        self.cupy.entered.append(device)
        self.cupy.current[device] = self
        return self

    def __exit__(self, *exc):
        device = self.cupy.entered.pop()
        self.cupy.stacks[device].pop()
        self.cupy.current[device] = self.cupy.stacks[device][-1]  # CuPy's rewind

    def __eq__(self, other):
        return isinstance(other, FakeStream) and other.ptr == self.ptr

    __hash__ = None


class FakeCupy(types.ModuleType):
    """The parts of CuPy the module touches, for ``devices`` GPUs; ``per_device`` False models a CuPy
    whose get_current_stream() takes no device."""

    float16 = "float16"

    def __init__(self, devices=2, per_device=True):
        super().__init__("cupy")
        self.device = 0
        null = FakeStream(self, 0)
        self.stacks = {d: [null] for d in range(devices)}
        self.current = {d: null for d in range(devices)}
        self.entered = []
        self.allocations = []  # (device, the current stream's handle) of each empty()
        cupy = self

        class Device:
            def __init__(self, index=None):
                self.id = cupy.device if index is None else index

            def __enter__(self):
                self.previous, cupy.device = cupy.device, self.id
                return self

            def __exit__(self, *exc):
                cupy.device = self.previous

        def get_current_stream(*device):
            if device and not per_device:
                raise TypeError("get_current_stream() takes no arguments (1 given)")
            index = device[0] if device and device[0] >= 0 else cupy.device
            return cupy.current[index]

        stream_class = types.SimpleNamespace(null=null, from_external=lambda obj: FakeStream(cupy, obj.__cuda_stream__()[1]))
        self.cuda = types.SimpleNamespace(Device=Device, get_current_stream=get_current_stream, Stream=stream_class,
                                          runtime=types.SimpleNamespace(getDevice=lambda: cupy.device),
                                          ExternalStream=lambda ptr, device=-1: FakeStream(cupy, ptr, device))

    def stream(self, ptr, device):
        return FakeStream(self, ptr, device)

    def empty(self, shape, dtype):
        self.allocations.append((self.device, self.current[self.device].ptr))
        return types.SimpleNamespace(shape=shape, dtype=dtype)


@pytest.fixture
def cupy(monkeypatch):
    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return fake


def test_current_stream_is_the_devices_own(cupy):
    cupy.stream(0x51, 1).use()
    cupy.stream(0x50, 0).use()
    assert (cupy_streams.current_stream(0), cupy_streams.current_stream(1)) == (0x50, 0x51)
    array = type("ndarray", (), {"__module__": "cupy._core.core"})()  # what call_stream takes for CuPy's
    array.device = types.SimpleNamespace(id=1)
    assert arrays.call_stream("op", None, array) == 0x51  # device 1's, with device 0 current


def test_current_stream_of_a_cupy_with_one_stream_per_thread(monkeypatch):
    fake = FakeCupy(per_device=False)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    fake.stream(0x50, 0).use()
    assert cupy_streams.current_stream(1) == 0x50


@pytest.mark.parametrize("given", [0x77, 0])
def test_output_on_another_device_and_stream_keeps_the_callers_streams(cupy, given):
    mine1, mine0 = cupy.stream(0x51, 1).use(), cupy.stream(0x50, 0).use()
    cupy_streams.output((4, 8), 1, given)
    assert cupy.allocations == [(1, given)]  # on the call's device and stream
    assert cupy.device == 0 and cupy.current == {0: mine0, 1: mine1}  # what use() made current, kept


def test_output_inside_a_with_block_gives_that_block_its_stream_back(cupy):
    with cupy.cuda.Device(1):
        with cupy.stream(0x61, 1) as s:
            cupy_streams.output((4, 8), 1, 0x77)
            assert cupy.current[1] == s and cupy.device == 1
    assert cupy.allocations == [(1, 0x77)] and cupy.current[1].ptr == 0 and cupy.device == 0


def test_output_on_the_current_device_and_stream_allocates_there(cupy):
    cupy.stream(0x50, 0).use()
    cupy_streams.output((4, 8), 0, 0x50)
    assert cupy.allocations == [(0, 0x50)] and cupy.current[0].ptr == 0x50
