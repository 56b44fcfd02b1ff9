"""Any CUDA array through cuda.core (issue 15), on the GPU: CuPy, JAX and cuda.core buffers on
non-default streams of those frameworks give the same bits as the torch call; a process with
torch hidden loads the library and runs an op; cuda.core's device properties and
StridedMemoryView agree with torch and with our own __cuda_array_interface__ parser; the torch
fast path gives the full path's bits, also from several threads on their own streams."""

import contextlib
import gc
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with torch here

import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import threading  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

torch = pytest.importorskip("torch")

from cutlass_splitk.runtime import arrays, clusters, cudacore, dlpack  # noqa: E402
from cutlass_splitk.runtime.dispatch import DeviceInfo  # noqa: E402

from gpu_util import BUILD_ROOT, ROOT  # noqa: E402

pytestmark = pytest.mark.gpu
MODES = [(None, None), ("serial", 4), ("parallel", 8)]
M, N, K = 48, 512, 4096


@pytest.fixture
def lib(libs):
    if "default" not in libs:
        pytest.skip("build/default is not built")
    return libs["default"]


def inputs(m=M, n=N, k=K, seed=1, dtype=torch.float16):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return tuple(torch.randn(*s, device="cuda", dtype=dtype, generator=g) for s in ((m, k), (n, k), (n,)))


def mode_kw(mode, split):
    return {} if mode is None else {"mode": mode, "split_k": split}


def reference(lib, seed, mode, split):
    """linear_bias_gelu_f16, its torch inputs of ``seed`` and torch's call in that mode (the reference
    each array framework's call must match bit for bit)."""
    op = lib.linear_bias_gelu_f16
    a, w, bias = inputs(seed=seed)
    return op, (a, w, bias), op(a, w.t(), bias=bias, **mode_kw(mode, split))


def same_bits(y, ref):
    got = torch.from_dlpack(y)
    torch.cuda.synchronize()
    return got.shape == ref.shape and torch.equal(got, ref)


class CAI:
    """An object exposing only ``__cuda_array_interface__`` (and keeping ``keep`` alive)."""

    def __init__(self, cai, keep=None):
        self.__cuda_array_interface__ = cai
        self.keep = keep


def column_major(obj, devices):
    """The (K, N) column-major view of a row-major (N, K) array of any framework."""
    v = arrays.view("test", "w", obj, 0, devices)
    rows, cols = v.shape
    return CAI({"shape": (cols, rows), "typestr": "<V2" if v.dtype == "bfloat16" else "<f2",
                "data": (v.ptr, False), "version": 3, "strides": (2, 2 * cols), "stream": None}, v)


def core_stream():
    dev = cudacore.core().Device(0)
    dev.set_current()
    return dev, dev.create_stream()


# --- CuPy ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode,split", MODES)
def test_cupy_arrays_on_cupy_streams(lib, mode, split):
    cupy = pytest.importorskip("cupy")
    op = lib.linear_bias_gelu_f16
    a, w, bias = inputs()
    ref = op(a, w.t(), bias=bias, **mode_kw(mode, split))
    torch.cuda.synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:  # the data is written on s, and the op runs on CuPy's current stream (s) by default
        ca, cw, cb = (cupy.from_dlpack(x).copy() for x in (a, w, bias))
        y = op(ca, cw.T, bias=cb, **mode_kw(mode, split))
    s.synchronize()
    assert isinstance(y, cupy.ndarray) and y.shape == (M, N)
    assert same_bits(y, ref)
    s2 = cupy.cuda.Stream(non_blocking=True)
    out = cupy.full((M, N), float("nan"), dtype=cupy.float16)
    cupy.cuda.Device().synchronize()
    stream = s2 if hasattr(s2, "__cuda_stream__") else s2.ptr
    assert op(ca, cw.T, bias=cb, out=out, stream=stream, **mode_kw(mode, split)) is out
    s2.synchronize()
    assert same_bits(out, ref)


@pytest.mark.parametrize("mode,split", MODES)
def test_cupy_current_stream_set_by_use_is_kept(lib, mode, split):
    """A call given another stream (``stream=``) leaves the stream the caller made current with
    ``Stream.use()`` current (before, the output's allocation in a ``with stream:`` block rewound
    CuPy's current stream to the null stream, so the caller's next CuPy work ran unordered with
    the first stream's), and its output, allocated on the given stream, has torch's bits."""
    cupy = pytest.importorskip("cupy")
    op, (a, w, bias), ref = reference(lib, 12, mode, split)
    torch.cuda.synchronize()
    ca, cw, cb = (cupy.from_dlpack(x).copy() for x in (a, w, bias))
    cupy.cuda.Device().synchronize()
    mine, given = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    mine.use()
    try:
        for _ in range(4):  # the full path, then the fast path
            y = op(ca, cw.T, bias=cb, stream=given.ptr, **mode_kw(mode, split))
            assert cupy.cuda.get_current_stream() == mine
            given.synchronize()
            assert same_bits(y, ref)
    finally:
        cupy.cuda.Stream.null.use()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
