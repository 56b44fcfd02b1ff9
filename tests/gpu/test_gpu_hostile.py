"""Hostile input on the GPU: a table of bad calls (exact messages, nothing launched, `out`
untouched), NaN/Inf propagation as torch does it, and thousands of serial split-K launches
back to back and across streams, each result checked bitwise."""

import math

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

M, N, K = 48, 256, 512
H16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32


@pytest.fixture
def lib(libs):
    if "default" not in libs:
        pytest.skip("build/default is not built")
    return libs["default"]


@pytest.fixture
def counted(lib):
    """Counts launches through every op's C entry points."""
    calls = []
    saved = {}
    for name in lib.ops:
        op = getattr(lib, name)
        saved[name] = dict(op.bound.run)
        for variant, fn in saved[name].items():
            def wrapped(*args, _fn=fn, _v=variant):
                calls.append(_v)
                return _fn(*args)
            op.bound.run[variant] = wrapped
    yield calls
    for name, runs in saved.items():
        getattr(lib, name).bound.run.update(runs)


def cuda(*shape, dtype=H16):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def w_t(n=N, k=K, dtype=H16):
    return cuda(n, k, dtype=dtype).t()


LIN = "linear_f16"
CHAIN = "bias_gelu_mul_permute_f16"
ACCEPTS = "out, split_k, mode, variant, alpha, beta, c, bias"

