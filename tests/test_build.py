"""The build (cutlass_splitk.build): toolchain commands, errors, and one real nvcc build of the
minimal config (session fixture ``tiny_build`` in conftest.py; ``nvcc`` marker)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from cks_testutil import MINIMAL_OP_YAML, fake_nvcc, MINIMAL_UNIT, MINIMAL_VARIANTS, SM80_TEMPLATES, TEMPLATES, write_yaml
from cutlass_splitk import artifact, codegen
from cutlass_splitk.artifact import LibraryError
from cutlass_splitk.build import build
from cutlass_splitk.config import ConfigError, for_targets, parse_config
from cutlass_splitk.cudakit import Nvcc
from cutlass_splitk.toolchain import BuildError, Cutlass, Toolchain, find_cutlass, find_nvcc

FAKE_CUTLASS = Cutlass(Path("/opt/cutlass/include"), Path("/opt/cutlass/tools/util/include"), "9.9.9")

EXPECTED_EXPORTS = {"cks_abi_version", "cks_describe", "cks_last_error", "cks_rank_v16"} | {
    f"cks_{v}_{fn}" for v in MINIMAL_VARIANTS for fn in ("query", "run")}


# --- commands (no nvcc needed) -------------------------------------------------------------------------


def test_compile_command():
    tc = Toolchain(Path("/fake/cuda/bin/nvcc"), FAKE_CUTLASS, extra_flags=("-lineinfo",))
    cmd = tc.compile_command(Path("/src/op/g.cu"), Path("/obj/g.o"), ("80", "90"), "sm80")
    assert cmd[0] == "/fake/cuda/bin/nvcc"
    # PTX embedded for the newest target only: the library still loads on newer GPUs
    assert [c for c in cmd if c.startswith("-gencode")] == [
        "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"]
    # the shared templates, the unit's backend's templates, then CUTLASS
    assert [c for c in cmd if c.startswith("-I")] == [
        f"-I{TEMPLATES}", f"-I{SM80_TEMPLATES}", "-I/opt/cutlass/include", "-I/opt/cutlass/tools/util/include"]
    assert "-Xcompiler=-fPIC,-fvisibility=hidden" in cmd
    assert "-std=c++17" in cmd and "-O3" in cmd and "-DNDEBUG" in cmd
    assert cmd[-4:] == ["-c", "/src/op/g.cu", "-o", "/obj/g.o"]
    assert cmd.index("-lineinfo") < cmd.index("-c")  # extra flags come before the source
    one = tc.compile_command(Path("s.cu"), Path("o.o"), ("86",))
    assert [c for c in one if c.startswith("-gencode")] == ["-gencode=arch=compute_86,code=[sm_86,compute_86]"]
    # an arch-specific target (the Hopper units' 90a) never gets PTX: it is not forward compatible
    hopper = tc.compile_command(Path("s.cu"), Path("o.o"), ("90a",), "sm80")
    assert [c for c in hopper if c.startswith("-gencode")] == ["-gencode=arch=compute_90a,code=sm_90a"]
    assert tc.compile_invocation(Path("s.cu"), Path("o.o"), ("86",)) == one  # no launcher
    launched = Toolchain(Path("/fake/nvcc"), FAKE_CUTLASS, launcher=("/usr/bin/sccache",))
    assert launched.compile_invocation(Path("s.cu"), Path("o.o"), ("86",)) == [
        "/usr/bin/sccache", *launched.compile_command(Path("s.cu"), Path("o.o"), ("86",))]
    assert launched.compile_command(Path("s.cu"), Path("o.o"), ("86",))[0] == "/fake/nvcc"
    # a unit of the shared templates only (library.cu)
    assert [c for c in one if c.startswith("-I")] == [
        f"-I{TEMPLATES}", "-I/opt/cutlass/include", "-I/opt/cutlass/tools/util/include"]
    copied = Toolchain(Path("/fake/nvcc"), FAKE_CUTLASS, template_dirs={"sm80": Path("/copy/sm80")})
    assert copied.include_dirs("sm80") == (TEMPLATES, Path("/copy/sm80"))


def test_link_command():
    tc = Toolchain(Path("/fake/nvcc"), FAKE_CUTLASS)
    cmd = tc.link_command([Path("/c/a.o"), Path("/c/b.o")], Path("/out/libx.so"))
    assert cmd == ["/fake/nvcc", "-shared", "-cudart=static", "-Xcompiler=-fvisibility=hidden",
                   "-Xlinker=--exclude-libs,ALL", "/c/a.o", "/c/b.o", "-o", "/out/libx.so"]
    # the wheels' lib/ (the static runtime nvcc.profile does not find) and CUTLASS_SPLITK_LDFLAGS
    wheel = Toolchain(Path("/sp/nvidia/cu13/bin/nvcc"), FAKE_CUTLASS, link_dirs=(Path("/sp/nvidia/cu13/lib"),),
                      link_flags=("-Wl,-z,now",), launcher=("/usr/bin/sccache",))
    assert wheel.link_command([Path("/c/a.o")], Path("/out/libx.so")) == [
        "/sp/nvidia/cu13/bin/nvcc", "-shared", "-cudart=static", "-L/sp/nvidia/cu13/lib",
        "-Xcompiler=-fvisibility=hidden", "-Xlinker=--exclude-libs,ALL", "/c/a.o", "-Wl,-z,now", "-o",
        "/out/libx.so"]  # links run without the launcher, as CMAKE_CUDA_COMPILER_LAUNCHER does


def test_build_error_message():
    exc = BuildError("thing failed", ["nvcc", "-c", "a b.cu"], "line 1\nline 2\n", "try again")
    assert str(exc) == "thing failed\ncommand: nvcc -c 'a b.cu'\n--- output ---\nline 1\nline 2\n--- end ---\ntry again"
    assert exc.command == ["nvcc", "-c", "a b.cu"] and exc.log == "line 1\nline 2\n" and exc.cwd is None
    # a command that ran in a directory is shown as one you can paste
    exc = BuildError("thing failed", ["nvcc", "-c", "op/a.cu"], "log", cwd=Path("/out dir/src"))
    assert str(exc) == "thing failed\ncommand: cd '/out dir/src' && nvcc -c op/a.cu\n--- output ---\nlog\n--- end ---"


# --- errors before anything is written -----------------------------------------------------------------


def test_missing_nvcc_with_cuda_home(tmp_path, monkeypatch):
    cuda_home = tmp_path / "cuda"
    cuda_home.mkdir()
    monkeypatch.setenv("CUDA_HOME", str(cuda_home))
    config = write_yaml(tmp_path, MINIMAL_OP_YAML)
    out, cache = tmp_path / "out", tmp_path / "cache"
    with pytest.raises(BuildError) as info:
        build(config, out_dir=out, cache_dir=cache, progress=False)
    assert str(info.value) == (
        f"nvcc not found\ncommand: \n--- output ---\nCUDA_HOME={cuda_home} has no bin/nvcc\n--- end ---\n"
        "Set CUDA_HOME to a CUDA toolkit (12.x or 13.x) or unset it to use nvcc from PATH or from pip "
        "(pip install 'cutlass-splitk[cuda]').")
    assert not out.exists() and not cache.exists()


def test_missing_nvcc_on_path(tmp_path, monkeypatch):
    from cutlass_splitk import cudakit

    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(cudakit, "_pathfinder_nvcc", lambda: None)  # no CUDA wheels either
    with pytest.raises(BuildError) as info:
        find_nvcc()
    assert str(info.value) == (
        "nvcc not found\ncommand: \n--- output ---\nnvcc is not on PATH, CUDA_HOME is not set, and cuda-pathfinder "
        "found no CUDA wheel with nvcc\n--- end ---\n"
        "pip install 'cutlass-splitk[cuda]' (a version-matched CUDA toolchain from NVIDIA's wheels), or install the "
        "CUDA toolkit and put its bin/ on PATH, or set CUDA_HOME.")


def test_find_nvcc_prefers_cuda_home(tmp_path, monkeypatch):
    nvcc = tmp_path / "cuda" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert find_nvcc() == nvcc


def test_missing_cutlass(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path))
    with pytest.raises(BuildError) as info:
        find_cutlass()
    assert str(info.value).startswith(f"CUTLASS headers not found\ncommand: \n--- output ---\n"
                                      f"{tmp_path}/include/cutlass/cutlass.h does not exist\n--- end ---\n")


def test_config_error_before_anything_is_written(tmp_path):
    config = write_yaml(tmp_path, MINIMAL_OP_YAML.replace("stages: [3]", "stages: [3, 3]"))
    out, cache = tmp_path / "out", tmp_path / "cache"
    with pytest.raises(ConfigError) as info:
        build(config, out_dir=out, cache_dir=cache, progress=False,
              toolchain=Toolchain(Path("/nonexistent/nvcc"), FAKE_CUTLASS))
    assert str(info.value) == f"{config}:7: ops.tiny_f16.variants.stages[1]: duplicate value 3"
    assert not out.exists() and not cache.exists()


def test_unknown_op_before_anything_is_written(tmp_path):
    config = write_yaml(tmp_path, MINIMAL_OP_YAML)
    out, cache = tmp_path / "out", tmp_path / "cache"
    with pytest.raises(BuildError) as info:
        build(config, out_dir=out, cache_dir=cache, ops=["nope", "tiny_f16"], progress=False,
              toolchain=Toolchain(Path("/nonexistent/nvcc"), FAKE_CUTLASS))
    assert str(info.value) == (f"unknown op(s) nope in {config}\ncommand: \n--- output ---\n\n--- end ---\n"
                               "Valid ops: tiny_f16")
    assert not out.exists() and not cache.exists()


# A stand-in for nvcc that logs its arguments ("compiles" by copying, "links" by concatenating).
FAKE_NVCC = fake_nvcc('echo "$*" >> "$here/calls.log"\n')


@pytest.fixture
def fake_toolchain(tmp_path):
    nvcc = tmp_path / "fakecuda" / "nvcc"
    nvcc.parent.mkdir()
    nvcc.write_text(FAKE_NVCC)
    nvcc.chmod(0o755)
    return Toolchain(nvcc, FAKE_CUTLASS)


def _compiles(toolchain):
    log = toolchain.nvcc.parent / "calls.log"
    return [line for line in log.read_text().splitlines() if " -c " in line] if log.is_file() else []


def test_cache_key_ignores_where_the_sources_and_objects_live(tmp_path, fake_toolchain):
    # same text + same flags -> the same cached object, whatever -o directory (hence sources directory)
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    cache = tmp_path / "cache"
    first = build(config, out_dir=tmp_path / "out1", cache_dir=cache,
                  jobs=2, progress=False, toolchain=fake_toolchain)
    assert (first.compiled, first.linked) == (2, 1)
    second = build(config, out_dir=tmp_path / "elsewhere" / "out2",
                   cache_dir=cache, jobs=2, progress=False, toolchain=fake_toolchain)
    assert second.compiled == 0
    assert second.linked == 1  # the cached library copied into the new output directory
    assert len(_compiles(fake_toolchain)) == 2
    assert second.manifest == first.manifest
    assert (tmp_path / "elsewhere" / "out2" / "libtiny_f16.so").read_bytes() == \
        (tmp_path / "out1" / "libtiny_f16.so").read_bytes()
    # the objects hold the generated text (the fake nvcc copies it): the same in both places
    for unit in codegen.render(parse_config(MINIMAL_OP_YAML, str(config))):
        assert (tmp_path / "out1" / "src" / unit.relpath).read_text() == \
            (tmp_path / "elsewhere" / "out2" / "src" / unit.relpath).read_text() == unit.text


def test_cache_key_still_depends_on_the_flags_and_the_text(tmp_path, fake_toolchain):
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    cache = tmp_path / "cache"
    kw = dict(cache_dir=cache, jobs=1, progress=False)
    assert build(config, out_dir=tmp_path / "out", toolchain=fake_toolchain, **kw).compiled == 2
    flagged = Toolchain(fake_toolchain.nvcc, FAKE_CUTLASS, extra_flags=("-lineinfo",))
    assert build(config, out_dir=tmp_path / "out", toolchain=flagged, **kw).compiled == 2
    # another stage count: a new group and a new library.cu (its description lists the variants)
    write_yaml(tmp_path, MINIMAL_OP_YAML.replace("stages: [3]", "stages: [4]"), "tiny.yaml")
    assert build(config, out_dir=tmp_path / "out", toolchain=fake_toolchain, **kw).compiled == 2
    # and back: everything is cached
    write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    assert build(config, out_dir=tmp_path / "out", toolchain=fake_toolchain, **kw).compiled == 0
    assert len(_compiles(fake_toolchain)) == 6


# CUTLASS_SPLITK_CUDA_ARCH_LIST decides what is built, not only the -gencode flags: an op of both backends, whose
# 7-stage sm80 group needs 112 KB of shared memory (sm_86 and sm_89 have 99 KB)
TWO_BACKENDS_YAML = """\
ops:
  two_f16:
    dtype: f16
    arch: [80, 90]
    variants:
      - {tile: [[64, 64, 64]], stages: [3, 7], split_k: {serial: [1, 2]}}
      - {backend: sm90, tile: [[128, 128, 64]], split_k: {parallel: [2, 4]}}
