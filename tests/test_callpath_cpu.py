"""The call path on the CPU (issue 15): the array protocols (``__cuda_array_interface__``
parsed here, DLPack through cuda.core), their errors with exact messages, the array path's
stream, memory and padding on fake device memory (tests/cks_fakedevices.py), DLPack export of
the library's own arrays, and the torch fast path against a real ctypes boundary (a no-op C
library built by the host compiler, benchmarks/fakelib.py)."""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest

from cks_fakedevices import FakeArray, FakeDevices, f16
from cks_testutil import CONFIGS, ROOT
from fakelib import FAKE_H100, FakePlatform
from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import Library, Op, abi, arrays, cudacore, dlpack
from cutlass_splitk.runtime.workspace import Block

SPECS = {o.name: o for c in ("default.yaml", "epilogues.yaml") for o in load_config(CONFIGS / c).ops}
FAKE_GPU = FAKE_H100
M, N, K = 16, 32, 64


def Platform(devices=None):
    """A modelled H100 whose device memory is host memory (FakeDevices); torch tensors may be
    CPU tensors (the fast path tests)."""
    return FakePlatform(FAKE_GPU, devices=devices or FakeDevices())


class Recorder:
    """Stands in for abi.BoundLibrary: records run()'s CksArgs; ``compute`` may write D."""

    def __init__(self, spec, compute=None):
        self.calls = []
        self.compute = compute
        self.query = {v.name: self._query(v.mode.value == "serial") for v in spec.variants}
        self.run = {v.name: self._run for v in spec.variants}

    @staticmethod
    def _query(serial):
        def query(args, q):  # the workspace a real variant asks for
            split = args._obj.split_k
            q._obj.semaphore_bytes = 4 * 6 if serial and split > 1 else 0
            q._obj.partial_bytes = (4 * M * N if split > 1 else 0) if serial else 4 * split * M * N
            return 0
        return query

    def _run(self, args, stream):
        a = abi.CksArgs.from_buffer_copy(args) if isinstance(args, bytes) else abi.CksArgs.from_buffer_copy(args._obj)
        self.calls.append((a, stream))
        if self.compute is not None:
            self.compute(a)
        return 0

    def last_error(self):
        return ""


def make_op(name, devices=None, compute=None):
    spec = SPECS[name]
    library = Library(Path("x"), {}, {}, platform=Platform(devices))
    op = Op(library, spec, Recorder(spec, compute))
    library._ops[name] = op
    return op


def raises(exc_type, fn) -> str:
    with pytest.raises(exc_type) as info:
        fn()
    return str(info.value)


@pytest.fixture
def dev():
    return FakeDevices()


def operands(dev, m=M, n=N, k=K, seed=0):
    """(a, b) as fake CUDA arrays: a (m, k) row-major, b the (k, n) column-major view of an (n, k) weight."""
    a = FakeArray(f16(m, k, seed=seed), dev)
    w = f16(n, k, seed=seed + 1)
    return a, FakeArray(w.T, dev), w


# --- __cuda_array_interface__ parsing (no cuda.core needed) ----------------------------------


def test_cai_parse(dev):
    x = f16(4, 8)
    v = arrays.from_cai("op", "a", FakeArray(x, dev).__cuda_array_interface__, None, 0, dev)
    assert (v.ptr, v.shape, v.strides, v.dtype, v.itemsize, v.device, v.readonly) == \
        (x.ctypes.data, (4, 8), (8, 1), "float16", 2, 0, False)
    v = arrays.from_cai("op", "a", {"shape": (4, 8), "typestr": "<f2", "data": (x.ctypes.data, True), "version": 2},
                        None, 0, dev)
    assert v.strides == (8, 1) and v.readonly  # strides None / absent: C-contiguous
    t = arrays.from_cai("op", "b", FakeArray(x.T, dev).__cuda_array_interface__, None, 0, dev)
    assert (t.shape, t.strides, t.stride(0), t.stride(1)) == ((8, 4), (1, 8), 1, 8)
    assert not t.is_contiguous() and v.is_contiguous() and t.numel() == 32 and t.element_size() == 2


