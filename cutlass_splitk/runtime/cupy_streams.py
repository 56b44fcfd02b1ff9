"""CuPy's side of the array path: its current stream per device (the call's default stream and
a CuPy producer's), and outputs from its memory pool on the call's stream, leaving CuPy's current
streams as the caller had them. CuPy is imported only when a CuPy array is seen."""

from __future__ import annotations

from typing import Any, Tuple


def current_stream(device: int) -> int:
    """The raw handle of CuPy's current stream on ``device`` (0: the legacy default stream).
    CuPy keeps a current stream per device; the one of the arrays' device is the stream their
    producer used, whichever device is current (CuPy's own current stream would belong to the
    current device: a kernel on another device's stream fails)."""
    import cupy

    try:
        return int(cupy.cuda.get_current_stream(device).ptr)
    except TypeError:  # CuPy before per-device streams: one current stream for the thread
        return int(cupy.cuda.get_current_stream().ptr)


def output(shape: Tuple[int, ...], device: int, stream: int) -> Any:
    """A float16 CuPy array from CuPy's pool, allocated on ``device`` and ``stream``. The caller's
    CuPy state is left as it was: a stream made current with ``Stream.use()`` stays current (a
    ``with stream:`` block would rewind the device's current stream to the last one entered by
    ``with``, dropping it)."""
    import cupy

    if cupy.cuda.runtime.getDevice() == device and current_stream(device) == stream:
        return cupy.empty(shape, dtype=cupy.float16)  # CuPy's current device and stream already
    with cupy.cuda.Device(device):
        previous = cupy.cuda.get_current_stream()
        _cupy_stream(cupy, stream, device).use()
        try:
            return cupy.empty(shape, dtype=cupy.float16)
        finally:
            previous.use()


class _StreamHandle:
    """A raw stream handle as the CUDA stream protocol's object (what CuPy's Stream.from_external reads)."""

    __slots__ = ("handle",)

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self) -> Tuple[int, int]:
        return (0, self.handle)


def _cupy_stream(cupy: Any, handle: int, device: int) -> Any:
    """CuPy's Stream object for a raw handle on ``device`` (the current device)."""
    if handle == 0:
        return cupy.cuda.Stream.null
    from_external = getattr(cupy.cuda.Stream, "from_external", None)
    if from_external is not None:  # CuPy 14 deprecates ExternalStream for it
        return from_external(_StreamHandle(handle))
    return cupy.cuda.ExternalStream(handle, device)
