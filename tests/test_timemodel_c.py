"""The time model in C (templates/cks_timemodel.h, the libraries' cks_rank_v16) against the Python
model it mirrors (runtime/timemodel.py through dispatch.rank): the same candidates, in the same
order, with bit-identical predicted times, for every variant of the shipped and the exploration
configs, on several modelled GPUs and thousands of problems. The header is compiled here by the
host C++ compiler (the libraries compile it with nvcc's; test_build checks that they export it)."""

from __future__ import annotations

import ctypes
import dataclasses
import random
import shutil
import subprocess

import pytest

from cks_testutil import CONFIGS, ROOT
from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import abi, dispatch, timemodel
from cutlass_splitk.runtime.dispatch import DeviceInfo, NativeRanking
from cutlass_splitk.spec import Backend

TEMPLATES = ROOT / "cutlass_splitk" / "templates"
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

HARNESS = r"""
#define CKS_TIMEMODEL_EXPORT
#include "cks_timemodel.h"
"""

DEVICES = [
    DeviceInfo.from_properties("NVIDIA H100 80GB HBM3", 132, 9, 0),
    dataclasses.replace(DeviceInfo.from_properties("NVIDIA H100 80GB HBM3", 132, 9, 0, 120), gpc_order=True),
    DeviceInfo.from_properties("NVIDIA H200", 132, 9, 0, cluster4_ctas=112),  # a count the driver gave
    DeviceInfo.from_properties("NVIDIA H100 PCIe", 114, 9, 0),
    DeviceInfo.from_properties("NVIDIA A100-SXM4-80GB", 108, 8, 0),
    DeviceInfo.from_properties("NVIDIA GeForce RTX 4090", 128, 8, 9),
]


def _ops():
    configs = [CONFIGS / "default.yaml", CONFIGS / "epilogues.yaml",
               *sorted((ROOT / "benchmarks").glob("explore*.yaml"))]
    ops = []
    for path in configs:
        ops += load_config(path).ops
    return ops


OPS = _ops()


@pytest.fixture(scope="module")
def cks_rank(tmp_path_factory):
    if CXX is None:
        pytest.skip("no host C++ compiler (c++, g++ or clang++) to compile cks_timemodel.h")
    d = tmp_path_factory.mktemp("timemodel")
    (d / "rank.cpp").write_text(HARNESS)
    so = d / "librank.so"
    subprocess.run([CXX, "-std=c++17", "-O2", "-shared", "-fPIC", f"-I{TEMPLATES}", "-o", str(so), str(d / "rank.cpp")],
                   check=True)
    return abi.bind_rank(ctypes.CDLL(str(so)))


def _python(op, m, n, k, dev, split, tma):
    return [(c.variant.name, c.split, c.parts, c.predicted_us)
            for c in dispatch.rank(op.variants, m, n, k, dev, split, op.archs, tma, op.epilogue.transcendental)]


def _problems(rng, count):
    fixed = [(1, 4096, 4096), (16, 4096, 14336), (512, 512, 32768), (4096, 4096, 4096), (37, 768, 4104),
             (1, 8, 8), (7, 24, 65536), (8192, 8192, 128), (3, 100000, 16), (128, 2048, 28672)]
    for m, n, k in fixed:
        yield m, n, k
    for _ in range(count - len(fixed)):
        yield (rng.choice([rng.randint(1, 64), rng.randint(1, 9000)]), rng.randint(1, 4096) * rng.choice([1, 8]),
               rng.choice([rng.randint(1, 2048) * 8, rng.randint(1, 70000)]))


def test_every_shipped_and_explored_variant_is_covered():
    backends = {v.backend for op in OPS for v in op.variants}
    modes = {v.mode.value for op in OPS for v in op.variants}
    clusters = {v.params.cluster for op in OPS for v in op.variants if v.backend is Backend.SM90}
    assert backends == {Backend.SM80, Backend.SM90} and modes == {"serial", "parallel", "stream_k"}
    assert len(clusters) >= 2, clusters
    # every op's in-kernel epilogue is the TMA epilogue since session 43 (the earlier epilogue's cost: the
    # parametrized test below passes the flag off too), with and without a transcendental activation's cost
    assert {(op.epilogue.tma_in_kernel, op.epilogue.transcendental) for op in OPS} == {(True, False), (True, True)}
    # and pools where sm90 and sm80 variants both run natively on an H100 (dispatch.hopper_first's reorder)
    assert any(len({v.backend for v in dispatch.runnable(op.variants, op.archs, DEVICES[0])}) == 2 for op in OPS)