@pytest.mark.parametrize("mode,split", MODES + [("parallel", 1)])
def test_cupy_arrays_on_the_second_device(lib, mode, split):
    """CuPy arrays on device 1, called the CuPy way (inside ``cupy.cuda.Device(1)``, on a stream of that
    device): the same bits as torch's call on device 0, in CuPy on device 1, on the full path and on
    the fast path (a signature's third call on), and the thread's current device as the caller had it."""
    cupy = pytest.importorskip("cupy")
    op, (a, w, bias), ref = reference(lib, 7, mode, split)
    torch.cuda.synchronize()
    with cupy.cuda.Device(1):
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            ca, cw, cb = (cupy.asarray(x.cpu().numpy()) for x in (a, w, bias))
            for _ in range(4):
                y = op(ca, cw.T, bias=cb, **mode_kw(mode, split))
                assert isinstance(y, cupy.ndarray) and y.device.id == 1
                assert cupy.cuda.runtime.getDevice() == 1  # CuPy's context, given back
                s.synchronize()
                assert (cupy.asnumpy(y).view("uint16") == ref.cpu().numpy().view("uint16")).all()
    assert torch.cuda.current_device() == 0


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
@pytest.mark.parametrize("mode,split", MODES)
def test_cupy_arrays_on_the_second_device_called_from_the_first(lib, mode, split):
    """CuPy arrays on device 1 written on CuPy's current stream of device 1, called with device 0
    current and a stream of its own current there: the call takes device 1's current stream (CuPy
    keeps one per device), so it follows the writes and gives torch's bits on the full path and
    the fast path; device 0 and its stream stay current. (Before, it took device 0's stream and
    the launch failed.)"""
    cupy = pytest.importorskip("cupy")
    op, (a, w, bias), ref = reference(lib, 11, mode, split)
    torch.cuda.synchronize()
    with cupy.cuda.Device(1):
        s1 = cupy.cuda.Stream(non_blocking=True)
        src = [cupy.asarray(x.cpu().numpy()) for x in (a, w, bias)]
        cupy.cuda.Device().synchronize()
        busy = cupy.ones((4096, 4096), dtype=cupy.float16)
    s0 = cupy.cuda.Stream(non_blocking=True)
    with cupy.cuda.Device(0), s0:
        for _ in range(4):
            with cupy.cuda.Device(1):
                s1.use()  # device 1's current stream, which stays current after the block
                for _ in range(3):  # a queue of work ahead of the operands' writes on s1
                    busy = busy @ busy * 0.0 + 1.0
                ca, cw, cb = (x * 1 for x in src)  # written on s1, after the queue
            assert cupy.cuda.runtime.getDevice() == 0
            y = op(ca, cw.T, bias=cb, **mode_kw(mode, split))
            assert isinstance(y, cupy.ndarray) and y.device.id == 1
            assert cupy.cuda.runtime.getDevice() == 0 and cupy.cuda.get_current_stream() == s0
            assert cupy.cuda.get_current_stream(1) == s1  # the caller's stream of device 1, kept
            s1.synchronize()
            assert (cupy.asnumpy(y).view("uint16") == ref.cpu().numpy().view("uint16")).all()
    with cupy.cuda.Device(1):
        cupy.cuda.Stream.null.use()
    assert torch.cuda.current_device() == 0


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_cupy_a_on_the_second_device_is_read_after_its_writes(lib):
    """a: a CuPy array on device 1 written on CuPy's current stream there (behind a queue of work);
    b and bias: torch tensors on device 1 with nothing pending; called with device 0 current and
    stream= another stream of device 1. Only a's stream handshake orders the call after a's writes,
    and CuPy's handshake goes through the current device's stream, so a is read with its own
    device current (before, device 0's stream was waited for and the kernels could read a early)."""
    cupy = pytest.importorskip("cupy")
    op = lib.linear_bias_gelu_f16
    a, w, bias = inputs(seed=13)
    ref = op(a, w.t(), bias=bias)
    d1 = torch.device("cuda", 1)
    w1, bias1 = w.to(d1), bias.to(d1)
    torch.cuda.synchronize(d1)
    with cupy.cuda.Device(1):
        s1, s2 = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
        src = cupy.asarray(a.cpu().numpy())
        busy = cupy.ones((4096, 4096), dtype=cupy.float16)
        cupy.cuda.Device().synchronize()
    with cupy.cuda.Device(0):
        for _ in range(3):  # the full path every time (torch operands have no fast-path reader)
            with cupy.cuda.Device(1):
                s1.use()
                for _ in range(3):
                    busy = busy @ busy * 0.0 + 1.0
                ca = src * 1  # written on s1, behind the queue
            y = op(ca, w1.t(), bias=bias1, stream=s2.ptr)
            s2.synchronize()
            assert (cupy.asnumpy(y).view("uint16") == ref.cpu().numpy().view("uint16")).all()
            assert cupy.cuda.runtime.getDevice() == 0
    with cupy.cuda.Device(1):
        cupy.cuda.Stream.null.use()
    assert torch.cuda.current_device() == 0


def test_cupy_padding_and_k0_match_torch(lib):
    cupy = pytest.importorskip("cupy")
    op = lib.linear_bias_gelu_f16
    a, w, bias = inputs(33, 30, 60, seed=5)
    with pytest.warns(Warning, match="padded buffers"):
        ref = op(a, w.t(), bias=bias)
    with pytest.warns(Warning, match="padded buffers"):
        y = op(cupy.from_dlpack(a), cupy.from_dlpack(w).T, bias=cupy.from_dlpack(bias))
    cupy.cuda.Device().synchronize()
    assert same_bits(y, ref)
    a0, w0 = torch.empty(5, 0, device="cuda", dtype=torch.half), torch.empty(30, 0, device="cuda", dtype=torch.half)
    ref0 = op(a0, w0.t(), bias=bias)  # torch: the epilogue of a zero product in torch
    y0 = op(cupy.from_dlpack(a0), cupy.from_dlpack(w0).T, bias=cupy.from_dlpack(bias))  # the kernels, on zeros
    cupy.cuda.Device().synchronize()
    torch.testing.assert_close(torch.from_dlpack(y0).float(), ref0.float(), atol=2e-3, rtol=2e-3)


# --- JAX ---------------------------------------------------------------------------------------------------


def jax_gpu():
    jax = pytest.importorskip("jax")
    device = torch.cuda.current_device()
    try:
        gpus = any(d.platform == "gpu" for d in jax.devices())
    finally:  # JAX's start-up leaves its last GPU's context current (two H100s: torch's inputs went to cuda:1)
        torch.cuda.set_device(device)
    if not gpus:
        pytest.skip("JAX sees no GPU")
    return jax


@pytest.mark.parametrize("mode,split", MODES)
def test_jax_arrays_on_a_cuda_core_stream(lib, mode, split):
    jax = jax_gpu()
    jnp = jax.numpy
    op, (a, w, bias), ref = reference(lib, 2, mode, split)
    torch.cuda.synchronize()
    ja, jw, jb = (jnp.asarray(x.cpu().numpy()) for x in (a, w, bias))
    jw.block_until_ready()
    _, s = core_stream()
    y = op(ja, column_major(jw, lib.platform.devices), bias=jb, stream=s, **mode_kw(mode, split))
    s.sync()
    assert isinstance(y, dlpack.DeviceArray) and y.shape == (M, N)
    assert same_bits(y, ref)
    jy = jnp.from_dlpack(y)  # JAX reads the library's array
    assert np.array_equal(np.asarray(jy).view(np.uint16), ref.cpu().numpy().view(np.uint16))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
