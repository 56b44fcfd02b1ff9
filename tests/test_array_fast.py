"""The array path's repeated-signature call (issue 15, runtime/array_fast.py) on the CPU: fake
CUDA arrays over host memory (tests/cks_fakedevices.py) and a recording stand-in for the
library. What it must keep of the full path: the same argument block but for the pointers, the
producer-stream waits, the output, and every refusal (errors come from the full path)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cks_fakedevices import FakeArray, FakeDevices, f16
from test_callpath_cpu import K, M, N, fill_d, make_op, operands, raises
from cutlass_splitk.runtime import abi, array_fast, array_path, dlpack, prepared
from cutlass_splitk.runtime.prepared import Prepared

FIELDS = [name for name, _ in abi.CksArgs._fields_]
POINTERS = {"a", "b", "c", "bias", "e", "d"}


@pytest.fixture
def dev():
    return FakeDevices()


@pytest.fixture
def full(monkeypatch):
    """Counts the full path's calls."""
    calls = []
    real = array_path.call
    monkeypatch.setattr(array_path, "call", lambda *args, **kw: calls.append(1) or real(*args, **kw))
    return calls


def non_pointer_fields(args):
    return {f: getattr(args, f) for f in FIELDS if f not in POINTERS}


def test_a_signature_is_prepared_on_its_second_sighting_and_then_runs_fast(dev, full):
    op = make_op("linear_bias_gelu_f16", dev, compute=fill_d(2.5))
    a, b, _ = operands(dev)
    bias = FakeArray(f16(N), dev)
    op(a, b, bias=bias, split_k=4, mode="parallel", stream=7)
    assert list(op.array_prepared.values()) == [prepared.SEEN] and len(full) == 1
    op(a, b, bias=bias, split_k=4, mode="parallel", stream=7)
    (prep,) = op.array_prepared.values()
    assert isinstance(prep, Prepared) and prep.split == 4 and len(full) == 2
    a2, b2, _ = operands(dev, seed=5)
    bias2 = FakeArray(f16(N, seed=9), dev)
    out = op(a2, b2, bias=bias2, split_k=4, mode="parallel", stream=7)
    assert len(full) == 2  # the fast path ran it
    (first, _), (second, _), (fast, stream) = op.bound.calls
    assert stream == 7 and non_pointer_fields(fast) == non_pointer_fields(second) == non_pointer_fields(first)
    assert (fast.a, fast.b, fast.bias, fast.c, fast.e, fast.d) == (a2.data.ctypes.data, b2.data.ctypes.data,
                                                                   bias2.data.ctypes.data, None, None, out.ptr)
    assert fast.partials == second.partials and fast.partial_bytes >= 4 * 4 * M * N  # the stream's workspace
    assert isinstance(out, dlpack.DeviceArray) and (out.shape, out.device, out.stream) == ((M, N), 0, 7)
    assert np.array_equal(np.from_dlpack(out), np.full((M, N), 2.5, np.float16))


def test_fast_call_writes_out_and_waits_for_producers(dev, full):
    op = make_op("linear_f16", dev, compute=fill_d(-1.0))
    a, b, _ = operands(dev)
    a = FakeArray(a.data, dev, stream=555)  # written on stream 555 (CAI v3)
    store = np.full((M, N + 8), 7, np.float16)
    out = FakeArray(store[:, :N], dev)
    for _ in range(3):
        assert op(a, b, out=out, stream=31) is out
    assert len(full) == 2 and len(op.bound.calls) == 3
    assert dev.waits == [(31, 555)] * 3  # the fast call waits like the full path
    args = op.bound.calls[-1][0]
    assert (args.d, args.ldd) == (store.ctypes.data, N + 8)
    assert np.all(store[:, :N] == -1.0) and np.all(store[:, N:] == 7)


def test_arrays_on_another_device_are_read_and_waited_for_there(dev, full):
    """Operands on device 1 with device 0 current: the first one is read with its own device current
    (a producer's handshake runs through the current device), and every producer wait names device 1,
    whose legacy stream the call runs on (stream=None), on the full path and the fast path."""
    op = make_op("linear_f16", dev, compute=fill_d(1.0))
    a = FakeArray(f16(M, K), dev, device=1, stream=555)  # written on stream 555 of device 1 (CAI v3)
    b = FakeArray(f16(N, K).T, dev, device=1)
    for _ in range(3):
        out = op(a, b)
        assert out.device == 1
    assert len(full) == 2 and len(op.bound.calls) == 3
    assert dev.entered[0] == 1  # a's device, before a is read
    assert dev.waits == [(0, 555)] * 3 and dev.wait_devices == [1] * 3


