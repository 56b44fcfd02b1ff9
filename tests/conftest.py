"""Fixtures for the CPU test suite.

* ``write_yaml``: ``write_yaml(text, name="x.yaml") -> Path`` in this test's tmp_path (the
  module-level ``cks_testutil.write_yaml(tmp_path, text)`` is the same helper).
* ``minimal_op_yaml``: a valid one-op config (f16, tile [[64, 64, 64]], stages [3],
  serial [1, 2], parallel [2, 4], arch [90]).
* ``tiny_build``: that config built once per session by the real nvcc (``nvcc`` marker;
  skipped when no nvcc is found: CUDA_HOME, PATH or the CUDA wheels of the ``cuda`` extra).
  Tests that use it must not modify its directories.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from cks_testutil import MINIMAL_OP_YAML, write_yaml as _write_yaml

def _have_nvcc() -> bool:
    """nvcc as the build finds it: CUDA_HOME, PATH, or NVIDIA's wheels (cuda-pathfinder)."""
    from cutlass_splitk.buildenv import BuildError
    from cutlass_splitk.cudakit import locate_nvcc

    try:
        locate_nvcc()
    except BuildError:
        return False
    return True


HAVE_NVCC = _have_nvcc()


def pytest_collection_modifyitems(config, items):
    if HAVE_NVCC:
        return
    skip = pytest.mark.skip(reason="no nvcc (CUDA_HOME, PATH, or pip install -e '.[cuda,test]' for NVIDIA's wheels)")
    for item in items:
        if "nvcc" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _isolated_caches(monkeypatch, tmp_path_factory):
    """Nothing in the suite reads or writes ~/.cache (tuning cache, object cache) or the
    shared staging directory, and no build setting leaks in from the environment."""
    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("CUTLASS_SPLITK_TUNE_CACHE", str(base / "tune-cache" / "tune.json"))
    monkeypatch.setenv("CUTLASS_SPLITK_CACHE", str(base / "object-cache-default"))
    monkeypatch.delenv("CUTLASS_SPLITK_AUTOTUNE", raising=False)
    for name in ("CUTLASS_SPLITK_COMPILER_LAUNCHER", "CUTLASS_SPLITK_CUDA_ARCH_LIST", "CUTLASS_SPLITK_NVCC_FLAGS",
                 "CUTLASS_SPLITK_LDFLAGS", "MAX_JOBS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "NVCC_CCBIN"):
        monkeypatch.delenv(name, raising=False)
    from cutlass_splitk import build

    monkeypatch.setattr(build, "staging_root", lambda: base / "stage")


@pytest.fixture
def minimal_op_yaml() -> str:
    return MINIMAL_OP_YAML


@pytest.fixture
def write_yaml(tmp_path):
    def write(text: str, name: str = "x.yaml") -> Path:
        return _write_yaml(tmp_path, text, name)

    return write


@dataclass(frozen=True)
class TinyBuild:
    config: Path  # .../tiny.yaml (stem "tiny")
    out: Path  # the libraries, the manifest and the sources (out / "src")
    cache: Path  # shared object cache: a rebuild of the same config compiles nothing (in any directory)
    result: object  # the first BuildResult
    manifest_text: str


@pytest.fixture(scope="session")
def tiny_build(tmp_path_factory) -> TinyBuild:
    if not HAVE_NVCC:
        pytest.skip("no nvcc (CUDA_HOME, PATH, or the cuda extra's wheels)")
    from cutlass_splitk.build import build

    import cutlass_splitk.build as build_module

    base = tmp_path_factory.mktemp("nvcc-tiny")
    config = _write_yaml(base, MINIMAL_OP_YAML, "tiny.yaml")
    out, cache = base / "out", base / "cache"
    staging = build_module.staging_root  # a session fixture: the autouse one does not apply yet
    build_module.staging_root = lambda: base / "stage"
    try:
        result = build(config, out_dir=out, cache_dir=cache, jobs=2, progress=False)
    finally:
        build_module.staging_root = staging
    return TinyBuild(config, out, cache, result, (out / "manifest.json").read_text())
