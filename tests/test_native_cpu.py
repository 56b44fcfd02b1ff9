"""The C call path (cutlass_splitk/native/cks_pycall.c, runtime/native.py) on the CPU: a no-op C
library (benchmarks/fakelib.py) and the C call path compiled by the host compiler from the same
source the build compiles, CPU torch tensors read through torch's DLPack exchange table.

What it must do: launch exactly what the Python fast path launches, and hand every call it does
not handle back to the Python paths (which then raise, pad or re-plan as before)."""

from __future__ import annotations

import sys

import pytest

from cks_testutil import CONFIGS, ROOT
from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import PaddingWarning, abi, native

torch = pytest.importorskip("torch")
if native.exchange_api() is None:
    pytest.skip("this torch publishes no DLPack exchange table (torch < 2.10)", allow_module_level=True)
sys.path.insert(0, str(ROOT / "benchmarks"))
import fakelib  # noqa: E402

SPECS = {o.name: o for c in ("default.yaml", "epilogues.yaml") for o in load_config(CONFIGS / c).ops}
M, N, K = 16, 32, 64
VIEW = (2, 8, 2, 16)
FIELDS = [name for name, _ in abi.CksArgs._fields_]


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    if not fakelib.have_compiler():
        pytest.skip("no host C compiler")
    base = tmp_path_factory.mktemp("native")
    try:
        pycall = fakelib.build_pycall(base)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    return {name: fakelib.build_fake(SPECS[name], base / name) for name in ("linear_f16", "bias_gelu_mul_permute_f16")}, \
        pycall


def make(libs, name):
    sos, pycall = libs
    op = fakelib.fake_op(SPECS[name], sos[name], fakelib.FakePlatform())
    fakelib.set_status(op, 0)
    return fakelib.with_native(op, pycall)


def args_dict(args):
    return {f: getattr(args, f) for f in FIELDS}


def chain_inputs():
    a, w = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half)
    return a, w.t(), dict(bias=torch.randn(N, dtype=torch.half), e=torch.randn(M, N, dtype=torch.half), view=VIEW)


def test_launches_what_the_python_fast_path_launches(libs):
    """Third call on: the C path launches (stats), with the CksArgs the Python fast path passes for
    the same tensors (out= given, so every pointer is the same), and allocates a new output of
    the op's shape and dtype when out is not given."""
    op = make(libs, "bias_gelu_mul_permute_f16")
    a, b, kw = chain_inputs()
    out = torch.empty(2, 2, 8, 16, dtype=torch.half)
    for split, mode in ((1, "serial"), (4, "parallel")):
        for _ in range(3):
            op(a, b, out=out, split_k=split, mode=mode, **kw)
        launched = op.native.stats()[1]
        mine = args_dict(fakelib.last_args(op))
        native = op.native
        op.native = None
        op(a, b, out=out, split_k=split, mode=mode, **kw)
        op.native = native
        assert mine == args_dict(fakelib.last_args(op))
        assert launched >= 1 and mine["d"] == out.data_ptr() and mine["split_k"] == split
    assert mine["partials"] and mine["partial_bytes"] >= 4 * 4 * M * N
    before = op.native.stats()[1]
    fresh = [op(a, b, **kw) for _ in range(3)]
    assert op.native.stats()[1] == before + 1  # noted, prepared, then launched here
    assert fresh[2].shape == (2, 2, 8, 16) and fresh[2].dtype == torch.half and fresh[2].is_contiguous()
    assert fakelib.last_args(op).d == fresh[2].data_ptr() and fresh[2].data_ptr() != fresh[1].data_ptr()