"""
SM90_LEFT_OUT = ("CUTLASS_SPLITK_CUDA_ARCH_LIST: two_f16: its sm90 variants (1) are left out: sm_90a code runs on compute "
                 "capability 9.0 alone, which the targets do not name")


@pytest.mark.parametrize("targets, archs, groups, notes", [
    (("80",), [80], ["t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "t64x64x64_w32x32x64_i16x8x16_s7_a8_z1"], [SM90_LEFT_OUT]),
    (("86",), [86], ["t64x64x64_w32x32x64_i16x8x16_s3_a8_z1"],
     ["CUTLASS_SPLITK_CUDA_ARCH_LIST: two_f16: its sm80 group t64x64x64_w32x32x64_i16x8x16_s7_a8_z1 is left out: "
      "shared memory 114688 B > 101376 B limit of sm_86", SM90_LEFT_OUT]),
    (("100",), [100], ["t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "t64x64x64_w32x32x64_i16x8x16_s7_a8_z1"],
     [SM90_LEFT_OUT]),  # a GPU newer than the shared-memory table: no smaller limit than sm_90's is known
    (("90+PTX",), [90], ["t64x64x64_w32x32x64_i16x8x16_s3_a8_z1", "t64x64x64_w32x32x64_i16x8x16_s7_a8_z1",
                         "sm90_t128x128x64_c1x1_coop_sauto_a8"], []),
])
def test_the_arch_list_decides_what_is_built_and_the_manifest_says_where_it_runs(tmp_path, fake_toolchain, targets,
                                                                                 archs, groups, notes):
    config = write_yaml(tmp_path, TWO_BACKENDS_YAML, "two.yaml")
    listed = Toolchain(fake_toolchain.nvcc, FAKE_CUTLASS, arch_list=targets)
    result = build(config, out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", jobs=1, progress=False,
                   toolchain=listed)
    assert [n for n in result.notes if "Python.h" not in n] == notes
    op = result.manifest["ops"]["two_f16"]
    expected = for_targets(parse_config(TWO_BACKENDS_YAML, str(config)), targets)[0].ops[0]
    assert op == artifact.describe(expected)
    assert op["archs"] == archs
    assert sorted({v["name"].split("_", 3)[3] for v in op["variants"]}) == sorted(groups)
    compiles = _compiles(listed)
    assert compiles and all(f"arch=compute_{archs[0]}" in c for c in compiles)
    assert any("sm_90a" in c for c in compiles) == any(g.startswith("sm90") for g in groups)


def test_an_arch_list_that_nothing_runs_on_fails_before_anything_is_written(tmp_path, fake_toolchain):
    sm90_only = "\n".join(line for line in TWO_BACKENDS_YAML.splitlines() if "stages" not in line and "arch:" not in line)
    config = write_yaml(tmp_path, sm90_only + "\n", "two.yaml")
    out, cache = tmp_path / "out", tmp_path / "cache"
    listed = Toolchain(fake_toolchain.nvcc, FAKE_CUTLASS, arch_list=("80", "86"))
    with pytest.raises(BuildError) as info:
        build(config, out_dir=out, cache_dir=cache, progress=False, toolchain=listed)
    assert str(info.value) == (
        f"nothing in {config} runs on CUTLASS_SPLITK_CUDA_ARCH_LIST=80;86\ncommand: \n--- output ---\n"
        "two_f16: its sm90 variants (1) are left out: sm_90a code runs on compute capability 9.0 alone, which the "
        "targets do not name\ntwo_f16 is left out: none of its variants runs on 80, 86\n--- end ---\n"
        "sm90 variants need a 9.0 target, sm80 variants any; set CUTLASS_SPLITK_CUDA_ARCH_LIST to the GPUs the "
        "libraries are for (e.g. '9.0'), or unset it to build each op's arch: list.")
    assert not out.exists() and not cache.exists() and not _compiles(listed)


# --- the real build ----------------------------------------------------------------------------------------


@pytest.mark.nvcc
def test_build_writes_sources_libraries_and_manifest(tiny_build):
    result = tiny_build.result
    so = tiny_build.out / "libtiny_f16.so"
    assert result.out_dir == tiny_build.out
    assert result.libraries == {"tiny_f16": so}
    assert result.compiled == 2 and result.linked == 1  # one group + library.cu; one .so
    config = parse_config(MINIMAL_OP_YAML, str(tiny_build.config))
    for unit in codegen.render(config):
        assert (tiny_build.out / "src" / unit.relpath).read_text() == unit.text

    manifest = json.loads(tiny_build.manifest_text)
    assert tiny_build.manifest_text == json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    assert result.manifest == manifest
    assert sorted(manifest) == ["abi_version", "build_hash", "config", "libraries", "ops", "pycall", "toolchain"]
    assert manifest["abi_version"] == artifact.ABI_VERSION == 1
    assert manifest["config"] == codegen.display_path(str(tiny_build.config))
    digest = hashlib.sha256(so.read_bytes()).hexdigest()
    assert manifest["libraries"] == {"tiny_f16": {"file": "libtiny_f16.so", "sha256": digest}}
    pycall = tiny_build.out / "libcks_pycall.so"
    assert manifest["pycall"] == {"file": "libcks_pycall.so", "sha256": hashlib.sha256(pycall.read_bytes()).hexdigest()}
    assert result.pycall == pycall and result.notes == []
    assert manifest["ops"] == {"tiny_f16": artifact.describe(config.ops[0])}
    assert re.fullmatch(r"[0-9a-f]{16}", manifest["build_hash"])
    assert re.fullmatch(r"nvcc [\d.]+; cutlass [\w.]+", manifest["toolchain"]), manifest["toolchain"]
    assert sorted(p.name for p in tiny_build.out.iterdir()) == ["compile_commands.json", "libcks_pycall.so",
                                                                 "libtiny_f16.so", "manifest.json", "src"]


@pytest.mark.nvcc
def test_build_makes_the_c_call_path_and_load_binds_it(tiny_build, tmp_path):
    """libcks_pycall.so exports only its factory, needs no libpython or torch (Python's limited
    API, resolved in the loading process), and load() gives every op its C call path where
    torch publishes the DLPack exchange table; a tampered copy is refused like an op library."""
    torch = pytest.importorskip("torch")
    from cutlass_splitk import load
    from cutlass_splitk.runtime import native

    pycall = tiny_build.out / "libcks_pycall.so"
    if shutil.which("nm") is not None:
        out = subprocess.run(["nm", "-D", "--defined-only", str(pycall)], capture_output=True, text=True, check=True)
        assert [line.split()[-1] for line in out.stdout.splitlines() if " T " in line] == ["cks_pycall_make"]
    if shutil.which("ldd") is not None:
        deps = subprocess.run(["ldd", str(pycall)], capture_output=True, text=True).stdout
        assert "libpython" not in deps and "torch" not in deps and "cudart" not in deps, deps
    lib = load(tiny_build.out)
    has_table = native.exchange_api() is not None
    assert (lib.tiny_f16.native is not None) == has_table
    copy = tmp_path / "copy"
    shutil.copytree(tiny_build.out, copy)
    (copy / "libcks_pycall.so").write_bytes(pycall.read_bytes()[:-1] + b"x")
    with pytest.raises(LibraryError) as info:
        load(copy)
    assert str(info.value) == (f"{copy / 'libcks_pycall.so'}: contents differ from the build (SHA-256 mismatch: "
                               f"truncated, corrupted or replaced); rebuild it with: cutlass-splitk build "
                               f"<config.yaml> -o {copy}")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is not installed")
def test_library_exports_only_the_c_entry_points(tiny_build):
    out = subprocess.run(["nm", "-D", "--defined-only", str(tiny_build.out / "libtiny_f16.so")],
                         capture_output=True, text=True, check=True).stdout
    symbols = [line.split() for line in out.splitlines() if line.strip()]
    text_symbols = {s[-1] for s in symbols if s[-2] == "T"}
    cks_symbols = {s[-1] for s in symbols if s[-1].startswith("cks_")}
    assert cks_symbols == EXPECTED_EXPORTS
    assert text_symbols - {"_init", "_fini"} == EXPECTED_EXPORTS, sorted(text_symbols - EXPECTED_EXPORTS)
    assert not any("cutlass" in s[-1] for s in symbols)


@pytest.mark.nvcc
def test_library_ranks_like_the_python_model(tiny_build):
    """The library's cks_rank_v16 (cks_timemodel.h as nvcc's host compiler built it) gives the Python
    model's candidates, order and predicted times (tests/test_timemodel_c.py covers every config)."""
    from cutlass_splitk.runtime import abi, dispatch

    (op,) = parse_config(tiny_build.config.read_text(), str(tiny_build.config)).ops
    bound = abi.bind(tiny_build.out / "libtiny_f16.so", [v.name for v in op.variants])
    assert op.archs == (90,)  # sm80 variants built for sm_90: native on an H100, JIT from PTX on a newer GPU
    for dev in (dispatch.DeviceInfo.from_properties("NVIDIA H100 80GB HBM3", 132, 9, 0),
                dispatch.DeviceInfo.from_properties("NVIDIA B200", 148, 10, 0)):
        tma, act = op.epilogue.tma_in_kernel, op.epilogue.transcendental
        ranking = dispatch.NativeRanking(bound.rank, op.variants, op.archs, dev, tma, act)
        for m, n, k, split in ((16, 4096, 4096, None), (37, 768, 4104, None), (1, 8, 65536, 2), (4096, 4096, 8, None)):
            want = [(c.variant.name, c.split, c.parts, c.predicted_us)
                    for c in dispatch.rank(op.variants, m, n, k, dev, split, op.archs, tma, act)]
            assert want and ranking.scored(m, n, k, split) == want, (dev.name, m, n, k, split)


