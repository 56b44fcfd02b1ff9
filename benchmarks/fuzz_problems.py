"""Random problems through one built op, against a float64 reference (issue 13, part 2): the
checking half of the config fuzzer (``fuzz_grammar.py`` draws the configs,
``fuzz_configs.py`` drives a run).

A :class:`Problem` is drawn from ``random.Random(f"{seed}:{config}:{index}")`` alone (so it
can be replayed by its three numbers) over *all* of the op's variants; problems whose variant
cannot run on the device are skipped and counted. Each problem:

* M, N, K mostly small, odd and unaligned ones included (the runtime pads), a few large-K
  ones, now and then M, N or K of 0; a permuted op gets a random view (B, S, H, D) with D a
  multiple of the alignment;
* a, b, c, e and bias as contiguous tensors or slices of larger ones (row and column offsets,
  leading dimensions with and without the alignment: aligned strided operands take the
  kernels' direct path, the others the padding path);
* forced (variant, split, mode: every split factor of every variant in turn), partly forced
  (only split_k, only mode) or left to the dispatcher; the (variant, split) that actually ran
  is recorded;
* alpha, beta + c, bias and negative_slope given or omitted where the op takes them; out=
  omitted, a fresh tensor, a slice of a larger buffer (whose rest must stay untouched) or c
  itself (the exact alias the runtime allows);

runs twice on identical inputs (the second call takes the runtime's fast path) with
NaN-poisoned outputs and checks: every element written, relative Frobenius error <= 1e-2
(2.5e-2 for bf16 through the sm80 serial kernel at split > 1; RMS floor 1e-3, as
tests/gpu/test_gpu_ops.py), every element within 0.25 of max(|ref|, rms(ref)) (x (1 + |e|)
for e_op mul: catches a few garbage elements that the norm would average away), nothing
written outside ``out``, and the two results bitwise equal.
"""

from __future__ import annotations

import math
import random
import warnings
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from cutlass_splitk.runtime import PaddingWarning, dispatch
from cutlass_splitk.runtime.reference import epilogue, permute
from cutlass_splitk.runtime.reference import relative_error as rel_err
from cutlass_splitk.spec import Activation, BiasMode, DType, EOp, KernelVariant, Layout, OpSpec, Permute

TOL = 1e-2
ELEM_TOL = 0.25
MAX_FAILURES_KEPT = 50  # per config (the counts stay exact)
TORCH_DTYPES = {DType.F16: torch.float16, DType.BF16: torch.bfloat16}
Layout2 = Tuple[int, int, int]  # (leading dimension, row offset, column offset) of a slice


class FatalError(RuntimeError):
    """The device is unusable (a sticky CUDA error): the run stops."""


@dataclass
class Problem:
    config: int
    index: int
    m: int
    n: int
    k: int
    view: Optional[Tuple[int, ...]]
    force: Dict[str, Any]  # the split_k / mode / variant keywords passed
    target: Optional[str]  # the variant the problem was drawn for (None: dispatcher's choice)
    alpha: Optional[float] = None
    beta: Optional[float] = None
    c: bool = False
    bias: bool = False
    slope: Optional[float] = None
    out: str = "none"  # none | fresh | strided | alias_c
    layouts: Dict[str, Layout2] = field(default_factory=dict)  # operand -> slice (absent: contiguous)
    seed: int = 0

    def to_json(self) -> dict:
        return asdict(self)


# --- drawing -------------------------------------------------------------------------------------


def _dim(rng: random.Random) -> int:
    r = rng.random()
    return rng.randint(1, 48) if r < 0.45 else rng.randint(49, 320) if r < 0.8 else \
        rng.randint(321, 1024) if r < 0.97 else rng.randint(1025, 2048)