def test_a_stream_of_another_device_is_refused_with_what_to_pass(dev, full):
    op = make_op("linear_f16", dev, compute=fill_d(1.0))
    dev.stream_devices.update({0x99: 0, 0x77: 1})
    a, b = FakeArray(f16(M, K), dev, device=1), FakeArray(f16(N, K).T, dev, device=1)
    message = ("linear_f16: stream=0x99 is a stream of cuda:0 but the operands are on cuda:1; pass a stream of "
               "cuda:1, or none (CuPy's current stream there for CuPy arrays, else its legacy default stream)")
    assert raises(ValueError, lambda: op(a, b, stream=0x99)) == message
    for _ in range(3):  # a stream of cuda:1 runs, on the full path and then the fast path
        assert op(a, b, stream=0x77).device == 1 and op.bound.calls[-1][1] == 0x77
    assert isinstance(next(iter(op.array_prepared.values())), Prepared)
    calls = len(op.bound.calls)
    assert len(full) == 3
    assert raises(ValueError, lambda: op(a, b, stream=0x99)) == message  # refused on the fast path too
    assert len(op.bound.calls) == calls and len(full) == 3


def test_fast_path_refusals_take_the_full_path(dev, full):
    """An output overlapping an input, a misaligned pointer, a new stream without workspace,
    an unknown keyword: the full path runs (and raises, pads or allocates) as on a first call."""
    from cutlass_splitk.runtime import PaddingWarning

    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    out = FakeArray(f16(M, K)[:, :N], dev)
    for _ in range(3):
        op(a, b, out=out, split_k=2, mode="parallel", stream=1)
    assert len(full) == 2
    shifted = FakeArray(a.data[:, :N], dev)  # same metadata as out, overlapping a
    assert raises(ValueError, lambda: op(a, b, out=shifted, split_k=2, mode="parallel", stream=1)) == \
        "linear_f16: out overlaps a; pass a separate output tensor"
    assert len(full) == 3
    odd = np.zeros(M * K + 1, np.float16)[1:].reshape(M, K)  # 2-byte aligned pointer, same metadata
    odd[:] = a.data
    with pytest.warns(PaddingWarning):
        op(FakeArray(odd, dev), b, out=out, split_k=2, mode="parallel", stream=1)
    assert len(full) == 4
    op(a, b, out=out, split_k=2, mode="parallel", stream=2)  # no workspace on stream 2 yet
    assert len(full) == 5
    op(a, b, out=out, split_k=2, mode="parallel", stream=2)  # now there is
    assert len(full) == 5
    assert raises(TypeError, lambda: op(a, b, out=out, split_k=2, mode="parallel", stream=1, e=a)) == \
        ("linear_f16() got an unexpected keyword argument 'e'; this op accepts: out, split_k, mode, variant, "
         "alpha, beta, c, bias, stream")
    assert raises(TypeError, lambda: op(a, b, out=out, split_k=2, mode="parallel", stream="s")) == \
        "linear_f16: stream must be an int handle >= 0 or an object with __cuda_stream__, got 's'"


def test_device_and_layout_are_part_of_the_signature(dev, full):
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    for _ in range(3):
        op(a, b)
    assert len(full) == 2
    moved = FakeArray(f16(N, K).T, dev, device=1)
    assert raises(ValueError, lambda: op(a, moved)) == "linear_f16: b is on cuda:1 but a is on cuda:0"
    wide = FakeArray(f16(M, K + 8)[:, :K], dev)  # another leading dimension
    op(wide, b)
    assert op.bound.calls[-1][0].lda == K + 8 and len(full) == 4
    frozen = f16(M, N)
    out = FakeArray(frozen, dev, data=(frozen.ctypes.data, True))  # read-only is part of it too
    writable = FakeArray(f16(M, N), dev)
    op(a, b, out=writable)
    op(a, b, out=writable)
    assert raises(ValueError, lambda: op(a, b, out=out)) == \
        "linear_f16: out is read-only (FakeArray); pass a writable array"


