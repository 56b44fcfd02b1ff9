"""Outputs of 2^31 elements or more: every built variant that takes a split of at most 3, at each such split,
on an 8200 x 262152 output (2.15 * 10^9 elements, K = 136), against a float32 reference of the whole chain,
output poisoned with NaN and followed by a guard that must stay untouched. M, N and K are each far below
2^31; what is checked is that no offset into C, E, D or the partials wraps around at 2^31.

Needs a GPU with about 60 GB of free memory (the output, E or C, the reference, and up to 28 GB of f32 partials
for a parallel split of 3); skipped elsewhere."""

import math
import warnings

import pytest

torch = pytest.importorskip("torch")

from cutlass_splitk.runtime import PaddingWarning  # noqa: E402
from cutlass_splitk.runtime.reference import epilogue, random_inputs  # noqa: E402
from cutlass_splitk.runtime import dispatch  # noqa: E402
from cutlass_splitk.spec import BiasMode, Permute  # noqa: E402

from gpu_util import manifest  # noqa: E402

pytestmark = pytest.mark.gpu

BATCH, SEQ = 8, 1025
M, N, K = BATCH * SEQ, 262152, 136  # M * N = 2,149,646,400 > 2^31
HEAD_DIM = 24
MAX_SPLIT = 3
GUARD = 1 << 20
TOL = 1e-2
NEEDS_BYTES = 60 << 30
# (library, op): every op of the coverage build (each epilogue feature, both backends, every mode, clusters,
# swapped operands, the TMA epilogue) and the default build's chain and linear ops (the shipped tiles)
OPS = [("epilogues", op) for op in sorted((manifest("epilogues") or {"ops": {}})["ops"])] + \
    [("default", "bias_gelu_mul_permute_f16"), ("default", "linear_f16")]


def view_for(permute):
    if permute is Permute.HEAD_SPLIT:
        return (BATCH, SEQ, N // HEAD_DIM, HEAD_DIM)
    if permute is Permute.QKV_SPLIT:
        return (BATCH, SEQ, 3, N // (3 * HEAD_DIM), HEAD_DIM)
    return None


def rows_of(permute, out, r0, r1):
    """The part of ``out`` that holds rows [r0, r1) of the (M, N) result (within one batch when permuted)."""
    if permute is Permute.NONE:
        return out[r0:r1]
    b, s0, s1 = r0 // SEQ, r0 % SEQ, r0 % SEQ + (r1 - r0)
    assert (r1 - 1) // SEQ == b
    return out[b:b + 1, :, s0:s1] if permute is Permute.HEAD_SPLIT else out[:, b:b + 1, :, s0:s1]


# rows checked one range at a time: each batch, and the rows past element 2^31 on their own
RANGES = [(b * SEQ, (b + 1) * SEQ) for b in range(BATCH)] + [((1 << 31) // N, M)]


def reference(spec, a, b, kw):
    """The chain in float32 (K = 136: exact enough), one row range at a time, kept as the op's dtype."""
    ep, refs = spec.epilogue, []
    for r0, r1 in RANGES:
        part = {key: value for key, value in kw.items() if key not in ("view", "c", "e", "bias")}
        if "c" in kw:
            part["c"] = kw["c"][r0:r1]
        if "e" in kw:
            part["e"] = kw["e"][r0:r1]
        if "bias" in kw:
            part["bias"] = kw["bias"] if ep.bias is BiasMode.PER_COL else kw["bias"][r0:r1]
        view = view_for(ep.permute)
        if view is not None:
            part["view"] = (1, r1 - r0) + view[2:]
        refs.append(epilogue(ep, a[r0:r1].float() @ b.float(), **part).to(a.dtype))
    return refs


def check(spec, out, refs):
    """None, or what is wrong with the first row range that is: NaN left, or a relative error past TOL."""
    for (r0, r1), ref in zip(RANGES, refs):
        got = rows_of(spec.epilogue.permute, out, r0, r1).float()
        want = ref.float()
        if torch.isnan(got).any():
            return f"rows {r0}-{r1}: {int(torch.isnan(got).sum())} NaN (never written)"
        err = ((got - want).norm() / want.norm().clamp_min(1e-3 * math.sqrt(want.numel()))).item()
        if not math.isfinite(err) or err > TOL:
            return f"rows {r0}-{r1}: relative error {err:.3g}"
    return None


@pytest.fixture(scope="module")
def memory_ok():
    free, _ = torch.cuda.mem_get_info()
    if free < NEEDS_BYTES:
        pytest.skip(f"needs {NEEDS_BYTES >> 30} GB of free GPU memory, {free >> 30} GB free")


@pytest.mark.parametrize("lib_name,op_name", OPS, ids=[f"{lib}-{op}" for lib, op in OPS])
def test_output_beyond_2_31_elements(libs, memory_ok, lib_name, op_name):
    if lib_name not in libs:
        pytest.skip(f"build/{lib_name} is not built")
    lib = libs[lib_name]
    op = getattr(lib, op_name)
    spec = op.spec
    dev = lib.device_info(torch.cuda.current_device())
    gen = torch.Generator(device="cuda")
    gen.manual_seed(2026_11_27)
    a, b, kw = random_inputs(spec, M, N, K, view=view_for(spec.epilogue.permute), device="cuda", generator=gen,
                             scalars=True)
    refs = reference(spec, a, b, kw)
    shape = op.out_shape(M, N, kw.get("view"))
    flat = torch.empty(math.prod(shape) + GUARD, device="cuda", dtype=a.dtype)
    out, guard = flat[:-GUARD].view(shape), flat[-GUARD:]
    ran, failures = [], []
    # Only this stream's workspace is given back: the session's library also holds sets of streams that earlier
    # tests made and dropped without releasing them, and freeing those on a destroyed stream is not safe.
    stream = torch.cuda.current_stream()
    try:
        for v in spec.variants:
            if not dispatch.runs_on(v, spec.archs, dev):
                continue
            for split in [s for s in v.splits if s <= MAX_SPLIT]:
                out.fill_(float("nan"))
                guard.fill_(7.0)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", PaddingWarning)
                        op(a, b, out=out, split_k=split, mode=v.mode.value, variant=v.name, **kw)
                except ValueError as refused:  # e.g. "no built variant can run ...": these problems must run
                    failures.append(f"{v.name} split={split}: refused: {refused}")
                    continue
                torch.cuda.synchronize()
                why = check(spec, out, refs)
                if why is None and not bool((guard == 7.0).all()):
                    why = "wrote past the output's end"
                if why:
                    failures.append(f"{v.name} split={split}: {why}")
                ran.append((v.backend.value, v.mode.value))
                lib.release_workspace(stream)  # the next candidate's partials start from nothing
                torch.cuda.empty_cache()
    finally:
        lib.release_workspace(stream)
        del out, guard, flat, refs, a, b, kw
        torch.cuda.empty_cache()
    assert ran, f"{op_name}: no variant runs here with a split of at most {MAX_SPLIT}"
    assert not failures, "\n".join(failures)
    print(f"{lib_name}/{op_name}: {len(ran)} (variant, split) pairs, modes {sorted(set(ran))}")