@pytest.mark.parametrize("typestr, name", [("<f2", "float16"), ("<V2", "bfloat16"), ("<f4", "float32"),
                                            ("<f8", "float64"), ("|i1", "int8"), ("<u2", "uint16"),
                                            ("|b1", "bool"), ("<c8", "complex64"), ("?", "?")])
def test_cai_dtype_names(typestr, name):
    assert arrays.cai_dtype(typestr)[0] == name


def test_cai_stream_handshake(dev):
    x = f16(4, 8)
    arrays.from_cai("op", "a", FakeArray(x, dev, stream=77).__cuda_array_interface__, None, 5, dev)
    arrays.from_cai("op", "a", FakeArray(x, dev, stream=5).__cuda_array_interface__, None, 5, dev)
    arrays.from_cai("op", "a", FakeArray(x, dev, stream=77, version=2).__cuda_array_interface__, None, 5, dev)
    assert dev.waits == [(5, 77)]  # v3 only, and not for the consumer's own stream


# --- the array path: errors, exact messages, nothing launched ------------------------------------


def test_array_path_errors(dev):
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    frozen = f16(M, N)
    cases = [
        (TypeError, lambda: op(FakeArray(f16(M, K).astype(np.float32), dev), b),
         "linear_f16: a must be float16, got float32"),
        (TypeError, lambda: op(a, FakeArray(np.zeros((K, N), np.uint16), dev)),
         "linear_f16: b must be float16, got bfloat16"),
        (ValueError, lambda: op(FakeArray(f16(M, K), host=True), b),
         "linear_f16: a must be on a CUDA device, got host memory"),
        (ValueError, lambda: op(a, b, bias=FakeArray(f16(N), host=True)),
         "linear_f16: bias must be on a CUDA device, got host memory"),
        (ValueError, lambda: op(a, FakeArray(f16(N, K).T, dev, device=1)),
         "linear_f16: b is on cuda:1 but a is on cuda:0"),
        (TypeError, lambda: op(a, [[1.0]]),
         "linear_f16: b must be a CUDA array (DLPack or __cuda_array_interface__), got list"),
        (ValueError, lambda: op(FakeArray(f16(M, K), dev, strides=(2 * K + 1, 2)), b),
         f"linear_f16: a has strides ({2 * K + 1}, 2) (bytes), not multiples of its 2-byte float16 elements"),
        (ValueError, lambda: op(FakeArray(f16(K, M).T, dev), b),
         f"linear_f16: a must be row-major (stride(1) == 1), got shape ({M}, {K}) with strides (1, {M}); "
         "pass a.contiguous()"),
        (ValueError, lambda: op(a, FakeArray(f16(K, N), dev)),
         f"linear_f16: b must be column-major (K, N) for layout tn, got shape ({K}, {N}) with strides ({N}, 1); "
         "pass weight.t() of a contiguous (N, K) weight"),
        (ValueError, lambda: op(FakeArray(f16(1, M, K), dev), b),
         f"linear_f16: a must be 2-D, got shape (1, {M}, {K})"),
        (ValueError, lambda: op(a, FakeArray(f16(N, K + 8).T, dev)),
         f"linear_f16: a is ({M}, {K}) but b is ({K + 8}, {N}): b must be (K={K}, N)"),
        (ValueError, lambda: op(a, b, bias=FakeArray(f16(N + 1), dev)),
         f"linear_f16: bias must have shape ({N},), got ({N + 1},)"),
        (ValueError, lambda: op(a, b, beta=0.5), "linear_f16: beta=0.5 needs c"),
        (ValueError, lambda: op(a, b, out=FakeArray(frozen, dev, data=(frozen.ctypes.data, True))),
         "linear_f16: out is read-only (FakeArray); pass a writable array"),
        (ValueError, lambda: op(a, b, out=a), f"linear_f16: out must have shape ({M}, {N}), got ({M}, {K})"),
        (ValueError, lambda: op(FakeArray(f16(M, K), dev, mask=object()), b),
         "linear_f16: a is a masked array (__cuda_array_interface__ 'mask'); pass its data"),
        (ValueError, lambda: op(FakeArray(f16(M, K), dev, shape=None), b),
         "linear_f16: a has a malformed __cuda_array_interface__ (TypeError: 'NoneType' object is not iterable)"),
        (TypeError, lambda: op(a, b, stream="s"),
         "linear_f16: stream must be an int handle >= 0 or an object with __cuda_stream__, got 's'"),
        (TypeError, lambda: op(a, b, stream=-1),
         "linear_f16: stream must be an int handle >= 0 or an object with __cuda_stream__, got -1"),
        (TypeError, lambda: op(a, b, e=a),
         "linear_f16() got an unexpected keyword argument 'e'; this op accepts: out, split_k, mode, variant, "
         "alpha, beta, c, bias, stream"),
        (ValueError, lambda: op(a, b, split_k=9),
         "linear_f16: split_k=9 is not available; built split factors: "
         "[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 24, 32, 48, 64]"),
    ]
    for exc, fn, message in cases:
        assert raises(exc, fn) == message
    assert op.bound.calls == [] and dev.allocations == []