def test_a_cleared_plan_cache_is_replanned(dev, full):
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    for _ in range(3):
        op(a, b, split_k=2)
    op.launcher.plans.clear()
    op(a, b, split_k=2)
    assert len(full) == 3 and [c[0].split_k for c in op.bound.calls] == [2, 2, 2, 2]


def test_readers():
    dev = FakeDevices()
    x = f16(4, 8)
    cai = FakeArray(x, dev, stream=9)
    assert array_fast.reader(FakeArray) is array_fast._cai
    assert array_fast.reader(list) is None and array_fast.reader(np.ndarray) is None
    assert array_fast._cai(cai, dev) == (x.ctypes.data, ((4, 8), (16, 2), "<f2", False, True, True), 0, 9)
    v2 = FakeArray(x, dev, version=2, stream=9, strides=None)
    assert array_fast._cai(v2, dev)[1:] == (((4, 8), None, "<f2", False, True, False), 0, None)
    block = dev.alloc(1, 3, 64)
    arr = dlpack.DeviceArray(block, (4, 8), "float16", 1, 3, dev, dlpack.KDL_CPU)
    assert array_fast.reader(dlpack.DeviceArray) is array_fast._device_array
    assert array_fast._device_array(arr, dev) == (block.ptr, ((4, 8), "float16"), 1, 3)


def test_strided_memory_view_reader():
    pytest.importorskip("cuda.core")
    from cutlass_splitk.runtime import arrays

    smv = arrays._smv_class()
    if smv is None or not hasattr(smv, "from_any_interface"):
        pytest.skip("this cuda.core has no StridedMemoryView.from_any_interface")
    x = f16(4, 8)
    v = smv.from_any_interface(x, stream_ptr=-1)
    assert array_fast.reader(type(v)) is array_fast._smv
    ptr, meta, device, producer = array_fast._smv(v, FakeDevices())
    assert (ptr, meta[0], meta[2], meta[3], device, producer) == (x.ctypes.data, (4, 8), ("float16", 2), False,
                                                                  None, None)


def test_signature_declines_what_it_cannot_read(dev):
    a, b, _ = operands(dev)

    class DLPackOnly:
        def __dlpack__(self, stream=None):
            raise NotImplementedError

    assert array_fast.signature(a, b, {"bias": DLPackOnly()}, dev) is None
    assert array_fast.signature(a, DLPackOnly(), {}, dev) is None
    assert array_fast.signature(FakeArray(f16(M, K), dev, shape=None), b, {}, dev) is None

    class JaxLike(FakeArray):  # a version-2 interface beside DLPack: read through DLPack (full path)
        def __dlpack__(self, stream=None):
            raise NotImplementedError

    assert array_fast.signature(JaxLike(f16(M, K), dev, version=2), b, {}, dev) is None
    assert array_fast.signature(JaxLike(f16(M, K), dev), b, {}, dev) is not None  # version 3: its stream

    class Attribute:  # the interface as an instance attribute
        def __init__(self, cai):
            self.__cuda_array_interface__ = cai

    sig = array_fast.signature(Attribute(a.__cuda_array_interface__), b, {}, dev)
    assert sig is not None and sig.pa == a.data.ctypes.data
    sig = array_fast.signature(a, b, {"alpha": 2.0, "stream": 5, "bias": None}, dev)
    assert sig.key[-6:] == ("alpha", float, 2.0, "bias", type(None), None)  # stream= is not in it
    assert (sig.pa, sig.pb, sig.ptrs, sig.producers) == (a.data.ctypes.data, b.data.ctypes.data, {}, [None, None])


def test_fast_call_output_from_the_full_paths_allocator(dev, full):
    """Without out=, the fast call allocates where the full path does (here a DeviceArray of
    the devices' memory on the call's stream), one buffer per call."""
    op = make_op("linear_f16", dev, compute=fill_d(0.5))
    a, b, _ = operands(dev)
    outs = [op(a, b, stream=3) for _ in range(4)]
    assert len(full) == 2 and len({o.ptr for o in outs}) == 4
    assert [x for x in dev.allocations if x[2] == 2 * M * N] == [(0, 3, 2 * M * N)] * 4
    for o in outs:
        assert np.array_equal(np.from_dlpack(o), np.full((M, N), 0.5, np.float16))
    assert ctypes.sizeof(abi.CksArgs) == prepared._ARGS.size
