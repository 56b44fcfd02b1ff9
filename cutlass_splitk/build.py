"""Generated sources → shared libraries, in parallel, cached by content hash.

Each translation unit compiles to an object whose cache key is
sha256(source + hand-written headers + full nvcc command + nvcc version + CUTLASS version);
each op links its objects into ``lib<op>.so`` (CUDA runtime linked statically, only the
``extern "C"`` entry points exported). The manifest is written last, atomically: a failed
build leaves the previous manifest (and libraries it names) untouched.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, TextIO

from . import codegen
from .config import Config, load_config
from .hashing import file_sha256

MANIFEST = "manifest.json"
HEADERS = ("cks_kernels.cuh", "cks_abi.h")


class BuildError(RuntimeError):
    """A build step failed. Carries the command and the tool's output."""

    def __init__(self, what: str, command: Sequence[str], log: str, hint: str = ""):
        self.what = what
        self.command = list(command)
        self.log = log
        tail = log if len(log) < 20000 else "...\n" + log[-20000:]
        super().__init__(
            f"{what}\ncommand: {shlex.join(self.command)}\n--- output ---\n{tail.rstrip()}\n--- end ---"
            + (f"\n{hint}" if hint else "")
        )


# --- toolchain discovery -----------------------------------------------------------------------


def find_nvcc() -> Path:
    """nvcc from $CUDA_HOME/bin, else from PATH."""
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if cuda_home:
        candidate = Path(cuda_home) / "bin" / "nvcc"
        if candidate.is_file():
            return candidate
        raise BuildError("nvcc not found", [], f"CUDA_HOME={cuda_home} has no bin/nvcc",
                         "Set CUDA_HOME to a CUDA toolkit (12.x or 13.x) or unset it to use nvcc from PATH.")
    found = shutil.which("nvcc")
    if not found:
        raise BuildError("nvcc not found", [], "nvcc is not on PATH and CUDA_HOME is not set",
                         "Install the CUDA toolkit and put its bin/ on PATH, or set CUDA_HOME.")
    return Path(found)


@lru_cache(maxsize=None)
def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"release [\d.]+, V([\d.]+)", out)
    return match.group(1) if match else out.strip().splitlines()[-1] if out.strip() else "unknown"


@dataclass(frozen=True)
class Cutlass:
    include: Path
    util_include: Path
    version: str


