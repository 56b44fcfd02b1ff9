"""One op of a loaded library: ``op(a, b, **epilogue_args)``.

A call takes one of three ways:

* torch tensors whose signature (shapes, strides, dtypes, devices, keyword values) ran
  twice before: the fast path, in C where the build has it (:mod:`.native`), otherwise in Python
  (:mod:`.fastpath`), which re-checks only what depends on the pointers;
* other torch tensors: the full path (:mod:`.torch_path`): every check, a plan for a new
  problem, torch's current stream and caching allocator; it remembers the signature;
* any other CUDA array (DLPack or ``__cuda_array_interface__``): :mod:`.array_path`, on the
  ``stream=`` given (or the framework's current one), with cuda.core memory; a signature
  that ran in place twice there takes :mod:`.array_fast`.

Without torch installed only the last exists, and nothing here imports torch.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ..spec import Activation, BiasMode, EOp, KernelVariant, OpSpec, Permute
from . import abi, array_fast, array_path, arrays, dispatch, operands, tuning
from .launcher import BoundedCache, Launcher
from .platform import torch_or_none

if TYPE_CHECKING:
    from .library import Library

PREPARED_CACHE_SIZE = 256  # call signatures remembered per op
POOL_CACHE_SIZE = 256  # (split_k, mode, variant) choices remembered per op

# The torch path, bound by _bind_torch() when torch is importable (module globals: no import
# statement runs inside a call, which torch.compile traces).
_is_compiling: Any = None
_kwargs_key: Any = None
_Tensor: Any = None
_torch_path: Any = None


def _bind_torch() -> bool:
    global _is_compiling, _kwargs_key, _Tensor, _torch_path
    torch = torch_or_none()
    if torch is None:
        return False
    if _torch_path is None:
        from . import fastpath, torch_path

        _is_compiling, _kwargs_key, _Tensor = torch.compiler.is_compiling, fastpath.kwargs_key, torch.Tensor
        _torch_path = torch_path
    return True


class Op:
    """One op of a loaded library: ``op(a, b, **epilogue_args)``."""

    def __init__(self, library: "Library", spec: OpSpec, bound: abi.BoundLibrary):
        self.library = library
        self.spec = spec
        self.bound = bound
        self.name = spec.name
        self.platform = library.platform
        self.tuner = library.tuner
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
        self._defaults = self._values({})  # read_keywords of a call without keywords
        self.launcher = Launcher(spec, bound, library.workspace, self.platform, self.tuner)
        self.prepared: BoundedCache[tuple, Any] = BoundedCache(PREPARED_CACHE_SIZE)  # signature -> Prepared or SEEN
        self._lookup = self.prepared.lookup
        self.array_prepared: BoundedCache[tuple, Any] = BoundedCache(PREPARED_CACHE_SIZE)  # the array path's
        self._array_lookup = self.array_prepared.lookup
        self._pools: BoundedCache[tuple, List[KernelVariant]] = BoundedCache(POOL_CACHE_SIZE)
        self._torch = _bind_torch()
        # torch.float16 / torch.bfloat16 where torch is installed, else "float16" / "bfloat16"
        self.dtype: Any = arrays.DTYPE_NAMES[spec.dtype]
        if self._torch:
            from .reference import TORCH_DTYPES

            self.dtype = TORCH_DTYPES[spec.dtype]
        self.torch_op: Any = None  # the torch.library custom op (torch_op.register), set by load()
        self._native_call: Any = None
        self.native = None  # the C call path (native.NativeOp), set by load() where it exists

    @property
    def native(self) -> Any:
        """The op's C call path (:class:`.native.NativeOp`), or None; set None to leave every call
        to the Python paths."""
        return self._native

    @native.setter
    def native(self, value: Any) -> None:
        self._native = value
        self._native_call = value.call if value is not None else None

    def __repr__(self) -> str:
        return f"<cutlass_splitk op {self.name}: {self.signature()}>"

    def signature(self) -> str:
        return f"{self.name}(a, b, *, {', '.join(self.keywords)})"

    def read_keywords(self, kwargs: Dict[str, Any]) -> Tuple[tuple, List[KernelVariant]]:
        """The call's keyword values, read once for both full paths: (alpha, beta, slope, c,
        bias, e, view, out, split_k, mode, variant), and the variants they allow."""
        if not kwargs:
            return self._defaults, self.pool(None, None, None)
        values = self._values(kwargs)
        return values, self.pool(*values[8:])

    def _values(self, kwargs: Dict[str, Any]) -> tuple:
        return (float(kwargs.get("alpha", 1.0)), float(kwargs.get("beta", 0.0)),
                float(kwargs.get("negative_slope", self.spec.epilogue.leaky_slope)),
                *(kwargs.get(name) for name in ("c", "bias", "e", "view", "out", "split_k", "mode", "variant")))

    # --- selection ------------------------------------------------------------------------

    def device_info(self, index: int) -> dispatch.DeviceInfo:
        """Device ``index`` as this op's time model sees it (Launcher.device_info: the GPC order, measured
        first on the device's current stream where it was not yet)."""
        return self.launcher.device_info(index, self.platform.stream(index))

    def candidates(self, m: int, n: int, k: int, dev: dispatch.DeviceInfo, split_k: Optional[int] = None,
                   mode: Optional[str] = None, variant: Optional[str] = None,
                   runnable_only: bool = True) -> List[dispatch.Candidate]:
        """The ranked (variant, split) candidates the call allows (only those that run on
        ``dev`` unless ``runnable_only`` is False)."""
        archs = self.spec.archs if runnable_only else None
        epi = self.spec.epilogue
        return dispatch.rank(self.pool(split_k, mode, variant), m, n, k, dev, split_k, archs, epi.tma_in_kernel,
                             epi.transcendental)

    def pool(self, split_k: Any, mode: Any, variant: Any) -> List[KernelVariant]:
        """The built variants allowed by the caller's split_k / mode / variant (validated;
        memoised, since it is on every call's path)."""
        key = (split_k, type(split_k), mode, variant)  # the type: split_k=True must not hit 1's entry
        try:
            pool = self._pools.get(key)
        except TypeError:  # an unhashable argument, which validation reports
            return dispatch.allowed(self.name, self.spec.variants, split_k, mode, variant)
        if pool is None:
            pool = dispatch.allowed(self.name, self.spec.variants, split_k, mode, variant)
            self._pools.put(key, pool)
        return pool

    def out_shape(self, m: int, n: int, view: Any) -> Tuple[int, ...]:
        return operands.out_shape(self.name, self.spec.epilogue.permute, m, n, view)

    # --- the call ---------------------------------------------------------------------------

    def __call__(self, a: Any, b: Any, **kwargs: Any) -> Any:
        if self._torch:
            if _is_compiling():
                return self._call(a, b, kwargs, None)
            native = self._native_call
            if native is not None:
                out = native(a, b, kwargs)
                if out is not None:
                    return out
            try:
                if kwargs:
                    sig = (a.shape, a.stride(), a.dtype, a.get_device(), b.shape, b.stride(), b.dtype,
                           b.get_device(), *_kwargs_key(kwargs))
                else:
                    sig = (a.shape, a.stride(), a.dtype, a.get_device(), b.shape, b.stride(), b.dtype,
                           b.get_device())
                prep = self._lookup(sig)
            except (AttributeError, TypeError):  # not tensors, or an unhashable keyword value
                prep = sig = None
            if prep is not None:
                out = prep.call(a, b, kwargs)
                if out is not None:
                    return out
            if sig is not None or isinstance(a, _Tensor) or not arrays.is_array(a):
                return self._call(a, b, kwargs, sig)
        return self._array_call(a, b, kwargs)

    def check_keywords(self, kwargs: Dict[str, Any], allowed: Tuple[str, ...]) -> None:
        for key in kwargs:
            if key not in allowed:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}; "
                                f"this op accepts: {', '.join(allowed)}")
        for key in self.required:
            if kwargs.get(key) is None:
                raise TypeError(f"{self.name}() missing required keyword argument {key!r}")

    def _call(self, a: Any, b: Any, kwargs: Dict[str, Any], sig: Optional[tuple], scratch: bool = False) -> Any:
        """The torch path's full call (``scratch``: workspace per call, see torch_op)."""
        if "stream" in kwargs:
            raise TypeError(f"{self.name}(): stream= is for non-torch arrays; torch tensors run on "
                            "torch.cuda.current_stream() (use `with torch.cuda.stream(s):`)")
        self.check_keywords(kwargs, self.keywords)
        return _torch_path.call(self, a, b, kwargs, sig, scratch)

    def _array_call(self, a: Any, b: Any, kwargs: Dict[str, Any]) -> Any:
        """Any other CUDA array (see array_path and array_fast)."""
        sig = array_fast.signature(a, b, kwargs, self.platform.devices)
        key = None
        if sig is not None:
            try:
                prep = self._array_lookup(sig.key)
                key = sig.key
            except TypeError:  # an unhashable keyword value
                prep = None
            if prep is not None:
                out = prep.call(a, kwargs, sig)
                if out is not None:
                    return out
        self.check_keywords(kwargs, self.keywords + ("stream",))
        return array_path.call(self, a, b, kwargs, key)

    # --- inputs and tuning --------------------------------------------------------------------

    def random_inputs(self, m: int, n: int, k: int, *, view: Any = None,
                      device: Any = None) -> Tuple[Any, Any, Dict[str, Any]]:
        """(a, b, keyword arguments) of random normal torch tensors for this op's signature and
        layout: what tuning and benchmarking call the op with."""
        torch = _require_torch(self.name, "random_inputs")
        from . import reference

        device = device or torch.device("cuda", self.platform.current_device())
        return reference.random_inputs(self.spec, m, n, k, view=view, device=device)

    def tune(self, m: int, n: int, k: int, *, view: Any = None, verbose: bool = False) -> dict:
        """Times every candidate for (M, N, K) on random inputs, rotating input sets so the
        operands do not stay in L2, and stores the fastest in the tuning cache."""
        torch = _require_torch(self.name, "tune")
        index = self.platform.current_device()
        device = torch.device("cuda", index)
        per_set = 2 * (m * k + k * n + 3 * m * n)
        l2 = self.platform.hardware(index).l2_bytes
        sets = max(1, min(8, -(-2 * l2 // max(per_set, 1))))
        inputs = [self.random_inputs(m, n, k, view=view, device=device) for _ in range(sets)]
        calls = itertools.count()

        def run(name: str, split: int) -> None:
            a, b, kw = inputs[next(calls) % sets]
            self(a, b, split_k=split, variant=name, **kw)

        cands = [(c.variant.name, c.split) for c in self.candidates(m, n, k, self.device_info(index))]
        results = tuning.time_candidates(run, cands)
        if not results:
            raise ValueError(f"{self.name}: no built variant can run M={m} N={n} K={k}")
        entry = self.tuner.record(self.spec, index, m, n, k, results, f"random, {sets} rotating set(s)")
        self.launcher.plans.clear()
        if verbose:
            for t, v, sp in results[:5]:
                print(f"  {t:8.1f} us  {v} split={sp}")
        return {"op": self.name, "m": m, "n": n, "k": k, **entry}


def _require_torch(op: str, what: str) -> Any:
    torch = torch_or_none()
    if torch is None:
        raise RuntimeError(f"{op}.{what}() times and draws inputs with torch, which is not installed here")
    return torch
