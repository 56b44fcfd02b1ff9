"""sm90 parallel split-K's reduction inside the partial GEMM (the tail, sm90_tail.cuh; opt-in: CUTLASS_SPLITK_TAIL=1):
where the partial GEMM runs in one round it sums the K slices and applies the op's epilogue itself, else (and with
the setting off) the reduction kernel follows it. Fresh random inputs, odd sizes, outputs poisoned with NaN, against
float64. Each test loads the library afresh: the setting is read when a problem is first planned (its counters) and at
every call."""

import pytest

torch = pytest.importorskip("torch")

from cutlass_splitk.runtime.reference import epilogue, random_inputs  # noqa: E402
from cutlass_splitk.runtime.reference import relative_error as rel_err  # noqa: E402

pytestmark = pytest.mark.gpu

# (op, variant, split, M, N, K, view): every partial GEMM tile of the default build (cooperative 128x128 in three
# cluster shapes, 128x112 in two and the swapped 128x80, ping-pong 64x128, 64x64 and the swapped 64x16), each in one
# round, with the ops' whole epilogues (bias, GELU, E, the permuted stores, beta * C where the op takes it).
CASES = [
    ("linear_f16", "t128x128x64_c1x2_coop", 8, 509, 500, 8200, None),
    ("linear_f16", "t128x128x64_c2x1_coop", 8, 509, 500, 8200, None),
    ("linear_f16", "t128x128x64_c1x1_coop", 3, 509, 500, 8200, None),
    ("linear_f16", "t128x112x64_c1x2_coop", 4, 509, 500, 8200, None),
    ("linear_f16", "t128x112x64_c2x1_coop", 5, 509, 500, 8200, None),
    ("linear_f16", "t128x80x64_c1x2_coop_sauto_a8_swab", 4, 509, 500, 8200, None),
    ("bias_gelu_mul_permute_bf16", "t128x112x64_c1x2_coop", 3, 201, 1000, 9000, (3, 67, 5, 200)),
    ("linear_f16", "t64x128x64_c1x2_pp", 4, 509, 500, 8200, None),
    ("linear_f16", "t64x64x64_c1x2_pp", 8, 250, 250, 8200, None),
    ("linear_f16", "t64x16x128_c1x1_pp_sauto_a8_swab", 8, 13, 1000, 8200, None),
    ("bias_gelu_mul_permute_f16", "t128x128x64_c1x2_coop", 16, 74, 200, 12000, (2, 37, 5, 40)),
    ("bias_gelu_mul_permute_f16", "t64x128x64_c1x2_pp", 8, 256, 512, 16384, (4, 64, 8, 64)),
    ("bias_gelu_mul_permute_bf16", "t64x64x64_c1x2_pp", 16, 250, 200, 9000, (2, 125, 5, 40)),
    ("qkv_f16", "t128x128x64_c1x2_coop", 8, 74, 384, 5000, (2, 37, 3, 2, 64)),
    ("linear_bias_gelu_f16", "t64x16x128_c1x1_pp_sauto_a8_swab", 12, 7, 1000, 20000, None),
]


@pytest.fixture
def lib(libs):
    import cutlass_splitk
    from gpu_util import BUILD_ROOT

    if "default" not in libs:
        pytest.skip("build/default is not built")
    return cutlass_splitk.load(BUILD_ROOT / "default")  # no plans made with the setting off


def _variant(lib, op_name, fragment):
    names = [v for v in lib.variants(op_name) if "_parallel_sm90_" in v and fragment in v]
    if not names:
        pytest.skip(f"no parallel sm90 variant of {op_name} matching {fragment} is built")
    return names[0]


def _run(op, variant, split, a, b, kw, ref):
    out = torch.full(ref.shape, float("nan"), device="cuda", dtype=op.dtype)
    op(a, b, out=out, split_k=split, mode="parallel", variant=variant, **kw)
    return out


