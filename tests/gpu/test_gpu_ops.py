"""Every built variant, every split factor it accepts, in its mode, against a float64 torch
reference of the whole chain, on fresh random data with the output poisoned first."""

import math
import warnings
import zlib

import pytest

torch = pytest.importorskip("torch")

from cutlass_splitk.runtime import PaddingWarning  # noqa: E402
from cutlass_splitk.runtime.reference import epilogue, random_inputs  # noqa: E402
from cutlass_splitk.runtime.reference import relative_error as rel_err  # noqa: E402
from cutlass_splitk.runtime import dispatch  # noqa: E402
from cutlass_splitk.spec import Backend, Permute  # noqa: E402

from gpu_util import op_params  # noqa: E402

pytestmark = pytest.mark.gpu
TOL = 1e-2


def runnable_variant(lib, op, name):
    """The variant ``name`` of ``op``, or a skip where this GPU has no code for it."""
    v = next(x for x in op.spec.variants if x.name == name)
    dev = lib.device_info(torch.cuda.current_device())
    if not dispatch.runs_on(v, op.spec.archs, dev):
        pytest.skip(f"{name} does not run on {dev.name} (compute capability {dev.capability})")
    return v


def cases(op):
    """(M, N, K, view) problems for an op: odd sizes, unaligned ones (padding path), tiny ones."""
    p = op.spec.epilogue.permute
    if p is Permute.NONE:
        return [(77, 200, 1000, None), (1, 1, 1, None), (33, 19, 517, None), (5, 64, 4096, None),
                (130, 136, 264, None), (9, 22, 30, None)]  # N = 22: 2-aligned, not 4-aligned
    # The last two of each: S a multiple of 128 and Dh of 32, where the sm90 in-kernel epilogue stores
    # every subtile as one TMA box (sm90_permuted_store.cuh); the others take its vector stores.
    if p is Permute.HEAD_SPLIT:
        return [(74, 200, 1000, (2, 37, 5, 40)), (1, 8, 13, (1, 1, 1, 8)), (48, 256, 4096, (3, 16, 4, 64)),
                (384, 384, 517, (3, 128, 6, 64)), (128, 96, 264, (1, 128, 3, 32))]
    return [(74, 384, 1000, (2, 37, 3, 2, 64)), (5, 24, 24, (1, 5, 3, 1, 8)), (32, 192, 2048, (2, 16, 3, 1, 64)),
            (256, 384, 1000, (2, 128, 3, 2, 64)), (128, 288, 264, (1, 128, 3, 3, 32))]


def make_inputs(op, m, n, k, view, gen):
    """Random operands for the op's whole signature, alpha/beta/c included."""
    return random_inputs(op.spec, m, n, k, view=view, device="cuda", generator=gen, scalars=True)


def reference(op, a, b, kw):
    """The op's chain in float64 (runtime.reference: the same definition the library's K = 0
    path and bench use)."""
    return epilogue(op.spec.epilogue, a.double() @ b.double(), alpha=kw.get("alpha", 1.0), beta=kw.get("beta", 0.0),
                    c=kw.get("c"), bias=kw.get("bias"), e=kw.get("e"), view=kw.get("view"))


def checked_call(op, v, a, b, kw, split, out=None):
    """Runs variant ``v`` at ``split`` into ``out`` (a new tensor if None), poisoned with NaN
    first, and compares it with the float64 chain: None, or what was wrong."""
    ref = reference(op, a, b, kw)
    if out is None:
        out = torch.empty(ref.shape, device="cuda", dtype=op.dtype)
    out.fill_(float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PaddingWarning)
        res = op(a, b, out=out, split_k=split, mode=v.mode.value, variant=v.name, **kw)
    torch.cuda.synchronize()
    assert res is out
    err = rel_err(out, ref)
    # every mode of both backends keeps f32 partials: one tolerance (the sm80 serial kernel
    # rounded its running partial to the output type until session 8 and needed 2.5e-2 in bf16)
    if not math.isfinite(err) or err > TOL or torch.isnan(out).any():
        return f"rel err {err:.3g}, NaN {int(torch.isnan(out).sum())}"
    return None