# (id, op, builder -> (a, b, kwargs), exception, exact message or prefix + '...')
CASES = [
    ("a_dtype", LIN, lambda: (cuda(M, K, dtype=F32), w_t(), {}), TypeError,
     "linear_f16: a must be torch.float16, got torch.float32"),
    ("b_dtype", LIN, lambda: (cuda(M, K), w_t(dtype=BF16), {}), TypeError,
     "linear_f16: b must be torch.float16, got torch.bfloat16"),
    ("a_cpu", LIN, lambda: (torch.randn(M, K, dtype=H16), w_t(), {}), ValueError,
     "linear_f16: a must be on a CUDA device, got cpu"),
    ("bias_cpu", LIN, lambda: (cuda(M, K), w_t(), {"bias": torch.randn(N, dtype=H16)}), ValueError,
     "linear_f16: bias must be on a CUDA device, got cpu"),
    ("a_list", LIN, lambda: ([[1.0]], w_t(), {}), TypeError,
     "linear_f16: a must be a torch.Tensor, got list"),
    ("a_3d", LIN, lambda: (cuda(1, M, K), w_t(), {}), ValueError,
     "linear_f16: a must be 2-D, got shape (1, 48, 512)"),
    ("k_mismatch", LIN, lambda: (cuda(M, K), w_t(k=K + 8), {}), ValueError,
     "linear_f16: a is (48, 512) but b is (520, 256): b must be (K=512, N)"),
    ("b_row_major", LIN, lambda: (cuda(M, K), cuda(K, N), {}), ValueError,
     "linear_f16: b must be column-major (K, N) for layout tn, got shape (512, 256) with strides "
     "(256, 1); pass weight.t() of a contiguous (N, K) weight"),
    ("a_strided", LIN, lambda: (cuda(M, 2 * K)[:, ::2], w_t(), {}), ValueError,
     "linear_f16: a must be row-major (stride(1) == 1), got shape (48, 512) with strides (1024, 2); "
     "pass a.contiguous()"),
    ("a_column_major", LIN, lambda: (cuda(K, M).t(), w_t(), {}), ValueError,
     "linear_f16: a must be row-major (stride(1) == 1), got shape (48, 512) with strides (1, 48); "
     "pass a.contiguous()"),
    ("bias_length", LIN, lambda: (cuda(M, K), w_t(), {"bias": cuda(N + 1)}), ValueError,
     "linear_f16: bias must have shape (256,), got (257,)"),
    ("bias_dtype", LIN, lambda: (cuda(M, K), w_t(), {"bias": cuda(N, dtype=BF16)}), TypeError,
     "linear_f16: bias must be torch.float16, got torch.bfloat16"),
    ("c_shape", LIN, lambda: (cuda(M, K), w_t(), {"c": cuda(M, N - 1), "beta": 1.0}), ValueError,
     "linear_f16: c must have shape (48, 256), got (48, 255)"),
    ("beta_without_c", LIN, lambda: (cuda(M, K), w_t(), {"beta": 0.5}), ValueError,
     "linear_f16: beta=0.5 needs c"),
    ("unexpected_e", LIN, lambda: (cuda(M, K), w_t(), {"e": cuda(M, N)}), TypeError,
     f"linear_f16() got an unexpected keyword argument 'e'; this op accepts: {ACCEPTS}"),
    ("split_zero", LIN, lambda: (cuda(M, K), w_t(), {"split_k": 0}), ValueError,
     "linear_f16: split_k must be a positive int, got 0"),
    ("split_not_built", LIN, lambda: (cuda(M, K), w_t(), {"split_k": 9}), ValueError,
     "linear_f16: split_k=9 is not available; built split factors: "
     "[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 24, 32, 48, 64]"),
    ("bad_mode", LIN, lambda: (cuda(M, K), w_t(), {"mode": "fast"}), ValueError,
     "linear_f16: mode='fast' is not one of 'serial', 'parallel', 'stream_k'"),
    ("bad_variant", LIN, lambda: (cuda(M, K), w_t(), {"variant": "nope"}), ValueError,
     "linear_f16: variant='nope' was not built; built variants: ..."),
    ("out_shape", LIN, lambda: (cuda(M, K), w_t(), {"out": cuda(M, N + 1)}), ValueError,
     "linear_f16: out must have shape (48, 256), got (48, 257)"),
    ("out_dtype", LIN, lambda: (cuda(M, K), w_t(), {"out": cuda(M, N, dtype=F32)}), TypeError,
     "linear_f16: out must be torch.float16, got torch.float32"),
    ("view_mismatch", CHAIN, lambda: (cuda(M, K), w_t(), {"e": cuda(M, N), "view": (2, 24, 4, 32)}),
     ValueError, "bias_gelu_mul_permute_f16: view (2, 24, 4, 32) does not match the output (M=48, N=256): "
     "need B*S == M and H*D == N"),
    ("view_missing", CHAIN, lambda: (cuda(M, K), w_t(), {"e": cuda(M, N)}), TypeError,
     "bias_gelu_mul_permute_f16() missing required keyword argument 'view'"),
    ("e_missing", CHAIN, lambda: (cuda(M, K), w_t(), {"view": (2, 24, 8, 32)}), TypeError,
     "bias_gelu_mul_permute_f16() missing required keyword argument 'e'"),
    ("e_shape", CHAIN, lambda: (cuda(M, K), w_t(), {"e": cuda(N, M), "view": (2, 24, 8, 32)}), ValueError,
     "bias_gelu_mul_permute_f16: e must have shape (48, 256), got (256, 48)"),
    ("view_rank", CHAIN, lambda: (cuda(M, K), w_t(), {"e": cuda(M, N), "view": (48, 256)}), ValueError,
     "bias_gelu_mul_permute_f16: view must be (B, S, H, D) with non-negative ints, got (48, 256)"),
    ("head_size_unaligned", CHAIN, lambda: (cuda(M, K), w_t(), {"e": cuda(M, N), "view": (2, 24, 64, 4)}),
     ValueError, "bias_gelu_mul_permute_f16: no built variant can run M=48 N=256 K=512 (f16):\n  ..."),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_call(lib, counted, case):
    _, op_name, build, exc, message = case
    a, b, kw = build()
    op = getattr(lib, op_name)
    if "out" not in kw:  # a sentinel output of the right shape, to prove it stays untouched
        view = kw.get("view")
        if op_name == LIN:
            shape = (M, N)
        elif isinstance(view, tuple) and len(view) == 4:
            shape = (view[0], view[2], view[1], view[3])
        else:
            shape = (2, 8, 24, 32)
        kw["out"] = torch.full(shape, 7.0, device="cuda", dtype=H16)
    out = kw["out"]
    before = out.clone()
    with pytest.raises(exc) as info:
        op(a, b, **kw)
    text = str(info.value)
    if message.endswith("..."):
        assert text.startswith(message[:-3]), text
    else:
        assert text == message
    if op_name == CHAIN and case[0] == "head_size_unaligned":
        assert "permute: head size 4 must be a multiple of 8" in text
    assert counted == [], "a kernel was launched"
    torch.cuda.synchronize()
    assert torch.equal(out, before), "out was modified"


def test_out_aliasing_input_is_rejected(lib, counted):
    a = cuda(M, K)
    before = a.clone()
    with pytest.raises(ValueError) as info:
        lib.linear_f16(a, w_t(), out=a[:, :N])
    assert str(info.value) == "linear_f16: out overlaps a; pass a separate output tensor"
    assert counted == []
    assert torch.equal(a, before)


@pytest.mark.parametrize("op_name", ["linear_f16", "linear_bias_gelu_f16"])
@pytest.mark.parametrize("mode,split", [("serial", 1), ("serial", 8), ("parallel", 8)])
def test_nan_inf_propagate_like_torch(lib, op_name, mode, split):
    op = getattr(lib, op_name)
    a = cuda(40, 1024)
    w = cuda(72, 1024)
    a[3, 100] = float("nan")
    a[5, 7] = float("inf")
    w[11, 900] = float("-inf")
    kw = {"split_k": split, "mode": mode}
    ref = a.double() @ w.double().t()
    if op_name == "linear_bias_gelu_f16":
        ref = torch.nn.functional.gelu(ref)
    out = op(a, w.t(), **kw)
    torch.cuda.synchronize()
    assert torch.equal(torch.isnan(out), torch.isnan(ref)), "NaN pattern differs from torch"
    assert torch.equal(torch.isinf(out), torch.isinf(ref)), "Inf pattern differs from torch"
    finite = torch.isfinite(ref)
    assert torch.equal(torch.sign(out.double())[torch.isinf(ref)], torch.sign(ref)[torch.isinf(ref)])
    err = ((out.double() - ref)[finite].norm() / ref[finite].norm()).item()
    assert err < 1e-2


def _problems():
    # Different tile counts, so consecutive launches use different numbers of semaphores.
    return [(64, 256, 4096), (37, 520, 3000), (200, 136, 8192), (16, 1024, 2048)]


def test_thousands_of_serial_launches_one_stream(lib):
    op = lib.linear_bias_gelu_f16
    data = [(cuda(m, k), cuda(n, k), cuda(n)) for m, n, k in _problems()]
    splits = (16, 8, 4, 2, 1)
    expected = {(p, s): op(a, w.t(), bias=b, split_k=s, mode="serial") for p, (a, w, b) in enumerate(data)
                for s in splits}
    torch.cuda.synchronize()
    bad = 0
    total = 0
    for batch in range(10):
        outs = []
        for i in range(200):
            p, s = i % len(data), splits[(i // len(data) + batch) % len(splits)]
            a, w, b = data[p]
            outs.append((p, s, op(a, w.t(), bias=b, split_k=s, mode="serial")))
        torch.cuda.synchronize()
        bad += sum(not torch.equal(o, expected[(p, s)]) for p, s, o in outs)
        total += len(outs)
    assert total == 2000
    assert bad == 0, f"{bad} of {total} launches differ"


def test_thousands_of_serial_launches_four_streams(lib):
    op = lib.linear_bias_gelu_f16
    data = [(cuda(m, k), cuda(n, k), cuda(n)) for m, n, k in _problems()]
    splits = (16, 4, 2)
    expected = {(p, s): op(a, w.t(), bias=b, split_k=s, mode="serial") for p, (a, w, b) in enumerate(data)
                for s in splits}
    torch.cuda.synchronize()
    streams = [torch.cuda.Stream() for _ in range(4)]
    for st in streams:
        st.wait_stream(torch.cuda.current_stream())
    bad = total = 0
    for batch in range(10):
        outs = []
        for i in range(200):
            st = streams[i % 4]
            p, s = (i // 4) % len(data), splits[(i + batch) % len(splits)]
            a, w, b = data[p]
            with torch.cuda.stream(st):
                o = op(a, w.t(), bias=b, split_k=s, mode="serial")
            o.record_stream(st)
            outs.append((p, s, o))
        torch.cuda.synchronize()
        bad += sum(not torch.equal(o, expected[(p, s)]) for p, s, o in outs)
        total += len(outs)
    assert total == 2000
    assert bad == 0, f"{bad} of {total} launches differ"


@pytest.mark.parametrize("mode,split", [("serial", 4), ("parallel", 8)])
def test_misaligned_slices_are_padded_and_correct(lib, mode, split):
    """Views whose data pointers or leading dimensions break 16-byte alignment are not an
    error: they take the documented padded path (PaddingWarning) and give the right result."""
    from cutlass_splitk.runtime import PaddingWarning

    a_big = cuda(M, K + 1)
    w_big = cuda(N, K + 1)
    bias_big = cuda(N + 1)
    a, w, bias = a_big[:, 1:], w_big[:, 1:], bias_big[1:]  # 2-byte offsets, ld = K + 1
    out = torch.full((M, N), float("nan"), device="cuda", dtype=H16)
    with pytest.warns(PaddingWarning, match="not 8-element aligned"):
        lib.linear_f16(a, w.t(), bias=bias, out=out, split_k=split, mode=mode)
    ref = a.double() @ w.double().t() + bias.double()
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2
    assert not torch.isnan(out).any()
