"""Finding the compilers and headers a build uses, and saying where each came from.

* nvcc: ``$CUDA_HOME/bin`` (or ``$CUDA_PATH``), else ``PATH``, else NVIDIA's pip wheels
  through ``cuda-pathfinder`` (``pip install 'cutlass-splitk[cuda]'`` installs a matched set).
* The CUDA wheels keep ``libcudart_static.a`` and ``libcudadevrt.a`` in ``<root>/lib``, which
  their ``nvcc.profile`` does not search (it names ``lib64``): :func:`link_dirs` adds it.
* The wheels must come from one CUDA release: nvvm (cicc) newer than ptxas gives
  ``ptxas ... Unsupported .version 9.5; current version is '9.0'``. :func:`check_wheels`
  refuses such a mix before anything compiles.
* The host compiler nvcc runs, and its version (part of the object cache key).
* CUTLASS: ``$CUTLASS_PATH``, else the nvidia-cutlass wheel; its version is read from the
  headers actually used (``cutlass/version.h``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from .buildenv import BuildError

# The wheels an nvcc from pip needs, all from the release of nvidia-cuda-nvcc (the
# cuda-toolkit metapackage's extras "nvcc" and "cccl" pin exactly these together).
CUDA_WHEELS = ("nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime", "nvidia-cuda-cccl")
WHEEL_FIX = "pip install 'cuda-toolkit[nvcc,cccl]==13.0.*' (what pip install 'cutlass-splitk[cuda]' installs)"


# --- nvcc --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Nvcc:
    path: Path
    via: str  # "CUDA_HOME", "CUDA_PATH", "PATH" or "cuda-pathfinder"


def _pathfinder_nvcc() -> Optional[str]:
    """nvcc from NVIDIA's wheels (or conda), as cuda-pathfinder finds it; None without it."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:  # cuda-pathfinder missing or older than 1.3.4
        return None
    try:
        return find_nvidia_binary_utility("nvcc")
    except Exception:  # noqa: BLE001 - any failure there means "not found" here
        return None


def locate_nvcc(env: Mapping[str, str] = os.environ) -> Nvcc:
    """nvcc from ``$CUDA_HOME/bin`` (``$CUDA_PATH``), else PATH, else cuda-pathfinder."""
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = env.get(variable)
        if home:
            candidate = Path(home) / "bin" / "nvcc"
            if candidate.is_file():
                return Nvcc(candidate, variable)
            raise BuildError("nvcc not found", [], f"{variable}={home} has no bin/nvcc",
                             f"Set {variable} to a CUDA toolkit (12.x or 13.x) or unset it to use nvcc from PATH "
                             "or from pip (pip install 'cutlass-splitk[cuda]').")
    found = shutil.which("nvcc", path=env.get("PATH", os.defpath))
    if found:
        return Nvcc(Path(found), "PATH")
    found = _pathfinder_nvcc()
    if found:
        return Nvcc(Path(found), "cuda-pathfinder")
    raise BuildError("nvcc not found", [], "nvcc is not on PATH, CUDA_HOME is not set, and cuda-pathfinder found "
                     "no CUDA wheel with nvcc",
                     "pip install 'cutlass-splitk[cuda]' (a version-matched CUDA toolchain from NVIDIA's wheels), "
                     "or install the CUDA toolkit and put its bin/ on PATH, or set CUDA_HOME.")


def find_nvcc() -> Path:
    return locate_nvcc().path


@lru_cache(maxsize=None)
def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"release [\d.]+, V([\d.]+)", out)
    return match.group(1) if match else out.strip().splitlines()[-1] if out.strip() else "unknown"


def cuda_root(nvcc: Path) -> Path:
    return Path(nvcc).resolve().parent.parent


def link_dirs(nvcc: Path) -> Tuple[Path, ...]:
    """``-L`` directories the link needs beyond nvcc.profile's: a wheel layout's ``lib/``
    (no ``lib64/``, no ``targets/``) holding the static CUDA runtime."""
    root = cuda_root(nvcc)
    lib = root / "lib"
    if (lib / "libcudart_static.a").is_file() and not (root / "lib64").exists() and not (root / "targets").exists():
        return (lib,)
    return ()


@lru_cache(maxsize=None)
def nvcc_search_dirs(nvcc: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(include dirs, library dirs) nvcc's own profile adds, from ``nvcc --dryrun``."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([nvcc, "--dryrun", "-shared", "-cudart=static", "probe.o", "-o", "probe.so"],
                              capture_output=True, text=True, check=False, cwd=tmp)
    found: Dict[str, List[str]] = {"INCLUDES": [], "LIBRARIES": []}
    for line in (proc.stdout + proc.stderr).splitlines():
        match = re.match(r"#\$ (INCLUDES|LIBRARIES)=(.*)$", line)
        if match:
            words = shlex.split(match.group(2))
            prefix = "-I" if match.group(1) == "INCLUDES" else "-L"
            found[match.group(1)] += [os.path.normpath(w[2:]) for w in words if w.startswith(prefix)]
    return tuple(found["INCLUDES"]), tuple(found["LIBRARIES"])