def find_cutlass() -> Cutlass:
    """CUTLASS headers from the nvidia-cutlass wheel ($CUTLASS_PATH overrides)."""
    root_env = os.environ.get("CUTLASS_PATH")
    if root_env:
        root = Path(root_env)
    else:
        spec = importlib.util.find_spec("cutlass_library")
        if spec is None or spec.origin is None:
            raise BuildError("CUTLASS headers not found", [], "the nvidia-cutlass package is not installed",
                             "pip install nvidia-cutlass (or set CUTLASS_PATH to a CUTLASS checkout).")
        root = Path(spec.origin).parent / "source"
    include = root / "include"
    if not (include / "cutlass" / "cutlass.h").is_file():
        raise BuildError("CUTLASS headers not found", [], f"{include}/cutlass/cutlass.h does not exist",
                         "Reinstall nvidia-cutlass or point CUTLASS_PATH at a CUTLASS source tree.")
    try:
        version = importlib.metadata.version("nvidia-cutlass")
    except importlib.metadata.PackageNotFoundError:
        text = (include / "cutlass" / "version.h").read_text()
        parts = [re.search(rf"#define CUTLASS_{p} (\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
        version = ".".join(m.group(1) if m else "?" for m in parts)
    return Cutlass(include, root / "tools" / "util" / "include", version)


def default_cache_dir() -> Path:
    env = os.environ.get("CUTLASS_SPLITK_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cutlass-splitk"


# --- commands ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Toolchain:
    nvcc: Path
    cutlass: Cutlass
    extra_flags: tuple = ()

    @property
    def fingerprint(self) -> str:
        return f"nvcc {nvcc_version(str(self.nvcc))}; cutlass {self.cutlass.version}"

    def compile_command(self, source: Path, output: Path, archs: Sequence[int]) -> List[str]:
        cmd = [str(self.nvcc), "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr",
               "-Xcompiler=-fPIC,-fvisibility=hidden", "-Xcudafe", "--diag_suppress=177"]
        for arch in archs:
            cmd += [f"-gencode=arch=compute_{arch},code=sm_{arch}"]
        cmd += [f"-I{codegen.TEMPLATE_DIR}", f"-I{self.cutlass.include}", f"-I{self.cutlass.util_include}"]
        cmd += list(self.extra_flags)
        return cmd + ["-c", str(source), "-o", str(output)]

    def link_command(self, objects: Sequence[Path], output: Path) -> List[str]:
        return [str(self.nvcc), "-shared", "-cudart=static", "-Xcompiler=-fvisibility=hidden",
                "-Xlinker=--exclude-libs,ALL", *map(str, objects), "-o", str(output)]


def _sha256(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


@lru_cache(maxsize=None)
def _headers_digest() -> bytes:
    return b"".join((codegen.TEMPLATE_DIR / h).read_bytes() for h in HEADERS)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(cmd: Sequence[str], what: str, hint: str) -> float:
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BuildError(what, cmd, str(exc), hint) from None
    if proc.returncode != 0:
        raise BuildError(f"{what} (exit code {proc.returncode})", cmd, proc.stdout + proc.stderr, hint)
    return time.monotonic() - start


def _cached(cache: Path, key: str, suffix: str, make: Callable[[Path], None]) -> Path:
    """Returns the cache entry for ``key``, producing it with ``make(tmp)`` under a lock.
    An entry exists only once completely written (temp file + os.replace)."""
    final = cache / key[:2] / f"{key}{suffix}"
    if final.is_file():
        return final
    with _locked(cache / "locks" / f"{key}.lock"):
        if final.is_file():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{key}.{os.getpid()}.tmp{suffix}")
        try:
            make(tmp)
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
    return final


# --- progress --------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal, one line per step otherwise."""

    def __init__(self, total: int, stream: Optional[TextIO] = None, enabled: bool = True):
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.enabled and self.stream.isatty()
        self.start = time.monotonic()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = width * self.done // self.total
        bar = "#" * filled + "." * (width - filled)
        line = f"[{bar}] {self.done}/{self.total} {time.monotonic() - self.start:6.1f}s {label}"
        if self.tty:
            self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


# --- the build ---------------------------------------------------------------------------------


@dataclass
class BuildResult:
    out_dir: Path
    manifest: dict
    compiled: int = 0  # objects compiled (cache misses)
    linked: int = 0  # libraries re-linked or copied
    seconds: float = 0.0
    libraries: Dict[str, Path] = field(default_factory=dict)


def build(
    config_path: Path,
    out_dir: Optional[Path] = None,
    generated_dir: Path = Path("generated"),
    jobs: Optional[int] = None,
    cache_dir: Optional[Path] = None,
    ops: Optional[Sequence[str]] = None,
    progress: bool = True,
    toolchain: Optional[Toolchain] = None,
) -> BuildResult:
    """Validates, generates, compiles and links ``config_path``; writes the manifest last."""
    start = time.monotonic()
    config = load_config(config_path)  # raises ConfigError before anything is written
    if ops:
        unknown = sorted(set(ops) - {o.name for o in config.ops})
        if unknown:
            raise BuildError(f"unknown op(s) {', '.join(unknown)} in {config_path}", [], "",
                             "Valid ops: " + ", ".join(o.name for o in config.ops))
        config = Config(config.path, tuple(o for o in config.ops if o.name in ops), config.pruned)
    toolchain = toolchain or Toolchain(find_nvcc(), find_cutlass())
    out_dir = Path(out_dir) if out_dir is not None else Path("build") / config.stem
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    src_dir = Path(generated_dir) / config.stem
    units, _ = codegen.write_sources(config, src_dir) if not ops else (_write_subset(config, src_dir), 0)
    fingerprint = toolchain.fingerprint.encode()
    archs = {o.name: o.archs for o in config.ops}

    jobs = max(1, jobs or os.cpu_count() or 1)
    bar = Progress(len(units), enabled=progress)
    result = BuildResult(out_dir, {})
    counter_lock = threading.Lock()

    def compile_unit(unit: codegen.SourceUnit) -> Path:
        source = (src_dir / unit.relpath).resolve()
        # The key leaves out where the source and object live: the same text and flags
        # give the same object in any checkout or generated directory.
        probe = toolchain.compile_command(Path("SRC.cu"), Path("OUT.o"), archs[unit.op])
        key = _sha256(unit.text.encode(), _headers_digest(), "\0".join(probe).encode(), fingerprint)

        def make(tmp: Path) -> None:
            hint = (f"The generated source is {source}. If the config is valid, this is a bug in "
                    "cutlass-splitk: report it with this log.")
            _run(toolchain.compile_command(source, tmp, archs[unit.op]), f"nvcc failed on {unit.relpath}", hint)
            with counter_lock:
                result.compiled += 1

        obj = _cached(cache, key, ".o", make)
        bar.step(unit.relpath)
        return obj

    objects: Dict[str, List[Path]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(compile_unit, u): u for u in units}
        try:
            for fut in concurrent.futures.as_completed(futures):
                objects.setdefault(futures[fut].op, []).append(fut.result())
        except BaseException:
            for f in futures:
                f.cancel()
            raise

    # Link every op into the cache first: a failed link leaves the output directory as it was.
    linked: Dict[str, Path] = {}
    for op in config.ops:
        objs = sorted(objects[op.name], key=lambda p: p.name)
        key = _sha256(*(o.name.encode() for o in objs), "\0".join(toolchain.link_command([], Path())).encode())

        def make_so(tmp: Path, objs=objs, name=op.name) -> None:
            _run(toolchain.link_command(objs, tmp), f"linking lib{name}.so failed",
                 "Check that the CUDA toolkit's static runtime (libcudart_static.a) is installed.")

        linked[op.name] = _cached(cache, key, ".so", make_so)

    libraries: Dict[str, dict] = {}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, cached_so in linked.items():
            so_name = f"lib{name}.so"
            target = out_dir / so_name
            digest = file_sha256(cached_so)
            if target.is_symlink() or not target.is_file() or file_sha256(target) != digest:
                tmp = target.with_name(f".{so_name}.{os.getpid()}.tmp")
                shutil.copyfile(cached_so, tmp)
                os.replace(tmp, target)
                result.linked += 1
            libraries[name] = {"file": so_name, "sha256": digest}
            result.libraries[name] = target
        manifest = {
            "abi_version": codegen.ABI_VERSION,
            "config": codegen.display_path(config.path),
            "toolchain": toolchain.fingerprint,
            "build_hash": _sha256(*(l["sha256"].encode() for l in libraries.values()))[:16],
            "libraries": libraries,
            "ops": {op.name: codegen.describe(op) for op in config.ops},
        }
        codegen.write_if_different(out_dir / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        raise BuildError(f"cannot write the output directory {out_dir}", [], f"{type(exc).__name__}: {exc}",
                         "Choose a writable directory with -o (it must not be an existing file).") from None
    result.manifest = manifest
    result.seconds = time.monotonic() - start
    return result


def _write_subset(config: Config, src_dir: Path) -> List[codegen.SourceUnit]:
    """Writes only the selected ops' sources (no stale-file cleanup: other ops may be there)."""
    units = codegen.render(config)
    for u in units:
        codegen.write_if_different(src_dir / u.relpath, u.text)
    return units