@pytest.mark.parametrize("mode,split", MODES)
def test_jax_arrays_on_the_second_device(lib, mode, split):
    """JAX arrays on JAX's second GPU called with device 0 current, on the legacy default stream (device
    1's) and on a cuda.core stream of device 1: torch's bits in a DeviceArray on device 1, which a second
    call on device 1 takes as its input (the full path, then the fast path); torch's device kept."""
    jax = jax_gpu()
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if len(gpus) < 2:
        pytest.skip("JAX sees one GPU")
    jnp = jax.numpy
    op, (a, w, bias), ref = reference(lib, 17, mode, split)
    _, w2, bias2 = inputs(N, 256, N, seed=18)  # the second call's weight (256, N) and bias: K = N
    ref2 = op(ref, w2.t(), bias=bias2, **mode_kw(mode, split))
    ja, jw, jb, jw2, jb2 = (jax.device_put(jnp.asarray(x.cpu().numpy()), gpus[1]) for x in (a, w, bias, w2, bias2))
    jw.block_until_ready()
    torch.cuda.set_device(0)
    dev1 = cudacore.core().Device(1)
    saved = lib.platform.devices.enter(1)
    try:
        s1 = dev1.create_stream()
    finally:
        lib.platform.devices.leave(saved)
    devices = lib.platform.devices
    for stream in (None, s1):
        for _ in range(4):
            y = op(ja, column_major(jw, devices), bias=jb, stream=stream, **mode_kw(mode, split))
            assert torch.cuda.current_device() == 0
            assert isinstance(y, dlpack.DeviceArray) and y.device == 1
            y2 = op(y, column_major(jw2, devices), bias=jb2, stream=stream, **mode_kw(mode, split))
            assert isinstance(y2, dlpack.DeviceArray) and y2.device == 1
            torch.cuda.synchronize(1)
            assert torch.equal(torch.from_dlpack(y).cpu(), ref.cpu())
            assert torch.equal(torch.from_dlpack(y2).cpu(), ref2.cpu())


def test_jax_bf16_row_major_b(libs):
    jax = jax_gpu()
    jnp = jax.numpy
    if "epilogues" not in libs:
        pytest.skip("build/epilogues is not built")
    op = libs["epilogues"].nn_bias_silu_bf16
    a, w, bias = inputs(40, 256, 2048, seed=3, dtype=torch.bfloat16)
    b = w.t().contiguous()  # (K, N) row-major: layout nn
    ref = op(a, b, bias=bias)
    torch.cuda.synchronize()
    ja, jb, jbias = (jnp.asarray(x.float().cpu().numpy()).astype(jnp.bfloat16) for x in (a, b, bias))
    _, s = core_stream()
    y = op(ja, jb, bias=jbias, stream=s)
    s.sync()
    assert y.dtype == "bfloat16" and same_bits(y, ref)


# --- objects with only a CUDA array interface, on the second device --------------------------------------------


def cai_of(t, stream):
    """``t`` (a torch tensor) as an object with only ``__cuda_array_interface__`` v3, naming ``stream``
    (a raw handle) as its producer."""
    return CAI({"shape": tuple(t.shape), "typestr": "<f2", "data": (t.data_ptr(), False), "version": 3,
                "strides": tuple(2 * x for x in t.stride()), "stream": stream}, t)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_pointer_device_on_the_second_device(lib):
    """Where a pointer lives, as the array path asks (cuda.bindings 13.3.1 reads every pointer's device
    ordinal as 0: NVIDIA/cuda-python#2928)."""
    devices = lib.platform.devices
    for index in range(torch.cuda.device_count()):
        t = torch.empty(1024, device=torch.device("cuda", index))
        assert devices.pointer_device(t.data_ptr()) == index
        assert devices.pointer_device(t.data_ptr() + 2048) == index
    assert devices.pointer_device(torch.empty(8).data_ptr()) is None  # pageable host memory


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_a_stream_of_the_other_device_is_refused_on_the_second_device(lib):
    """stream= of cuda:0 for operands on cuda:1: a ValueError that says which stream to pass (the launch
    would fail with an invalid argument); a stream of cuda:1 runs; each stream's device as the driver says."""
    devices = lib.platform.devices
    s0, s1 = torch.cuda.Stream(torch.device("cuda", 0)), torch.cuda.Stream(torch.device("cuda", 1))
    assert (devices.stream_device(s0.cuda_stream), devices.stream_device(s1.cuda_stream)) == (0, 1)
    op, (a, w, bias), ref = reference(lib, 19, None, None)
    d1 = torch.device("cuda", 1)
    ta, tw, tb = (x.to(d1) for x in (a, w, bias))
    torch.cuda.synchronize(d1)
    with pytest.raises(ValueError, match=rf"stream={s0.cuda_stream:#x} is a stream of cuda:0 but the operands are "
                                         r"on cuda:1; pass a stream of cuda:1"):
        op(cai_of(ta, None), cai_of(tw.t(), None), bias=cai_of(tb, None), stream=s0.cuda_stream)
    y = op(cai_of(ta, None), cai_of(tw.t(), None), bias=cai_of(tb, None), stream=s1.cuda_stream)
    s1.synchronize()
    assert torch.equal(torch.from_dlpack(y).cpu(), ref.cpu())


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
@pytest.mark.parametrize("mode,split", MODES)
def test_cai_arrays_on_the_second_device(lib, mode, split):
    """Objects with only a CUDA array interface (v3) on device 1, written on a torch stream of device 1
    behind a queue of work, called with device 0 current: on the legacy default stream (device 1's: the
    producer's stream of another context waited for) and on another stream of device 1; the full path
    and the fast path give torch's bits in a DeviceArray on device 1."""
    op, (a, w, bias), ref = reference(lib, 16, mode, split)
    d1 = torch.device("cuda", 1)
    producer, other = torch.cuda.Stream(d1), torch.cuda.Stream(d1)
    busy = torch.ones(4096, 4096, device=d1, dtype=torch.float16)
    src = [x.to(d1) for x in (a, w, bias)]
    torch.cuda.synchronize(d1)
    for stream in (None, other.cuda_stream):
        for _ in range(4):
            with torch.cuda.stream(producer):
                for _ in range(3):  # a queue of work ahead of the operands' writes
                    busy = busy @ busy * 0.0 + 1.0
                ta, tw, tb = (x * 1 for x in src)
            y = op(cai_of(ta, producer.cuda_stream), cai_of(tw.t(), producer.cuda_stream),
                   bias=cai_of(tb, producer.cuda_stream), stream=stream, **mode_kw(mode, split))
            assert torch.cuda.current_device() == 0
            assert isinstance(y, dlpack.DeviceArray) and y.device == 1
            torch.cuda.synchronize(d1)
            assert torch.equal(torch.from_dlpack(y).cpu(), ref.cpu())


