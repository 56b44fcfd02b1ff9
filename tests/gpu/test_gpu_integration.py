"""torch.compile, CUDA graphs, concurrent streams, a second device."""

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu


@pytest.fixture
def lib(libs):
    if "default" not in libs:
        pytest.skip("build/default is not built")
    return libs["default"]


def _inputs(m, n, k, seed, dtype=torch.float16):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=dtype, generator=g)
    w = torch.randn(n, k, device="cuda", dtype=dtype, generator=g)
    bias = torch.randn(n, device="cuda", dtype=dtype, generator=g)
    e = torch.randn(m, n, device="cuda", dtype=dtype, generator=g)
    return a, w, bias, e


def _chain_ref(a, w, bias, e, view):
    ref = torch.nn.functional.gelu(a.double() @ w.double().t() + bias.double()) * e.double()
    return ref.view(view).permute(0, 2, 1, 3)


def _rel_err(got, ref):
    return ((got.double() - ref).norm() / ref.norm()).item()


def test_torch_compile_fullgraph(lib):
    op = lib.bias_gelu_mul_permute_f16
    a, w, bias, e = _inputs(48, 256, 2048, 1)

    def f(a, w, bias, e):
        y = op(a, w.t(), bias=bias, e=e, view=(3, 16, 2, 128))
        return y * 2 + 1

    eager = f(a, w, bias, e)
    compiled = torch.compile(f, fullgraph=True)
    got = compiled(a, w, bias, e)
    torch.testing.assert_close(got, eager, rtol=0, atol=0)
    a2, w2, bias2, e2 = _inputs(48, 256, 2048, 2)
    torch.testing.assert_close(compiled(a2, w2, bias2, e2), f(a2, w2, bias2, e2), rtol=0, atol=0)


@pytest.mark.parametrize("mode,split", [("serial", 8), ("parallel", 16)])
def test_torch_compile_reduce_overhead(lib, mode, split):
    """torch.compile(mode="reduce-overhead") records CUDA graphs (cudagraph trees) around the op:
    replays on fresh inputs must match eager bitwise, for both split-K workspaces."""
    torch._dynamo.reset()
    op = lib.bias_gelu_mul_permute_f16

    def f(a, w, bias, e):
        return op(a, w.t(), bias=bias, e=e, view=(3, 16, 2, 128), split_k=split, mode=mode) + 1

    compiled = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    for seed in range(20, 26):
        a, w, bias, e = _inputs(48, 256, 4096, seed)
        got = compiled(a, w, bias, e).clone()
        torch.testing.assert_close(got, f(a, w, bias, e), rtol=0, atol=0, msg=f"call {seed - 20}")


