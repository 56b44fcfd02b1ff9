"""Loading a built directory and calling its ops.

``lib = cutlass_splitk.load("build/default")`` reads ``manifest.json``, checks each
``lib<op>.so`` (present, same SHA-256 as at build time, same ABI, same self-description as
the manifest) and binds its entry points. Nothing is compiled here.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch

from ..fsutil import file_sha256
from ..spec import Activation, BiasMode, DType, EOp, Layout, OpSpec, Permute, SplitMode
from . import abi, dispatch, tuning
from .workspace import SCRATCH, Workspace

TORCH_DTYPES = {DType.F16: torch.float16, DType.BF16: torch.bfloat16}
MANIFEST = "manifest.json"


class LibraryError(RuntimeError):
    """A built directory cannot be loaded; the message says how to fix it."""


class KernelError(RuntimeError):
    """A kernel failed to launch or run (CUDA error, or a check inside the library)."""


class PaddingWarning(UserWarning):
    """The problem's sizes or pointers are not aligned for any built variant, so the
    operands were copied into padded, aligned buffers (correct, but slower)."""


def load(directory: Union[str, Path], *, verify: bool = True, tune_cache: Optional[Union[str, Path]] = None,
         autotune: Optional[bool] = None) -> "Library":
    """Loads a directory written by ``cutlass-splitk build``.

    ``tune_cache``: the autotuning cache file (default ``$CUTLASS_SPLITK_TUNE_CACHE`` or
    ``~/.cache/cutlass-splitk/tune.json``). ``autotune``: tune each new problem on its first
    call (default: ``CUTLASS_SPLITK_AUTOTUNE=1`` in the environment)."""
    directory = Path(directory)
    rebuild = f"rebuild it with: cutlass-splitk build <config.yaml> -o {directory}"
    manifest_path = directory / MANIFEST
    if not directory.is_dir():
        raise LibraryError(f"{directory}: no such directory; {rebuild}")
    try:
        manifest = json.loads(manifest_path.read_text())
    except FileNotFoundError:
        raise LibraryError(f"{manifest_path}: missing; {rebuild}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LibraryError(f"{manifest_path}: corrupt ({exc}); {rebuild}") from None
    if not isinstance(manifest, dict) or manifest.get("abi_version") != abi.ABI_VERSION:
        found = manifest.get("abi_version") if isinstance(manifest, dict) else None
        raise LibraryError(f"{manifest_path}: built for ABI version {found}, this runtime speaks "
                           f"{abi.ABI_VERSION}; {rebuild}")
    ops: Dict[str, Op] = {}
    if autotune is None:
        autotune = os.environ.get("CUTLASS_SPLITK_AUTOTUNE", "0") not in ("", "0")
    library = Library(directory, manifest, ops, tuning.TuneCache(tune_cache), autotune)
    try:
        entries = manifest["libraries"].items()
        descriptions = manifest["ops"]
    except (KeyError, AttributeError):
        raise LibraryError(f"{manifest_path}: malformed (no 'libraries'/'ops'); {rebuild}") from None
    for name, entry in entries:
        so = directory / entry["file"]
        if not so.is_file():
            raise LibraryError(f"{so}: missing (listed in {manifest_path}); {rebuild}")
        if verify and file_sha256(so) != entry["sha256"]:
            raise LibraryError(f"{so}: contents differ from the build (SHA-256 mismatch: truncated, "
                               f"corrupted or replaced); {rebuild}")
        try:
            spec = OpSpec.from_json(descriptions[name])
        except (KeyError, TypeError, ValueError) as exc:
            raise LibraryError(f"{manifest_path}: malformed description of op {name!r} ({type(exc).__name__}: "
                               f"{exc}); {rebuild}") from None
        try:
            bound = abi.bind(so, [v.name for v in spec.variants])
        except OSError as exc:
            raise LibraryError(f"{so}: cannot be loaded ({exc}); {rebuild}") from None
        except AttributeError as exc:
            raise LibraryError(f"{so}: missing entry point ({exc}); {rebuild}") from None
        if bound.abi_version != abi.ABI_VERSION:
            raise LibraryError(f"{so}: built for ABI version {bound.abi_version}, this runtime speaks "
                               f"{abi.ABI_VERSION}; {rebuild}")
        if json.loads(bound.description) != descriptions[name]:
            raise LibraryError(f"{so}: its self-description does not match {manifest_path} (stale "
                               f"library); {rebuild}")
        ops[name] = Op(library, spec, bound)
        # Registered now, not on first use: torch.compile must find the op already there.
        ops[name]._torch_op = _register_custom_op(ops[name])
    return library


class Library:
    """The ops of one built directory. Ops are attributes: ``lib.linear_f16(a, b)``."""

    def __init__(self, directory: Path, manifest: dict, ops: Dict[str, "Op"],
                 tune_cache: Optional[tuning.TuneCache] = None, autotune: bool = False):
        self.directory = directory
        self.manifest = manifest
        self._ops = ops
        self.workspace = Workspace()
        self.tune_cache = tune_cache or tuning.TuneCache()
        self.autotune = autotune
        self._device_keys: Dict[int, str] = {}
        self._devices: Dict[int, dispatch.DeviceInfo] = {}
        self._devices_lock = threading.Lock()

    def __getattr__(self, name: str) -> "Op":
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return ops[name]
        raise AttributeError(f"no op {name!r} in {self.__dict__.get('directory')}; built ops: "
                             + ", ".join(sorted(ops)))

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._ops))

    @property
    def ops(self) -> List[str]:
        return sorted(self._ops)

    @property
    def build_hash(self) -> str:
        return str(self.manifest.get("build_hash", ""))

    def op(self, name: str) -> "Op":
        return getattr(self, name)

    def variants(self, op: str) -> List[str]:
        return [v.name for v in self.op(op).spec.variants]

    def device_info(self, index: int) -> dispatch.DeviceInfo:
        with self._devices_lock:
            if index not in self._devices:
                p = torch.cuda.get_device_properties(index)
                self._devices[index] = dispatch.DeviceInfo.from_properties(
                    p.name, p.multi_processor_count, p.major, p.minor)
            return self._devices[index]

    def device_key(self, index: int) -> str:
        with self._devices_lock:
            if index not in self._device_keys:
                self._device_keys[index] = tuning.device_key(index)
            return self._device_keys[index]

    def tune(self, op: str, shapes: Sequence[Tuple[int, int, int]], *, view: Any = None,
             verbose: bool = False) -> List[dict]:
        """Times every (variant, split) of ``op`` on the current device for each (M, N, K)
        on random inputs (rotating over enough input sets to defeat L2), stores the fastest
        in the tuning cache and returns the entries. ``view`` is needed for permuted ops."""
        o = self.op(op)
        return [o.tune(m, n, k, view=view, verbose=verbose) for (m, n, k) in shapes]

    def explain(self, op: str, m: int, n: int, k: int, *, device: Optional[dispatch.DeviceInfo] = None,
                split_k: Optional[int] = None, mode: Optional[str] = None, variant: Optional[str] = None,
                top: int = 5) -> str:
        """Which variant, mode and split the heuristic picks for (m, n, k), and why."""
        o = self.op(op)
        dev = device or self.device_info(torch.cuda.current_device())
        cands = o.candidates(m, n, k, dev, split_k, mode, variant)
        lines = [f"{op}: M={m} N={n} K={k} on {dev.name} ({dev.sm_count} SMs), heuristic ranking:"]
        if device is None and split_k is None and mode is None and variant is None:
            entry = self.tune_cache.get(o._tune_key(torch.cuda.current_device(), m, n, k))
            if entry is not None:
                lines[0] = (f"{op}: M={m} N={n} K={k}: tuned choice {entry['variant']} split={entry['split']} "
                            f"({entry['us']:.1f} us measured {entry['when']}, cache {self.tune_cache.path}); "
                            "heuristic ranking:")
        for i, c in enumerate(cands[:top]):
            lines.append(f"  {'->' if i == 0 else '  '} {c.describe()}")
        if len(cands) > top:
            lines.append(f"     ... {len(cands) - top} more")
        return "\n".join(lines)


PLAN_CACHE_SIZE = 4096


@dataclass(frozen=True)
class _Plan:
    """A dispatch decision, cached per (device, M, N, K, split_k, mode, variant)."""

    variant: str
    split: int
    semaphore_bytes: int
    partial_bytes: int


@dataclass
class _Operands:
    a: torch.Tensor
    b: torch.Tensor
    lda: int
    ldb: int
    c: Optional[torch.Tensor]
    ldc: int
    bias: Optional[torch.Tensor]
    e: Optional[torch.Tensor]
    lde: int
    d: torch.Tensor
    ldd: int
    n: int
    k: int
    scratch: bool = False  # workspace per call (under torch.compile) instead of the cached one


@dataclass(frozen=True)
class _Prepared:
    """What the first call of one argument signature (shapes, strides, dtypes, devices,
    scalars) established, so later calls with that signature only read pointers: the
    argument block with every non-pointer field set, the plan key, and what must be
    re-checked per call (pointer alignment, overlap of ``out`` with the inputs)."""

    args: abi.CksArgs
    plan_key: tuple
    device: torch.device
    out_shape: Tuple[int, ...]
    align_bytes: int
    bias_aligned: bool
    use_c: bool
    c_may_alias_out: bool  # c exactly aliasing out is allowed (same strides, unpermuted output)
    extents: Tuple[int, ...]  # bytes spanned by a, b, c, bias, e, out (0 when absent or empty)


#: Signatures remembered per op before the memo is cleared.
PREPARED_CACHE_SIZE = 256


def _tensor_key(t: torch.Tensor) -> tuple:
    return (t.shape, t.stride(), t.dtype, t.device)


def _call_key(a: Any, b: Any, kwargs: Dict[str, Any]) -> Optional[tuple]:
    """A description of a call that determines everything but its pointers, or None when ``a``
    or ``b`` is not a tensor (the full path reports that). Unhashable when an argument is."""
    try:
        key = [_tensor_key(a), _tensor_key(b)]
        for name, v in kwargs.items():
            key.append(name)
            key.append(_tensor_key(v) if isinstance(v, torch.Tensor) else (type(v), v))
        return tuple(key)
    except (AttributeError, TypeError):
        return None


def _extent(t: Optional[torch.Tensor]) -> int:
    """Bytes from ``t``'s first element to past its last (0 for None or an empty tensor)."""
    if t is None or t.numel() == 0:
        return 0
    return (sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1) * t.element_size()