def test_out_overlapping_an_input_is_rejected(dev):
    op = make_op("linear_f16", dev)
    buf = f16(M, K + N)
    a = FakeArray(buf[:, :K], dev)
    out = FakeArray(buf[:, K - 8:K - 8 + N], dev)
    assert raises(ValueError, lambda: op(a, operands(dev)[1], out=out)) == \
        "linear_f16: out overlaps a; pass a separate output tensor"


def test_host_numpy_array_through_cuda_core(dev):
    """numpy arrays export DLPack: cuda.core's StridedMemoryView reads them (host memory)."""
    pytest.importorskip("cuda.core")
    op = make_op("linear_f16", dev)
    assert raises(ValueError, lambda: op(f16(M, K), operands(dev)[1])) == \
        "linear_f16: a must be on a CUDA device, got host memory"
    v = arrays.view("op", "a", f16(M, K), 0, dev)
    assert (v.shape, v.strides, v.dtype, v.device) == ((M, K), (K, 1), "float16", None)


# --- the array path: launch, output, stream, workspace, padding -----------------------------------------


def fill_d(value):
    """A fake kernel writing ``value`` (f16) into every D element it owns."""
    bits = int(np.float16(value).view(np.uint16))

    def compute(args):
        rows, cols, ld = args.m, args.n, args.ldd
        for r in range(rows):
            (ctypes.c_uint16 * cols).from_address(args.d + 2 * r * ld)[:] = [bits] * cols
    return compute


def test_array_call_launches_in_place_and_returns_a_device_array(dev):
    op = make_op("linear_f16", dev, compute=fill_d(1.5))
    a, b, _ = operands(dev)
    bias = FakeArray(f16(N), dev)
    out = op(a, b, bias=bias, alpha=2.0, split_k=2, mode="serial", stream=123)
    (args, stream), = op.bound.calls
    assert stream == 123
    assert (args.m, args.n, args.k, args.split_k, args.lda, args.ldb, args.ldd) == (M, N, K, 2, K, K, N)
    assert (args.a, args.b, args.bias, args.alpha) == (a.data.ctypes.data, b.data.ctypes.data,
                                                        bias.data.ctypes.data, 2.0)
    assert isinstance(out, dlpack.DeviceArray) and out.shape == (M, N) and out.dtype == "float16"
    assert (out.ptr, out.device, out.stream) == (args.d, 0, 123)
    assert np.array_equal(np.from_dlpack(out), np.full((M, N), 1.5, np.float16))
    # workspace: serial split 2 takes zeroed semaphores from cuda.core memory of (device 0, stream 123)
    assert args.semaphores and args.semaphore_bytes >= 4
    assert (0, 123, args.semaphore_bytes) in dev.allocations
    assert op.library.array_workspace.get(0, 123).semaphores.ptr == args.semaphores
    assert op.library.workspace.get(0, 123) is None  # the torch path's workspace is untouched


