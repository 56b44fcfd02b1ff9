"""Finding the toolchain (cutlass_splitk.cudakit) and ``cutlass-splitk doctor``: nvcc from
CUDA_HOME, PATH or NVIDIA's wheels (cuda-pathfinder), the wheels' lib/ for the link, the wheel
release check, CUTLASS's version from its headers. Stand-in trees; the ``nvcc`` tests probe the
real nvcc."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cutlass_splitk import cudakit, toolchain
from cutlass_splitk.buildenv import BuildError
from cutlass_splitk.cli import main
from cutlass_splitk.cudakit import Nvcc, check_wheels, find_cutlass, link_dirs, locate_nvcc, wheel_versions

# Answers --version and --dryrun like nvcc (the profile lines doctor reads).
FAKE_NVCC = """\
#!/bin/sh
here=$(cd "$(dirname "$0")/.." && pwd)
case "$1" in
  --version) echo "Cuda compilation tools, release 13.0, V13.0.88";;
  --dryrun) echo "#\\$ TOP=$here/bin/.."
            echo "#\\$ INCLUDES=\\"-I$here/bin/../include\\"  "
            echo "#\\$ LIBRARIES=  \\"-L$here/bin/../lib64/stubs\\" \\"-L$here/bin/../lib64\\"" >&2;;