def test_calls_it_does_not_handle_go_on_in_python(libs):
    """A new shape, a tensor alpha, an out= overlapping an input (the full path's error, same
    words), a misaligned operand (padded copies), a replaced entry point (the replacement runs):
    declined here, handled by the Python paths as before."""
    op = make(libs, "linear_f16")
    a, w = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half)
    kw = dict(c=torch.randn(M, N, dtype=torch.half), beta=1.0, bias=torch.randn(N, dtype=torch.half))
    for _ in range(3):
        op(a, w.t(), **kw)
    entries, launched, declined = op.native.stats()
    assert (entries, launched) == (1, 1)
    op(torch.randn(M + 1, K, dtype=torch.half), w.t(), bias=kw["bias"])  # new shape
    for v in (2.0, 3.0):
        op(a, w.t(), alpha=torch.tensor(v), **kw)
        assert fakelib.last_args(op).alpha == v
    out = torch.empty(M, N, dtype=torch.half)
    for _ in range(3):
        op(a, w.t(), out=out, **kw)
    assert op.native.stats()[1] == launched + 1
    big = torch.empty(M * K + M * N, dtype=torch.half)
    inside, result = big[: M * K].view(M, K), big[M * K - N:M * K - N + M * N].view(M, N)
    with pytest.raises(ValueError) as info:
        op(inside, w.t(), out=result, **kw)
    mine = str(info.value)
    fallback = op.native
    op.native = None
    with pytest.raises(ValueError) as info:
        op(inside, w.t(), out=result, **kw)
    op.native = fallback
    assert mine == str(info.value) and "overlap" in mine
    shifted = torch.randn(M * K + 1, dtype=torch.half)[1:].view(M, K)  # 2 bytes off alignment
    for _ in range(3):
        with pytest.warns(PaddingWarning):
            op(shifted, w.t(), **kw)
        assert fakelib.last_args(op).a != shifted.data_ptr()  # the padded copy ran
    seen = []
    entry = op.bound.run
    op.bound.run = {name: (lambda args, stream, f=f: seen.append(1) or f(args, stream)) for name, f in entry.items()}
    op(a, w.t(), **kw)
    op.bound.run = entry
    assert seen == [1]
    launched_now = op.native.stats()[1]
    op(a, w.t(), **kw)
    assert op.native.stats()[1] == launched_now + 1  # the library's own entry point again: back in C


def test_entries_follow_the_caches_and_the_workspace(libs):
    """Emptying the plan cache (tune() does) or the signature cache empties the C table; the next
    repeated call prepares and registers again. A cleared workspace is re-read: the launch after
    it carries the new partials."""
    op = make(libs, "linear_f16")
    a, wt = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half).t()
    for _ in range(3):
        op(a, wt, split_k=4, mode="parallel")
    assert op.native.stats()[0] == 1
    op.launcher.plans.clear()
    assert op.native.stats()[0] == 0
    op(a, wt, split_k=4, mode="parallel")  # stale Prepared: the full path re-plans and prepares again
    assert op.native.stats()[0] == 1
    op.prepared.clear()
    assert op.native.stats()[0] == 0
    for _ in range(3):
        op(a, wt, split_k=4, mode="parallel")
    first = fakelib.last_args(op).partials
    op.library.workspace.clear()
    for _ in range(3):
        op(a, wt, split_k=4, mode="parallel")
    bufs = op.library.workspace.get(torch.device("cpu"), 0)
    assert fakelib.last_args(op).partials == bufs.partials.ptr
    del first
    assert op.native.stats()[0] == 1
    assert op.library.release_workspace(0) == 1  # one stream's set: re-read the same way
    for _ in range(3):
        op(a, wt, split_k=4, mode="parallel")
    assert fakelib.last_args(op).partials == op.library.workspace.get(torch.device("cpu"), 0).partials.ptr


def test_a_failed_launch_raises_what_the_python_path_raises(libs):
    op = make(libs, "linear_f16")
    a, wt = torch.randn(M, K, dtype=torch.half), torch.randn(N, K, dtype=torch.half).t()
    for _ in range(3):
        op(a, wt)
    fakelib.set_status(op, abi.STATUS_CUDA)
    with pytest.raises(RuntimeError) as info:
        op(a, wt)
    mine = str(info.value)
    fallback, op.native = op.native, None
    with pytest.raises(RuntimeError) as info:
        op(a, wt)
    op.native = fallback
    fakelib.set_status(op, 0)
    assert mine == str(info.value) and "cuda" in mine.lower()
    fakelib.set_status(op, abi.STATUS_INVALID_PROBLEM)  # declined here; the full path then reports it
    with pytest.raises(Exception) as info:
        op(a, wt)
    fakelib.set_status(op, 0)
    assert op.native.stats()[2] >= 1


def test_the_switch_and_a_missing_table(libs, monkeypatch):
    _, pycall = libs
    monkeypatch.setenv(native.ENV, "0")
    assert native.load(pycall) is None
    monkeypatch.setenv(native.ENV, "1")
    assert native.load(pycall) is not None
    assert native.load(None) is None
    monkeypatch.setattr(native, "exchange_api", lambda: None)
    assert native.load(pycall) is None
