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
