"""Installable kernel packages (cutlass_splitk.kernel_wheel, ``cutlass-splitk package``) and
finding them by name (cutlass_splitk.artifact.locate, ``cutlass_splitk.load("my-kernels")``).

The wheel tests package a stand-in built directory; the ``nvcc`` test packages the session's
real tiny build, pip-installs the wheel into a temporary target and loads it in a fresh
interpreter with nothing of the build side on its path but the runtime."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cks_testutil import MINIMAL_OP_YAML, ROOT
from cutlass_splitk import __version__, artifact
from cutlass_splitk.artifact import ABI_VERSION, LibraryError, read_manifest
from cutlass_splitk.cli import main
from cutlass_splitk.config import parse_config
from cutlass_splitk.kernel_wheel import (PackageError, elf_version_needs, glibc_needed, module_name, package,
                                         platform_tag)

TAG = platform_tag()
SO = b"\x7fELF stand-in library " * 64


def built_dir(directory: Path, so: bytes = SO, abi: int = ABI_VERSION) -> Path:
    """A built directory as cutlass-splitk build leaves it (a stand-in library)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "libtiny_f16.so").write_bytes(so)
    (directory / "src").mkdir(exist_ok=True)
    (directory / "src" / "ignored.cu").write_text("// sources are not packaged\n")
    op = parse_config(MINIMAL_OP_YAML, "configs/tiny.yaml").ops[0]
    artifact.write_manifest(directory, "configs/tiny.yaml", "nvcc 13.0.88; cutlass 4.2.0",
                            {"tiny_f16": ("libtiny_f16.so", hashlib.sha256(so).hexdigest())}, [op])
    if abi != ABI_VERSION:
        manifest = json.loads((directory / "manifest.json").read_text())
        manifest["abi_version"] = abi
        (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def pip_install(wheel: Path, target: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--disable-pip-version-check",
                    "--target", str(target), str(wheel)], check=True, capture_output=True, text=True)