def _kernels(fn):
    """The names of the library's CUDA kernels ``fn`` launches (torch.profiler; torch's own, e.g. the output's
    allocation and fill, left out)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and
            ("GemmUniversal" in e.name or "reduce_epilogue_kernel" in e.name)]


@pytest.mark.parametrize("op_name,fragment,split,m,n,k,view", CASES)
def test_tail_against_float64_and_the_reduction_kernel(lib, monkeypatch, op_name, fragment, split, m, n, k, view):
    """The tail and the reduction kernel both give the float64 chain; the tail gives the same bits every call, interleaved
    with launches of the other path on the same stream (whose counters must stay zero between launches)."""
    op = getattr(lib, op_name)
    variant = _variant(lib, op_name, fragment)
    monkeypatch.setenv("CUTLASS_SPLITK_GRAPHS", "0")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1200 + m + split)
    a, b, kw = random_inputs(op.spec, m, n, k, view=view, device="cuda", generator=gen, scalars=True)
    ref = epilogue(op.spec.epilogue, a.double() @ b.double(), alpha=kw.get("alpha", 1.0), beta=kw.get("beta", 0.0),
                   c=kw.get("c"), bias=kw.get("bias"), e=kw.get("e"), view=kw.get("view"))
    outs = {}
    for mode in ("1", "0", "1", "1", "0"):
        monkeypatch.setenv("CUTLASS_SPLITK_TAIL", mode)
        outs.setdefault(mode, []).append(_run(op, variant, split, a, b, kw, ref))
    torch.cuda.synchronize()
    for mode, kernels in (("1", ["GemmUniversal"]), ("0", ["GemmUniversal", "reduce_epilogue_kernel"])):
        monkeypatch.setenv("CUTLASS_SPLITK_TAIL", mode)
        names = _kernels(lambda: _run(op, variant, split, a, b, kw, ref))
        assert [next(k for k in kernels if k in x) for x in names] == kernels, (mode, names)
    for mode, results in outs.items():
        for out in results:
            assert not torch.isnan(out).any(), f"tail={mode}: NaN left in the output"
            err = rel_err(out, ref)
            assert err < 1e-2, f"tail={mode}: relative error {err:.3g}"
        assert all(torch.equal(x, results[0]) for x in results), f"tail={mode}: not bitwise reproducible"
    assert rel_err(outs["1"][0], outs["0"][0].double()) < 2e-3


def test_one_kernel_where_the_launch_is_one_round(lib, monkeypatch):
    """With the setting on, one launch where every unit runs in the first round; the reduction kernel follows where it
    cannot (more units than the GPU holds at once) or where CUTLASS_SPLITK_TAIL=0."""
    op = lib.linear_f16
    variant = _variant(lib, "linear_f16", "t128x128x64_c1x2_coop")
    monkeypatch.setenv("CUTLASS_SPLITK_GRAPHS", "0")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(5)
    small = (torch.randn(509, 8200, device="cuda", generator=gen).half(),
             torch.randn(500, 8200, device="cuda", generator=gen).half().t())
    large = (torch.randn(2048, 4096, device="cuda", generator=gen).half(),
             torch.randn(2048, 4096, device="cuda", generator=gen).half().t())  # 16 x 16 tiles x 2 slices: two rounds

    def counted(mode, ab, split):
        monkeypatch.setenv("CUTLASS_SPLITK_TAIL", mode)
        op(*ab, variant=variant, split_k=split, mode="parallel")  # planned outside the profile
        names = _kernels(lambda: op(*ab, variant=variant, split_k=split, mode="parallel"))
        return len(names), sum("reduce_epilogue_kernel" in x for x in names), names

    for mode, ab, split, want in (("1", small, 8, (1, 0)), ("0", small, 8, (2, 1)), ("1", large, 2, (2, 1))):
        kernels, reductions, names = counted(mode, ab, split)
        assert (kernels, reductions) == want, (mode, split, [x[:80] for x in names])
    out = op(*large, variant=variant, split_k=2, mode="parallel")
    assert rel_err(out, large[0].double() @ large[1].double()) < 2e-3


def test_replays_and_concurrent_streams(lib, monkeypatch):
    """Recorded and replayed (the second call on), and on four streams at once, each with its own counters: the same
    bits as a direct call."""
    monkeypatch.setenv("CUTLASS_SPLITK_TAIL", "1")
    op = lib.bias_gelu_mul_permute_f16
    variant = _variant(lib, "bias_gelu_mul_permute_f16", "t128x128x64_c1x2_coop")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(9)
    m, n, k, view = 256, 512, 16384, (4, 64, 8, 64)
    a, b, kw = random_inputs(op.spec, m, n, k, view=view, device="cuda", generator=gen)
    first = op(a, b, split_k=8, mode="parallel", variant=variant, **kw)
    replays = [op(a, b, split_k=8, mode="parallel", variant=variant, **kw) for _ in range(20)]
    streams = [torch.cuda.Stream() for _ in range(4)]
    torch.cuda.synchronize()
    outs = []
    for it in range(40):
        with torch.cuda.stream(streams[it % 4]):
            outs.append(op(a, b, split_k=8, mode="parallel", variant=variant, **kw))
    torch.cuda.synchronize()
    assert all(torch.equal(x, first) for x in replays + outs)
