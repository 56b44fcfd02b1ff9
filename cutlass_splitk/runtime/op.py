"""One op of a loaded library: ``op(a, b, **epilogue_args)``.

A call's keyword arguments become one :class:`~.launcher.Request` after the argument checks
(:mod:`.operands`); the op's :class:`~.launcher.Launcher` runs it. A call that repeats an
earlier call's signature (shapes, strides, dtypes, devices, keyword values) takes the fast
path: the argument block is remembered (:class:`Prepared`) and only what depends on the
pointers is re-checked.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import torch

from ..spec import Activation, BiasMode, EOp, KernelVariant, OpSpec, Permute
from . import abi, dispatch, operands, reference, torch_op, tuning
from .launcher import BoundedCache, Launched, Launcher, PlanKey, Request

if TYPE_CHECKING:
    from .library import Library

PREPARED_CACHE_SIZE = 256  # call signatures remembered per op
POOL_CACHE_SIZE = 256  # (split_k, mode, variant) choices remembered per op


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


@dataclass(frozen=True)
class Prepared:
    """What the first call of one signature established: the argument block with every
    non-pointer field set, the plan key, and what must be re-checked per call (pointer
    alignment, overlap of ``out`` with the inputs: the bytes each operand spans)."""

    args: abi.CksArgs
    plan_key: PlanKey
    device: torch.device
    out_shape: Tuple[int, ...]
    align_bytes: int
    bias_aligned: bool  # the bias pointer must be aligned too (per-column bias)
    use_c: bool
    c_may_alias_out: bool  # c exactly aliasing out is allowed (same strides, unpermuted output)
    a_bytes: int  # bytes spanned (0 when absent or empty)
    b_bytes: int
    c_bytes: int
    bias_bytes: int
    e_bytes: int
    out_bytes: int


class Op:
    """One op of a loaded library: ``op(a, b, **epilogue_args)``."""

    def __init__(self, library: "Library", spec: OpSpec, bound: abi.BoundLibrary):
        self.library = library
        self.spec = spec
        self.bound = bound
        self.name = spec.name
        self.dtype = operands.TORCH_DTYPES[spec.dtype]
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
        self.launcher = Launcher(spec, bound, library.workspace, self.platform, self.tuner)
        self.prepared: BoundedCache[tuple, Prepared] = BoundedCache(PREPARED_CACHE_SIZE)
        self._pools: BoundedCache[tuple, List[KernelVariant]] = BoundedCache(POOL_CACHE_SIZE)
        self.torch_op: Any = None  # the torch.library custom op (torch_op.register), set by load()

    def __repr__(self) -> str:
        return f"<cutlass_splitk op {self.name}: {self.signature()}>"

    def signature(self) -> str:
        return f"{self.name}(a, b, *, {', '.join(self.keywords)})"

    # --- selection ------------------------------------------------------------------------

    def candidates(self, m: int, n: int, k: int, dev: dispatch.DeviceInfo, split_k: Optional[int] = None,
                   mode: Optional[str] = None, variant: Optional[str] = None,
                   runnable_only: bool = True) -> List[dispatch.Candidate]:
        """The ranked (variant, split) candidates the call allows (only those that run on
        ``dev`` unless ``runnable_only`` is False)."""
        archs = self.spec.archs if runnable_only else None
        return dispatch.rank(self._pool(split_k, mode, variant), m, n, k, dev, split_k, archs)

    def _pool(self, split_k: Optional[int], mode: Optional[str], variant: Optional[str]) -> List[KernelVariant]:
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

    def __call__(self, a: torch.Tensor, b: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        if torch.compiler.is_compiling():
            return self._call(a, b, kwargs, None)
        sig = _call_key(a, b, kwargs)
        if sig is not None:
            try:
                prep = self.prepared.get(sig)
            except TypeError:  # an unhashable argument (a list view, say): never remembered
                prep = sig = None
            if prep is not None:
                out = self._call_prepared(prep, a, b, kwargs)
                if out is not None:
                    return out
        return self._call(a, b, kwargs, sig)

    def _call_prepared(self, prep: Prepared, a: torch.Tensor, b: torch.Tensor,
                       kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
        """A call whose signature ran before: every check that depends only on the signature
        passed then. Pointers are checked here (alignment, ``out`` overlapping an input);
        None sends the call down the full path (which pads, raises or re-plans)."""
        plan = self.launcher.plans.get(prep.plan_key)
        if plan is None:
            return None
        out = kwargs.get("out")
        given = out is not None
        if not given:
            out = torch.empty(prep.out_shape, dtype=self.dtype, device=a.device)
        c, bias, e = kwargs.get("c"), kwargs.get("bias"), kwargs.get("e")
        pa, pb, pd = a.data_ptr(), b.data_ptr(), out.data_ptr()
        pc = c.data_ptr() if c is not None else 0
        pbias = bias.data_ptr() if bias is not None else 0
        pe = e.data_ptr() if e is not None else 0
        if (pa | pb | pd | pe | (pc if prep.use_c else 0) | (pbias if prep.bias_aligned else 0)) % prep.align_bytes:
            return None
        if given and prep.out_bytes:
            d_end = pd + prep.out_bytes
            for p, nbytes in ((pa, prep.a_bytes), (pb, prep.b_bytes), (pbias, prep.bias_bytes), (pe, prep.e_bytes)):
                if nbytes and p < d_end and pd < p + nbytes:
                    return None
            if (prep.c_bytes and pc < d_end and pd < pc + prep.c_bytes
                    and not (pc == pd and prep.c_may_alias_out)):
                return None
        args = abi.CksArgs.from_buffer_copy(prep.args)
        args.a, args.b, args.d = pa, pb, pd
        args.c = pc if prep.use_c else None
        args.bias = pbias or None
        args.e = pe or None
        status = self.launcher.run(plan, args, prep.device, self.platform.stream(prep.plan_key.device))
        if status == 0:
            return out
        if status == abi.STATUS_INVALID_PROBLEM:
            return None
        raise self.launcher.run_error(plan.variant, plan.split, args, status)

    def _call(self, a: torch.Tensor, b: torch.Tensor, kwargs: Dict[str, Any], sig: Optional[tuple],
              scratch: bool = False) -> torch.Tensor:
        """The full path: validates everything, plans on a new problem, and remembers the
        signature ``sig`` for the fast path when the operands ran in place. ``scratch``: take
        the workspace per call rather than from the library's cache (see torch_op.register)."""
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
            return torch_op.compiled_call(self, a, b, kwargs)
        ep = self.spec.epilogue
        alpha = float(kwargs.get("alpha", 1.0))
        beta = float(kwargs.get("beta", 0.0))
        c, bias, e, view, out = (kwargs.get(name) for name in ("c", "bias", "e", "view", "out"))
        slope = float(kwargs.get("negative_slope", ep.leaky_slope))
        split_k, mode, variant = kwargs.get("split_k"), kwargs.get("mode"), kwargs.get("variant")
        pool = self._pool(split_k, mode, variant)

        def check(name: str, t: Any, ndim: int, device: Optional[torch.device], shape: Any = None) -> None:
            operands.check_tensor(self.name, name, t, self.dtype, ndim, device, shape, self.platform.accepts_cpu)

        check("a", a, 2, None)
        device = a.device
        check("b", b, 2, device)
        m, k = a.shape
        if b.shape[0] != k:
            raise ValueError(f"{self.name}: a is ({m}, {k}) but b is {tuple(b.shape)}: b must be (K={k}, N)")
        n = b.shape[1]
        if beta != 0.0 and c is None:
            raise ValueError(f"{self.name}: beta={beta} needs c")
        if c is not None:
            check("c", c, 2, device, (m, n))
        if bias is not None:
            check("bias", bias, 1, device, (n if ep.bias is BiasMode.PER_COL else m,))
        if e is not None:
            check("e", e, 2, device, (m, n))
        out_shape = self.out_shape(m, n, view)
        if out is not None:
            check("out", out, len(out_shape), device, out_shape)
            operands.check_out_overlap(self.name, ep.permute, out, a, b, c, bias, e)
        else:
            out = torch.empty(out_shape, dtype=self.dtype, device=device)
        if m == 0 or n == 0:
            return out
        if k == 0:  # the product is zero; the epilogue still applies
            zero = torch.zeros(m, n, dtype=torch.float32, device=out.device)
            return out.copy_(reference.epilogue(ep, zero, beta=beta, c=c, bias=bias, e=e, view=view, slope=slope))

        align = min(v.alignment for v in pool)
        ops = operands.prepare(self.spec, self.dtype, a, b, c, bias, e, out, m, n, k, beta, align)
        request = Request(ops, m, alpha, beta, slope, view, device, self.platform.device_index(device), pool,
                          split_k, mode, variant, scratch)
        launched = self.launcher.launch(request)
        if ops.d is not out:
            out.copy_(ops.d[:, :n] if ep.permute is Permute.NONE else ops.d.view(out_shape))
        elif sig is not None and launched is not None:
            self._remember(sig, launched, request, out_shape, align, c)
        return out

    def _remember(self, sig: tuple, launched: Launched, r: Request, out_shape: Tuple[int, ...], align: int,
                  c: Optional[torch.Tensor]) -> None:
        template = abi.CksArgs.from_buffer_copy(launched.args)
        for ptr in ("a", "b", "c", "bias", "e", "d", "semaphores", "partials"):
            setattr(template, ptr, None)
        template.semaphore_bytes = template.partial_bytes = 0
        o, ep = r.operands, self.spec.epilogue
        alias_ok = c is not None and ep.permute is Permute.NONE and c.stride() == o.d.stride()
        size = operands.extent
        self.prepared.put(sig, Prepared(
            template, launched.plan_key, r.device, out_shape, align * 2, ep.bias is BiasMode.PER_COL,
            o.c is not None, alias_ok, size(o.a), size(o.b), size(c), size(o.bias), size(o.e), size(o.d)))

    # --- inputs and tuning --------------------------------------------------------------------

    def random_inputs(self, m: int, n: int, k: int, *, view: Any = None,
                      device: Optional[torch.device] = None) -> Tuple[torch.Tensor, torch.Tensor, Dict[str, Any]]:
        """(a, b, keyword arguments) of random normal data for this op's signature and layout:
        what tuning and benchmarking call the op with."""
        device = device or torch.device("cuda", self.platform.current_device())
        return reference.random_inputs(self.spec, m, n, k, view=view, device=device)

    def tune(self, m: int, n: int, k: int, *, view: Any = None, verbose: bool = False) -> dict:
        """Times every candidate for (M, N, K) on random inputs, rotating input sets so the
        operands do not stay in L2, and stores the fastest in the tuning cache."""
        index = self.platform.current_device()
        device = torch.device("cuda", index)
        per_set = 2 * (m * k + k * n + 3 * m * n)
        l2 = torch.cuda.get_device_properties(device).L2_cache_size
        sets = max(1, min(8, -(-2 * l2 // max(per_set, 1))))
        inputs = [self.random_inputs(m, n, k, view=view, device=device) for _ in range(sets)]
        calls = itertools.count()

        def run(name: str, split: int) -> None:
            a, b, kw = inputs[next(calls) % sets]
            self(a, b, split_k=split, variant=name, **kw)

        cands = [(c.variant.name, c.split) for c in self.candidates(m, n, k, self.platform.device_info(index))]
        results = tuning.time_candidates(run, cands)
        if not results:
            raise ValueError(f"{self.name}: no built variant can run M={m} N={n} K={k}")
        entry = self.tuner.record(self.spec, index, m, n, k, results, f"random, {sets} rotating set(s)")
        self.launcher.plans.clear()
        if verbose:
            for t, v, sp in results[:5]:
                print(f"  {t:8.1f} us  {v} split={sp}")
        return {"op": self.name, "m": m, "n": n, "k": k, **entry}