def _row_major_ld(t: torch.Tensor) -> Optional[int]:
    """Leading dimension if ``t`` (2-D) is row-major with unit column stride, else None."""
    rows, cols = t.shape
    if cols > 1 and t.stride(1) != 1:
        return None
    ld = t.stride(0) if rows > 1 else cols
    return ld if ld >= cols else None


def _col_major_ld(t: torch.Tensor) -> Optional[int]:
    """``_row_major_ld(t.t())`` without building the transposed view (on every tn call)."""
    rows, cols = t.shape
    if rows > 1 and t.stride(0) != 1:
        return None
    ld = t.stride(1) if cols > 1 else rows
    return ld if ld >= rows else None


class Op:
    """One op of a loaded library: ``op(a, b, **epilogue_args)``."""

    #: Tests of argument checking set this False on an instance to use CPU tensors.
    require_cuda = True

    def __init__(self, library: Library, spec: OpSpec, bound: abi.BoundLibrary):
        self.library = library
        self.spec = spec
        self.bound = bound
        self.name = spec.name
        self.dtype = TORCH_DTYPES[spec.dtype]
        ep = spec.epilogue
        allowed = ["out", "split_k", "mode", "variant"]
        if ep.alpha:
            allowed.append("alpha")
        if ep.beta:
            allowed += ["beta", "c"]
        if ep.bias is not BiasMode.NONE:
            allowed.append("bias")
        if ep.e_op is not EOp.NONE:
            allowed.append("e")
        if ep.permute is not Permute.NONE:
            allowed.append("view")
        if ep.activation is Activation.LEAKY_RELU:
            allowed.append("negative_slope")
        self.keywords: Tuple[str, ...] = tuple(allowed)
        self.required: Tuple[str, ...] = tuple(k for k in ("e", "view") if k in allowed)
        self._plans: Dict[tuple, _Plan] = {}
        self._pools: Dict[tuple, List[Any]] = {}
        self._prepared: Dict[tuple, _Prepared] = {}
        self._torch_op: Any = None

    def __repr__(self) -> str:
        return f"<cutlass_splitk op {self.name}: {self.signature()}>"

    def signature(self) -> str:
        return f"{self.name}(a, b, *, {', '.join(self.keywords)})"

    # --- selection ------------------------------------------------------------------------

    def candidates(self, m: int, n: int, k: int, dev: dispatch.DeviceInfo, split_k: Optional[int] = None,
                   mode: Optional[str] = None, variant: Optional[str] = None) -> List[dispatch.Candidate]:
        return dispatch.rank(self._pool(split_k, mode, variant), m, n, k, dev, split_k)

    def _pool(self, split_k: Optional[int], mode: Optional[str], variant: Optional[str]) -> List[Any]:
        """The built variants allowed by the caller's split_k / mode / variant (validated;
        memoised, since it is on every call's path)."""
        key = (split_k, type(split_k), mode, variant)  # the type: split_k=True must not hit 1's entry
        try:
            return self._pools[key]
        except (KeyError, TypeError):  # TypeError: an unhashable argument, validated below
            pass
        pool = self._make_pool(split_k, mode, variant)
        if len(self._pools) < 256:
            self._pools[key] = pool
        return pool

    def _make_pool(self, split_k: Optional[int], mode: Optional[str], variant: Optional[str]) -> List[Any]:
        if split_k is not None and (isinstance(split_k, bool) or not isinstance(split_k, int) or split_k < 1):
            raise ValueError(f"{self.name}: split_k must be a positive int, got {split_k!r}")
        mode_enum = self._mode(mode)
        if variant is not None and variant not in {v.name for v in self.spec.variants}:
            raise ValueError(f"{self.name}: variant={variant!r} was not built; built variants: "
                             + ", ".join(v.name for v in self.spec.variants))
        pool = dispatch.filter_variants(self.spec.variants, mode_enum, variant, split_k)
        if not pool:
            offered = sorted({s for v in dispatch.filter_variants(self.spec.variants, mode_enum, variant)
                              for s in v.splits})
            raise ValueError(f"{self.name}: split_k={split_k} is not available"
                             + (f" in mode {mode}" if mode else "") + f"; built split factors: {offered}")
        return pool

    def _mode(self, mode: Optional[str]) -> Optional[SplitMode]:
        if mode is None:
            return None
        try:
            return SplitMode(mode)
        except ValueError:
            raise ValueError(f"{self.name}: mode={mode!r} is not one of 'serial', 'parallel'") from None

    # --- the call ---------------------------------------------------------------------------

    # --- torch.library integration ------------------------------------------------------------

    @property
    def torch_op(self) -> Any:
        """This op as a ``torch.library`` custom op (registered by ``load``) with a fake
        implementation, so torch.compile(fullgraph=True) traces through it. Schema:
        ``(a, b, bias?, c?, e?, alpha, beta, view?, negative_slope, split_k?, mode?, variant?)``."""
        return self._torch_op

    def _compiled_call(self, a: torch.Tensor, b: torch.Tensor, kwargs: Dict[str, Any]) -> torch.Tensor:
        ep = self.spec.epilogue
        view = kwargs.get("view")
        return self.torch_op(a, b, kwargs.get("bias"), kwargs.get("c"), kwargs.get("e"),
                             float(kwargs.get("alpha", 1.0)), float(kwargs.get("beta", 0.0)),
                             list(view) if view is not None else None,
                             float(kwargs.get("negative_slope", ep.leaky_slope)), kwargs.get("split_k"),
                             kwargs.get("mode"), kwargs.get("variant"))

    def __call__(self, a: torch.Tensor, b: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        if torch.compiler.is_compiling():
            return self._call(a, b, kwargs, None)
        sig = _call_key(a, b, kwargs)
        if sig is not None:
            try:
                prep = self._prepared.get(sig)
            except TypeError:  # an unhashable argument (a list view, say): never remembered
                prep = sig = None
            if prep is not None:
                out = self._call_prepared(prep, a, b, kwargs)
                if out is not None:
                    return out
        return self._call(a, b, kwargs, sig)

    def _call_prepared(self, prep: _Prepared, a: torch.Tensor, b: torch.Tensor,
                       kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
        """A call whose signature ran before: every check that depends only on the signature
        passed then. Pointers are checked here (alignment, ``out`` overlapping an input);
        None sends the call down the full path (which pads, raises or re-plans)."""
        plan = self._plans.get(prep.plan_key)
        if plan is None:
            return None
        out = kwargs.get("out")
        if out is None:
            out = torch.empty(prep.out_shape, dtype=self.dtype, device=a.device)
            given = False
        else:
            given = True
        c = kwargs.get("c")
        bias = kwargs.get("bias")
        e = kwargs.get("e")
        pa, pb, pd = a.data_ptr(), b.data_ptr(), out.data_ptr()
        pc = c.data_ptr() if c is not None else 0
        pbias = bias.data_ptr() if bias is not None else 0
        pe = e.data_ptr() if e is not None else 0
        if (pa | pb | pd | pe | (pc if prep.use_c else 0) | (pbias if prep.bias_aligned else 0)) % prep.align_bytes:
            return None
        if given and prep.extents[5]:
            d_end = pd + prep.extents[5]
            for i, (p, ext) in enumerate(zip((pa, pb, pc, pbias, pe), prep.extents)):
                if ext and p < d_end and pd < p + ext and not (i == 2 and p == pd and prep.c_may_alias_out):
                    return None
        args = abi.CksArgs.from_buffer_copy(prep.args)
        args.a, args.b, args.d = pa, pb, pd
        args.c = pc if prep.use_c else None
        args.bias = pbias or None
        args.e = pe or None
        status = self._run_plan(plan, args, prep.device, self._stream(prep.device.index))
        if status == 0:
            return out
        if status == abi.STATUS_INVALID_PROBLEM:
            return None
        raise self._run_error(plan.variant, plan.split, args, status)

    def _stream(self, index: int) -> int:
        """The raw current stream of device ``index`` (a method so CPU tests can stand in)."""
        return _current_stream(index)

    def _run_error(self, variant: str, split: int, args: abi.CksArgs, status: int) -> KernelError:
        return KernelError(f"{self.name}: {variant} (split {split}) failed for M={args.m} N={args.n} "
                           f"K={args.k}: {abi.STATUS_NAMES.get(status, status)}: {self.bound.last_error()}")

    def _call(self, a: torch.Tensor, b: torch.Tensor, kwargs: Dict[str, Any], sig: Optional[tuple],
              scratch: bool = False) -> torch.Tensor:
        """The full path: validates everything, plans on a new problem, and remembers the
        signature ``sig`` for the fast path when the operands ran in place. ``scratch``: take
        the workspace per call rather than from the library's cache (see ``_register_custom_op``)."""
        for key in kwargs:
            if key not in self.keywords:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}; "
                                f"this op accepts: {', '.join(self.keywords)}")
        for key in self.required:
            if kwargs.get(key) is None:
                raise TypeError(f"{self.name}() missing required keyword argument {key!r}")
        if torch.compiler.is_compiling():
            if kwargs.get("out") is not None:
                raise TypeError(f"{self.name}(): out= is not supported under torch.compile")
            return self._compiled_call(a, b, kwargs)
        ep = self.spec.epilogue
        alpha = float(kwargs.get("alpha", 1.0))
        beta = float(kwargs.get("beta", 0.0))
        c = kwargs.get("c")
        bias = kwargs.get("bias")
        e = kwargs.get("e")
        view = kwargs.get("view")
        out = kwargs.get("out")
        slope = float(kwargs.get("negative_slope", ep.leaky_slope))
        split_k = kwargs.get("split_k")
        pool = self._pool(split_k, kwargs.get("mode"), kwargs.get("variant"))

        self._check_tensor("a", a, 2, None)
        device = a.device
        self._check_tensor("b", b, 2, device)
        m, k = a.shape
        if b.shape[0] != k:
            raise ValueError(f"{self.name}: a is ({m}, {k}) but b is {tuple(b.shape)}: b must be (K={k}, N)")
        n = b.shape[1]
        if beta != 0.0 and c is None:
            raise ValueError(f"{self.name}: beta={beta} needs c")
        if c is not None:
            self._check_tensor("c", c, 2, device, (m, n))
        if bias is not None:
            length = n if ep.bias is BiasMode.PER_COL else m
            self._check_tensor("bias", bias, 1, device, (length,))
        if e is not None:
            self._check_tensor("e", e, 2, device, (m, n))
        out_shape = self._out_shape(m, n, view)
        if out is not None:
            self._check_tensor("out", out, len(out_shape), device, out_shape)
            if out.numel():
                for name, t in (("a", a), ("b", b), ("bias", bias), ("e", e)):
                    if t is not None and t.numel() and _overlaps(out, t):
                        raise ValueError(f"{self.name}: out overlaps {name}; pass a separate output tensor")
            if c is not None and out.numel() and c.numel() and _overlaps(out, c) and not (
                    ep.permute is Permute.NONE and out.data_ptr() == c.data_ptr() and out.stride() == c.stride()):
                raise ValueError(f"{self.name}: out partially overlaps c; out may alias c only exactly "
                                 "(same pointer and strides, unpermuted output)")
        else:
            out = torch.empty(out_shape, dtype=self.dtype, device=device)
        if m == 0 or n == 0:
            return out
        if k == 0:
            return self._empty_k(out, m, n, alpha, beta, c, bias, e, view, slope)

        align = min(v.alignment for v in pool)
        ops = self._operands(a, b, c, bias, e, out, m, n, k, beta, align)
        ops.scratch = scratch
        launched = self._launch(ops, m, alpha, beta, slope, view, device, split_k, kwargs.get("mode"),
                                kwargs.get("variant"))
        if ops.d is not out:
            out.copy_(ops.d[:, :n] if ep.permute is Permute.NONE else ops.d.view(out_shape))
        elif sig is not None and launched is not None:
            self._remember(sig, launched, ops, out_shape, align, c)
        return out

    def _remember(self, sig: tuple, launched: Tuple[tuple, abi.CksArgs, torch.device],
                  ops: _Operands, out_shape: Tuple[int, ...], align: int, c: Optional[torch.Tensor]) -> None:
        plan_key, args, device = launched
        template = abi.CksArgs.from_buffer_copy(args)
        for ptr in ("a", "b", "c", "bias", "e", "d", "semaphores", "partials"):
            setattr(template, ptr, None)
        template.semaphore_bytes = template.partial_bytes = 0
        per_col = self.spec.epilogue.bias is BiasMode.PER_COL
        extents = tuple(_extent(t) for t in (ops.a, ops.b, c, ops.bias, ops.e, ops.d))
        alias_ok = (c is not None and self.spec.epilogue.permute is Permute.NONE
                    and c.stride() == ops.d.stride())
        if len(self._prepared) >= PREPARED_CACHE_SIZE:
            self._prepared.clear()
        self._prepared[sig] = _Prepared(template, plan_key, device, out_shape, align * 2, per_col,
                                        ops.c is not None, alias_ok, extents)

    def _check_tensor(self, name: str, t: Any, ndim: int, device: Optional[torch.device],
                      shape: Optional[Sequence[int]] = None) -> None:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{self.name}: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != self.dtype:
            raise TypeError(f"{self.name}: {name} must be {self.dtype}, got {t.dtype}")
        if self.require_cuda and t.device.type != "cuda":
            raise ValueError(f"{self.name}: {name} must be on a CUDA device, got {t.device}")
        if device is not None and t.device != device:
            raise ValueError(f"{self.name}: {name} is on {t.device} but a is on {device}")
        if t.dim() != ndim:
            raise ValueError(f"{self.name}: {name} must be {ndim}-D, got shape {tuple(t.shape)}")
        if shape is not None and tuple(t.shape) != tuple(shape):
            raise ValueError(f"{self.name}: {name} must have shape {tuple(shape)}, got {tuple(t.shape)}")

    def _out_shape(self, m: int, n: int, view: Any) -> Tuple[int, ...]:
        p = self.spec.epilogue.permute
        if p is Permute.NONE:
            return (m, n)
        rank = 4 if p is Permute.HEAD_SPLIT else 5
        form = "(B, S, H, D)" if rank == 4 else "(B, S, 3, H, D)"
        if (not isinstance(view, (tuple, list)) or len(view) != rank
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in view)):
            raise ValueError(f"{self.name}: view must be {form} with non-negative ints, got {view!r}")
        if rank == 5 and view[2] != 3:
            raise ValueError(f"{self.name}: view {tuple(view)} must have 3 at index 2 {form}")
        bsz, s = view[0], view[1]
        h, dh = view[-2], view[-1]
        if bsz * s != m or (3 if rank == 5 else 1) * h * dh != n:
            raise ValueError(f"{self.name}: view {tuple(view)} does not match the output (M={m}, N={n}): "
                             f"need B*S == M and {'3*' if rank == 5 else ''}H*D == N")
        return (bsz, h, s, dh) if rank == 4 else (3, bsz, h, s, dh)

    def _layout_error(self, name: str, t: torch.Tensor, want: str, fix: str) -> ValueError:
        return ValueError(f"{self.name}: {name} must be {want}, got shape {tuple(t.shape)} with strides "
                          f"{tuple(t.stride())}; {fix}")

    def _operands(self, a, b, c, bias, e, out, m, n, k, beta, align: int) -> _Operands:
        layout = self.spec.layout
        lda = _row_major_ld(a)
        if lda is None:
            raise self._layout_error("a", a, "row-major (stride(1) == 1)", "pass a.contiguous()")
        if layout is Layout.TN:
            ldb = _col_major_ld(b)
            if ldb is None:
                raise self._layout_error("b", b, "column-major (K, N) for layout tn",
                                         "pass weight.t() of a contiguous (N, K) weight")
        else:
            ldb = _row_major_ld(b)
            if ldb is None:
                raise self._layout_error("b", b, "row-major (K, N) for layout nn", "pass b.contiguous()")
        ldc = lde = 0
        if c is not None:
            ldc = _row_major_ld(c)
            if ldc is None:
                raise self._layout_error("c", c, "row-major (stride(1) == 1)", "pass c.contiguous()")
        if e is not None:
            lde = _row_major_ld(e)
            if lde is None:
                raise self._layout_error("e", e, "row-major (stride(1) == 1)", "pass e.contiguous()")
        if bias is not None and bias.numel() > 1 and bias.stride(0) != 1:
            raise self._layout_error("bias", bias, "contiguous", "pass bias.contiguous()")
        if self.spec.epilogue.permute is Permute.NONE:
            ldd = _row_major_ld(out)
            if ldd is None:
                raise self._layout_error("out", out, "row-major (stride(1) == 1)", "pass a contiguous out")
        else:
            if not out.is_contiguous():
                raise self._layout_error("out", out, "contiguous", "pass a contiguous out")
            ldd = n
        ops = _Operands(a, b, lda, ldb, c if beta != 0.0 else None, ldc, bias, e, lde, out, ldd, n, k)
        if self._aligned(ops, align):
            return ops
        return self._padded(ops, m, align)

    def _aligned(self, o: _Operands, al: int) -> bool:
        nbytes = al * 2
        lds = [o.lda, o.ldb, o.ldd] + ([o.ldc] if o.c is not None else []) + ([o.lde] if o.e is not None else [])
        ptrs = [o.a, o.b, o.d, o.c, o.e] + ([o.bias] if self.spec.epilogue.bias is BiasMode.PER_COL else [])
        return (o.k % al == 0 and o.n % al == 0 and all(ld % al == 0 for ld in lds)
                and all(t is None or t.data_ptr() % nbytes == 0 for t in ptrs))

    def _padded(self, o: _Operands, m: int, al: int) -> _Operands:
        """Copies the operands into zero-padded, aligned buffers (the slow path)."""
        ep = self.spec.epilogue
        kp = -(-o.k // al) * al
        np_ = -(-o.n // al) * al
        if ep.permute is not Permute.NONE and np_ != o.n:
            raise ValueError(f"{self.name}: N={o.n} must be a multiple of {al} for the permuted output "
                             f"(the head size D must be a multiple of {al})")
        warnings.warn(f"{self.name}: M={m} N={o.n} K={o.k} is not {al}-element aligned (sizes, strides or "
                      f"pointers); operands are copied into padded buffers", PaddingWarning, stacklevel=4)
        dev = o.a.device

        def pad2(t: Optional[torch.Tensor], rows: int, cols: int) -> Optional[torch.Tensor]:
            if t is None:
                return None
            buf = torch.zeros(rows, cols, dtype=self.dtype, device=dev)
            buf[: t.shape[0], : t.shape[1]] = t
            return buf

        a = pad2(o.a, m, kp)
        if self.spec.layout is Layout.TN:
            b = pad2(o.b.t(), np_, kp).t()
            ldb = kp
        else:
            b = pad2(o.b, kp, np_)
            ldb = np_
        c = pad2(o.c, m, np_)
        e = pad2(o.e, m, np_)
        bias = o.bias
        if bias is not None:
            length = np_ if ep.bias is BiasMode.PER_COL else bias.shape[0]
            bias = torch.zeros(length, dtype=self.dtype, device=dev)
            bias[: o.bias.shape[0]] = o.bias
        if ep.permute is Permute.NONE:
            d = torch.empty(m, np_, dtype=self.dtype, device=dev)
        else:
            d = torch.empty(m * np_, dtype=self.dtype, device=dev).view(m, np_)
        return _Operands(a, b, kp, ldb, c, np_, bias, e, np_, d, np_, np_, kp)

    def _launch(self, o: _Operands, m: int, alpha: float, beta: float, slope: float, view: Any,
                device: torch.device, split_k: Optional[int], mode: Optional[str],
                variant: Optional[str]) -> Optional[Tuple[tuple, abi.CksArgs, torch.device]]:
        """Picks a variant and runs it on the device's current stream. (The library selects
        the device itself from ``CksArgs.device``; no device guard is needed here.) Returns
        the plan key, the arguments and the device, for the fast path."""
        return self._launch_on(o, m, alpha, beta, slope, view, device, self._stream(device.index),
                        split_k, mode, variant)

    def _launch_on(self, o: _Operands, m: int, alpha: float, beta: float, slope: float, view: Any,
                   device: torch.device, stream: int, split_k: Optional[int],
                   mode: Optional[str], variant: Optional[str]) -> Tuple[tuple, abi.CksArgs, torch.device]:
        ep = self.spec.epilogue
        args = abi.CksArgs()
        args.abi_version = abi.ABI_VERSION
        args.m, args.n, args.k = m, o.n, o.k
        args.device = device.index
        if ep.permute is not Permute.NONE:
            args.permute_s, args.permute_h = view[1], view[-2]
        args.a, args.lda = o.a.data_ptr(), o.lda
        args.b, args.ldb = o.b.data_ptr(), o.ldb
        args.c, args.ldc = (o.c.data_ptr(), o.ldc) if o.c is not None else (None, 0)
        args.bias = o.bias.data_ptr() if o.bias is not None else None
        args.e, args.lde = (o.e.data_ptr(), o.lde) if o.e is not None else (None, 0)
        args.d, args.ldd = o.d.data_ptr(), o.ldd
        args.alpha, args.beta, args.act_arg = alpha, beta, slope

        key = (device.index, m, o.n, o.k, split_k, mode, variant)
        plan = self._plans.get(key)
        if plan is not None:
            status = self._run_plan(plan, args, device, stream, o.scratch)
            if status == 0:
                return key, args, device
            if status != abi.STATUS_INVALID_PROBLEM:
                raise self._run_error(plan.variant, plan.split, args, status)
        # First call for this problem (or the cached plan's variant rejected these
        # pointers): the tuned choice if the cache has one (or autotuning is on), then the
        # heuristic's ranking; the first candidate the library accepts runs.
        dev = self.library.device_info(device.index)
        order = [(c.variant.name, c.split) for c in self.candidates(m, o.n, o.k, dev, split_k, mode, variant)]
        if split_k is None and mode is None and variant is None:
            tuned = self._tuned_choice(device.index, m, o.n, o.k)
            if tuned is None and self.library.autotune:
                tuned = self._tune_in_place(args, o, device, stream, order, m)
            if tuned is not None:
                order.insert(0, tuned)
        rejected: List[str] = []
        for name, split in order:
            plan = self._query(name, split, args, rejected)
            if plan is None:
                continue
            status = self._run_plan(plan, args, device, stream, o.scratch)
            if status != 0:
                raise self._run_error(name, split, args, status)
            if len(self._plans) >= PLAN_CACHE_SIZE:
                self._plans.clear()
            self._plans[key] = plan
            return key, args, device
        unique = sorted(set(rejected))
        raise ValueError(f"{self.name}: no built variant can run M={m} N={o.n} K={o.k} ({self.spec.dtype.value}):\n  "
                         + "\n  ".join(unique))

    def _query(self, name: str, split: int, args: abi.CksArgs, rejected: List[str]) -> Optional["_Plan"]:
        """Asks the library whether ``name`` can run ``args`` at ``split``; None if not."""
        args.split_k = split
        query = abi.CksQuery()
        status = self.bound.query[name](ctypes.byref(args), ctypes.byref(query))
        if status == abi.STATUS_INVALID_PROBLEM:
            rejected.append(f"{name}: {self.bound.last_error()}")
            return None
        if status != 0:
            raise KernelError(f"{self.name}: {name} query failed "
                              f"({abi.STATUS_NAMES.get(status, status)}): {self.bound.last_error()}")
        return _Plan(name, split, query.semaphore_bytes, query.partial_bytes)

    # --- autotuning ----------------------------------------------------------------------------

    def _tune_key(self, device_index: int, m: int, n: int, k: int) -> str:
        return "|".join([self.library.device_key(device_index), self.library.build_hash, self.name,
                         f"m{tuning.m_bucket(m)}", f"n{n}", f"k{k}", self.spec.dtype.value,
                         self.spec.layout.value])

    def _tuned_choice(self, device_index: int, m: int, n: int, k: int) -> Optional[Tuple[str, int]]:
        key = self._tune_key(device_index, m, n, k)
        entry = self.library.tune_cache.get(key)
        if entry is None:
            return None
        v = next((v for v in self.spec.variants if v.name == entry.get("variant")), None)
        if v is None or entry.get("split") not in v.splits:
            warnings.warn(f"tuning cache {self.library.tune_cache.path}: entry for {self.name} M={m} N={n} K={k} "
                          f"names {entry.get('variant')!r} split {entry.get('split')!r}, which this library does "
                          "not have; ignored", tuning.TuneCacheWarning, stacklevel=5)
            return None
        return v.name, int(entry["split"])

    def _tune_in_place(self, args: abi.CksArgs, o: "_Operands", device: torch.device, stream: int,
                       order: List[Tuple[str, int]], m: int) -> Optional[Tuple[str, int]]:
        """Times every candidate on the caller's inputs (into a scratch output) and stores
        the fastest. Used on the first call of a new problem when autotuning is on."""
        scratch = torch.empty_like(o.d)
        saved_d = args.d
        args.d = scratch.data_ptr()
        plans: Dict[Tuple[str, int], _Plan] = {}
        for name, split in order:
            plan = self._query(name, split, args, [])
            if plan is not None:
                plans[(name, split)] = plan

        def run(name: str, split: int) -> None:
            if self._run_plan(plans[(name, split)], args, device, stream) != 0:
                raise ValueError(self.bound.last_error())

        with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=device)):
            results = tuning.time_candidates(run, list(plans))
        args.d = saved_d
        if not results:
            return None
        us, name, split = results[0]
        self.library.tune_cache.put(self._tune_key(device.index, m, o.n, o.k), {
            "variant": name, "split": split, "us": us, "candidates": len(results), "when": tuning.now(),
            "inputs": "caller's"})
        return name, split

    def random_inputs(self, m: int, n: int, k: int, *, view: Any = None,
                      device: Optional[torch.device] = None) -> Tuple[torch.Tensor, torch.Tensor, Dict[str, Any]]:
        """(a, b, keyword arguments) of random normal data for this op's signature and layout:
        what tuning and benchmarking call the op with."""
        device = device or torch.device("cuda", torch.cuda.current_device())
        ep = self.spec.epilogue

        def randn(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, device=device, dtype=self.dtype)

        b = randn(n, k).t() if self.spec.layout is Layout.TN else randn(k, n)
        kw: Dict[str, Any] = {}
        if ep.bias is not BiasMode.NONE:
            kw["bias"] = randn(n if ep.bias is BiasMode.PER_COL else m)
        if ep.e_op is not EOp.NONE:
            kw["e"] = randn(m, n)
        if ep.permute is not Permute.NONE:
            kw["view"] = view
        return randn(m, k), b, kw

    def tune(self, m: int, n: int, k: int, *, view: Any = None, verbose: bool = False) -> dict:
        """Times every candidate for (M, N, K) on random inputs, rotating input sets so the
        operands do not stay in L2, and stores the fastest in the tuning cache."""
        device = torch.device("cuda", torch.cuda.current_device())
        per_set = 2 * (m * k + k * n + 3 * m * n)
        l2 = torch.cuda.get_device_properties(device).L2_cache_size
        sets = max(1, min(8, -(-2 * l2 // max(per_set, 1))))
        inputs = [self.random_inputs(m, n, k, view=view, device=device) for _ in range(sets)]
        state = {"i": 0}

        def run(name: str, split: int) -> None:
            a, b, kw = inputs[state["i"] % sets]
            state["i"] += 1
            self(a, b, split_k=split, variant=name, **kw)

        cands = [(c.variant.name, c.split) for c in
                 self.candidates(m, n, k, self.library.device_info(device.index))]
        results = tuning.time_candidates(run, cands)
        if not results:
            raise ValueError(f"{self.name}: no built variant can run M={m} N={n} K={k}")
        us, name, split = results[0]
        entry = {"variant": name, "split": split, "us": us, "candidates": len(results),
                 "when": tuning.now(), "inputs": f"random, {sets} rotating set(s)"}
        self.library.tune_cache.put(self._tune_key(device.index, m, n, k), entry)
        self._plans.clear()
        if verbose:
            for t, v, sp in results[:5]:
                print(f"  {t:8.1f} us  {v} split={sp}")
        return {"op": self.name, "m": m, "n": n, "k": k, **entry}

    def _run_plan(self, plan: "_Plan", args: abi.CksArgs, device: torch.device, stream: int,
                  scratch: bool = False) -> int:
        args.split_k = plan.split
        ws = SCRATCH if scratch else self.library.workspace
        if plan.semaphore_bytes:
            sem = ws.semaphores(device, stream, plan.semaphore_bytes)
            args.semaphores, args.semaphore_bytes = sem.data_ptr(), sem.numel() * 4
        if plan.partial_bytes:
            part = ws.partials(device, stream, plan.partial_bytes)
            args.partials, args.partial_bytes = part.data_ptr(), part.numel() * 4
        return self.bound.run[plan.variant](ctypes.byref(args), ctypes.c_void_p(stream))

    def _empty_k(self, out, m, n, alpha, beta, c, bias, e, view, slope) -> torch.Tensor:
        """K == 0: the product is zero; the epilogue still applies (computed by torch)."""
        ep = self.spec.epilogue
        v = torch.zeros(m, n, dtype=torch.float32, device=out.device)
        if beta != 0.0 and c is not None:
            v = v + beta * c.float()
        if bias is not None:
            v = v + (bias.float()[None, :] if ep.bias is BiasMode.PER_COL else bias.float()[:, None])
        v = reference_activation(v, ep.activation, slope)
        if ep.e_op is EOp.ADD:
            v = v + e.float()
        elif ep.e_op is EOp.MUL:
            v = v * e.float()
        out.copy_(reference_permute(v, ep.permute, view))
        return out


_CUSTOM_OP_IDS = itertools.count()


def _register_custom_op(op: "Op") -> Any:
    """Registers ``cutlass_splitk::<op>_<build hash>_<n>`` (n distinguishes libraries loaded
    twice in one process) with a fake implementation for tracing."""
    qualname = f"cutlass_splitk::{op.name}_{op.library.build_hash[:8] or 'x'}_{next(_CUSTOM_OP_IDS)}"
    schema = ("(Tensor a, Tensor b, Tensor? bias, Tensor? c, Tensor? e, float alpha, float beta, "
              "int[]? view, float negative_slope, int? split_k, str? mode, str? variant) -> Tensor")

    def impl(a, b, bias, c, e, alpha, beta, view, negative_slope, split_k, mode, variant):
        kwargs: Dict[str, Any] = {"split_k": split_k, "mode": mode, "variant": variant}
        values = {"bias": bias, "c": c, "e": e, "alpha": alpha, "beta": beta,
                  "view": tuple(view) if view is not None else None, "negative_slope": negative_slope}
        kwargs.update({k: v for k, v in values.items() if k in op.keywords})
        # Workspace per call: under torch.compile(mode="reduce-overhead") this runs while
        # cudagraph trees route every allocation of the thread to their private pool, where
        # a cached workspace would be a live tensor they do not track (they refuse that).
        return op._call(a, b, kwargs, None, scratch=True)

    custom = torch.library.custom_op(qualname, impl, mutates_args=(), device_types="cuda", schema=schema)

    def fake(a, b, bias, c, e, alpha, beta, view, negative_slope, split_k, mode, variant):
        return a.new_empty(op._out_shape(a.shape[0], b.shape[1], tuple(view) if view is not None else None))

    custom.register_fake(fake)
    return custom


def _current_stream(index: int) -> int:
    """The raw cudaStream_t of the device's current stream (cheap: no Stream object)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)


def _span(t: torch.Tensor) -> Tuple[int, int]:
    """[first, last) byte addresses a (non-negatively strided) tensor can touch."""
    lo = t.data_ptr()
    return lo, lo + _extent(t)


def _overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether two non-empty tensors of one storage touch a common byte range (conservative:
    two interleaved views of one buffer count as overlapping)."""
    if x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr():
        return False
    (a0, a1), (b0, b1) = _span(x), _span(y)
    return a0 < b1 and b0 < a1


def reference_activation(v: torch.Tensor, act: Activation, slope: float = 0.01) -> torch.Tensor:
    """The activation as torch.nn.functional computes it (used for K == 0 and by the tests)."""
    F = torch.nn.functional
    return {
        Activation.IDENTITY: lambda x: x,
        Activation.RELU: F.relu,
        Activation.GELU: F.gelu,
        Activation.GELU_TANH: lambda x: F.gelu(x, approximate="tanh"),
        Activation.SILU: F.silu,
        Activation.SIGMOID: torch.sigmoid,
        Activation.LEAKY_RELU: lambda x: F.leaky_relu(x, slope),
    }[act](v)


def reference_permute(v: torch.Tensor, permute: Permute, view: Any) -> torch.Tensor:
    """The (M, N) result written in the op's output layout (as a contiguous tensor)."""
    if permute is Permute.NONE:
        return v
    if permute is Permute.HEAD_SPLIT:
        return v.reshape(tuple(view)).permute(0, 2, 1, 3).contiguous()
    return v.reshape(tuple(view)).permute(2, 0, 3, 1, 4).contiguous()
