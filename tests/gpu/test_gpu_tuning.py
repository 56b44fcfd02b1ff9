"""Autotuning on the device: the cache is written, survives a reload, and a stale entry is
ignored with a warning."""

import json
import warnings

import pytest

torch = pytest.importorskip("torch")

import cutlass_splitk  # noqa: E402
from cutlass_splitk.runtime.tuning import TuneCacheWarning  # noqa: E402

from gpu_util import BUILD_ROOT, manifest  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture
def built():
    if manifest("default") is None:
        pytest.skip("build/default is not built")
    return BUILD_ROOT / "default"


def test_tune_persists_and_is_used(built, tmp_path):
    cache = tmp_path / "tune.json"
    lib = cutlass_splitk.load(built, tune_cache=cache)
    entry = lib.tune("linear_bias_gelu_f16", [(64, 1024, 8192)])[0]
    assert entry["variant"] in lib.variants("linear_bias_gelu_f16")
    data = json.loads(cache.read_text())
    assert len(data["entries"]) == 1
    lib2 = cutlass_splitk.load(built, tune_cache=cache)
    text = lib2.explain("linear_bias_gelu_f16", 64, 1024, 8192)
    assert f"tuned choice {entry['variant']} split={entry['split']}" in text
    a = torch.randn(64, 8192, device="cuda", dtype=torch.float16)
    w = torch.randn(1024, 8192, device="cuda", dtype=torch.float16)
    out = lib2.linear_bias_gelu_f16(a, w.t())
    ref = torch.nn.functional.gelu(a.double() @ w.double().t())
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2
    plan = next(iter(lib2.linear_bias_gelu_f16.launcher.plans.values()))
    assert (plan.variant, plan.split) == (entry["variant"], entry["split"])


def test_stale_entry_ignored(built, tmp_path):
    cache = tmp_path / "tune.json"
    lib = cutlass_splitk.load(built, tune_cache=cache)
    op = lib.linear_bias_gelu_f16
    key = lib.tuner.key(op.spec, 0, 32, 512, 4096)
    cache.write_text(json.dumps({"version": 1, "entries": {key: {"variant": "gone", "split": 3, "us": 1.0,
                                                                  "when": "x"}}}))
    lib = cutlass_splitk.load(built, tune_cache=cache)
    a = torch.randn(32, 4096, device="cuda", dtype=torch.float16)
    w = torch.randn(512, 4096, device="cuda", dtype=torch.float16)
    with pytest.warns(TuneCacheWarning, match="names 'gone' split 3"):
        out = lib.linear_bias_gelu_f16(a, w.t())
    ref = torch.nn.functional.gelu(a.double() @ w.double().t())
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_autotune_on_first_call(built, tmp_path):
    cache = tmp_path / "tune.json"
    lib = cutlass_splitk.load(built, tune_cache=cache, autotune=True)
    a = torch.randn(16, 4096, device="cuda", dtype=torch.float16)
    w = torch.randn(1024, 4096, device="cuda", dtype=torch.float16)
    out = lib.linear_f16(a, w.t())
    assert len(json.loads(cache.read_text())["entries"]) == 1
    ref = a.double() @ w.double().t()
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_autotune_leaves_out_splits_whose_workspace_does_not_fit(built, tmp_path):
    """Under a memory cap that holds the operands and a small parallel workspace but not a large one, autotuning
    on the first call times the candidates that fit and leaves out the splits whose partials do not (torch's
    OutOfMemoryError), instead of failing the call; the cap does bite (a forced split of 64 raises)."""
    cache = tmp_path / "tune.json"
    lib = cutlass_splitk.load(built, tune_cache=cache, autotune=True)
    m, n, k = 1024, 1024, 16384  # a parallel split s needs s * 4 MB of partials (split 8: 33.5 MB, 10 and up: 67+)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    w = torch.randn(n, k, device="cuda", dtype=torch.float16)
    out = torch.empty(m, n, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # the cap counts reserved memory: earlier tests' cached blocks would hide it
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_reserved() + (60 << 20)) / total)
    try:
        with pytest.raises(torch.OutOfMemoryError):
            lib.linear_f16(a, w.t(), split_k=64, mode="parallel")
        lib.release_workspace()
        out.fill_(float("nan"))
        lib.linear_f16(a, w.t(), out=out)  # autotunes: every candidate that fits is timed
        torch.cuda.synchronize()
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        lib.release_workspace()
        torch.cuda.empty_cache()
    (entry,) = json.loads(cache.read_text())["entries"].values()
    assert entry["variant"] in lib.variants("linear_f16")
    ref = a.double() @ w.double().t()
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2