def test_array_call_writes_out(dev):
    op = make_op("linear_f16", dev, compute=fill_d(-3.0))
    a, b, _ = operands(dev)
    big = np.full((M, N + 8), 7, np.float16)
    out = FakeArray(big[:, :N], dev)
    assert op(a, b, out=out, stream=9) is out
    (args, _), = op.bound.calls
    assert (args.d, args.ldd) == (big.ctypes.data, N + 8)
    assert np.all(big[:, :N] == -3.0) and np.all(big[:, N:] == 7)


class Stream:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_stream_argument_and_producer_handshake(dev):
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    a = FakeArray(a.data, dev, stream=555)
    op(a, b, stream=Stream(31))
    assert op.bound.calls[-1][1] == 31
    assert dev.waits == [(31, 555)]
    op(a, b)  # default: the legacy default stream
    assert op.bound.calls[-1][1] == 0 and dev.waits[-1] == (0, 555)


def test_workspace_per_stream(dev):
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    for s in (1, 2, 1):
        op(a, b, split_k=4, mode="parallel", stream=s)
    p1, p2, p1b = (args.partials for args, _ in op.bound.calls)
    assert p1 == p1b and p1 != p2
    assert [x[1] for x in dev.allocations if x[2] >= 1 << 18] == [1, 2]  # partials once per stream


def test_release_workspace_frees_one_streams_buffers_or_all(dev):
    """Library.release_workspace(stream): that stream's buffers on every device go (a raw handle or a
    __cuda_stream__ object), the others stay; the next split call there allocates again, also on the fast
    path (third call on: it fetches the set again); no stream: everything goes."""
    op = make_op("linear_f16", dev)
    lib, (a, b, _) = op.library, operands(dev)
    for s in (1, 2, 1, 1):
        op(a, b, split_k=4, mode="parallel", stream=s)
    work = lib.array_workspace
    kept = work.get(0, 2).partials.ptr
    assert lib.release_workspace(1) == 1
    assert work.get(0, 1) is None and work.get(0, 2).partials.ptr == kept
    op(a, b, split_k=4, mode="parallel", stream=1)  # the fast path declines, the full path allocates again
    assert [x[1] for x in dev.allocations if x[2] >= 1 << 18] == [1, 2, 1]
    assert op.bound.calls[-1][0].partials == work.get(0, 1).partials.ptr
    op(a, b, split_k=4, mode="parallel", stream=1)
    assert op.bound.calls[-1][0].partials == work.get(0, 1).partials.ptr
    assert lib.release_workspace(Stream(2)) == 1 and work.get(0, 2) is None
    assert lib.release_workspace(7) == 0
    assert lib.release_workspace() == 1 and work.get(0, 1) is None


def test_k0_runs_the_kernel_on_zero_padded_operands(dev):
    """K = 0 on the array path: the kernels compute the epilogue of a zero product (K padded to
    the alignment with zeros), no torch involved."""
    seen = []

    def compute(args):
        seen.append(bytes((ctypes.c_char * (args.m * args.lda * 2)).from_address(args.a)))
        seen.append(bytes((ctypes.c_char * (args.n * args.ldb * 2)).from_address(args.b)))
        fill_d(0.25)(args)

    op = make_op("linear_bias_gelu_f16", dev, compute)
    a, b = FakeArray(np.zeros((M, 0), np.float16), dev), FakeArray(np.zeros((N, 0), np.float16).T, dev)
    bias = FakeArray(f16(N), dev)
    out = op(a, b, bias=bias)
    (args, _), = op.bound.calls
    assert (args.k, args.lda, args.ldb) == (8, 8, 8)
    assert seen[0] == bytes(M * 8 * 2) and seen[1] == bytes(N * 8 * 2)
    assert np.array_equal(np.from_dlpack(out), np.full((M, N), 0.25, np.float16))