@pytest.mark.parametrize("mode,split", [("serial", 8), ("parallel", 16), ("serial", 1)])
def test_cuda_graph_replay(lib, mode, split):
    op = lib.linear_bias_gelu_f16
    a, w, bias, _ = _inputs(64, 512, 8192, 3)
    static_out = torch.empty(64, 512, device="cuda", dtype=torch.float16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        # warm-up: plan + workspace; the library records these arguments' launches as its own
        # graph on the second call and replays it on the third (cks_replay.cuh), which a
        # capture must not pick up: captured, the launches go straight into the caller's graph
        for _ in range(3):
            op(a, w.t(), bias=bias, out=static_out, split_k=split, mode=mode)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        op(a, w.t(), bias=bias, out=static_out, split_k=split, mode=mode)
    for seed in range(4, 9):
        a2, w2, bias2, _ = _inputs(64, 512, 8192, seed)
        a.copy_(a2)
        w.copy_(w2)
        bias.copy_(bias2)
        static_out.fill_(float("nan"))
        graph.replay()
        expect = op(a2, w2.t(), bias=bias2, split_k=split, mode=mode)
        torch.cuda.synchronize()
        assert torch.equal(static_out, expect), f"replay {seed} differs from eager"


@pytest.mark.parametrize("build,op_name,mode,split", [("default", "linear_bias_gelu_f16", "serial", 8),
                                                     ("default", "linear_bias_gelu_f16", "parallel", 16),
                                                     ("default", "bias_gelu_mul_permute_f16", "serial", 1),
                                                     ("default", "bias_gelu_mul_permute_f16", "parallel", 1),
                                                     ("default", "bias_gelu_mul_permute_f16", "parallel", 4),
                                                     # stream-K: configs/epilogues.yaml (default lists none)
                                                     ("epilogues", "gelu_tanh_add_bf16", "stream_k", 1)])
def test_replayed_launches_match_direct_ones(libs, monkeypatch, build, op_name, mode, split):
    """From the second call with the same arguments on, the library replays its launches as a
    CUDA graph (cks_replay.cuh): every call (direct, recorded, replayed; new values in the same
    tensors between calls) gives the bits of direct launches (CUTLASS_SPLITK_GRAPHS=0), on the
    H100 with each backend the op runs there."""
    if build not in libs:
        pytest.skip(f"build/{build} is not built")
    op = getattr(libs[build], op_name)
    dtype = torch.bfloat16 if op_name.endswith("_bf16") else torch.float16
    a, w, bias, e = _inputs(77, 512, 4096, 31, dtype)
    kw = {"bias": bias}
    if op_name.startswith("bias_gelu_mul_permute"):
        kw.update(e=e, view=(7, 11, 4, 128))
    elif op_name.startswith("gelu_tanh_add"):
        kw.update(e=e)
    out = torch.empty(op(a, w.t(), split_k=split, mode=mode, **kw).shape, device="cuda", dtype=dtype)
    results = {}
    for graphs in ("1", "0"):
        monkeypatch.setenv("CUTLASS_SPLITK_GRAPHS", graphs)
        got = []
        for seed in range(40, 45):
            a2, w2, bias2, e2 = _inputs(77, 512, 4096, seed, dtype)
            for t, new in ((a, a2), (w, w2), (bias, bias2), (e, e2)):
                t.copy_(new)
            out.fill_(float("nan"))
            op(a, w.t(), out=out, split_k=split, mode=mode, **kw)
            got.append(out.clone())
        results[graphs] = got
    for call, (replayed, direct) in enumerate(zip(results["1"], results["0"])):
        assert not direct.isnan().any(), f"call {call}: NaN left in the output"
        assert torch.equal(replayed, direct), f"call {call}: replayed launches differ from direct ones"


def test_streams_stress(lib):
    """Hundreds of serial split-K launches over 4 streams, several problem sizes sharing each
    stream's semaphores; every result must equal (bitwise) the single-stream result."""
    op = lib.linear_bias_gelu_f16
    problems = [(16, 4096, 14336), (77, 200, 3000), (256, 256, 16384), (33, 520, 4104)]
    data = [_inputs(m, n, k, 100 + i) for i, (m, n, k) in enumerate(problems)]
    splits = [16, 8, 4, 2]
    expected = [[op(a, w.t(), bias=b, split_k=s, mode="serial") for s in splits] for a, w, b, _ in data]
    torch.cuda.synchronize()
    streams = [torch.cuda.Stream() for _ in range(4)]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    results = []
    for it in range(320):
        p = it % len(problems)
        si = (it // 4) % len(splits)
        stream = streams[it % 4]
        a, w, b, _ = data[p]
        with torch.cuda.stream(stream):
            out = op(a, w.t(), bias=b, split_k=splits[si], mode="serial")
        out.record_stream(stream)
        results.append((p, si, out))
    torch.cuda.synchronize()
    bad = [(i, p, splits[si]) for i, (p, si, out) in enumerate(results) if not torch.equal(out, expected[p][si])]
    assert not bad, f"{len(bad)} of {len(results)} launches differ, first: {bad[:5]}"


def test_release_workspace_frees_a_streams_buffers(lib):
    """release_workspace(stream) gives the stream's split-K workspace back to torch's allocator at once
    (the C and Python fast paths included, three calls in), and the next split call there allocates it
    again and computes the same bits."""
    op = lib.linear_bias_gelu_f16
    a, w, bias, _ = _inputs(256, 1024, 8192, 7)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        outs = [op(a, w.t(), bias=bias, split_k=8, mode="parallel") for _ in range(3)]
    torch.cuda.synchronize()
    held = torch.cuda.memory_allocated()
    assert lib.release_workspace(s) == 1
    freed = held - torch.cuda.memory_allocated()
    assert freed >= 8 * 256 * 1024 * 4, f"{freed} bytes freed, less than the partials"
    assert lib.release_workspace(s) == 0
    with torch.cuda.stream(s):
        again = [op(a, w.t(), bias=bias, split_k=8, mode="parallel") for _ in range(3)]
    torch.cuda.synchronize()
    assert all(torch.equal(x, outs[0]) for x in outs + again)


def test_programmatic_dependent_launch(lib, monkeypatch):
    """Parallel split-K launches its reduction with PDL on sm_90+: results are bitwise those
    without PDL, and back-to-back launches sharing one stream's partials (each GEMM overwrites
    what the previous reduction read) all equal their single-launch results."""
    op = lib.bias_gelu_mul_permute_f16
    problems = [(64, 4096, 14336, (1, 64, 32, 128)), (256, 256, 65536, (2, 128, 2, 128)),
                (40, 768, 3000 - 3000 % 8, (5, 8, 6, 128))]
    data = [_inputs(m, n, k, 200 + i) for i, (m, n, k, _) in enumerate(problems)]
    splits = [2, 16, 8]
    expected = {}
    for flag in ("0", "1"):
        monkeypatch.setenv("CUTLASS_SPLITK_PDL", flag)
        for (m, n, k, view), (a, w, bias, e) in zip(problems, data):
            for split in splits:
                out = torch.full((view[0], view[2], view[1], view[3]), float("nan"), device="cuda",
                                 dtype=torch.float16)
                op(a, w.t(), bias=bias, e=e, view=view, out=out, split_k=split, mode="parallel")
                key = (m, split)
                if flag == "0":
                    expected[key] = out
                    err = _rel_err(out, _chain_ref(a, w, bias, e, view))
                    assert err < 1e-2, f"{key}: relative error {err:.2e}"
                else:
                    assert torch.equal(out, expected[key]), f"{key}: PDL result differs"
    results = []
    for it in range(300):
        p = it % len(problems)
        split = splits[(it // 3) % len(splits)]
        m, n, k, view = problems[p]
        a, w, bias, e = data[p]
        results.append((m, split, op(a, w.t(), bias=bias, e=e, view=view, split_k=split, mode="parallel")))
    torch.cuda.synchronize()
    bad = [(i, m, split) for i, (m, split, out) in enumerate(results) if not torch.equal(out, expected[(m, split)])]
    assert not bad, f"{len(bad)} of {len(results)} launches differ, first: {bad[:5]}"


def test_repeated_signature_fast_path(lib):
    """Calls repeating a signature take the fast path (pointers only re-checked): fresh data,
    fresh or poisoned out= buffers, a misaligned pointer (padded again), an out= that
    overlaps an input (rejected again), and c aliasing out exactly (accumulates in place)."""
    op = lib.bias_gelu_mul_permute_f16
    op.prepared.clear()
    m, n, k, view = 37, 768, 4104, (1, 37, 6, 128)
    for seed in range(3):
        a, w, bias, e = _inputs(m, n, k, 300 + seed)
        got = op(a, w.t(), bias=bias, e=e, view=view)
        assert _rel_err(got, _chain_ref(a, w, bias, e, view)) < 1e-2, f"fresh out, seed {seed}"
        out = torch.full((1, 6, 37, 128), float("nan"), device="cuda", dtype=torch.float16)
        assert op(a, w.t(), bias=bias, e=e, view=view, out=out) is out
        assert torch.equal(out, got), f"out= differs from the allocated result, seed {seed}"
    assert len(op.prepared) == 2  # one signature without out=, one with
    big = torch.randn(m, k + 8, device="cuda", dtype=torch.float16)
    shifted = big[:, 1:k + 1]  # same shape and strides as a row-major (m, k + 8) view, pointer off by 2 bytes
    aligned = big[:, :k]
    ref = _chain_ref(shifted, w, bias, e, view)
    op(aligned, w.t(), bias=bias, e=e, view=view)
    with pytest.warns(Warning, match="padded buffers"):
        got = op(shifted, w.t(), bias=bias, e=e, view=view)
    assert _rel_err(got, ref) < 1e-2
    holder = torch.empty(m * n + 4096, device="cuda", dtype=torch.float16)
    out = holder[:m * n].view(1, 6, 37, 128)
    op(a, w.t(), bias=bias, e=e.clone(), view=view, out=out)
    e_inside = holder[:m * n].view(m, n)
    with pytest.raises(ValueError, match="out overlaps e"):
        op(a, w.t(), bias=bias, e=e_inside, view=view, out=out)
    lin = lib.linear_f16
    a, w, bias, _ = _inputs(m, n, k, 310)
    acc = torch.randn(m, n, device="cuda", dtype=torch.float16)
    expect = acc.double()
    for _ in range(3):
        lin(a, w.t(), bias=bias, c=acc, beta=1.0, out=acc)
        expect = a.double() @ w.double().t() + bias.double() + expect
        assert _rel_err(acc, expect) < 1e-2


two_gpus = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs 2 GPUs")


@two_gpus
def test_second_device(lib):
    op = lib.linear_bias_gelu_f16
    a, w, bias, _ = _inputs(40, 256, 4096, 5)
    ref = op(a, w.t(), bias=bias, split_k=4, mode="serial")
    d1 = torch.device("cuda", 1)
    with torch.cuda.device(0):
        out = op(a.to(d1), w.to(d1).t(), bias=bias.to(d1), split_k=4, mode="serial")
        # the library's runtime selected cuda:1 for the call and gave the thread its context back:
        # torch's next tensor lands on cuda:0, as the caller expects
        assert torch.cuda.current_device() == 0 and torch.empty(1, device="cuda").device.index == 0
    assert out.device == d1
    assert torch.equal(out.cpu(), ref.cpu())
    with pytest.raises(ValueError, match=r"linear_bias_gelu_f16: b is on cuda:1 but a is on cuda:0"):
        op(a, w.to(d1).t(), bias=bias)


@two_gpus
@pytest.mark.parametrize("mode,split", [("serial", 8), ("parallel", 16), ("parallel", 1), (None, None)])
def test_two_devices_interleaved(lib, mode, split):
    """The chain on both GPUs in turn: each device's operands with the other device current, then on a
    side stream of their own device; a smaller problem between the larger ones (each device's workspace
    grows and is reused) and repeated calls (replays and fast paths): every output, poisoned first, the
    same bits on both devices in every round, and the chain within float tolerance of float64."""
    op = lib.bias_gelu_mul_permute_f16
    shapes = [(200, 512, 8192, (2, 100, 4, 128)), (48, 256, 2048, (3, 16, 2, 128))]
    devices = [torch.device("cuda", 0), torch.device("cuda", 1)]
    inputs = {d: [] for d in devices}
    for i, (m, n, k, view) in enumerate(shapes):
        x = _inputs(m, n, k, 40 + i)
        for d in devices:
            inputs[d].append(tuple(t.to(d) for t in x))
    streams = {d: torch.cuda.Stream(device=d) for d in devices}
    kw = {} if mode is None else {"split_k": split, "mode": mode}
    first = {}
    for round_ in range(4):
        for j, d in enumerate(devices):
            other = devices[1 - j]
            for i, (m, n, k, view) in enumerate(shapes):
                a, w, bias, e = inputs[d][i]
                b, s, h, dd = view
                out = torch.full((b, h, s, dd), float("nan"), device=d, dtype=torch.float16)
                if round_ % 2 == 0:  # the other device current: the launch goes to d's current stream
                    with torch.cuda.device(other):
                        op(a, w.t(), bias=bias, e=e, view=view, out=out, **kw)
                        assert torch.cuda.current_device() == other.index  # the caller's context given back
                    torch.cuda.synchronize(d)
                else:  # a side stream of d (torch makes d current with it)
                    streams[d].wait_stream(torch.cuda.current_stream(d))
                    with torch.cuda.stream(streams[d]):
                        op(a, w.t(), bias=bias, e=e, view=view, out=out, **kw)
                    streams[d].synchronize()
                if i not in first:
                    first[i] = out.cpu()
                    ref = _chain_ref(*inputs[devices[0]][i], view)
                    assert _rel_err(out.to(devices[0]), ref) < 1e-2, (mode, split, m, n, k)
                assert torch.equal(out.cpu(), first[i]), (mode, split, str(d), round_, (m, n, k))


def test_flushed_timer_clean_flush():
    """bench's two flushes (runtime.timing.flushed_timer): the default writes 256 MiB, leaving L2
    full of dirty lines that a write-heavy call then writes back; ``clean`` reads 256 MiB instead.
    A 96 MiB copy (192 MiB of traffic) must time faster after the clean flush, by at least part of
    the ~50 MiB of write-backs the dirty one adds, and both must see the copy's real cost."""
    from cutlass_splitk.runtime.timing import flushed_timer

    x = torch.ones(96 << 20, dtype=torch.int8, device="cuda")
    y = torch.empty_like(x)
    dirty = flushed_timer(3)(lambda: y.copy_(x))
    clean = flushed_timer(3, clean=True)(lambda: y.copy_(x))
    floor = 2 * (96 << 20) / 10.0e12 * 1e6  # no GPU this project runs on moves 10 TB/s (an H200: ~4.8)
    assert floor < clean < dirty, (clean, dirty)


# --- the sm90 partial GEMM's GPC order (runtime/placement.py, sm90_gpc_scheduler.cuh) ----------------------

def test_placement_probe_reads_the_device():
    """The probe's answer is the device's: every SM in one GPC of at most 18 (sm90), a launch slot per cluster
    the device runs at once (one CTA per SM), each slot's GPC among those found."""
    from cutlass_splitk.runtime import placement
    from cutlass_splitk.runtime.platform import CudaPlatform

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    found = CudaPlatform().placement(0, torch.cuda.current_stream().cuda_stream)
    assert found is not None
    assert sorted(sm for g in found.gpcs for sm in g) == list(range(sms))
    assert all(len(g) <= 18 for g in found.gpcs)
    assert len(found.groups[1]) == min(sms, placement.MAX_SLOTS) and len(found.groups[2]) == sms // 2
    assert max(found.groups[2]) < len(found.gpcs)
    print(found.describe())


GPC_CASES = [  # (variant of linear_f16, split, M, N, K): every unit in one round, two or more sharers of a tile
    ("linear_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8", 8, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t128x128x64_c2x1_coop_sauto_a8", 8, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8", 8, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t128x112x64_c1x2_coop_sauto_a8", 4, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t128x112x64_c2x1_coop_sauto_a8", 5, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t128x80x64_c1x2_coop_sauto_a8_swab", 6, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8", 4, 509, 500, 8200),
    ("linear_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8", 8, 250, 250, 8200),
    ("linear_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab", 8, 13, 1000, 8200),
]


@pytest.mark.parametrize("variant,split,m,n,k", GPC_CASES)
def test_gpc_order_keeps_the_bits(lib, variant, split, m, n, k):
    """The same partials in the GPC order as in CUTLASS's: outputs poisoned, fresh inputs, bitwise equal
    with the order on and off, and both the float64 product."""
    op = lib.linear_f16
    if variant not in lib.variants("linear_f16"):
        pytest.skip(f"{variant} is not built")
    a, w, _, _ = _inputs(m, n, k, 29)
    ref = a.double() @ w.double().t()
    outs = {}
    try:
        for on in (True, False):
            lib.gpc_order = on
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            op(a, w.t(), out=out, variant=variant, split_k=split, mode="parallel")
            outs[on] = out
        torch.cuda.synchronize()
    finally:
        lib.gpc_order = True
    assert torch.equal(outs[True], outs[False])
    assert _rel_err(outs[True], ref) < 2e-3


@pytest.mark.parametrize("on, want", [(True, "linear_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8"),
                                      (False, "linear_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8")])
def test_first_call_ranks_with_the_gpc_order(on, want):
    """The library's ranking (cks_rank_v16) gets the GPC order from the launcher where it runs it: a fresh library's
    first call of 256 x 1024 x 16384 plans the 64x128 ping-pong tile (the best there with the order on: 36.7 us
    against 38.6, sessions 29-30), the 128x128 one with the order off; explain ranks the same; the result is the
    float64 product's. (This test's shape was 320 x 1280 x 16384 to session 36, 512 x 1024 x 16384 to session 37:
    the models since rank another tile first there, or the same one with the order on and off.)"""
    import cutlass_splitk
    from gpu_util import BUILD_ROOT

    fresh = cutlass_splitk.load(BUILD_ROOT / "default", gpc_order=on)
    if want not in fresh.variants("linear_f16"):
        pytest.skip(f"{want} is not built")
    a, w, _, _ = _inputs(256, 1024, 16384, 41)
    out = torch.full((256, 1024), float("nan"), device="cuda", dtype=torch.float16)
    fresh.linear_f16(a, w.t(), out=out)
    plan = next(iter(fresh.linear_f16.launcher.plans.values()))
    assert plan.variant == want, plan
    assert fresh.explain("linear_f16", 256, 1024, 16384, top=1).splitlines()[1].split()[1] == want
    assert _rel_err(out, a.double() @ w.double().t()) < 2e-3


def test_placement_waits_for_a_capture_to_end():
    """The placement probe asked behind a stream that is capturing (torch.cuda.graph: global capture mode)
    returns None without a launch or an allocation, which would break the capture: the graph then records
    and replays right; asked again after the capture, it measures."""
    from cutlass_splitk.runtime import placement

    x = torch.arange(1024, device="cuda", dtype=torch.float32)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        assert placement.measure(0, torch.cuda.current_stream().cuda_stream) is None
        y = x * 2 + 1
    x.copy_(torch.arange(1024, 2048, device="cuda", dtype=torch.float32))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, torch.arange(1024, 2048, device="cuda", dtype=torch.float32) * 2 + 1)
    assert placement.measure(0, torch.cuda.current_stream().cuda_stream) is not None


@two_gpus
def test_gpc_order_on_the_second_device(lib):
    """Device 1 gets its own placement (measured there, with device 0 current) and the same bits in the GPC order as
    in CUTLASS's; device 0's current device is left as it was."""
    op, d1 = lib.linear_f16, torch.device("cuda", 1)
    a, w, _, _ = _inputs(512, 512, 8192, 37)
    a, w = a.to(d1), w.to(d1)
    outs = {}
    try:
        with torch.cuda.device(0):
            for on in (True, False):
                lib.gpc_order = on
                outs[on] = torch.full((512, 512), float("nan"), device=d1, dtype=torch.float16)
                op(a, w.t(), out=outs[on], variant="linear_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8", split_k=8,
                   mode="parallel")
            assert torch.cuda.current_device() == 0
        torch.cuda.synchronize(d1)
    finally:
        lib.gpc_order = True
    assert lib.platform.placement(1) is not None and 1 in lib.linear_f16.launcher.placer.placed
    assert torch.equal(outs[True], outs[False])
    assert _rel_err(outs[True], a.double() @ w.double().t()) < 2e-3