def in_fresh_python(code: str, site: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter whose path has the install target and the checkout."""
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


# --- the wheel ---------------------------------------------------------------------------------------


def test_wheel_contents(tmp_path):
    out = built_dir(tmp_path / "build")
    done = package(out, "My.Kernels", "1.2.0", tmp_path / "dist")
    assert done.wheel == tmp_path / "dist" / f"my_kernels-1.2.0-py3-none-{TAG}.whl"
    assert (done.module, done.ops) == ("my_kernels", ("tiny_f16",))
    manifest = json.loads((out / "manifest.json").read_text())
    assert done.build_hash == manifest["build_hash"]
    with zipfile.ZipFile(done.wheel) as zf:
        names = zf.namelist()
        assert names == ["my_kernels/__init__.py", "my_kernels/manifest.json", "my_kernels/kernel_package.json",
                         "my_kernels/libtiny_f16.so", "my_kernels-1.2.0.dist-info/METADATA",
                         "my_kernels-1.2.0.dist-info/WHEEL", "my_kernels-1.2.0.dist-info/entry_points.txt",
                         "my_kernels-1.2.0.dist-info/RECORD"]
        read = {n: zf.read(n) for n in names}
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zf.infolist())
    # the built bytes, unchanged: same build hash, same tuning-cache entries
    assert read["my_kernels/manifest.json"] == (out / "manifest.json").read_bytes()
    assert read["my_kernels/libtiny_f16.so"] == SO
    assert json.loads(read["my_kernels/kernel_package.json"]) == {
        "abi_version": ABI_VERSION, "build_hash": manifest["build_hash"], "builder": __version__,
        "config": "configs/tiny.yaml", "glibc": None, "name": "My.Kernels",
        "toolchain": "nvcc 13.0.88; cutlass 4.2.0", "version": "1.2.0"}
    assert read["my_kernels-1.2.0.dist-info/WHEEL"].decode() == (
        f"Wheel-Version: 1.0\nGenerator: cutlass-splitk {__version__}\nRoot-Is-Purelib: false\nTag: py3-none-{TAG}\n")
    assert read["my_kernels-1.2.0.dist-info/entry_points.txt"].decode() == (
        "[cutlass_splitk.kernels]\nMy.Kernels = my_kernels\n")
    metadata = read["my_kernels-1.2.0.dist-info/METADATA"].decode()
    assert metadata.startswith("Metadata-Version: 2.1\nName: My.Kernels\nVersion: 1.2.0\nSummary: CUDA GEMM kernels "
                               "(tiny_f16) prebuilt by cutlass-splitk from configs/tiny.yaml\n")
    assert "Requires-Dist" not in metadata  # installing it pulls in nothing (no nvcc, no CUTLASS)
    # RECORD: every other file with its urlsafe-base64 SHA-256 and size, then itself
    record = read["my_kernels-1.2.0.dist-info/RECORD"].decode().splitlines()
    assert record[-1] == "my_kernels-1.2.0.dist-info/RECORD,,"
    for line, name in zip(record[:-1], names[:-1]):
        digest = base64.urlsafe_b64encode(hashlib.sha256(read[name]).digest()).rstrip(b"=").decode()
        assert line == f"{name},sha256={digest},{len(read[name])}"
    assert len(record) == len(names)
    init = read["my_kernels/__init__.py"].decode()
    assert 'NAME = "My.Kernels"\nVERSION = "1.2.0"\n' in init and "OPS = ('tiny_f16',)\n" in init
    compile(init, "__init__.py", "exec")


def test_wheel_is_reproducible_and_tag_is_settable(tmp_path):
    out = built_dir(tmp_path / "build")
    first = package(out, "my-kernels", "1.2.0", tmp_path / "a").wheel.read_bytes()
    assert package(out, "my-kernels", "1.2.0", tmp_path / "b").wheel.read_bytes() == first
    tagged = package(out, "my-kernels", "1.2.0+cu130", tmp_path / "c", tag="manylinux_2_28_x86_64")
    assert tagged.wheel.name == "my_kernels-1.2.0+cu130-py3-none-manylinux_2_28_x86_64.whl"
    assert not [p for p in (tmp_path / "c").iterdir() if p.name.startswith(".")]  # no temp file left


@pytest.mark.parametrize("name, version, tag, message", [
    ("-bad", "1.0", None, "--name '-bad': not a valid distribution name (letters, digits, '-', '_', '.'; starting and "
                          "ending with a letter or digit)"),
    ("9kernels", "1.0", None, "--name '9kernels': its package '9kernels' cannot be imported (it must not start with a "
                              "digit or be a Python keyword or cutlass_splitk)"),
    ("cutlass-splitk", "1.0", None, "--name 'cutlass-splitk': its package 'cutlass_splitk' cannot be imported (it must "
                                    "not start with a digit or be a Python keyword or cutlass_splitk)"),
    ("my-kernels", "1.2.0-beta", None, "--version '1.2.0-beta': not a PEP 440 version (e.g. 1.2.0, 2.0rc1, "
                                       "1.0+cu130)"),
    ("my-kernels", "1.0", "Linux x86", "--platform-tag 'Linux x86': not a wheel platform tag (e.g. linux_x86_64, "
                                       "manylinux_2_28_x86_64)"),
])
def test_bad_arguments(tmp_path, name, version, tag, message):
    with pytest.raises(PackageError) as info:
        package(built_dir(tmp_path / "build"), name, version, tmp_path / "dist", tag)
    assert str(info.value) == message
    assert not (tmp_path / "dist").exists()


def test_a_damaged_directory_is_not_packaged(tmp_path):
    out = built_dir(tmp_path / "build")
    (out / "libtiny_f16.so").write_bytes(SO[:100])
    with pytest.raises(LibraryError) as info:
        package(out, "my-kernels", "1.0", tmp_path / "dist")
    assert str(info.value) == (f"{out}/libtiny_f16.so: contents differ from the build (SHA-256 mismatch: truncated, "
                               f"corrupted or replaced); rebuild it with: cutlass-splitk build <config.yaml> -o {out}")
    assert not (tmp_path / "dist").exists()


def test_cli_package(tmp_path, capsys):
    out = built_dir(tmp_path / "build")
    dist = tmp_path / "dist"
    assert main(["package", str(out), "--name", "my-kernels", "--version", "1.2.0", "-o", str(dist)]) == 0
    wheel = dist / f"my_kernels-1.2.0-py3-none-{TAG}.whl"
    build_hash = json.loads((out / "manifest.json").read_text())["build_hash"]
    assert capsys.readouterr().out == (
        f"{wheel}: 1 libraries (tiny_f16), {wheel.stat().st_size / 1e6:.1f} MB, build {build_hash}\n"
        f"install: pip install {wheel}\n"
        "load:    cutlass_splitk.load('my-kernels')  or  import my_kernels; my_kernels.load()\n")
    assert main(["package", str(tmp_path / "nope"), "--name", "x", "--version", "1"]) == 1
    assert capsys.readouterr().err == (f"error: {tmp_path}/nope: no such directory; rebuild it with: cutlass-splitk "
                                       f"build <config.yaml> -o {tmp_path}/nope\n")


# --- finding an installed package ------------------------------------------------------------------------


def test_installed_package_is_found_by_name(tmp_path):
    wheel = package(built_dir(tmp_path / "build"), "my-kernels", "1.2.0", tmp_path / "dist").wheel
    site = tmp_path / "site"
    pip_install(wheel, site)
    code = ("from cutlass_splitk import artifact\n"
            "print(artifact.installed_packages())\n"
            "for name in ('my-kernels', 'My_Kernels', 'my.kernels'):\n"
            "    print(artifact.locate(name))\n"
            "m = artifact.read_manifest(artifact.locate('my-kernels'))\n"
            "print(m.package, m.build_hash, [e.name for e in m.libraries()])\n"
            "import sys; print('my_kernels' in sys.modules)\n")
    proc = in_fresh_python(code, site, tmp_path)
    assert proc.returncode == 0, proc.stderr
    build_hash = json.loads((tmp_path / "build" / "manifest.json").read_text())["build_hash"]
    assert proc.stdout.splitlines() == [
        "{'my-kernels': 'my_kernels'}", *[str(site / "my_kernels")] * 3,
        f"my-kernels 1.2.0 {build_hash} ['tiny_f16']",
        "False"]  # found without importing it


def test_locate_paths_and_unknown_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert artifact.locate(str(tmp_path / "x")) == tmp_path / "x"  # a path stays a path
    assert artifact.locate(Path("my-kernels")) == Path("my-kernels")  # so does a Path object
    (tmp_path / "here").mkdir()
    assert artifact.locate("here") == Path("here")  # a directory here wins over a package name
    monkeypatch.setattr(artifact, "installed_packages", lambda: {"other-kernels": "other_kernels"})
    with pytest.raises(LibraryError) as info:
        artifact.locate("my-kernels")
    assert str(info.value) == ("my-kernels: no such directory, and no installed kernel package is named 'my-kernels' "
                               "(installed: other-kernels); build it with: cutlass-splitk build <config.yaml> -o "
                               "my-kernels, or pip install the kernel package's wheel")


def test_package_errors_say_reinstall_and_newer_runtime_says_upgrade(tmp_path):
    site = tmp_path / "site"
    pip_install(package(built_dir(tmp_path / "build"), "my-kernels", "1.2.0", tmp_path / "dist").wheel, site)
    installed = site / "my_kernels"
    (installed / "libtiny_f16.so").write_bytes(b"corrupted")
    with pytest.raises(LibraryError) as info:
        list(read_manifest(installed).libraries())
    assert str(info.value) == (f"{installed}/libtiny_f16.so: contents differ from the build (SHA-256 mismatch: "
                               "truncated, corrupted or replaced); reinstall the kernel package my-kernels 1.2.0 (pip "
                               "install --force-reinstall <its wheel>)")
    # a package built for a newer runtime: upgrade the runtime (or get a build for this one)
    newer = built_dir(tmp_path / "newer", abi=ABI_VERSION + 1)
    (newer / artifact.PACKAGE_INFO).write_text(json.dumps({"name": "my-kernels", "version": "2.0.0"}))
    with pytest.raises(LibraryError) as info:
        read_manifest(newer)
    assert str(info.value) == (f"{newer}/manifest.json: built for a newer cutlass-splitk runtime (ABI version "
                               f"{ABI_VERSION + 1}; this runtime speaks {ABI_VERSION}); upgrade cutlass-splitk (pip "
                               "install -U cutlass-splitk), or install a build of my-kernels made for ABI version "
                               f"{ABI_VERSION}")
    (newer / artifact.PACKAGE_INFO).unlink()
    with pytest.raises(LibraryError) as info:
        read_manifest(newer)
    assert str(info.value).endswith(f"; upgrade cutlass-splitk (pip install -U cutlass-splitk), or rebuild it with: "
                                    f"cutlass-splitk build <config.yaml> -o {newer}")


def test_an_edited_build_hash_is_refused(tmp_path):
    out = built_dir(tmp_path / "build")
    manifest = json.loads((out / "manifest.json").read_text())
    real, manifest["build_hash"] = manifest["build_hash"], "0123456789abcdef"
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(LibraryError) as info:
        list(read_manifest(out).libraries(verify=False))
    assert str(info.value) == (f"{out}/manifest.json: build_hash '0123456789abcdef' is not that of the libraries it "
                               f"lists ({real}): the manifest was edited; rebuild it with: cutlass-splitk build "
                               f"<config.yaml> -o {out}")


def _objdump_versions(path: Path) -> set:
    import re
    import shutil

    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is not installed")
    out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\b((?:GLIBC|GLIBCXX|CXXABI|GCC)_[\d.]+)\b", out))


def test_elf_version_needs_matches_objdump():
    python = Path(sys.executable).resolve()
    needs = elf_version_needs(python.read_bytes())
    assert "libc.so.6" in needs
    assert {v for versions in needs.values() for v in versions} == _objdump_versions(python)
    newest = max(tuple(map(int, v[6:].split("."))) for v in needs["libc.so.6"] if v.startswith("GLIBC_"))
    assert glibc_needed([python.read_bytes()]) == ".".join(map(str, newest))
    assert elf_version_needs(b"not an elf") == {} and elf_version_needs(SO) == {}
    assert glibc_needed([SO]) is None


def test_module_name():
    assert module_name("My.Kernels--x_y") == "my_kernels_x_y"


# --- the real thing: build -> package -> pip install -> load (CPU: load binds the libraries) ---------------


@pytest.mark.nvcc
def test_package_install_load(tiny_build, tmp_path):
    pytest.importorskip("torch", reason="load() needs torch")
    done = package(tiny_build.out, "tiny-kernels", "0.3.0", tmp_path / "dist")
    wheel = done.wheel
    so = tiny_build.out / "libtiny_f16.so"
    glibc = {v for v in _objdump_versions(so) if v.startswith("GLIBC_")}
    assert done.glibc == max(glibc, key=lambda v: tuple(map(int, v[6:].split("."))))[6:]
    site = tmp_path / "site"
    pip_install(wheel, site)
    assert sorted(p.name for p in (site / "tiny_kernels").iterdir() if p.name != "__pycache__") == [
        "__init__.py", "kernel_package.json", "libcks_pycall.so", "libtiny_f16.so", "manifest.json"]
    code = ("import sys, cutlass_splitk\n"
            "lib = cutlass_splitk.load('tiny-kernels')\n"
            "print(lib.directory, lib.ops, lib.build_hash, lib.variants('tiny_f16'))\n"
            "import tiny_kernels\n"
            "print(tiny_kernels.load().build_hash, tiny_kernels.VERSION)\n"
            "print(sorted(m for m in sys.modules if m.startswith('cutlass_splitk.') and m.split('.')[1] in "
            "('build', 'toolchain', 'cudakit', 'codegen', 'config')))\n")
    proc = in_fresh_python(code, site, tmp_path)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(tiny_build.manifest_text)
    variants = [v["name"] for v in manifest["ops"]["tiny_f16"]["variants"]]
    assert proc.stdout.splitlines() == [
        f"{site / 'tiny_kernels'} ['tiny_f16'] {manifest['build_hash']} {variants}",
        f"{manifest['build_hash']} 0.3.0",
        "[]"]  # loading imported nothing of the build side