def test_unaligned_problem_is_padded_and_copied_back(dev):
    from cutlass_splitk.runtime import PaddingWarning

    seen = {}

    def compute(args):
        seen["a"] = np.ctypeslib.as_array((ctypes.c_uint16 * (args.m * args.lda)).from_address(args.a)).copy()
        seen["b"] = np.ctypeslib.as_array((ctypes.c_uint16 * (args.n * args.ldb)).from_address(args.b)).copy()
        seen["bias"] = np.ctypeslib.as_array((ctypes.c_uint16 * args.n).from_address(args.bias)).copy()
        fill_d(2.0)(args)

    op = make_op("linear_f16", dev, compute)
    a, b, w = operands(dev, n=30, k=60)
    bias = FakeArray(f16(30), dev)
    big = np.full((M, 40), 9, np.float16)
    out = FakeArray(big[:, :30], dev)
    with pytest.warns(PaddingWarning, match=r"linear_f16: M=16 N=30 K=60 is not 8-element aligned"):
        assert op(a, b, bias=bias, out=out) is out
    (args, _), = op.bound.calls
    assert (args.n, args.k, args.lda, args.ldb, args.ldd) == (32, 64, 64, 64, 32)
    pa = seen["a"].reshape(M, 64).view(np.float16)
    assert np.array_equal(pa[:, :60], a.data) and not pa[:, 60:].any()
    pb = seen["b"].reshape(32, 64).view(np.float16)  # column-major (K, N): N rows of K
    assert np.array_equal(pb[:30, :60], w) and not pb[30:].any() and not pb[:, 60:].any()
    assert np.array_equal(seen["bias"].view(np.float16)[:30], bias.data) and not seen["bias"][30:].any()
    assert np.all(big[:, :30] == 2.0) and np.all(big[:, 30:] == 9)


def test_permuted_output_shape_and_empty_problems(dev):
    op = make_op("bias_gelu_mul_permute_f16", dev)
    a, b, _ = operands(dev)
    e = FakeArray(f16(M, N), dev)
    out = op(a, b, e=e, view=(2, 8, 4, 8))
    assert out.shape == (2, 4, 8, 8) and op.bound.calls[-1][0].permute_s == 8
    empty = op(FakeArray(np.zeros((0, K), np.float16), dev), b, e=FakeArray(np.zeros((0, N), np.float16), dev),
               view=(0, 8, 4, 8))
    assert empty.shape == (0, 4, 8, 8) and len(op.bound.calls) == 1


def test_library_arrays_are_inputs_too(dev):
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    y = op(a, b, stream=4)
    w2 = FakeArray(f16(N, N).T, dev)
    z = op(y, w2, stream=6)  # a DeviceArray written on stream 4, read on stream 6
    assert op.bound.calls[-1][0].a == y.ptr and dev.waits == [(6, 4)]
    assert z.shape == (M, N)


@pytest.mark.parametrize("fast", [False, True])
def test_library_arrays_used_on_other_streams_are_freed_after_that_use(dev, fast):
    """A DeviceArray read, or written as out, on another stream than its own: its free waits for that
    stream's work (the pool hands memory freed on a stream out again at once to that stream), and the
    writer's stream is the one later readers wait for; the same on the fast path (third call on)."""
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    y = op(a, b, stream=4)
    w2 = FakeArray(f16(N, N).T, dev)
    out = op(a, b, stream=4)
    for _ in range(3 if fast else 1):
        dev.release_orders.clear()
        op(y, w2, stream=6)  # read on 6
        assert dev.release_orders == [(y.ptr, 6)]
        op(y, w2, stream=4)  # read on its own stream: nothing to order
        assert dev.release_orders == [(y.ptr, 6)]
    dev.release_orders.clear()
    assert op(a, b, out=out, stream=8) is out and out.stream == 8  # written on 8, after stream 4's work
    assert dev.release_orders == [(out.ptr, 8)] and dev.waits[-1] == (8, 4)
    dev.release_orders.clear()
    waits = len(dev.waits)
    op(out, w2, stream=8)  # read on the writer's stream: waits for nothing, freed after it
    assert dev.release_orders == [(out.ptr, 8)] and len(dev.waits) == waits


