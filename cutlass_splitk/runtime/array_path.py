"""A call with CUDA arrays that are not torch tensors: CuPy, JAX, Numba, cuda.core
(StridedMemoryView), our own DeviceArray, or anything exporting DLPack or
``__cuda_array_interface__``. Needs no torch.

* The stream: ``stream=`` (an int handle or any object with ``__cuda_stream__``), else CuPy's
  current stream on the device of CuPy arrays, else the legacy default stream. Producers order their
  pending writes before it (DLPack / CAI stream handshake) as the operands are read.
* The checks are the torch path's, with the same messages where they apply
  (:mod:`.operands` reads torch tensors and :class:`~.arrays.ArrayView` alike).
* Memory: workspace from cuda.core memory resources per (device, stream)
  (``Library.array_workspace``); the output, when ``out=`` is not given, in the caller's
  framework where it can be told (a CuPy array for CuPy inputs, a Numba device array for
  Numba's), else a :class:`~.dlpack.DeviceArray`.
* K = 0 and unaligned problems take the padded path (cuda.core buffers, driver copies), so
  the epilogue of a zero product is computed by the kernels themselves.
* A signature that ran in place twice takes :mod:`.array_fast` from then on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ..spec import BiasMode, Layout, OpSpec, Permute
from . import array_fast, arrays, dispatch, operands
from .arrays import ArrayView
from .dlpack import contiguous_strides
from .launcher import Request
from .prepared import sighted

if TYPE_CHECKING:
    from .op import Op


def call(op: "Op", a: Any, b: Any, kwargs: Dict[str, Any], sig: Optional[tuple] = None) -> Any:
    """Validates everything, plans on a new problem, and remembers the signature ``sig`` (its
    array_fast key) for the fast path when the operands ran in place (noted the first time,
    prepared the second, as on the torch path)."""
    ep = op.spec.epilogue
    (alpha, beta, slope, c, bias, e, view, out, split_k, mode, variant), pool = op.read_keywords(kwargs)
    stream = arrays.call_stream(op.name, kwargs.get("stream"), a)
    devices = op.platform.devices
    want = arrays.DTYPE_NAMES[op.spec.dtype]
    saved: List[Any] = [_enter_device_of(a, devices)]
    try:
        device: Optional[int] = None

        def read(name: str, obj: Any, ndim: int, shape: Any = None) -> ArrayView:
            v = arrays.view(op.name, name, obj, stream, devices)
            if v.dtype != want:
                raise TypeError(f"{op.name}: {name} must be {want}, got {v.dtype}")
            if v.device is None:
                if v.ptr or v.numel():
                    raise ValueError(f"{op.name}: {name} must be on a CUDA device, got host memory")
                v.device = device if device is not None else devices.current_device()  # empty, no pointer
            if device is not None and v.device != device:
                raise ValueError(f"{op.name}: {name} is on cuda:{v.device} but a is on cuda:{device}")
            if v.dim() != ndim:
                raise ValueError(f"{op.name}: {name} must be {ndim}-D, got shape {v.shape}")
            if shape is not None and v.shape != tuple(shape):
                raise ValueError(f"{op.name}: {name} must have shape {tuple(shape)}, got {v.shape}")
            return v

        va = read("a", a, 2)
        device = va.device
        saved.append(devices.enter(device))
        arrays.check_stream_device(op.name, stream, device, devices)
        vb = read("b", b, 2)
        m, n, k = operands.problem(op.name, va.shape, vb.shape, beta, c is not None)
        vc = read("c", c, 2, (m, n)) if c is not None else None
        vbias = read("bias", bias, 1, (operands.bias_length(ep.bias, m, n),)) if bias is not None else None
        ve = read("e", e, 2, (m, n)) if e is not None else None
        out_shape = op.out_shape(m, n, view)
        if out is not None:
            vout = read("out", out, len(out_shape), out_shape)
            if vout.readonly:
                raise ValueError(f"{op.name}: out is read-only ({type(out).__name__}); pass a writable array")
            operands.check_out_overlap(op.name, ep.permute, vout, va, vb, vc, vbias, ve)
        elif m == 0 or n == 0:
            return arrays.new_output(a, out_shape, want, device, stream, devices, kwargs.get("stream"))[0]
        else:  # allocated once the layouts passed (any allocation is aligned enough)
            vout = ArrayView(0, out_shape, contiguous_strides(out_shape), want, 2, device, False, None)
        if m == 0 or n == 0:
            return out

        align = dispatch.min_alignment(pool)

        def pad(spec: OpSpec, o: operands.Operands, m: int, kp: int, np_: int, al: int) -> operands.Operands:
            return _pad(devices, device, stream, spec, o, m, kp, np_)

        ops = operands.prepare(op.spec, va, vb, vc, vbias, ve, vout, m, n, k, beta, align, pad)
        given = out
        if out is None:
            placeholder = vout
            out, vout = arrays.new_output(a, out_shape, want, device, stream, devices, kwargs.get("stream"))
            if ops.d is placeholder:
                ops.d = vout
        request = Request(ops, m, alpha, beta, slope, view, device, device, pool, split_k, mode, variant,
                          stream=stream, workspace=op.library.array_workspace, tunable=False)
        launched = op.launcher.launch(request)
        if ops.d is not vout:  # padded: copy the result into the caller's output
            devices.copy2d(vout.ptr, _ld(vout, ep.permute, n) * 2, ops.d.ptr, ops.ldd * 2, n * 2, m, stream)
        elif sig is not None:  # the first sighting is noted, a later one prepares the fast path
            sighted(op.array_prepared, sig, lambda: array_fast.remember(op, launched, request, out_shape, align, vc, a))
        arrays.note_uses(stream, (a, b, c, bias, e), given, kwargs.get("stream"))
        return out
    finally:
        for previous in reversed(saved):
            devices.leave(previous)


def _enter_device_of(a: Any, devices: Any) -> Any:
    """Makes the device ``a`` says it is on current while it is read (its producer's stream
    handshake runs through the current device's stream), else keeps the current one; returns
    what devices.leave() gives back. A device that cannot be entered is left to a's reading."""
    hint = arrays.device_hint(a, devices)
    if hint is not None:
        try:
            return devices.enter(hint)
        except Exception:
            pass
    return devices.enter(devices.current_device())


def _ld(v: ArrayView, permute: Permute, n: int) -> int:
    return v.strides[0] if permute is Permute.NONE and v.shape[0] > 1 else n


def _pad(devices: Any, device: int, stream: int, spec: OpSpec, o: operands.Operands, m: int, kp: int,
         np_: int) -> operands.Operands:
    """The operands copied into zero-padded, aligned cuda.core buffers (the slow path)."""
    ep = spec.epilogue
    dtype = o.a.dtype

    def buffer(rows: int, cols: int, src: Optional[ArrayView] = None, ld: int = 0, src_rows: int = 0,
               src_cols: int = 0, zero: bool = True) -> ArrayView:
        block = devices.alloc(device, stream, rows * cols * 2)
        if zero:
            devices.memset(block.ptr, rows * cols * 2, stream)
        if src is not None:
            devices.copy2d(block.ptr, cols * 2, src.ptr, max(ld, src_cols) * 2, src_cols * 2, src_rows, stream)
        return ArrayView(block.ptr, (rows, cols), (cols, 1), dtype, 2, device, False, block)

    a = buffer(m, kp, o.a, o.lda, m, o.k)
    if spec.layout is Layout.TN:  # (K, N) column-major: N rows of K
        rows = buffer(np_, kp, o.b, o.ldb, o.n, o.k)
        b = ArrayView(rows.ptr, (kp, np_), (1, kp), dtype, 2, device, False, rows.owner)
        ldb = kp
    else:
        b = buffer(kp, np_, o.b, o.ldb, o.k, o.n)
        ldb = np_
    c = buffer(m, np_, o.c, o.ldc, m, o.n) if o.c is not None else None
    e = buffer(m, np_, o.e, o.lde, m, o.n) if o.e is not None else None
    bias = None
    if o.bias is not None:
        length = np_ if ep.bias is BiasMode.PER_COL else o.bias.shape[0]
        flat = buffer(1, length, o.bias, 0, 1, o.bias.shape[0])
        bias = ArrayView(flat.ptr, (length,), (1,), dtype, 2, device, False, flat.owner)
    d = buffer(m, np_, zero=False)
    return operands.Operands(a, b, kp, ldb, c, np_, bias, e, np_, d, np_, np_, kp)