def _round_up(x: int, a: int) -> int:
    return -(-x // a) * a


def _slice_layout(rng: random.Random, cols: int, align: int) -> Optional[Layout2]:
    r = rng.random()
    if r < 0.5:
        return None
    if r < 0.75:  # aligned pitch and offsets: the kernels read it in place
        col = align * rng.randint(0, 2)
        return (_round_up(cols + col, 8) + 8 * rng.randint(0, 3), rng.randint(0, 3), col)
    col = rng.randint(0, 7)
    return (cols + col + rng.randint(0, 9), rng.randint(0, 3), col)


def draw_problem(spec: OpSpec, config: int, index: int, seed: int, pairs: Sequence[Tuple[KernelVariant, int]]
                 ) -> Problem:
    """Problem ``index`` of config ``config``: every fifth one leaves (part of) the choice to the
    dispatcher, the others force the (variant, split) pairs in turn."""
    rng = random.Random(f"{seed}:{config}:{index}")
    ep = spec.epilogue
    align = min(v.alignment for v in spec.variants)
    force: Dict[str, Any] = {}
    target = None
    if index % 5 != 4:
        v, s = pairs[(index - index // 5) % len(pairs)]
        force = {"split_k": s, "variant": v.name}
        if rng.random() < 0.8:
            force["mode"] = v.mode.value
        target = v.name
    else:
        r = rng.random()
        v, s = rng.choice(list(pairs))
        if r < 0.3:
            force = {"split_k": s}
        elif r < 0.55:
            force = {"mode": v.mode.value}
        elif r < 0.7:
            force = {"split_k": s, "mode": v.mode.value}
    view = None
    if ep.permute is Permute.NONE:
        m, n = _dim(rng), _dim(rng)
        r = rng.random()
        k = rng.randint(1, 256) if r < 0.4 else rng.randint(257, 2048) if r < 0.75 else \
            rng.randint(2049, 8192) if r < 0.95 else rng.randint(8193, 65536)
        if k > 8192:
            m, n = min(m, rng.randint(1, 128)), min(n, rng.randint(1, 256))
        if rng.random() < 0.5:
            n, k = _round_up(n, align), _round_up(k, align)
        if rng.random() < 0.015:
            which = rng.randrange(3)
            m, n, k = (0 if which == 0 else m, 0 if which == 1 else n, 0 if which == 2 else k)
        while m * n > (1 << 20):
            m = max(1, m // 2)
    else:
        b_, s_, h_ = rng.randint(1, 4), rng.randint(1, 64), rng.randint(1, 8)
        d_ = align * rng.randint(1, 128 // align)
        view = (b_, s_, h_, d_) if ep.permute is Permute.HEAD_SPLIT else (b_, s_, 3, h_, d_)
        m, n = b_ * s_, (3 if ep.permute is Permute.QKV_SPLIT else 1) * h_ * d_
        k = rng.randint(1, 1024) if rng.random() < 0.7 else rng.randint(1025, 8192)
        if rng.random() < 0.5:
            k = _round_up(k, align)
    p = Problem(config, index, m, n, k, view, force, target, seed=zlib.crc32(f"{seed}:{config}:{index}".encode()))
    if ep.alpha and rng.random() < 0.6:
        p.alpha = rng.choice((0.75, -1.25, 2.0, 0.0, 1.0, round(rng.uniform(-2, 2), 3)))
    if ep.beta:
        r = rng.random()
        if r >= 0.35:
            p.c = True
            if r >= 0.5:
                p.beta = rng.choice((-0.5, 1.0, 0.0, round(rng.uniform(-1.5, 1.5), 3)))
    if ep.bias is not BiasMode.NONE:
        p.bias = rng.random() < 0.75
    if ep.activation is Activation.LEAKY_RELU and rng.random() < 0.3:
        p.slope = rng.choice((0.0, 0.3, -0.1, round(rng.uniform(0, 1), 3)))
    r = rng.random()
    if p.c and p.beta is not None and ep.permute is Permute.NONE and r < 0.07:
        p.out = "alias_c"
    else:
        p.out = "none" if r < 0.3 else "fresh" if r < 0.7 else "strided"
    b_rows, b_cols = (n, k) if spec.layout is Layout.TN else (k, n)
    for name, cols, present in (("a", k, True), ("b", b_cols, True), ("c", n, p.c), ("e", n, ep.e_op is not EOp.NONE)):
        lay = _slice_layout(rng, cols, align) if present else None
        if lay is not None:
            p.layouts[name] = lay
    if p.bias and rng.random() < 0.4:
        p.layouts["bias"] = (0, 0, rng.choice((align, rng.randint(1, 7))))
    if p.out == "strided":
        p.layouts["out"] = _slice_layout(rng, n, align) or (n, 0, 0)
    if p.out == "alias_c":
        p.layouts.pop("c", None)
    return p


def draw_problems(spec: OpSpec, config: int, seed: int, count: int) -> List[Problem]:
    pairs = [(v, s) for v in spec.variants for s in v.splits]
    return [draw_problem(spec, config, i, seed, pairs) for i in range(count)]


# --- running -------------------------------------------------------------------------------------


def _tensor(rows: int, cols: int, lay: Optional[Layout2], dtype: torch.dtype, device: Any, gen: torch.Generator,
            fill: Optional[float] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """(view, its whole buffer): random normal (or ``fill``), contiguous or a slice."""
    ld, r0, c0 = lay if lay is not None else (cols, 0, 0)
    shape = (rows + r0, max(ld, c0 + cols))
    if fill is None:
        big = torch.randn(*shape, dtype=dtype, device=device, generator=gen)
    else:
        big = torch.full(shape, fill, dtype=dtype, device=device)
    return big[r0:r0 + rows, c0:c0 + cols], big


def make_inputs(spec: OpSpec, p: Problem, device: Any) -> Tuple[torch.Tensor, torch.Tensor, Dict[str, Any]]:
    dtype = TORCH_DTYPES[spec.dtype]
    gen = torch.Generator(device=device)
    gen.manual_seed(p.seed)
    ep, lay = spec.epilogue, p.layouts
    a, _ = _tensor(p.m, p.k, lay.get("a"), dtype, device, gen)
    if spec.layout is Layout.TN:
        w, _ = _tensor(p.n, p.k, lay.get("b"), dtype, device, gen)
        b = w.t()
    else:
        b, _ = _tensor(p.k, p.n, lay.get("b"), dtype, device, gen)
    kw: Dict[str, Any] = {}
    if p.alpha is not None:
        kw["alpha"] = p.alpha
    if p.beta is not None:
        kw["beta"] = p.beta
    if p.c:
        kw["c"], _ = _tensor(p.m, p.n, lay.get("c"), dtype, device, gen)
    if p.bias:
        length = p.n if ep.bias is BiasMode.PER_COL else p.m
        off = lay.get("bias", (0, 0, 0))[2]
        kw["bias"] = torch.randn(length + off, dtype=dtype, device=device, generator=gen)[off:]
    if ep.e_op is not EOp.NONE:
        kw["e"], _ = _tensor(p.m, p.n, lay.get("e"), dtype, device, gen)
    if p.view is not None:
        kw["view"] = p.view
    if p.slope is not None:
        kw["negative_slope"] = p.slope
    return a, b, kw


def reference(spec: OpSpec, a: torch.Tensor, b: torch.Tensor, kw: Dict[str, Any]) -> torch.Tensor:
    """The op's chain in float64 (runtime.reference, as tests/gpu/test_gpu_ops.py)."""
    return epilogue(spec.epilogue, a.double() @ b.double(), alpha=kw.get("alpha", 1.0), beta=kw.get("beta", 0.0),
                    c=kw.get("c"), bias=kw.get("bias"), e=kw.get("e"), view=kw.get("view"),
                    slope=kw.get("negative_slope"))


def elem_err(out: torch.Tensor, ref: torch.Tensor, e: Optional[torch.Tensor], spec: OpSpec, view: Any = None) -> float:
    """max |out - ref| / (max(|ref|, rms(ref)) (x (1 + |e|) for e_op mul)); 0 for an empty output."""
    if not ref.numel():
        return 0.0
    rms = max(ref.pow(2).mean().sqrt().item(), 1e-3)
    scale = ref.abs().clamp_min(rms)
    if spec.epilogue.e_op is EOp.MUL and e is not None:
        scale = scale * (1 + permute(e.double().abs(), spec.epilogue.permute, view))
    return ((out.double() - ref).abs() / scale).max().item()


class Recorder:
    """Records what an op's last call launched: the (variant, split) of the launcher's plan,
    and the variant whose C entry point ran (the repeated-signature fast path calls the entry
    point without going through the launcher, so only the second is seen for it)."""

    def __init__(self, op: Any):
        self.last: Optional[Tuple[str, int]] = None
        self.variant: Optional[str] = None
        run = op.launcher.run

        def recording(plan, *args, **kwargs):
            self.last = (plan.variant, plan.split)
            return run(plan, *args, **kwargs)

        op.launcher.run = recording
        for name, entry in list(op.bound.run.items()):
            op.bound.run[name] = self._entry(name, entry)

    def _entry(self, name: str, entry: Any) -> Any:
        def recording(*args, **kwargs):
            self.variant = name
            return entry(*args, **kwargs)
        return recording

    def reset(self) -> None:
        self.last = self.variant = None

    def ran(self) -> Optional[Tuple[str, Optional[int]]]:
        """(variant, split) of the call just made; the split is None when the fast path ran
        (it runs the plan the same signature made before)."""
        if self.last is not None:
            return self.last
        return (self.variant, None) if self.variant is not None else None


def _out_buffer(spec: OpSpec, p: Problem, shape: Tuple[int, ...], dtype: torch.dtype, device: Any,
                c: Optional[torch.Tensor]) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor], Any]:
    """(out to pass, the buffer around it, the slice of the buffer that is out's)."""
    nan = float("nan")
    if p.out == "none":
        torch.full(shape, nan, dtype=dtype, device=device)  # freed at once: the allocator hands it out next
        return None, None, None
    if p.out == "alias_c":
        out = c.clone()
        return out, None, None
    if p.out == "fresh":
        return torch.full(shape, nan, dtype=dtype, device=device), None, None
    if len(shape) == 2:
        ld, r0, c0 = p.layouts["out"]
        out, big = _tensor(shape[0], shape[1], (ld, r0, c0), dtype, device, None, fill=nan)
        return out, big, (slice(r0, r0 + shape[0]), slice(c0, c0 + shape[1]))
    numel = math.prod(shape)
    off = p.layouts["out"][2]
    big = torch.full((numel + off + 8,), nan, dtype=dtype, device=device)
    return big[off:off + numel].view(shape), big, slice(off, off + numel)


def _is_cuda(device: Any) -> bool:
    return torch.device(device).type == "cuda"


def _check_device(device: Any, exc: BaseException) -> None:
    """Raises FatalError when the device no longer works after ``exc`` (a sticky CUDA error
    such as an illegal address: nothing after it could be trusted)."""
    if not _is_cuda(device):
        return
    try:
        torch.cuda.synchronize()
        torch.ones(1, device=device).add_(1).item()
    except Exception as probe:  # noqa: BLE001
        raise FatalError(f"{type(exc).__name__}: {exc}\n(device unusable afterwards: {probe})") from exc


def run_problem(op: Any, spec: OpSpec, p: Problem, device: Any, recorder: Recorder) -> dict:
    """Runs ``p`` twice; returns its record: ``kind`` ok, error, wrong or nonrepro, the
    (variant, split) that ran (``plan``), the errors measured and, unless ok, why."""
    dtype = TORCH_DTYPES[spec.dtype]
    a, b, kw = make_inputs(spec, p, device)
    ref = reference(spec, a, b, kw)
    results, plans, outside_ok = [], [], True
    for _ in range(2):
        call = dict(kw, **p.force)
        out, big, inner = _out_buffer(spec, p, tuple(ref.shape), dtype, device, kw.get("c"))
        if p.out == "alias_c":
            call["c"] = out
        if out is not None:
            call["out"] = out
        recorder.reset()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PaddingWarning)
                res = op(a, b, **call)
            if _is_cuda(device):
                torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - every failure is a finding
            _check_device(device, exc)
            return {"kind": "error", "error": f"{type(exc).__name__}: {exc}"[-4000:], "plan": recorder.last}
        if out is not None and res is not out:
            return {"kind": "error", "error": "the op did not return the out= tensor", "plan": recorder.last}
        if big is not None:
            mask = torch.ones_like(big, dtype=torch.bool)
            mask[inner] = False
            outside_ok = outside_ok and bool(torch.isnan(big[mask]).all())
        results.append(res)
        plans.append(recorder.ran())
    res, plan = results[0], plans[0]
    tol = TOL  # one tolerance: every mode of both backends keeps f32 partials
    info = {"plan": plan, "tol": tol}
    if tuple(res.shape) != tuple(ref.shape):
        return dict(info, kind="wrong", error=f"shape {tuple(res.shape)}, expected {tuple(ref.shape)}")
    if p.target is not None and plan is not None and plan[0] != p.target:
        return dict(info, kind="wrong", error=f"forced {p.target} but {plan[0]} ran")
    nan = int(torch.isnan(res).sum())
    err = rel_err(res, ref) if not nan else float("nan")
    elem = elem_err(res, ref, kw.get("e"), spec, p.view) if not nan else float("nan")
    info.update(rel_err=err, elem_err=elem, nan=nan)
    if nan or not err <= tol or not elem <= ELEM_TOL or not outside_ok:
        why = []
        if nan:
            why.append(f"{nan} of {res.numel()} elements NaN (unwritten?)")
        else:
            if not err <= tol:
                why.append(f"relative error {err:.3g} > {tol}")
            if not elem <= ELEM_TOL:
                why.append(f"element error {elem:.3g} > {ELEM_TOL}")
        if not outside_ok:
            why.append("wrote outside out")
        return dict(info, kind="wrong", error="; ".join(why))
    if plan is None or plans[1] is None:  # nothing launched (an empty problem) must hold both times
        same_plan = plans[1] == plan
    else:
        same_plan = plans[1][0] == plan[0] and plans[1][1] in (None, plan[1])
    if not same_plan or not torch.equal(res.view(torch.int16), results[1].view(torch.int16)):
        diff = int((res.view(torch.int16) != results[1].view(torch.int16)).sum())
        return dict(info, kind="nonrepro", error=f"{diff} elements differ between two identical calls "
                                                  f"(plans {plan} / {plans[1]})")
    return dict(info, kind="ok")


def runnable(spec: OpSpec, dev: Optional[dispatch.DeviceInfo]) -> List[KernelVariant]:
    """The op's variants that have code for ``dev`` (all of them when ``dev`` is None)."""
    return [v for v in spec.variants if dev is None or dispatch.runs_on(v, spec.archs, dev)]


def run_config(op: Any, spec: OpSpec, config: int, seed: int, count: int, device: Any,
               dev: Optional[dispatch.DeviceInfo], only: Optional[Sequence[int]] = None,
               on_problem: Any = None) -> Dict[str, Any]:
    """Draws ``count`` problems for one op and runs those whose variant runs on ``dev``.
    Returns counts and failures (each with its problem for reproduction)."""
    can = {v.name for v in runnable(spec, dev)}
    recorder = Recorder(op)
    stats: Dict[str, Any] = {"problems": 0, "skipped": 0, "wrong": 0, "nonrepro": 0, "error": 0, "pairs": {},
                             "failures": [], "max_rel_err": 0.0, "max_elem_err": 0.0}  # (errors / tolerance)
    for p in draw_problems(spec, config, seed, count):
        if only is not None and p.index not in only:
            continue
        if (p.target is not None and p.target not in can) or not can:
            stats["skipped"] += 1
            continue
        if p.target is None:  # the dispatcher's choice: only over what runs here
            pool = [v for v in spec.variants if v.name in can
                    and ("split_k" not in p.force or p.force["split_k"] in v.splits)
                    and ("mode" not in p.force or v.mode.value == p.force["mode"])]
            if not pool:
                stats["skipped"] += 1
                continue
        if on_problem is not None:
            on_problem(p)
        result = run_problem(op, spec, p, device, recorder)
        stats["problems"] += 1
        if result.get("plan"):
            key = f"{result['plan'][0]}@{result['plan'][1]}"
            stats["pairs"][key] = stats["pairs"].get(key, 0) + 1
        if result["kind"] == "ok":
            stats["max_rel_err"] = max(stats["max_rel_err"], result["rel_err"] / result["tol"])
            stats["max_elem_err"] = max(stats["max_elem_err"], result["elem_err"] / ELEM_TOL)
        else:
            stats[result["kind"]] += 1
            if len(stats["failures"]) < MAX_FAILURES_KEPT:
                stats["failures"].append(dict(result, problem=p.to_json()))
    return stats