@pytest.mark.parametrize("given", [Stream(5), 5])
def test_library_array_holds_the_stream_object_it_is_freed_on(dev, given):
    """A DeviceArray output is freed on the call's stream: a stream= object is held with its memory (dropping
    it first cannot destroy the stream under the free), a raw handle is the caller's to keep; the same on the
    fast path (third call on)."""
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    for _ in range(3):
        y = op(a, b, stream=given)
        assert y.stream == 5 and dev.alloc_streams[y.ptr] == 5
        assert dev.kept[y.ptr] is (None if isinstance(given, int) else given)


@pytest.mark.parametrize("given", [Stream(8), 8])
def test_library_array_written_as_out_holds_the_writers_stream_object(dev, given):
    """A DeviceArray written as out= on another stream: its readers wait for that stream from then on, so it
    holds the call's stream= object (a raw handle: nothing held), on the full and the fast path."""
    op = make_op("linear_f16", dev)
    a, b, _ = operands(dev)
    y = op(a, b, stream=4)
    for _ in range(3):
        assert op(a, b, out=y, stream=given) is y
        assert y.stream == 8 and y.stream_owner is (None if isinstance(given, int) else given)
        op(a, b, out=y, stream=4)
        assert y.stream == 4 and y.stream_owner is None


# --- DLPack export of DeviceArray ---------------------------------------------------------------------


def host_array(values, shape, dtype="float16"):
    buf = (ctypes.c_uint16 * len(values))(*values)
    return dlpack.DeviceArray(Block(ctypes.addressof(buf), 2 * len(values), buf), shape, dtype, 0, 0, None,
                              dlpack.KDL_CPU)


def test_dlpack_export_to_numpy_and_torch():
    torch = pytest.importorskip("torch")
    bits = [int(np.float16(x).view(np.uint16)) for x in range(12)]
    arr = host_array(bits, (3, 4))
    assert np.array_equal(np.from_dlpack(arr), np.arange(12, dtype=np.float16).reshape(3, 4))
    t = torch.from_dlpack(arr)
    assert t.dtype == torch.float16 and t.shape == (3, 4) and t.stride() == (4, 1)
    bf = torch.from_dlpack(host_array(bits, (2, 6), "bfloat16"))
    assert bf.dtype == torch.bfloat16 and bf.shape == (2, 6)
    assert arr.__cuda_array_interface__ == {"shape": (3, 4), "typestr": "<f2", "data": (arr.ptr, False),
                                            "version": 3, "strides": None, "stream": 1}


def test_dlpack_capsules_release_their_owner():
    arr = host_array([1, 2, 3, 4], (2, 2))
    before = len(dlpack._LIVE)
    legacy, versioned = arr.__dlpack__(), arr.__dlpack__(max_version=(1, 2))
    assert "dltensor" in repr(legacy) and "dltensor_versioned" in repr(versioned)
    assert len(dlpack._LIVE) == before + 2
    del legacy, versioned  # never consumed: the capsules' destructors call the deleters
    gc.collect()
    assert len(dlpack._LIVE) == before
    x = np.from_dlpack(arr)
    assert len(dlpack._LIVE) == before + 1
    del x
    gc.collect()
    assert len(dlpack._LIVE) == before


def test_dlpack_export_refusals():
    arr = host_array([1, 2], (2,))
    with pytest.raises(BufferError, match=r"lives on \(1, 0\), not \(2, 0\)"):
        arr.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=True is not supported"):
        arr.__dlpack__(copy=True)


# --- streams ------------------------------------------------------------------------------------------------