def static_runtime(nvcc: Path) -> Optional[Path]:
    """The ``libcudart_static.a`` the link will use, or None."""
    dirs = [Path(d) for d in nvcc_search_dirs(str(nvcc))[1]] + list(link_dirs(nvcc))
    for d in dirs:
        if (d / "libcudart_static.a").is_file():
            return (d / "libcudart_static.a").resolve()
    return None


# --- the CUDA wheels ---------------------------------------------------------------------------


def wheel_versions(nvcc: Path) -> Dict[str, str]:
    """For an nvcc from NVIDIA's wheels (``site-packages/nvidia/cu13/bin/nvcc``): the
    installed version of each of :data:`CUDA_WHEELS` in that site-packages ({} otherwise,
    and for a copied tree without their metadata)."""
    root = cuda_root(nvcc)
    if root.parent.name != "nvidia":
        return {}
    site = root.parent.parent
    versions = {}
    for dist in importlib.metadata.distributions(path=[str(site)]):
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
        if name in CUDA_WHEELS:
            versions[name] = dist.version
    return versions if "nvidia-cuda-nvcc" in versions else {}


def _release(version: str) -> str:
    return ".".join(version.split(".")[:2])


def check_wheels(nvcc: Path) -> Dict[str, str]:
    """Raises BuildError unless every wheel nvcc needs is installed from nvcc's CUDA release
    (major.minor). Returns :func:`wheel_versions`."""
    versions = wheel_versions(nvcc)
    if not versions:
        return versions
    release = _release(versions["nvidia-cuda-nvcc"])
    missing = [w for w in CUDA_WHEELS if w not in versions]
    other = [f"{w} {v}" for w, v in versions.items() if _release(v) != release]
    if missing or other:
        problem = (f"missing: {', '.join(missing)}" if missing else "") + ("; " if missing and other else "") + \
                  (f"not from CUDA {release}: {', '.join(other)}" if other else "")
        raise BuildError(f"the CUDA wheels beside {nvcc} do not make a CUDA {release} toolchain ({problem})", [],
                         ", ".join(f"{w} {v}" for w, v in sorted(versions.items())),
                         f"Install one release of all of them: {WHEEL_FIX}. Mixed releases fail late, e.g. ptxas: "
                         "'Unsupported .version 9.5; current version is '9.0''.")
    return versions


# --- the host compiler -------------------------------------------------------------------------


@lru_cache(maxsize=None)
def tool_version(program: str) -> str:
    """The first line ``program --version`` prints ("" if it cannot run)."""
    try:
        out = subprocess.run([program, "--version"], capture_output=True, text=True, check=False, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.strip().splitlines()[0] if out.strip() else ""


def host_compiler(name: str) -> Tuple[str, str]:
    """(resolved path, or the name when it is not found; its ``--version`` first line)."""
    path = shutil.which(name)
    if path is None:
        return name, ""
    resolved = str(Path(path).resolve())
    return resolved, tool_version(resolved)


# --- CUTLASS -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cutlass:
    include: Path
    util_include: Path
    version: str
    via: str = ""  # "CUTLASS_PATH" or "nvidia-cutlass <version> wheel"


def cutlass_header_version(include: Path) -> str:
    """``MAJOR.MINOR.PATCH`` from ``include/cutlass/version.h``."""
    text = (include / "cutlass" / "version.h").read_text(errors="replace")
    parts = [re.search(rf"#define CUTLASS_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) if m else "?" for m in parts)


def find_cutlass(env: Mapping[str, str] = os.environ) -> Cutlass:
    """CUTLASS headers from ``$CUTLASS_PATH``, else the nvidia-cutlass wheel."""
    root_env = env.get("CUTLASS_PATH")
    if root_env:
        root, via = Path(root_env), "CUTLASS_PATH"
    else:
        spec = importlib.util.find_spec("cutlass_library")
        if spec is None or spec.origin is None:
            raise BuildError("CUTLASS headers not found", [], "the nvidia-cutlass package is not installed",
                             "pip install nvidia-cutlass (or set CUTLASS_PATH to a CUTLASS checkout).")
        root = Path(spec.origin).parent / "source"
        try:
            via = f"nvidia-cutlass {importlib.metadata.version('nvidia-cutlass')} wheel"
        except importlib.metadata.PackageNotFoundError:
            via = "cutlass_library"
    include = root / "include"
    if not (include / "cutlass" / "cutlass.h").is_file():
        raise BuildError("CUTLASS headers not found", [], f"{include}/cutlass/cutlass.h does not exist",
                         "Reinstall nvidia-cutlass or point CUTLASS_PATH at a CUTLASS source tree.")
    try:
        version = cutlass_header_version(include)
    except OSError:
        raise BuildError("CUTLASS headers not found", [], f"{include}/cutlass/version.h cannot be read",
                         "Reinstall nvidia-cutlass or point CUTLASS_PATH at a CUTLASS source tree.") from None
    return Cutlass(include, root / "tools" / "util" / "include", version, via)


__all__ = ["CUDA_WHEELS", "Cutlass", "Nvcc", "check_wheels", "cuda_root", "cutlass_header_version", "find_cutlass",
           "find_nvcc", "host_compiler", "link_dirs", "locate_nvcc", "nvcc_search_dirs", "nvcc_version",
           "static_runtime", "tool_version", "wheel_versions"]