@pytest.mark.parametrize("tma", [True, False], ids=["TMA epilogue", "earlier epilogue"])
@pytest.mark.parametrize("fixup_wave", [None, 0.0, 1.3], ids=["shipped", "fix-up wave 0", "fix-up wave 1.3"])
@pytest.mark.parametrize("dev", DEVICES, ids=lambda d: d.name + (" (GPC order)" if d.gpc_order else ""))
def test_c_model_ranks_like_the_python_model(cks_rank, dev, fixup_wave, tma, monkeypatch):
    if fixup_wave is not None:  # serial split-K's fix-up per further wave (SM90_FIXUP_WAVE), off and larger, alike
        monkeypatch.setattr(timemodel, "SM90_FIXUP_WAVE", fixup_wave)
    rng = random.Random(20261123)
    compared = 0
    for op in OPS:
        ranking = NativeRanking(cks_rank, op.variants, op.archs, dev, tma, op.epilogue.transcendental)
        splits = sorted({s for v in op.variants for s in v.splits})
        for m, n, k in _problems(rng, 40):
            split = rng.choice([None, None, rng.choice(splits)])
            want = _python(op, m, n, k, dev, split, tma)
            got = ranking.scored(m, n, k, split)
            assert got == want, (op.name, dev.name, m, n, k, split)
            assert ranking.order(m, n, k, split) == [(name, s) for name, s, _, _ in want]
            compared += len(want)
    assert compared > 5000, compared


def test_c_model_offers_nothing_where_python_offers_nothing(cks_rank):
    """A device none of the variants runs on (an sm_75 GPU for sm80/sm90 builds)."""
    turing = DeviceInfo.from_properties("Tesla T4", 40, 7, 5)
    op = OPS[0]
    assert _python(op, 16, 4096, 4096, turing, None, True) == []
    assert NativeRanking(cks_rank, op.variants, op.archs, turing).order(16, 4096, 4096) == []


@pytest.mark.parametrize("name", ["linear_f16", "linear_bias_gelu_f16"])
def test_launcher_uses_the_library_ranking(cks_rank, monkeypatch, name):
    """The launcher asks cks_rank_v16 when the bound library has it (and never the Python model),
    once per (pool, device) building the ranking."""
    from cutlass_splitk.runtime.launcher import Launcher

    op = next(o for o in OPS if o.name == name)
    bound = type("Bound", (), {"rank": staticmethod(cks_rank)})()
    launcher = Launcher(op, bound, None, None, None)
    monkeypatch.setattr(dispatch, "rank", lambda *a, **k: pytest.fail("the Python model was asked"))
    dev = DEVICES[0]
    pool = list(op.variants)
    first = launcher.ranked(pool, 16, 4096, 4096, dev, None, 0)
    monkeypatch.undo()
    assert op.epilogue.tma_in_kernel  # the launcher passes it on, and the activation's cost
    assert first == [(c.variant.name, c.split) for c in dispatch.rank(pool, 16, 4096, 4096, dev, None, op.archs, True,
                                                                      op.epilogue.transcendental)]
    assert (launcher.ranked(pool, 4096, 4096, 256, dev, None, 0)[0][0] == dispatch.rank(
        pool, 4096, 4096, 256, dev, None, op.archs, True, name != "linear_f16")[0].variant.name)
    built = launcher._rankings.lookup((id(pool), 0))
    assert launcher.ranked(pool, 17, 4096, 4096, dev, None, 0) and launcher._rankings.lookup((id(pool), 0)) is built
    a100 = DEVICES[4]  # another GPU model under the same index: a new ranking
    launcher.ranked(pool, 17, 4096, 4096, a100, None, 0)
    assert launcher._rankings.lookup((id(pool), 0))[1] is a100