def test_stream_handles():
    class Prop:
        __cuda_stream__ = (0, 99)

    assert cudacore.stream_handle(5) == 5
    assert cudacore.stream_handle(Stream(42)) == 42
    assert cudacore.stream_handle(Prop()) == 99
    for bad in (-1, True, "x", 1.5):
        with pytest.raises(TypeError):
            cudacore.stream_handle(bad)


def test_memory_on_a_default_stream_is_freed_with_its_own_device_current(monkeypatch):
    """The legacy and per-thread handles name the current context's stream: a buffer of device 1 dropped
    with device 0 current is freed with device 1 current (its stream-ordered free behind device 1's work),
    and the caller's device is given back; a stream of its own needs no switch; a free refused on the
    stream falls back to the buffer's own."""
    current, log = [0], []

    class Buffer:
        handle = 0x1000

        def __init__(self, device, refuse):
            self.device, self.refuse = device, refuse

        def close(self, stream=None):
            if self.refuse and stream is not None:
                raise RuntimeError("stream gone")
            log.append((self.device, current[0], stream))

    class Core:
        LEGACY_DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM = "legacy", "per-thread"
        refuse = False

        class Stream:
            from_handle = staticmethod(lambda handle: f"stream {handle:#x}")

        @classmethod
        def Device(cls, index):  # noqa: N802 (cuda.core's name)
            resource = types.SimpleNamespace(allocate=lambda n, stream: Buffer(index, cls.refuse))
            return types.SimpleNamespace(memory_resource=resource)

    class Devices(cudacore.Devices):
        def enter(self, index):
            previous, current[0] = current[0], index
            return None if previous == index else previous

        def leave(self, previous):
            if previous is not None:
                current[0] = previous

    monkeypatch.setattr(cudacore, "core", lambda: Core)
    devices = Devices()
    for handle in (0, 1, 2, 0x77):
        block = devices.alloc(1, handle, 64)
        del block
        gc.collect()
    assert log == [(1, 1, "legacy"), (1, 1, "legacy"), (1, 1, "per-thread"), (1, 0, "stream 0x77")]
    Core.refuse = True
    del log[:]
    block = devices.alloc(1, 0x77, 64)
    del block
    gc.collect()
    assert log == [(1, 0, None)] and current == [0]


# --- the torch fast path over a real ctypes boundary ---------------------------------------------------------


@pytest.fixture(scope="module")
def fake_so(tmp_path_factory):
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import fakelib

    if not fakelib.have_compiler():
        pytest.skip("no host C compiler")
    return fakelib, fakelib.build_fake(SPECS["bias_gelu_mul_permute_f16"], tmp_path_factory.mktemp("fakelib"))


def test_fast_path_passes_the_full_paths_arguments_through_ctypes(fake_so):
    """Through the real ctypes binding (bytes on the fast path, byref(CksArgs) on the full
    path): the C side receives the same CksArgs but for the pointers."""
    import torch

    fakelib, so = fake_so
    op = fakelib.fake_op(SPECS["bias_gelu_mul_permute_f16"], so, Platform())
    view = (2, 8, 2, 16)
    calls = []
    for _ in range(3):
        a, w = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half)
        bias, e = torch.randn(N, dtype=torch.half), torch.randn(M, N, dtype=torch.half)
        out = op(a, w.t(), bias=bias, e=e, view=view, split_k=4, mode="parallel")
        calls.append((fakelib.last_args(op), a, w, bias, e, out))
    assert fakelib.calls(op) == 3 and len(op.prepared) == 1
    fields = [name for name, _ in abi.CksArgs._fields_]
    pointers = {"a", "b", "bias", "e", "d"}
    first = {f: getattr(calls[0][0], f) for f in fields if f not in pointers}
    for args, a, w, bias, e, out in calls:
        assert {f: getattr(args, f) for f in fields if f not in pointers} == first
        assert (args.a, args.b, args.bias, args.e, args.d) == (a.data_ptr(), w.data_ptr(), bias.data_ptr(),
                                                               e.data_ptr(), out.data_ptr())
    assert first["partials"] and first["partial_bytes"] >= 1 << 20 and first["split_k"] == 4