def test_device_array_used_on_another_stream_then_dropped_is_not_reused_under_that_use(lib):
    """A DeviceArray made on stream s1, then read (and, in the second half, written as ``out``) by a call on
    a busy stream s2 and dropped at once: the next output allocated on s1, which the pool may give the same
    memory, is written only after s2's use (the free waits for it). Torch's bits everywhere."""
    op, (a, w, bias), ref = reference(lib, 21, None, None)
    _, w2, bias2 = inputs(N, 256, N, seed=22)  # the second call's (256, N) weight: K = N
    ref2 = op(ref, w2.t(), bias=bias2)
    zero = bias * 0.0
    ref_next = op(a, w.t(), bias=zero)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    busy = torch.ones(4096, 4096, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    args = (cai_of(a, None), cai_of(w.t(), None))
    for write in (False, True):
        for _ in range(6):
            y = op(*args, bias=cai_of(bias, None), stream=s1.cuda_stream)
            with torch.cuda.stream(s2):
                for _ in range(16):  # ~3 ms of s2's work ahead of the use
                    busy = busy @ busy * 0.0 + 1.0
            if write:  # y is written on s2 (after s1's work), then read there
                op(*args, bias=cai_of(bias, None), out=y, stream=s2.cuda_stream)
                assert y.stream == s2.cuda_stream
            z = op(y, cai_of(w2.t(), None), bias=cai_of(bias2, None), stream=s2.cuda_stream)
            with torch.cuda.stream(s2):
                busy = busy @ busy * 0.0 + 1.0
            z = op(y, cai_of(w2.t(), None), bias=cai_of(bias2, None), stream=s2.cuda_stream)  # s2's event again
            del y  # its memory goes back now, on s1
            y_next = op(*args, bias=cai_of(zero, None), stream=s1.cuda_stream)  # same size, on s1
            torch.cuda.synchronize()
            assert torch.equal(torch.from_dlpack(z), ref2), "the dropped array's memory was reused under its read"
            assert torch.equal(torch.from_dlpack(y_next), ref_next), "the dropped array's write overwrote new memory"


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_device_array_on_the_second_device_is_freed_behind_its_writes(lib, record_property):
    """A DeviceArray output on device 1's legacy default stream, its kernels queued behind device 1's work,
    dropped with device 0 current: its memory goes back to device 1's pool ordered on device 1's legacy
    stream. Memory allocated next on another stream of device 1 and filled there is not overwritten by the
    dropped output's kernels (freed on device 0's legacy stream, the pool could hand it out at once)."""
    op, (a, w, bias), ref = reference(lib, 19, None, None)
    d1 = torch.device("cuda", 1)
    other = torch.cuda.Stream(d1)  # non-blocking: does not wait for the legacy stream
    busy = torch.ones(4096, 4096, device=d1, dtype=torch.float16)
    ta, tw, tb = (x.to(d1) for x in (a, w, bias))
    torch.cuda.synchronize(d1)
    devices, nbytes, reused = lib.platform.devices, ref.numel() * 2, 0
    torch.cuda.set_device(0)
    for _ in range(6):
        with torch.cuda.device(d1):
            for _ in range(16):  # ~3 ms queued on device 1's legacy stream ahead of the call's kernels
                busy = busy @ busy * 0.0 + 1.0
        y = op(cai_of(ta, None), cai_of(tw.t(), None), bias=cai_of(tb, None))
        assert isinstance(y, dlpack.DeviceArray) and y.device == 1 and torch.cuda.current_device() == 0
        dropped = y.ptr
        del y  # freed here (no cycle holds it); gc.collect() could outlast the queue
        block = devices.alloc(1, other.cuda_stream, nbytes)
        reused += block.ptr == dropped
        saved = devices.enter(1)
        try:
            d = cudacore.driver()
            cudacore.check(d.cuMemsetD8Async(d.CUdeviceptr(block.ptr), 0x3C, nbytes, d.CUstream(other.cuda_stream)),
                           "cuMemsetD8Async")
        finally:
            devices.leave(saved)
        torch.cuda.synchronize(d1)
        got = torch.as_tensor(CAI({"shape": (nbytes,), "typestr": "|u1", "data": (block.ptr, False), "version": 3,
                                   "strides": None, "stream": None}), device=d1)
        assert torch.count_nonzero(got != 0x3C).item() == 0, "the dropped output's kernels wrote into new memory"
        del block
        gc.collect()
    record_property("reused_addresses", reused)
    assert torch.cuda.current_device() == 0


# --- Numba ---------------------------------------------------------------------------------------------------


def numba_cuda():
    try:
        from numba import cuda
    except Exception as exc:  # not installed, or (the device machine: Numba 0.68, NumPy 2.5) not importable
        pytest.skip(f"numba cannot be imported here: {type(exc).__name__}: {exc}")
    if not cuda.is_available():
        pytest.skip("Numba sees no GPU")
    return cuda


def numba_handle(s):
    """The raw handle of a Numba stream (ctypes or cuda-python bindings, whichever Numba uses)."""
    h = s.handle
    return int(h.value if hasattr(h, "value") else h)


def numba_inputs(cuda, s, a, w, bias):
    """a, the weight as the (K, N) column-major operand, and bias as Numba arrays written on ``s``
    (the weight copied from a Fortran-ordered host array: Numba's ``.T`` compiles a copy kernel)."""
    host = (a.cpu().numpy(), np.asfortranarray(w.cpu().numpy().T), bias.cpu().numpy())
    return tuple(cuda.to_device(x, stream=s) for x in host)


def numba_bits(y, cuda):
    assert type(y).__module__.split(".")[0] == "numba" and cuda.is_cuda_array(y)  # the caller's framework
    return y.copy_to_host().view(np.uint16)


@pytest.mark.parametrize("mode,split", MODES)
def test_numba_arrays_on_a_numba_stream(lib, mode, split):
    """Numba device arrays written on a Numba stream (their CUDA array interface names it), the call on
    that stream: torch's bits in a Numba array, on the full path and the fast path."""
    cuda = numba_cuda()
    op, (a, w, bias), ref = reference(lib, 14, mode, split)
    ref = ref.cpu().numpy().view(np.uint16)
    s = cuda.stream()
    na, nw, nb = numba_inputs(cuda, s, a, w, bias)
    for _ in range(4):
        y = op(na, nw, bias=nb, stream=numba_handle(s), **mode_kw(mode, split))
        s.synchronize()
        assert y.shape == (M, N) and (numba_bits(y, cuda) == ref).all()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
@pytest.mark.parametrize("mode,split", MODES)
def test_numba_arrays_on_the_second_device(lib, mode, split):
    """Numba arrays on device 1 (made inside ``cuda.gpus[1]``) called with device 0 current, on a Numba
    stream of device 1 and on the legacy default stream: torch's bits in a Numba array on device 1,
    and torch's current device kept."""
    cuda = numba_cuda()
    op, (a, w, bias), ref = reference(lib, 15, mode, split)
    ref = ref.cpu().numpy().view(np.uint16)
    with cuda.gpus[1]:
        s = cuda.stream()
        na, nw, nb = numba_inputs(cuda, s, a, w, bias)
    left = torch.cuda.current_device()  # the thread can come out of Numba's first block on device 1 there
    torch.cuda.set_device(0)
    for stream in (numba_handle(s), None):
        for _ in range(4):
            y = op(na, nw, bias=nb, stream=stream, **mode_kw(mode, split))
            assert torch.cuda.current_device() == 0, f"Numba's block left cuda:{left} current"
            ptr = y.__cuda_array_interface__["data"][0]
            assert lib.platform.devices.pointer_device(ptr) == 1
            torch.cuda.synchronize(1)
            with cuda.gpus[1]:
                assert (numba_bits(y, cuda) == ref).all()


# --- cuda.core buffers -------------------------------------------------------------------------------------


def smv_class():
    try:
        from cuda.core.utils import StridedMemoryView
    except ImportError:
        from cuda.core.experimental.utils import StridedMemoryView
    if not hasattr(StridedMemoryView, "from_buffer"):
        pytest.skip("this cuda.core has no StridedMemoryView.from_buffer")
    return StridedMemoryView


def to_buffer(dev, s, t):
    """A cuda.core buffer holding a copy of tensor ``t`` (copied on stream ``s``)."""
    d = cudacore.driver()
    buf = dev.allocate(t.numel() * t.element_size(), stream=s)
    cudacore.check(d.cuMemcpyDtoDAsync(d.CUdeviceptr(int(buf.handle)), d.CUdeviceptr(t.data_ptr()),
                                       t.numel() * t.element_size(), d.CUstream(int(s.handle))), "copy")
    return buf


def smv_of(smv, buf, shape, strides=None):
    v = smv.from_buffer(buf, shape, strides, dtype=np.dtype(np.float16))
    if strides is not None and tuple(v.strides) != tuple(strides):  # a cuda.core taking byte strides
        v = smv.from_buffer(buf, shape, tuple(2 * x for x in strides), dtype=np.dtype(np.float16))
    assert strides is None or tuple(v.strides) == tuple(strides)
    return v


@pytest.mark.parametrize("mode,split", MODES)
def test_cuda_core_buffers_on_a_cuda_core_stream(lib, mode, split):
    smv = smv_class()
    op, (a, w, bias), ref = reference(lib, 4, mode, split)
    torch.cuda.synchronize()
    dev, s = core_stream()
    ba, bw, bb = (to_buffer(dev, s, x) for x in (a, w, bias))
    va, vw, vb = smv_of(smv, ba, (M, K)), smv_of(smv, bw, (K, N), (1, K)), smv_of(smv, bb, (N,))
    y = op(va, vw, bias=vb, stream=s, **mode_kw(mode, split))
    bo = dev.allocate(M * N * 2, stream=s)
    vo = smv_of(smv, bo, (M, N))
    assert op(va, vw, bias=vb, out=vo, stream=s, **mode_kw(mode, split)) is vo
    s.sync()
    assert same_bits(y, ref)
    got = torch.empty(M, N, device="cuda", dtype=torch.half)
    d = cudacore.driver()
    cudacore.check(d.cuMemcpyDtoD(d.CUdeviceptr(got.data_ptr()), d.CUdeviceptr(int(bo.handle)), M * N * 2), "copy")
    assert torch.equal(got, ref)


# --- a process without torch -----------------------------------------------------------------------------


def test_torch_free_process_runs_an_op(lib, tmp_path):
    op = lib.linear_bias_gelu_f16
    a, w, bias = inputs(seed=6)
    ref = op(a, w.t(), bias=bias)
    for name, t in (("a", a), ("w", w), ("bias", bias)):
        np.save(tmp_path / f"{name}.npy", t.cpu().numpy())
    code = textwrap.dedent(f"""
        import sys
        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError(name + " is hidden from this process")
        sys.meta_path.insert(0, NoTorch())
        import numpy as np
        import cutlass_splitk
        from cutlass_splitk.runtime import cudacore
        d = cudacore.driver()
        dev = cudacore.core().Device(0)
        dev.set_current()
        s = dev.create_stream()
        lib = cutlass_splitk.load({str(BUILD_ROOT / "default")!r})

        class Array:  # cuda.core memory holding a host array, seen through __cuda_array_interface__
            def __init__(self, host, shape=None, strides=None):
                self.buf = dev.allocate(host.nbytes, stream=s)
                cudacore.check(d.cuMemcpyHtoDAsync(d.CUdeviceptr(int(self.buf.handle)), host.ctypes.data,
                                                   host.nbytes, d.CUstream(int(s.handle))), "HtoD")
                self.__cuda_array_interface__ = {{"shape": shape or host.shape, "typestr": "<f2", "version": 3,
                    "data": (int(self.buf.handle), False), "strides": strides, "stream": int(s.handle)}}

        a, w, bias = (np.load({str(tmp_path)!r} + f"/{{n}}.npy") for n in ("a", "w", "bias"))
        n, k = w.shape
        y = lib.linear_bias_gelu_f16(Array(a), Array(w, (k, n), (2, 2 * k)), bias=Array(bias), stream=s)
        s.sync()
        host = np.empty(y.shape, np.float16)
        cudacore.check(d.cuMemcpyDtoH(host.ctypes.data, d.CUdeviceptr(y.ptr), host.nbytes), "DtoH")
        np.save({str(tmp_path)!r} + "/y.npy", host)
        print("torch modules:", [m for m in sys.modules if m == "torch" or m.startswith("torch.")])
        print("custom op:", lib.linear_bias_gelu_f16.torch_op)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "torch modules: []" in done.stdout and "custom op: None" in done.stdout
    y = np.load(tmp_path / "y.npy")
    assert np.array_equal(y.view(np.uint16), ref.cpu().numpy().view(np.uint16))


# --- streams destroyed before their memory is freed --------------------------------------------------------


def test_streams_destroyed_before_their_workspace_and_outputs_are_freed(lib, tmp_path):
    """Split calls on a CuPy stream, a cuda.core stream and a raw driver stream, each destroyed without
    release_workspace(stream) (CuPy's and cuda.core's by dropping them, the raw one by cuStreamDestroy),
    then release_workspace() with no stream, further such sets left to the library's end (dropped and
    collected), and a DeviceArray output whose cuda.core stream is dropped before it: no crash (freeing on a
    destroyed stream segfaulted in cuda.core's Buffer.close), and every result is torch's bits. In a child
    process, so that a crash fails this test only."""
    cupy = pytest.importorskip("cupy")
    del cupy
    op = lib.linear_bias_gelu_f16
    a, w, bias = inputs(seed=7)
    for mode, split in (("serial", 4), ("parallel", 8)):
        np.save(tmp_path / f"ref_{mode}.npy", op(a, w.t(), bias=bias, mode=mode, split_k=split).cpu().numpy())
    for name, t in (("a", a), ("w", w), ("bias", bias)):
        np.save(tmp_path / f"{name}.npy", t.cpu().numpy())
    code = textwrap.dedent(f"""
        import gc
        import cupy
        import numpy as np
        import cutlass_splitk
        from cutlass_splitk.runtime import cudacore
        d = cudacore.driver()
        path = {str(tmp_path)!r}
        a, w, bias = (cupy.asarray(np.load(f"{{path}}/{{n}}.npy")) for n in ("a", "w", "bias"))
        ref = {{m: np.load(f"{{path}}/ref_{{m}}.npy") for m in ("serial", "parallel")}}
        MODES = (("serial", 4), ("parallel", 8))
        dev = cudacore.core().Device(0)
        dev.set_current()

        class CAI:  # not CuPy: the output is the library's DeviceArray
            def __init__(self, x):
                self.x, self.__cuda_array_interface__ = x, x.__cuda_array_interface__

        def check(y, mode):
            host = cupy.asnumpy(cupy.from_dlpack(y)) if not isinstance(y, cupy.ndarray) else cupy.asnumpy(y)
            assert np.array_equal(host.view(np.uint16), ref[mode].view(np.uint16)), mode

        def dangling_sets(lib):  # sets on streams of three kinds, destroyed without release_workspace(stream)
            op = lib.linear_bias_gelu_f16
            for mode, split in MODES:
                s = cupy.cuda.Stream(non_blocking=True)
                with s:
                    y = op(a, w.T, bias=bias, mode=mode, split_k=split)
                s.synchronize()
                check(y, mode)
                del s
                gc.collect()
                cs = dev.create_stream()
                y = op(CAI(a), CAI(w.T), bias=CAI(bias), mode=mode, split_k=split, stream=cs)
                cs.sync()
                check(y, mode)
                del y
                cs.close()
                raw = cudacore.check(d.cuStreamCreate(1), "cuStreamCreate")  # non-blocking
                y = op(a, w.T, bias=bias, mode=mode, split_k=split, stream=int(raw))
                cudacore.check(d.cuStreamSynchronize(raw), "cuStreamSynchronize")
                check(y, mode)
                cudacore.check(d.cuStreamDestroy(raw), "cuStreamDestroy")
            cupy.cuda.Device().synchronize()

        lib = cutlass_splitk.load({str(BUILD_ROOT / "default")!r})
        dangling_sets(lib)
        print("released sets:", lib.release_workspace())
        for mode, split in MODES:  # still right afterwards, on new streams
            cs = dev.create_stream()
            y = lib.linear_bias_gelu_f16(CAI(a), CAI(w.T), bias=CAI(bias), mode=mode, split_k=split, stream=cs)
            del cs  # the DeviceArray holds the stream it is freed on
            gc.collect()
            check(y, mode)
            cs = dev.create_stream()
            y2 = lib.linear_bias_gelu_f16(CAI(a), CAI(w.T), bias=CAI(bias), mode=mode, split_k=split, stream=cs)
            lib.linear_bias_gelu_f16(CAI(a), CAI(w.T), bias=CAI(bias), mode=mode, split_k=split, out=y, stream=cs)
            del cs  # y, written there last, holds it: its readers wait for it
            gc.collect()
            check(y, mode)
            check(y2, mode)
            del y, y2
            gc.collect()
        dangling_sets(lib)
        del lib
        gc.collect()
        print("library dropped")
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"exit status {done.returncode}\n" + done.stdout + done.stderr
    released = int(done.stdout.split("released sets:")[1].split()[0])
    assert released >= 2 and "library dropped" in done.stdout, done.stdout


# --- cuda.core against torch, and our parser against cuda.core -----------------------------------------


def test_device_properties_from_cuda_core(lib, record_property):
    hw = lib.platform.hardware(0)
    assert lib.platform.hardware_source[0] == "cuda.core"
    p = torch.cuda.get_device_properties(0)
    assert (hw.name, hw.sm_count, hw.major, hw.minor, hw.l2_bytes) == (
        p.name, p.multi_processor_count, p.major, p.minor, p.L2_cache_size)
    if hasattr(p, "shared_memory_per_multiprocessor"):
        assert hw.smem_per_sm == p.shared_memory_per_multiprocessor
    record_property("bandwidth", hw.bandwidth)
    assert hw.bandwidth == 0 or 1e12 < hw.bandwidth < 1e13  # 0: not reported by this driver
    quads = clusters.cluster4_ctas(0, p.major)
    assert lib.device_info(0) == DeviceInfo.from_properties(p.name, p.multi_processor_count, p.major, p.minor, quads)
    assert lib.platform.device_key(0).startswith(f"{p.name}|sm{p.major}{p.minor}|cuda{torch.version.cuda}|driver")


def test_clusters_of_four_counted_by_the_driver(lib, record_property):
    """The time model's count of CTAs resident in clusters of four (runtime/clusters.py), which the
    sm90 kernels also ask for themselves at launch: whole clusters, at most one CTA per SM, and
    every SM in clusters of one (the probe's shared memory admits one CTA per SM). Session 25's H100
    ran 120 (benchmarks/cluster_probe.cu); a chip's count depends on which of its SMs are enabled."""
    p = torch.cuda.get_device_properties(0)
    if p.major < 9:
        assert clusters.cluster4_ctas(0, p.major) == 0
        pytest.skip(f"compute capability {p.major}.{p.minor}: no thread-block clusters")
    quads = clusters.cluster4_ctas(0, p.major)
    record_property("cluster4_ctas", quads)
    assert clusters.max_active_ctas(0, 1) == p.multi_processor_count
    assert quads % 4 == 0 and 0.8 * p.multi_processor_count <= quads <= p.multi_processor_count
    assert lib.device_info(0).cluster4_ctas == quads
    line = lib.explain("linear_f16", 640, 1280, 16384, top=1).splitlines()[0]
    # explain measured the placement first, as a first call would, and ranks with the GPC order (Launcher.device_info)
    assert 0 in lib.linear_f16.launcher.placer.given
    assert (f"({p.multi_processor_count} SMs, {quads} of them in clusters of four, partial GEMMs in the GPC order, "
            "compute capability") in line
    if torch.cuda.device_count() > 1:  # asking another device gives the thread its context back
        with torch.cuda.device(0):
            assert clusters.max_active_ctas(1, 4) % 4 == 0 and torch.cuda.current_device() == 0


def test_own_cai_parser_agrees_with_strided_memory_view(lib):
    """Every object cuda.core's StridedMemoryView reads, our own __cuda_array_interface__
    parser reads alike; what it refuses (CAI version 2, which torch exports: cuda.core reads
    version 3 and up) the runtime reads with its own parser."""
    devices = lib.platform.devices
    a, w, _ = inputs(seed=7)
    cai2 = dict(a.__cuda_array_interface__)
    assert cai2["version"] == 2  # torch's
    objs = [(a, True), (w.t(), True), (a[:, 8:], True), (CAI({**cai2, "version": 3}, a), True), (CAI(cai2, a), False)]
    try:
        import cupy

        objs += [(cupy.from_dlpack(a), True), (cupy.from_dlpack(w).T, True)]
    except ImportError:
        pass
    fields = ("ptr", "shape", "strides", "dtype", "itemsize", "device", "readonly")
    for obj, through_smv in objs:
        v = arrays.view("t", "x", obj, 0, devices)
        assert arrays._smv_class() is not None
        assert isinstance(v.owner, arrays._smv_class()) == through_smv, (type(obj), obj.__cuda_array_interface__)
        c = arrays.from_cai("t", "x", obj.__cuda_array_interface__, obj, 0, devices)
        assert [getattr(v, f) for f in fields] == [getattr(c, f) for f in fields], type(obj)
    host = np.zeros((4, 4), np.float16)
    assert devices.pointer_device(host.ctypes.data) is None
    assert devices.pointer_device(a.data_ptr()) == 0


# --- the array fast path ----------------------------------------------------------------------------------


def framework_calls(framework, lib):
    """(context, stream keyword, synchronize, make) for calls with ``framework``'s arrays on one
    of its non-default streams: ``make(a, w, bias)`` copies torch tensors into fresh arrays (new
    pointers) of the framework, as (a, b, bias), inside ``context``."""
    if framework == "cupy":
        cupy = pytest.importorskip("cupy")
        s = cupy.cuda.Stream(non_blocking=True)  # CuPy's current stream inside the context: the op's default

        def make(a, w, bias):
            ca, cw, cb = (cupy.from_dlpack(x).copy() for x in (a, w, bias))
            return ca, cw.T, cb
        return s, {}, s.synchronize, make
    keep = []
    if framework == "jax":
        jnp = jax_gpu().numpy
        _, s = core_stream()

        def make(a, w, bias):
            ja, jw, jb = (jnp.asarray(x.cpu().numpy()) for x in (a, w, bias))
            jw.block_until_ready()
            return ja, column_major(jw, lib.platform.devices), jb
        return contextlib.nullcontext(), {"stream": s}, s.sync, make
    smv = smv_class()
    dev, s = core_stream()

    def make(a, w, bias):
        ba, bw, bb = (to_buffer(dev, s, x) for x in (a, w, bias))
        keep.append((ba, bw, bb))  # alive until the test ends
        return smv_of(smv, ba, (M, K)), smv_of(smv, bw, (K, N), (1, K)), smv_of(smv, bb, (N,))
    return contextlib.nullcontext(), {"stream": s}, s.sync, make


@pytest.mark.parametrize("framework", ["cupy", "jax", "cuda.core"])
@pytest.mark.parametrize("mode,split", MODES)
def test_array_fast_path_gives_the_full_paths_bits(lib, framework, mode, split, monkeypatch):
    """Five calls of one signature on one stream of the framework, with fresh arrays each (new
    pointers): the first two take the full path, the rest the fast path (JAX: always the full
    path, see array_fast); all give torch's bits."""
    from cutlass_splitk.runtime import array_path

    full = []
    real = array_path.call
    monkeypatch.setattr(array_path, "call", lambda *args, **kw: full.append(1) or real(*args, **kw))
    op = lib.linear_bias_gelu_f16
    op.array_prepared.clear()
    a, w, bias = inputs(seed=11)
    ref = op(a, w.t(), bias=bias, **mode_kw(mode, split))
    torch.cuda.synchronize()
    context, kw, sync, make = framework_calls(framework, lib)
    for i in range(5):
        with context:
            x, b, xb = make(a, w, bias)
            y = op(x, b, bias=xb, **kw, **mode_kw(mode, split))
        sync()
        assert same_bits(y, ref), (framework, i)
    assert len(full) == (5 if framework == "jax" else 2), (framework, len(full))


# --- the torch fast path ----------------------------------------------------------------------------------


def test_fast_path_gives_the_full_paths_bits(lib):
    cases = [("linear_f16", {}), ("linear_f16", {"alpha": 0.5}), ("linear_bias_gelu_f16", {"bias": True}),
             ("linear_f16", {"split_k": 8, "mode": "serial"}), ("linear_f16", {"split_k": 16, "mode": "parallel"}),
             ("bias_gelu_mul_permute_f16", {"bias": True, "e": True, "view": (3, 16, 4, 128)})]
    for name, kw in cases:
        op = getattr(lib, name)
        a, w, bias = inputs(48, 512, 4096, seed=8)
        kw = dict(kw)
        if kw.pop("bias", False):
            kw["bias"] = bias
        if kw.pop("e", False):
            kw["e"] = torch.randn(48, 512, device="cuda", dtype=torch.half)
        full = op._call(a, w.t(), dict(kw), None)  # never remembered
        op(a, w.t(), **kw)
        before = len(op.prepared)
        fast = op(a, w.t(), **kw)
        assert len(op.prepared) == before and before >= 1
        native = op.native
        if native is not None:  # the C call path took it; the Python fast path gives the same bits
            launched = native.stats()[1]
            in_c = op(a, w.t(), **kw)
            assert native.stats()[1] == launched + 1, (name, kw)
            op.native = None
            try:
                in_python = op(a, w.t(), **kw)
            finally:
                op.native = native
            torch.cuda.synchronize()
            assert torch.equal(in_c, full) and torch.equal(in_python, full), (name, kw)
        torch.cuda.synchronize()
        assert torch.equal(fast, full), (name, kw)


def test_the_c_call_path_is_bound_where_torch_publishes_the_table(lib):
    """The build made libcks_pycall.so and load() bound it (torch >= 2.10 publishes the DLPack
    exchange table): every op has its C call path, and it launches on torch's current stream."""
    from cutlass_splitk.runtime import native

    if native.exchange_api() is None:
        pytest.skip(f"torch {torch.__version__} publishes no DLPack exchange table")
    assert lib.manifest.get("pycall", {}).get("file") == "libcks_pycall.so"
    assert all(getattr(lib, name).native is not None for name in lib.ops)
    op = lib.linear_f16
    a, w, _ = inputs(33, 256, 4096, seed=9)
    expected = op._call(a, w.t(), {}, None)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        outs = [op(a, w.t()) for _ in range(4)]
        launched = op.native.stats()[1]
        outs.append(op(a, w.t()))
        assert op.native.stats()[1] == launched + 1
    s.synchronize()
    assert all(torch.equal(o, expected) for o in outs)


def test_c_call_path_in_rotation_gives_the_full_paths_bits(lib):
    """Twelve signatures (three ops, odd M, out= given or not, explicit splits of both modes)
    called in rotation, four rounds, on fresh data every round: from the third round on the C
    call path launches them (stats), and every output, allocated or a NaN-poisoned out=, has the
    bits of the full path on the same data."""
    from cutlass_splitk.runtime import native

    if native.exchange_api() is None:
        pytest.skip(f"torch {torch.__version__} publishes no DLPack exchange table")
    cases = []
    for name, extra in (("linear_f16", {}), ("linear_bias_gelu_f16", {"bias": True}),
                        ("bias_gelu_mul_permute_f16", {"bias": True, "e": True})):
        for m, kw in ((7, {}), (33, {"split_k": 4, "mode": "parallel"}), (129, {"split_k": 2, "mode": "serial"})):
            for with_out in (False, True):
                cases.append((name, m, dict(kw, **extra), with_out))
    launched = {name: getattr(lib, name).native.stats()[1] for name in {c[0] for c in cases}}
    for rnd in range(4):
        for i, (name, m, kw, with_out) in enumerate(cases):
            op = getattr(lib, name)
            a, w, bias = inputs(m, 384, 4104, seed=100 * rnd + i)
            call = {}
            if kw.get("bias"):
                call["bias"] = bias
            if kw.get("e"):
                call["e"] = torch.randn(m, 384, device="cuda", dtype=torch.half)
                call["view"] = (1, m, 3, 128)
            call.update({k: v for k, v in kw.items() if k in ("split_k", "mode")})
            expected = op._call(a, w.t(), dict(call), None)
            if with_out:
                out = torch.full_like(expected, float("nan"))
                got = op(a, w.t(), out=out, **call)
                assert got is out
            else:
                got = op(a, w.t(), **call)
            torch.cuda.synchronize()
            assert torch.equal(got, expected), (rnd, name, m, kw, with_out)
    for name, before in launched.items():
        per_op = sum(c[0] == name for c in cases)
        assert getattr(lib, name).native.stats()[1] - before >= 2 * per_op, name


def test_fast_path_from_threads_on_their_streams(lib):
    op = lib.linear_bias_gelu_f16
    data = [inputs(64, 1024, 8192, seed=20 + i) for i in range(4)]
    expected = [op(a, w.t(), bias=b, split_k=8, mode="serial") for a, w, b in data]
    torch.cuda.synchronize()
    bad = []

    def worker(i):
        a, w, b = data[i]
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.default_stream())
        outs = []
        with torch.cuda.stream(s):
            for _ in range(100):
                outs.append(op(a, w.t(), bias=b, split_k=8, mode="serial"))
        s.synchronize()
        bad.extend(i for o in outs if not torch.equal(o, expected[i]))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad, f"{len(bad)} of 400 launches differ"