esac
"""
WHEELS = {"nvidia-cuda-nvcc": "13.0.88", "nvidia-nvvm": "13.0.88", "nvidia-cuda-crt": "13.0.88",
          "nvidia-cuda-runtime": "13.0.96", "nvidia-cuda-cccl": "13.0.85"}


def make_nvcc(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE_NVCC)
    path.chmod(0o755)
    return path


def wheel_site(tmp_path: Path, versions=WHEELS) -> Path:
    """A site-packages with the CUDA 13 wheels' layout (nvidia/cu13/{bin,lib,include}) and their
    metadata; returns the nvcc."""
    site = tmp_path / "site-packages"
    root = site / "nvidia" / "cu13"
    nvcc = make_nvcc(root / "bin" / "nvcc")
    (root / "lib").mkdir()
    (root / "lib" / "libcudart_static.a").write_bytes(b"!<arch>\n")
    (root / "include").mkdir()
    for name, version in versions.items():
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return nvcc


@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for name in ("CUDA_HOME", "CUDA_PATH", "CUTLASS_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(empty))
    cudakit.nvcc_search_dirs.cache_clear()
    return {"PATH": str(empty)}


# --- where nvcc comes from -----------------------------------------------------------------------------


def test_cuda_home_then_path_then_pathfinder(tmp_path, clean_env, monkeypatch):
    home_nvcc = make_nvcc(tmp_path / "home" / "bin" / "nvcc")
    path_nvcc = make_nvcc(tmp_path / "onpath" / "nvcc")
    wheel_nvcc = wheel_site(tmp_path)
    asked = []
    pathfinder = pytest.importorskip("cuda.pathfinder", reason="cuda-pathfinder is not installed")
    monkeypatch.setattr(pathfinder, "find_nvidia_binary_utility", lambda name: asked.append(name) or str(wheel_nvcc))
    env = {"CUDA_HOME": str(tmp_path / "home"), "PATH": str(path_nvcc.parent)}
    assert locate_nvcc(env) == Nvcc(home_nvcc, "CUDA_HOME")
    assert locate_nvcc({"CUDA_PATH": str(tmp_path / "home")}) == Nvcc(home_nvcc, "CUDA_PATH")
    assert locate_nvcc({"PATH": str(path_nvcc.parent)}) == Nvcc(path_nvcc, "PATH")
    assert asked == []  # cuda-pathfinder is asked only when neither has nvcc
    assert locate_nvcc(clean_env) == Nvcc(wheel_nvcc, "cuda-pathfinder")
    assert asked == ["nvcc"]


def test_pathfinder_without_wheels_is_not_found(clean_env, monkeypatch):
    pathfinder = pytest.importorskip("cuda.pathfinder", reason="cuda-pathfinder is not installed")
    monkeypatch.setattr(pathfinder, "find_nvidia_binary_utility", lambda name: None)
    with pytest.raises(BuildError) as info:
        locate_nvcc(clean_env)
    assert info.value.log == ("nvcc is not on PATH, CUDA_HOME is not set, and cuda-pathfinder found no CUDA wheel "
                              "with nvcc")
    assert info.value.hint.startswith("pip install 'cutlass-splitk[cuda]' (a version-matched CUDA toolchain")


def test_wheel_layout_links_its_lib_dir(tmp_path, clean_env, monkeypatch):
    """The wheels keep libcudart_static.a in lib/, which their nvcc.profile does not search."""
    nvcc = wheel_site(tmp_path)
    lib = nvcc.parent.parent / "lib"
    assert link_dirs(nvcc) == (lib.resolve(),)
    # found through CUDA_HOME=site-packages/nvidia/cu13 as well: the same -L
    monkeypatch.setenv("CUDA_HOME", str(nvcc.parent.parent))
    monkeypatch.setattr(toolchain, "find_cutlass", lambda env: cudakit.Cutlass(Path("/c/include"),
                                                                                Path("/c/util"), "4.2.0"))
    tc = toolchain.default_toolchain()
    assert (tc.nvcc, tc.nvcc_via, tc.link_dirs) == (nvcc, "CUDA_HOME", (lib.resolve(),))
    assert f"-L{lib.resolve()}" in tc.link_command([Path("a.o")], Path("x.so"))
    # a toolkit layout (lib64/ or targets/) needs nothing: nvcc.profile finds its runtime
    system = make_nvcc(tmp_path / "cuda" / "bin" / "nvcc")
    (system.parent.parent / "lib64").mkdir()
    (system.parent.parent / "lib64" / "libcudart_static.a").write_bytes(b"")
    assert link_dirs(system) == ()
    (system.parent.parent / "lib").mkdir()
    (system.parent.parent / "lib" / "libcudart_static.a").write_bytes(b"")
    assert link_dirs(system) == ()


def test_wheel_versions_must_be_one_release(tmp_path):
    nvcc = wheel_site(tmp_path)
    assert wheel_versions(nvcc) == WHEELS
    assert check_wheels(nvcc) == WHEELS
    assert wheel_versions(make_nvcc(tmp_path / "cuda" / "bin" / "nvcc")) == {}  # not a wheel layout


def test_mixed_wheel_releases_are_refused_before_compiling(tmp_path):
    nvcc = wheel_site(tmp_path, {**WHEELS, "nvidia-nvvm": "13.5.2"})
    with pytest.raises(BuildError) as info:
        check_wheels(nvcc)
    assert info.value.what == (f"the CUDA wheels beside {nvcc} do not make a CUDA 13.0 toolchain (not from CUDA 13.0: "
                               "nvidia-nvvm 13.5.2)")
    assert info.value.hint == ("Install one release of all of them: pip install 'cuda-toolkit[nvcc,cccl]==13.0.*' (what "
                               "pip install 'cutlass-splitk[cuda]' installs). Mixed releases fail late, e.g. ptxas: "
                               "'Unsupported .version 9.5; current version is '9.0''.")


def test_missing_wheel_is_refused(tmp_path, clean_env, monkeypatch):
    nvcc = wheel_site(tmp_path, {k: v for k, v in WHEELS.items() if k != "nvidia-cuda-crt"})
    monkeypatch.setenv("CUDA_HOME", str(nvcc.parent.parent))
    with pytest.raises(BuildError) as info:
        toolchain.default_toolchain()
    assert info.value.what == (f"the CUDA wheels beside {nvcc} do not make a CUDA 13.0 toolchain (missing: "
                               "nvidia-cuda-crt)")


# --- CUTLASS -------------------------------------------------------------------------------------------


def fake_cutlass(root: Path, version=(4, 9, 1)) -> Path:
    (root / "include" / "cutlass").mkdir(parents=True)
    (root / "include" / "cutlass" / "cutlass.h").write_text("// fake\n")
    (root / "include" / "cutlass" / "version.h").write_text(
        "".join(f"#define CUTLASS_{p} {v}\n" for p, v in zip(("MAJOR", "MINOR", "PATCH"), version)))
    return root


def test_cutlass_version_comes_from_the_headers_used(tmp_path):
    root = fake_cutlass(tmp_path / "cutlass")
    found = find_cutlass({"CUTLASS_PATH": str(root)})
    assert found == cudakit.Cutlass(root / "include", root / "tools" / "util" / "include", "4.9.1", "CUTLASS_PATH")
    # not the nvidia-cutlass wheel's metadata, which may be installed beside it
    wheel = find_cutlass({})
    assert wheel.version == cudakit.cutlass_header_version(wheel.include)
    assert wheel.via.startswith("nvidia-cutlass ") and wheel.via.endswith(" wheel")


# --- doctor --------------------------------------------------------------------------------------------


def test_doctor_reports_a_wheel_toolchain(tmp_path, clean_env, monkeypatch, capsys):
    nvcc = wheel_site(tmp_path)
    root = nvcc.parent.parent.resolve()
    pathfinder = pytest.importorskip("cuda.pathfinder", reason="cuda-pathfinder is not installed")
    monkeypatch.setattr(pathfinder, "find_nvidia_binary_utility", lambda name: str(nvcc))
    gcc = tmp_path / "empty-bin" / "gcc"
    gcc.write_text("#!/bin/sh\necho 'gcc (Fake) 12.2.0'\n")
    gcc.chmod(0o755)
    cutlass = fake_cutlass(tmp_path / "cutlass")
    monkeypatch.setenv("CUTLASS_PATH", str(cutlass))
    monkeypatch.setenv("MAX_JOBS", "3")
    monkeypatch.setenv("CUTLASS_SPLITK_COMPILER_LAUNCHER", "sccache")
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-lineinfo")
    monkeypatch.setenv("PATH", f"{tmp_path / 'empty-bin'}:/usr/bin:/bin")
    monkeypatch.setattr(shutil, "which", lambda name, path=None: str(gcc) if name == "gcc" else None)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"nvcc:           {nvcc} (CUDA 13.0.88; from cuda-pathfinder)",
        "CUDA wheels:    nvidia-cuda-nvcc 13.0.88, nvidia-nvvm 13.0.88, nvidia-cuda-crt 13.0.88, "
        "nvidia-cuda-runtime 13.0.96, nvidia-cuda-cccl 13.0.85",
        f"CUDA headers:   {root}/include",
        f"CUDA runtime:   {root}/lib/libcudart_static.a (linked statically; -L{root}/lib added, nvcc.profile does "
        "not search it)",
        f"host compiler:  {gcc} (gcc (Fake) 12.2.0)",
        f"CUTLASS:        {cutlass}/include (4.9.1; from CUTLASS_PATH)",
        "launcher:       sccache",
        "targets:        each op's arch: list, PTX for the newest forward-compatible target",
        "jobs:           3 (MAX_JOBS)",
        "extra flags:    nvcc: none; link: none",
        "nvcc's own env: NVCC_APPEND_FLAGS=-lineinfo",
        f"object cache:   {cudakit.os.environ['CUTLASS_SPLITK_CACHE']}",
    ]


def test_doctor_reports_what_is_missing(tmp_path, clean_env, monkeypatch, capsys):
    monkeypatch.setattr(cudakit, "_pathfinder_nvcc", lambda: None)
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path / "nowhere"))
    monkeypatch.setenv("NVCC_CCBIN", "no-such-gcc")
    monkeypatch.setenv("CUTLASS_SPLITK_CUDA_ARCH_LIST", "7.0")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "nvcc:           not found" in out and "CUTLASS:        not found" in out
    assert [line for line in out if line.startswith("problem: ")] == [
        "problem: nvcc not found (nvcc is not on PATH, CUDA_HOME is not set, and cuda-pathfinder found no CUDA wheel "
        "with nvcc). pip install 'cutlass-splitk[cuda]' (a version-matched CUDA toolchain from NVIDIA's wheels), or "
        "install the CUDA toolkit and put its bin/ on PATH, or set CUDA_HOME.",
        "problem: host compiler 'no-such-gcc' not found: install gcc/g++ or point NVCC_CCBIN at one",
        f"problem: CUTLASS headers not found ({tmp_path}/nowhere/include/cutlass/cutlass.h does not exist). Reinstall "
        "nvidia-cutlass or point CUTLASS_PATH at a CUTLASS source tree.",
        "problem: CUTLASS_SPLITK_CUDA_ARCH_LIST='7.0': 7.0 is older than sm_80, the oldest architecture these kernels "
        "run on. Remove it from the list.",
    ]


@pytest.mark.nvcc
def test_real_nvcc_search_dirs_and_runtime():
    nvcc = cudakit.find_nvcc()
    includes, libraries = cudakit.nvcc_search_dirs(str(nvcc))
    assert any((Path(d) / "cuda_runtime.h").is_file() for d in includes), includes
    runtime = cudakit.static_runtime(nvcc)
    assert runtime is not None and runtime.name == "libcudart_static.a" and runtime.is_file()
    assert runtime.parent.resolve() in [Path(d).resolve() for d in libraries] + list(cudakit.link_dirs(nvcc))