def test_a_tensor_alpha_is_read_on_every_call():
    """A 0-d tensor given as alpha (accepted: the full path reads float(alpha)) keeps the call on
    the full path: keyed by shape alone, a remembered signature would launch a later call with
    the first call's alpha (it did, before plain_key)."""
    torch = pytest.importorskip("torch")
    from cutlass_splitk.runtime.prepared import plain_key

    op = make_op("linear_f16")
    a, w = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half)
    kw = dict(c=torch.randn(M, N, dtype=torch.half), beta=1.0, bias=torch.randn(N, dtype=torch.half))
    for v in (0.5, 0.5, 0.5, 2.0, 3.0):
        op(a, w.t(), alpha=torch.tensor(v), **kw)
    scale = torch.tensor(0.25)
    for v in (0.25, 0.25, 0.25, 4.0):
        scale.fill_(v)  # the same tensor, changed in place
        op(a, w.t(), alpha=scale, **kw)
    for v in (0.5, 0.5, 0.5, 2.0):
        op(a, w.t(), alpha=v, **kw)
    assert [args.alpha for args, _ in op.bound.calls] == [0.5, 0.5, 0.5, 2.0, 3.0, 0.25, 0.25, 0.25, 4.0,
                                                          0.5, 0.5, 0.5, 2.0]
    assert len(op.prepared) == 2  # the float alphas 0.5 and 2.0 only
    assert plain_key((2, 8, 2)) == (tuple, (2, 8, 2)) and plain_key(None) == (type(None), None)
    for bad in (torch.tensor(1.0), (torch.tensor(2), 8), np.float32(1.0), [1, 2]):
        with pytest.raises(TypeError):
            plain_key(bad)


def test_fast_path_threads_share_nothing_mutable():
    """Eight threads on one signature: every launch carries its own thread's pointers."""
    torch = pytest.importorskip("torch")
    op = make_op("linear_f16")
    seen = []
    op.bound.run = {name: (lambda args, stream: seen.append((threading.get_ident(), abi.CksArgs.from_buffer_copy(
        args) if isinstance(args, bytes) else args._obj)) or 0) for name in op.bound.run}
    w = torch.randn(N, K, dtype=torch.half)
    op(torch.randn(M, K, dtype=torch.half), w.t())
    mine = {}
    ready = threading.Barrier(8)  # all alive at once: thread idents stay unique
    inputs = [torch.randn(M, K, dtype=torch.half) for _ in range(8)]

    def worker(a):
        mine[threading.get_ident()] = a.data_ptr()
        ready.wait()
        for _ in range(300):
            op(a, w.t())
        ready.wait()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=worker, args=(a,)) for a in inputs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(seen) == 2401
    assert all(args.a == mine[tid] for tid, args in seen[1:])


def test_torch_compile_traces_the_call_into_the_custom_op():
    """Dynamo inlines Op.__call__ (fast-path lookup skipped, no import statement on the way)
    and records the custom op: one graph, no break (a recording backend; CPU tensors)."""
    torch = pytest.importorskip("torch")
    from cutlass_splitk.runtime import torch_op

    op = make_op("bias_gelu_mul_permute_f16")
    op.torch_op = torch_op.register(op)
    a, w = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half)
    bias, e = torch.randn(N, dtype=torch.half), torch.randn(M, N, dtype=torch.half)

    def f(a, w, bias, e):
        return op(a, w.t(), bias=bias, e=e, view=(2, 8, 2, 16)) * 2

    f(a, w, bias, e)
    f(a, w, bias, e)  # eager: the signature is remembered, so the fast path exists
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return lambda *args: (torch.zeros(2, 2, 8, 16, dtype=torch.half),)

    torch._dynamo.reset()
    torch.compile(f, fullgraph=True, backend=backend)(a, w, bias, e)
    (gm,) = graphs
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert any(t.startswith("cutlass_splitk.bias_gelu_mul_permute_f16") for t in targets), targets
