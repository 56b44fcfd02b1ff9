"""The compiler side of a build: finding nvcc and the CUTLASS headers, the compile and link
commands, and the template directories a unit compiles against (and their digest, part of
the object cache key).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from . import backends, codegen
from .fsutil import sha256_parts

SHARED = ""  # the template_dirs key of the shared templates (codegen.TEMPLATE_DIR)


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


# --- discovery ---------------------------------------------------------------------------------


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


def default_toolchain() -> "Toolchain":
    return Toolchain(find_nvcc(), find_cutlass())


# --- commands ------------------------------------------------------------------------------------


def default_template_dirs() -> Dict[str, Path]:
    """The package's template directories: the shared one and each backend's."""
    return {SHARED: codegen.TEMPLATE_DIR, **{name: b.TEMPLATE_DIR for name, b in backends.BACKENDS.items()}}


@dataclass(frozen=True)
class Toolchain:
    nvcc: Path
    cutlass: Cutlass
    extra_flags: tuple = ()
    # Overrides of default_template_dirs() (key SHARED or a backend name), e.g. a copied tree.
    template_dirs: Optional[Mapping[str, Path]] = None

    @property
    def fingerprint(self) -> str:
        return f"nvcc {nvcc_version(str(self.nvcc))}; cutlass {self.cutlass.version}"

    def include_dirs(self, backend: str = "") -> Tuple[Path, ...]:
        """The template directories a unit of ``backend`` compiles against ("" for a unit of
        the shared templates only): the shared one first."""
        dirs = {**default_template_dirs(), **(self.template_dirs or {})}
        return (dirs[SHARED],) + ((dirs[backend],) if backend else ())

    def templates_digest(self, backend: str = "") -> bytes:
        """Every file under :meth:`include_dirs` (relative path and bytes, sorted): a header
        added to or edited in a template directory changes it."""
        parts: List[bytes] = []
        for d in self.include_dirs(backend):
            for p in sorted(d.rglob("*"), key=lambda p: p.relative_to(d).as_posix()):
                if p.is_file():
                    parts += [p.relative_to(d).as_posix().encode(), p.read_bytes()]
        return sha256_parts(*parts).encode()

    def compile_command(self, source: Path, output: Path, targets: Sequence[str], backend: str = "") -> List[str]:
        """``targets``: the unit's -gencode targets, e.g. ("80", "90") or ("90a",)."""
        cmd = [str(self.nvcc), "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr",
               "-Xcompiler=-fPIC,-fvisibility=hidden", "-Xcudafe", "--diag_suppress=177"]
        for target in targets:
            cmd += [f"-gencode=arch=compute_{target},code=sm_{target}"]
        cmd += [f"-I{d}" for d in self.include_dirs(backend)]
        cmd += [f"-I{self.cutlass.include}", f"-I{self.cutlass.util_include}"]
        cmd += list(self.extra_flags)
        return cmd + ["-c", str(source), "-o", str(output)]

    def link_command(self, objects: Sequence[Path], output: Path) -> List[str]:
        return [str(self.nvcc), "-shared", "-cudart=static", "-Xcompiler=-fvisibility=hidden",
                "-Xlinker=--exclude-libs,ALL", *map(str, objects), "-o", str(output)]


def run(cmd: Sequence[str], what: str, hint: str) -> float:
    """Runs a tool; raises BuildError with its output unless it exits 0. Returns seconds."""
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BuildError(what, cmd, str(exc), hint) from None
    if proc.returncode != 0:
        raise BuildError(f"{what} (exit code {proc.returncode})", cmd, proc.stdout + proc.stderr, hint)
    return time.monotonic() - start