@pytest.mark.parametrize("lib_name,op_name,variant", op_params())
def test_variant_all_splits(libs, lib_name, op_name, variant):
    op = getattr(libs[lib_name], op_name)
    v = runnable_variant(libs[lib_name], op, variant)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(zlib.crc32(variant.encode()) & 0xFFFF)  # stable across processes, unlike hash()
    failures = []
    for (m, n, k, view) in cases(op):
        for split in v.splits:
            a, b, kw = make_inputs(op, m, n, k, view, gen)
            why = checked_call(op, v, a, b, kw, split)
            if why:
                failures.append(f"M={m} N={n} K={k} split={split}: {why}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("lib_name,op_name,variant", op_params())
def test_bitwise_reproducible(libs, lib_name, op_name, variant):
    """Every mode reduces its K partitions in a fixed order: the same inputs give the same bits."""
    op = getattr(libs[lib_name], op_name)
    v = runnable_variant(libs[lib_name], op, variant)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(7)
    m, n, k, view = cases(op)[0]
    a, b, kw = make_inputs(op, m, n, k, view, gen)
    split = max(v.splits)
    first = op(a, b, split_k=split, variant=variant, **kw)
    for _ in range(5):
        again = op(a, b, split_k=split, variant=variant, **kw)
        assert torch.equal(first, again)


@pytest.mark.parametrize("lib_name,op_name,variant", op_params())
def test_repeated_call_reads_the_new_data_at_the_same_addresses(libs, lib_name, op_name, variant):
    """A repeated call with the same argument block reuses its launch plan (sm90: the TMA
    descriptors built by the first call, cks_plan_cache.cuh), and from the second call on its
    launches are a recorded CUDA graph, replayed (cks_replay.cuh). Plans and recordings hold
    addresses, never data: new values written into the same tensors must give the new result
    (the second call records and replays, the third replays), and other tensors of the same
    shape must give theirs. Every split of the variant, output poisoned each time."""
    op = getattr(libs[lib_name], op_name)
    v = runnable_variant(libs[lib_name], op, variant)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(11)
    m, n, k, view = cases(op)[0]
    failures = []
    for split in v.splits:
        a, b, kw = make_inputs(op, m, n, k, view, gen)
        out = torch.empty(reference(op, a, b, kw).shape, device="cuda", dtype=op.dtype)
        for step in ("first call", "same tensors, new values", "again", "other tensors"):
            if step == "same tensors, new values":
                a2, b2, kw2 = make_inputs(op, m, n, k, view, gen)
                a.copy_(a2)
                b.copy_(b2)
                for key, value in kw.items():
                    if isinstance(value, torch.Tensor):
                        value.copy_(kw2[key])
            elif step == "other tensors":
                a, b = a.clone(), b.clone()
            why = checked_call(op, v, a, b, kw, split, out)
            if why:
                failures.append(f"split={split}, {step}: {why}")
    assert not failures, "\n".join(failures)


def persistent_cases(op):
    """(M, N, K, view) with several output tiles per SM for every sm90 tile (>= 1.3 tiles of
    256 x 128 per SM on a 132-SM H100), odd M, a short K; permuted, also a view whose subtiles are
    TMA boxes (S = 512)."""
    p = op.spec.epilogue.permute
    if p is Permute.NONE:
        return [(2061, 2560, 200, None)]
    if p is Permute.HEAD_SPLIT:
        return [(2060, 2560, 200, (4, 515, 40, 64)), (2048, 2560, 200, (4, 512, 40, 64))]
    return [(2060, 2496, 200, (4, 515, 3, 13, 64)), (2048, 2304, 200, (4, 512, 3, 12, 64))]


@pytest.mark.parametrize("lib_name,op_name,variant", op_params())
def test_persistent_tiles(libs, lib_name, op_name, variant):
    """The sm90 in-kernel modes run persistent CTAs that take tile after tile, each finished
    by the fused epilogue (its per-warp staging reused tile after tile). Many tiles per CTA,
    with and without C (beta), every split of the variant, output poisoned first."""
    op = getattr(libs[lib_name], op_name)
    v = runnable_variant(libs[lib_name], op, variant)
    if v.backend is not Backend.SM90 or v.mode.value == "parallel":
        pytest.skip("only the sm90 in-kernel modes run the fused epilogue in persistent CTAs")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(5)
    failures = []
    for m, n, k, view in persistent_cases(op):
        for split in v.splits:
            a, b, kw = make_inputs(op, m, n, k, view, gen)
            for beta in ((0.0, 0.5) if op.spec.epilogue.beta else (None,)):
                if beta is not None:
                    kw["beta"] = beta
                why = checked_call(op, v, a, b, kw, split)
                if why:
                    failures.append(f"{m}x{n}x{k} view={view} split={split} beta={beta}: {why}")
    assert not failures, "\n".join(failures)


def test_empty_and_zero_k(libs):
    lib = libs.get("default")
    if lib is None:
        pytest.skip("build/default is not built")
    op = lib.linear_bias_gelu_f16
    a = torch.randn(0, 64, device="cuda", dtype=torch.float16)
    b = torch.randn(32, 64, device="cuda", dtype=torch.float16).t()
    assert op(a, b).shape == (0, 32)
    a = torch.randn(4, 0, device="cuda", dtype=torch.float16)
    b = torch.randn(16, 0, device="cuda", dtype=torch.float16).t()
    bias = torch.randn(16, device="cuda", dtype=torch.float16)
    out = op(a, b, bias=bias)
    ref = torch.nn.functional.gelu(bias.float())[None, :].expand(4, 16)
    assert torch.allclose(out.float(), ref, atol=1e-3)


def test_k_smaller_than_split_times_tile(libs):
    lib = libs.get("default")
    if lib is None:
        pytest.skip("build/default is not built")
    op = lib.linear_f16
    gen = torch.Generator(device="cuda")
    gen.manual_seed(3)
    dev = lib.device_info(torch.cuda.current_device())
    runnable = [v for v in op.spec.variants if dispatch.runs_on(v, op.spec.archs, dev)]
    for v in runnable:  # each variant at its largest split: far more partitions than K has tiles
        a = torch.randn(40, 72, device="cuda", dtype=torch.float16, generator=gen)
        w = torch.randn(48, 72, device="cuda", dtype=torch.float16, generator=gen)
        out = torch.full((40, 48), float("nan"), device="cuda", dtype=torch.float16)
        op(a, w.t(), out=out, split_k=max(v.splits), variant=v.name)
        ref = a.double() @ w.double().t()
        assert rel_err(out, ref) < TOL


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_partial_precision_at_k65536(libs, dtype, record_property):
    """Split-K's partial sums are f32 in every mode (sm80 serial: in the workspace since
    session 8): the largest serial and parallel splits at K = 65536, measured against float64
    (and printed beside the error of rounding the exact result once), stay within TOL."""
    lib = libs.get("default")
    if lib is None:
        pytest.skip("build/default is not built")
    op = getattr(lib, f"linear_{dtype}")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(11)
    a = torch.randn(256, 65536, device="cuda", dtype=op.dtype, generator=gen)
    w = torch.randn(256, 65536, device="cuda", dtype=op.dtype, generator=gen)
    ref = a.double() @ w.double().t()
    errs = {}
    dev = lib.device_info(torch.cuda.current_device())
    runnable = [v for v in op.spec.variants if dispatch.runs_on(v, op.spec.archs, dev)]
    most = {m: max(s for v in runnable if v.mode.value == m for s in v.splits) for m in ("serial", "parallel")}
    for mode, split in (("serial", 1), ("serial", most["serial"]), ("parallel", most["parallel"])):
        out = op(a, w.t(), split_k=split, mode=mode)
        errs[f"{mode}{split}"] = rel_err(out, ref)
    rounding = rel_err(ref.to(op.dtype), ref)  # the error of just storing the exact result
    print(f"\n{dtype} K=65536 relative errors: {errs}; output rounding alone {rounding:.2e}")
    for key, val in errs.items():
        record_property(key, val)
        assert val < TOL
