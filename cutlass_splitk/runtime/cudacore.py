"""NVIDIA's Python CUDA stack as the runtime uses it, through cuda.core and cuda.bindings:
devices and their properties, streams (the ``__cuda_stream__`` protocol), stream-ordered
memory from cuda.core memory resources, and the few driver calls the array path needs
(memset, 2-D copies, one stream waiting for another, where a pointer lives).

Nothing here imports torch, and everything is imported on first use: a process without a
GPU (or without cuda-python) can import the runtime; only calling into this module needs
them. :class:`Devices` is the array path's half of :class:`~.platform.CudaPlatform`; the
CPU tests replace it by a host-memory fake with the same methods.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator, NamedTuple, Optional

from . import pointer_query
from .core_memory import Release
from .errors import KernelError
from .workspace import Block


@functools.lru_cache(maxsize=None)
def core() -> Any:
    """The cuda.core module (``cuda.core``, or ``cuda.core.experimental`` before 0.5)."""
    try:
        import cuda.core as module

        module.Device  # noqa: B018 (only the new namespace has it at the top)
        return module
    except (ImportError, AttributeError):
        import cuda.core.experimental as module

        return module


@functools.lru_cache(maxsize=None)
def driver() -> Any:
    from cuda.bindings import driver as module

    return module


def check(result: Any, what: str) -> Any:
    """cuda.bindings returns ``(CUresult, *values)``: the values, or KernelError naming the call."""
    err = result[0]
    if int(err) != 0:
        name = getattr(err, "name", str(int(err)))
        raise KernelError(f"{what} failed: {name}")
    return result[1] if len(result) == 2 else result[1:]


class Hardware(NamedTuple):
    """A device as the runtime sees it (``bandwidth``: theoretical DRAM bytes/s)."""

    name: str
    sm_count: int
    major: int
    minor: int
    l2_bytes: int
    smem_per_sm: int
    bandwidth: float


def hardware(index: int) -> Hardware:
    """The device's properties. What the dispatcher needs (name, SMs, compute capability)
    must be readable; the rest is 0 where this driver or cuda.core does not report it."""
    dev = core().Device(index)
    p = dev.properties
    cc = dev.compute_capability

    def optional(read: Any) -> Any:
        try:
            return read()
        except Exception:
            return 0

    bandwidth = optional(lambda: 2.0 * p.memory_clock_rate * 1e3 * p.global_memory_bus_width / 8)
    return Hardware(dev.name, int(p.multiprocessor_count), int(cc.major), int(cc.minor),
                    int(optional(lambda: p.l2_cache_size)), int(optional(lambda: p.max_shared_memory_per_multiprocessor)),
                    float(bandwidth))


def driver_version() -> int:
    try:
        return int(check(driver().cuDriverGetVersion(), "cuDriverGetVersion"))
    except Exception:  # no driver here: the version is only part of a cache key
        return 0


def runtime_version() -> str:
    """The CUDA runtime version cuda.bindings finds, as ``"13.0"`` (else its own version,
    where no runtime library can be loaded: the value is only part of a cache key)."""
    try:
        from cuda.bindings import runtime

        v = int(check(runtime.cudaRuntimeGetVersion(), "cudaRuntimeGetVersion"))
        return f"{v // 1000}.{v % 1000 // 10}"
    except Exception:
        import cuda.bindings

        return "bindings" + ".".join(str(cuda.bindings.__version__).split(".")[:2])


def stream_handle(obj: Any) -> int:
    """The raw handle of a stream given as an int or as an object with ``__cuda_stream__``
    (cuda.core, CuPy, Numba, torch streams). Raises TypeError otherwise."""
    if isinstance(obj, int) and not isinstance(obj, bool):
        if obj < 0:
            raise TypeError(f"a stream handle must be >= 0, got {obj}")
        return obj
    proto = getattr(obj, "__cuda_stream__", None)
    if proto is None:
        raise TypeError(f"a stream must be an int handle or have __cuda_stream__, got {type(obj).__name__}")
    value = proto() if callable(proto) else proto
    return int(value[1])


class _Foreign:
    """A raw handle wearing the ``__cuda_stream__`` protocol (for cuda.core's create_stream)."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


class Devices:
    """The CUDA devices through cuda.core / cuda.bindings (the array path's platform half)."""

    def current_device(self) -> int:
        return int(core().Device().device_id)

    def enter(self, index: int) -> Any:
        """Makes device ``index``'s primary context current on this thread; returns what to
        give :meth:`leave`: None where that device's context was current already, else the
        context that was (none included, so that leave gives the thread exactly that back)."""
        d = driver()
        dev = core().Device(index)  # initialises CUDA
        ctx = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
        if int(ctx) != 0 and int(check(d.cuCtxGetDevice(), "cuCtxGetDevice")) == index:
            return None
        dev.set_current()
        return ctx

    def leave(self, previous: Any) -> None:
        if previous is not None:
            check(driver().cuCtxSetCurrent(previous), "cuCtxSetCurrent")

    def pointer_device(self, ptr: int) -> Optional[int]:
        """The device whose memory ``ptr`` points into (device or managed memory), else None."""
        query = pointer_query.libcuda_query()
        if query is not None:
            kind, ordinal = query(ptr)
            return ordinal if kind == pointer_query.CU_MEMORYTYPE_DEVICE and ordinal >= 0 else None
        d = driver()  # no libcuda to call directly: the bindings (see pointer_query)
        a = d.CUpointer_attribute
        err, kind = d.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d.CUdeviceptr(ptr))
        if int(err) != 0 or int(kind) != int(d.CUmemorytype.CU_MEMORYTYPE_DEVICE):
            return None
        return int(check(d.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d.CUdeviceptr(ptr)),
                         "cuPointerGetAttribute"))

    def stream_device(self, handle: int) -> Optional[int]:
        """The device of a stream (its context's); None for the legacy and per-thread handles (0-2,
        the current context's) or a handle the driver does not know."""
        if handle <= 2:
            return None
        d = driver()
        err, ctx = d.cuStreamGetCtx(d.CUstream(handle))
        if int(err) != 0:
            return None
        with _pushed(ctx):
            return int(check(d.cuCtxGetDevice(), "cuCtxGetDevice"))

    def stream_object(self, index: int, handle: int) -> Any:
        """A cuda.core Stream for a raw handle (0 and 1: the legacy default stream, 2: the
        per-thread one, as cuda.core names them where it does)."""
        named = {0: "LEGACY_DEFAULT_STREAM", 1: "LEGACY_DEFAULT_STREAM", 2: "PER_THREAD_DEFAULT_STREAM"}.get(handle)
        if named is not None and hasattr(core(), named):
            return getattr(core(), named)
        stream_cls = core().Stream
        if hasattr(stream_cls, "from_handle"):
            return stream_cls.from_handle(handle)
        return core().Device(index).create_stream(_Foreign(handle))

    def alloc(self, index: int, stream: int, nbytes: int, keep: Any = None) -> Block:
        """``nbytes`` of the device's cuda.core memory resource, allocated on ``stream`` and given back
        on it when the Block's owner is dropped (``keep``: the caller's object for it, held till then)."""
        if nbytes <= 0:
            return Block(0, 0, None)
        s = self.stream_object(index, stream)
        buffer = core().Device(index).memory_resource.allocate(nbytes, stream=s)
        return Block(int(buffer.handle), nbytes, Release(buffer, s, stream, index, self, keep))

    def synchronize(self, index: int) -> None:
        """Waits until device ``index`` has done all the work queued on any of its streams."""
        saved = self.enter(index)
        try:
            check(driver().cuCtxSynchronize(), "cuCtxSynchronize")
        finally:
            self.leave(saved)

    def order_release(self, block: Block, stream: int, device: int) -> None:
        """``block`` (from :meth:`alloc`, on ``device``) is freed only after the work queued on ``stream``
        so far: an event recorded there now, which the release's stream waits for when the block is
        dropped. Nothing where ``stream`` is the one it is released on."""
        owner = block.owner
        if isinstance(owner, Release) and owner.handle != stream:
            previous = owner.events.get(stream)  # recorded again where this stream has one already
            recorded = self._record(stream, device, previous)
            if previous is None:
                owner.after(stream, recorded)

    def _record(self, stream: int, device: Optional[int] = None, recorded: Any = None) -> Any:
        """(an event recorded on ``stream`` now, made in the stream's own context, that context or None
        for a legacy or per-thread handle), or ``recorded`` (such a pair of the same stream) recorded
        again; the legacy and per-thread handles name ``device``'s streams (made current meanwhile)
        where it is given, else the current context's."""
        d = driver()
        saved = self.enter(device) if stream <= 2 and device is not None else None
        try:
            ctx = check(d.cuStreamGetCtx(d.CUstream(stream)), "cuStreamGetCtx") if stream > 2 else None
            with _pushed(_unless_current(ctx)):
                if recorded is not None:
                    check(d.cuEventRecord(recorded[0], d.CUstream(stream)), "cuEventRecord")
                    return recorded
                event = check(d.cuEventCreate(int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)), "cuEventCreate")
                try:
                    check(d.cuEventRecord(event, d.CUstream(stream)), "cuEventRecord")
                except BaseException:
                    d.cuEventDestroy(event)
                    raise
            return event, ctx
        finally:
            self.leave(saved)

    def wait_event(self, stream: int, recorded: Any) -> None:
        """``stream`` (of the current context) waits for an event of :meth:`_record`, which is destroyed."""
        try:
            check(driver().cuStreamWaitEvent(driver().CUstream(stream), recorded[0], 0), "cuStreamWaitEvent")
        finally:
            self.drop_event(recorded)

    def drop_event(self, recorded: Any) -> None:
        event, ctx = recorded
        with _pushed(_unless_current(ctx)):
            driver().cuEventDestroy(event)

    def memset(self, ptr: int, nbytes: int, stream: int) -> None:
        d = driver()
        check(d.cuMemsetD8Async(d.CUdeviceptr(ptr), 0, nbytes, d.CUstream(stream)), "cuMemsetD8Async")

    def copy2d(self, dst: int, dpitch: int, src: int, spitch: int, width: int, rows: int, stream: int) -> None:
        """``rows`` rows of ``width`` bytes, device to device (pitches in bytes)."""
        if not width or not rows:
            return
        d = driver()
        m = d.CUDA_MEMCPY2D()
        m.srcMemoryType = m.dstMemoryType = d.CUmemorytype.CU_MEMORYTYPE_DEVICE
        m.srcDevice, m.srcPitch = d.CUdeviceptr(src), spitch
        m.dstDevice, m.dstPitch = d.CUdeviceptr(dst), dpitch
        m.WidthInBytes, m.Height = width, rows
        check(d.cuMemcpy2DAsync(m, d.CUstream(stream)), "cuMemcpy2DAsync")

    def wait(self, consumer: int, producer: int, device: Optional[int] = None) -> None:
        """Work queued on ``consumer`` from now on waits for what ``producer`` has queued. The
        legacy and per-thread handles (0-2) name the current context's streams: ``device``'s
        where it is given (made current meanwhile). The event is made and recorded in the
        producer stream's own context (a stream of another device cannot record one of this)."""
        if consumer == producer:
            return
        saved = self.enter(device) if device is not None and (consumer <= 2 or producer <= 2) else None
        try:  # the event in the producer's context; the consumer waits from the current one
            self.wait_event(consumer, self._record(producer))
        finally:
            self.leave(saved)


def _unless_current(ctx: Any) -> Any:
    """``ctx``, or None where it is the current context already (or None)."""
    if ctx is None or int(ctx) == int(check(driver().cuCtxGetCurrent(), "cuCtxGetCurrent")):
        return None
    return ctx


@contextlib.contextmanager
def _pushed(ctx: Any) -> Iterator[None]:
    """``ctx`` made current for the block (pushed and popped); nothing where it is None."""
    if ctx is None:
        yield
        return
    d = driver()
    check(d.cuCtxPushCurrent(ctx), "cuCtxPushCurrent")
    try:
        yield
    finally:
        d.cuCtxPopCurrent()