@pytest.mark.nvcc
def test_groups_sharing_a_unit_compile_and_export_every_entry_point(tmp_path):
    """Two sm80 groups in one translation unit (each in its own namespace): the real nvcc
    compiles it, and the library exports both groups' entry points, which the runtime binds."""
    from cutlass_splitk.runtime import abi

    config = write_yaml(tmp_path, MINIMAL_OP_YAML.replace("stages: [3]", "stages: [3, 4]"), "two.yaml")
    (op,) = parse_config(config.read_text(), str(config)).ops
    assert len({v.group for v in op.variants}) == 2
    result = build(config, out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", jobs=2, progress=False)
    assert result.compiled == 2 and sorted(result.unit_seconds) == ["tiny_f16/library.cu", "tiny_f16/sm80.cu"]
    so = result.libraries["tiny_f16"]
    bound = abi.bind(so, [v.name for v in op.variants])
    assert sorted(bound.run) == sorted(v.name for v in op.variants) and len(bound.run) == 4


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed")
def test_library_links_the_cuda_runtime_statically_and_not_torch(tiny_build):
    out = subprocess.run(["ldd", str(tiny_build.out / "libtiny_f16.so")], capture_output=True, text=True,
                         check=True).stdout
    needed = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert needed, out
    for bad in ("libcudart", "libtorch", "libc10", "libcuda.so", "libpython"):
        assert not any(n.startswith(bad) for n in needed), (bad, needed)


@pytest.mark.nvcc
def test_second_build_is_a_no_op(tiny_build):
    so = tiny_build.out / "libtiny_f16.so"
    before = (so.stat().st_mtime_ns, (tiny_build.out / "manifest.json").stat().st_mtime_ns)
    start = time.monotonic()
    result = build(tiny_build.config, out_dir=tiny_build.out, cache_dir=tiny_build.cache, jobs=2, progress=False)
    elapsed = time.monotonic() - start
    assert (result.compiled, result.linked) == (0, 0)
    assert elapsed < 5.0, elapsed
    assert result.manifest == json.loads(tiny_build.manifest_text)
    assert (tiny_build.out / "manifest.json").read_text() == tiny_build.manifest_text
    assert (so.stat().st_mtime_ns, (tiny_build.out / "manifest.json").stat().st_mtime_ns) == before


@pytest.mark.nvcc
def test_compile_failure_reports_command_and_log_and_keeps_the_manifest(tiny_build):
    so = tiny_build.out / "libtiny_f16.so"
    so_bytes = so.read_bytes()
    manifest_mtime = (tiny_build.out / "manifest.json").stat().st_mtime_ns
    toolchain = Toolchain(find_nvcc(), find_cutlass(),
                          extra_flags=("-DCKS_FORCE_ERROR_DOES_NOT_EXIST", "--this-flag-does-not-exist"))
    with pytest.raises(BuildError) as info:
        build(tiny_build.config, out_dir=tiny_build.out, cache_dir=tiny_build.cache, jobs=2, progress=False,
              toolchain=toolchain)
    exc = info.value
    message = str(exc)
    assert re.match(rf"nvcc failed on tiny_f16/(library|{MINIMAL_UNIT})\.cu "
                    r"\(exit code \d+\)\ncommand: ", message), message
    assert exc.command[0] == str(find_nvcc())
    assert "--this-flag-does-not-exist" in exc.command and "-DCKS_FORCE_ERROR_DOES_NOT_EXIST" in exc.command
    # nvcc ran on a staged copy, by its relative path; the copy is left for the printed command
    from cutlass_splitk import build as build_module

    assert exc.cwd.parent == build_module.staging_root()
    assert exc.command[-4] == "-c" and exc.command[-3] in ("tiny_f16/library.cu", f"tiny_f16/{MINIMAL_UNIT}.cu")
    assert (exc.cwd / exc.command[-3]).read_text() == (tiny_build.out / "src" / exc.command[-3]).read_text()
    assert f"\ncommand: cd {exc.cwd} && {exc.command[0]} -std=c++17 " in message
    assert "--this-flag-does-not-exist -c " in message
    assert "Unknown option '--this-flag-does-not-exist'" in exc.log
    assert f"\n--- output ---\n{exc.log.rstrip()}\n--- end ---\n" in message
    assert "The generated source is " in message and "report it with this log" in message
    # the earlier build's outputs are untouched
    assert (tiny_build.out / "manifest.json").read_text() == tiny_build.manifest_text
    assert (tiny_build.out / "manifest.json").stat().st_mtime_ns == manifest_mtime
    assert so.read_bytes() == so_bytes
    # and no half-written cache entries were left behind
    assert not [p for p in tiny_build.cache.rglob("*") if ".tmp" in p.name]


@pytest.mark.nvcc
def test_another_output_dir_compiles_nothing(tiny_build, tmp_path, capsys):
    # The object cache key leaves out the source and object paths: the same config built into
    # another -o directory (so other sources) with the same cache reuses the session build's objects.
    from cutlass_splitk.cli import main

    assert tiny_build.result.compiled == 2  # compiled once, by the session build
    result = build(tiny_build.config, out_dir=tmp_path / "out", cache_dir=tiny_build.cache, jobs=2, progress=False)
    assert result.compiled == 0 and result.linked == 1
    assert result.manifest == json.loads(tiny_build.manifest_text)
    assert (tmp_path / "out" / "libtiny_f16.so").read_bytes() == (tiny_build.out / "libtiny_f16.so").read_bytes()
    assert (tmp_path / "out" / "src" / "tiny_f16").is_dir()
    out2 = tmp_path / "out2"
    assert main(["build", str(tiny_build.config), "-o", str(out2), "--cache", str(tiny_build.cache), "-q"]) == 0
    assert re.fullmatch(rf"{re.escape(str(out2))}: 1 libraries \(0 objects compiled, 1 libraries updated\) "
                        r"in [\d.]+s\n", capsys.readouterr().out)


# --- a build writes only where it was told (issue 11, build trap 1) ------------------------------------


def _tree(directory: Path) -> dict:
    return {p.relative_to(directory).as_posix(): (p.read_bytes() if p.is_file() else None, p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("how", ["api", "cli"])
def test_build_from_another_directory_leaves_its_generated_dir_alone(tmp_path, monkeypatch, fake_toolchain, how):
    # A config named default.yaml built from a checkout-like directory whose generated/default/
    # holds stamped sources: of configs/default.yaml, of this very config path, and a stale
    # group of it. A build writes under -o and the cache only.
    config = write_yaml(tmp_path / "elsewhere", MINIMAL_OP_YAML, "default.yaml")
    work = tmp_path / "checkout"
    committed = work / "generated" / "default"
    for relpath, stamped_by in [("linear_f16/library.cu", "configs/default.yaml"),
                                ("tiny_f16/library.cu", codegen.display_path(str(config))),
                                ("tiny_f16/sm80_1.cu", str(config))]:
        write_yaml(committed, f"// {codegen.stamp(stamped_by)}\n// committed\n", relpath)
    (work / "configs").mkdir()
    monkeypatch.chdir(work)
    before = _tree(work)
    out, cache = tmp_path / "out", tmp_path / "cache"
    if how == "api":
        result = build(config, out_dir=out, cache_dir=cache, progress=False, toolchain=fake_toolchain)
        assert (result.compiled, result.linked) == (2, 1)
    else:
        from cutlass_splitk import toolchain
        from cutlass_splitk.cli import main

        monkeypatch.setattr(toolchain, "locate_nvcc", lambda env: Nvcc(fake_toolchain.nvcc, "PATH"))
        monkeypatch.setattr(toolchain, "find_cutlass", lambda env: FAKE_CUTLASS)
        assert main(["build", str(config), "-o", str(out), "--cache", str(cache), "-q"]) == 0
    assert _tree(work) == before  # nothing written, removed or created in the current directory
    units = codegen.render(parse_config(MINIMAL_OP_YAML, str(config)))
    assert sorted(p.relative_to(out / "src").as_posix() for p in (out / "src").rglob("*.cu")) == sorted(
        u.relpath for u in units)
    assert sorted(p.name for p in out.iterdir()) == ["compile_commands.json", "libcks_pycall.so", "libtiny_f16.so",
                                                    "manifest.json", "src"]


# --- the object key covers the template directories (issue 11, build trap 2) ---------------------------


def test_editing_any_template_file_recompiles_what_includes_it(tmp_path, fake_toolchain):
    shared, sm80 = tmp_path / "templates", tmp_path / "sm80"
    shutil.copytree(TEMPLATES, shared)
    shutil.copytree(SM80_TEMPLATES, sm80)
    extra = sm80 / "cks_extra.cuh"
    extra.write_text("#pragma once\n// version 1\n")
    umbrella = sm80 / "cks_sm80.cuh"
    umbrella.write_text(umbrella.read_text() + '#include "cks_extra.cuh"\n')
    tc = Toolchain(fake_toolchain.nvcc, FAKE_CUTLASS, template_dirs={"": shared, "sm80": sm80})
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    kw = dict(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", progress=False, toolchain=tc)

    assert build(config, **kw).compiled == 2
    group, library = sorted(_compiles(tc), key=lambda line: "library.cu" in line)
    assert f"-I{shared} -I{sm80} -I" in group and f"-I{shared} -I/opt/cutlass" in library
    assert build(config, **kw).compiled == 0
    extra.write_text("#pragma once\n// version 2\n")  # a header only the umbrella names
    assert build(config, **kw).compiled == 1  # the group unit; library.cu does not see sm80/
    assert build(config, **kw).compiled == 0
    (sm80 / "new_header.cuh").write_text("// a new file in the directory counts too\n")
    assert build(config, **kw).compiled == 1
    error_h = shared / "cks_error.cuh"
    error_h.write_text(error_h.read_text() + "// edited\n")  # the shared templates: every unit
    assert build(config, **kw).compiled == 2
    assert build(config, **kw).compiled == 0
    assert len(_compiles(tc)) == 2 + 1 + 1 + 2


def test_a_template_edited_while_a_unit_compiles_fails_the_build_and_caches_nothing(tmp_path):
    """nvcc reads the headers from the template directories while it runs: an object compiled
    across an edit matches neither version's key, so it must not enter the cache (found in
    session 6: templates edited during a long build)."""
    shared, sm80 = tmp_path / "templates", tmp_path / "sm80"
    shutil.copytree(TEMPLATES, shared)
    shutil.copytree(SM80_TEMPLATES, sm80)
    header = sm80 / "cks_sm80.cuh"
    nvcc = tmp_path / "fakecuda" / "nvcc"
    nvcc.parent.mkdir()
    # the first compile of the group unit edits a header, as an editor would mid-build
    nvcc.write_text(fake_nvcc(f'case "$src" in *{MINIMAL_UNIT}.cu) if [ ! -e "$here/edited" ]; then '
                              f'echo "// edited" >> {header}; : > "$here/edited"; fi;; esac\n'))
    nvcc.chmod(0o755)
    tc = Toolchain(nvcc, FAKE_CUTLASS, template_dirs={"": shared, "sm80": sm80})
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    kw = dict(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", jobs=1, progress=False, toolchain=tc)
    with pytest.raises(BuildError) as err:
        build(config, **kw)
    assert err.value.what == f"the template files changed while tiny_f16/{MINIMAL_UNIT}.cu compiled"
    assert err.value.hint == ("Run the build again once the edits are done; nothing compiled against the "
                              "changing files was kept.")
    assert not (tmp_path / "out" / "manifest.json").exists()
    kept = [p.name for p in (tmp_path / "cache").rglob("*.o")]
    assert len(kept) <= 1  # at most library.cu's object (it does not include sm80/)
    result = build(config, **kw)  # the edit is done: the build goes through
    assert result.compiled == 2 - len(kept) and (tmp_path / "out" / "manifest.json").is_file()


def test_a_relative_cache_directory_works(tmp_path, monkeypatch, fake_toolchain):
    """nvcc compiles in a staging directory: a relative --cache (or $CUTLASS_SPLITK_CACHE) must
    still name the directory relative to where the build was started (found by the GPU fuzz
    run, whose `--cache build/fuzz-cache` failed every compile)."""
    monkeypatch.chdir(tmp_path)
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    result = build(config, out_dir=Path("out"), cache_dir=Path("rel-cache"), jobs=1, progress=False,
                   toolchain=fake_toolchain)
    assert result.compiled == 2 and (tmp_path / "out" / "manifest.json").is_file()
    assert list((tmp_path / "rel-cache").rglob("*.o"))
    monkeypatch.setenv("CUTLASS_SPLITK_CACHE", "env-cache")
    assert build(config, out_dir=Path("out2"), jobs=1, progress=False, toolchain=fake_toolchain).compiled == 2
    assert list((tmp_path / "env-cache").rglob("*.o"))
