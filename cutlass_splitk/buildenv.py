"""The build's conventions from the environment, and running tools.

Read by ``cutlass-splitk build`` (each read here, in one place, and shown by ``cutlass-splitk
doctor``), following torch.utils.cpp_extension, CMake and FlashInfer:

* ``MAX_JOBS``: parallel nvcc jobs (``-j`` overrides it). Default: the CPUs this process may
  run on (``os.sched_getaffinity``), at most one job per ``GB_PER_JOB`` GB of ``MemAvailable``
  (the default config's largest unit peaks at 7.4 GB in cicc: the chain op's six sm90 groups with the
  kernel in them; its other units at 0.8-7.2 GB).
* ``CUTLASS_SPLITK_CUDA_ARCH_LIST``: ``TORCH_CUDA_ARCH_LIST`` syntax (``"8.0;9.0+PTX"``,
  ``"8.6 8.9"``, ``"Ampere"``); replaces the -gencode targets of every unit whose targets are
  all forward compatible (the sm80 backend's). Arch-specific targets (``90a``) are never
  overridden; the build leaves out what does not run on the list (config.for_targets: the sm90
  grids without a 9.0 target, sm80 groups over a target's shared memory).
* ``CUTLASS_SPLITK_NVCC_FLAGS`` / ``CUTLASS_SPLITK_LDFLAGS``: extra flags for every compile /
  link (shell syntax).
* ``CUTLASS_SPLITK_COMPILER_LAUNCHER``: a command put in front of every compile (like
  ``CMAKE_CUDA_COMPILER_LAUNCHER``), e.g. ``sccache`` or ``ccache``.
* ``NVCC_PREPEND_FLAGS`` / ``NVCC_APPEND_FLAGS`` / ``NVCC_CCBIN``: read by nvcc itself; they
  change the objects, so they are part of the object cache key.

Imports nothing from the package.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

GB_PER_JOB = 7.5
NVCC_ENV = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN")
ARCH_LIST_ENV = "CUTLASS_SPLITK_CUDA_ARCH_LIST"
LAUNCHER_ENV = "CUTLASS_SPLITK_COMPILER_LAUNCHER"
NVCC_FLAGS_ENV = "CUTLASS_SPLITK_NVCC_FLAGS"
LDFLAGS_ENV = "CUTLASS_SPLITK_LDFLAGS"
OLDEST_ARCH = 80  # the sm80 backend's kernels (cp.async, bf16 mma) need sm_80
# TORCH_CUDA_ARCH_LIST's names of the architectures these kernels run on.
NAMED_ARCHS = {"ampere": ("8.0", "8.6"), "ada": ("8.9",), "hopper": ("9.0",)}


class BuildError(RuntimeError):
    """A build step failed. Carries the command, where it ran, and the tool's output."""

    def __init__(self, what: str, command: Sequence[str], log: str, hint: str = "", cwd: Optional[Path] = None):
        self.what = what
        self.command = list(command)
        self.cwd = cwd
        self.log = log
        self.hint = hint
        tail = log if len(log) < 20000 else "...\n" + log[-20000:]
        shown = shlex.join(self.command) if cwd is None else f"cd {shlex.quote(str(cwd))} && {shlex.join(self.command)}"
        super().__init__(
            f"{what}\ncommand: {shown}\n--- output ---\n{tail.rstrip()}\n--- end ---" + (f"\n{hint}" if hint else "")
        )


def run(cmd: Sequence[str], what: str, hint: str, cwd: Optional[Path] = None) -> float:
    """Runs a tool (in ``cwd``); raises BuildError with its output unless it exits 0.
    Returns its wall-clock seconds."""
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=cwd)
    except OSError as exc:
        raise BuildError(what, cmd, str(exc), hint, cwd) from None
    if proc.returncode != 0:
        raise BuildError(f"{what} (exit code {proc.returncode})", cmd, proc.stdout + proc.stderr, hint, cwd)
    return time.monotonic() - start


def _config_error(variable: str, value: str, problem: str, hint: str) -> BuildError:
    return BuildError(f"{variable}={value!r}: {problem}", [], "", hint)


# --- jobs --------------------------------------------------------------------------------------


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def mem_available_gb(meminfo: Path = Path("/proc/meminfo")) -> Optional[float]:
    """``MemAvailable`` in GB (10^9 bytes), or None where /proc/meminfo does not say."""
    try:
        match = re.search(r"^MemAvailable:\s+(\d+) kB$", meminfo.read_text(), re.M)
    except OSError:
        return None
    return int(match.group(1)) * 1024 / 1e9 if match else None


@dataclass(frozen=True)
class Jobs:
    count: int
    why: str  # how it was chosen, for doctor and the build's summary


def default_jobs(env: Mapping[str, str] = os.environ, cpus: Optional[int] = None,
                 meminfo: Path = Path("/proc/meminfo")) -> Jobs:
    """``MAX_JOBS`` if set, else usable CPUs bounded by available memory."""
    value = env.get("MAX_JOBS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise _config_error("MAX_JOBS", value, "not a positive integer",
                                "Set MAX_JOBS to the number of parallel nvcc jobs, e.g. MAX_JOBS=4, or unset it.")
        return Jobs(int(value), "MAX_JOBS")
    cpus = usable_cpus() if cpus is None else cpus
    mem_gb = mem_available_gb(meminfo)
    if mem_gb is None:
        return Jobs(cpus, f"{cpus} usable CPUs")
    by_memory = max(1, int(mem_gb // GB_PER_JOB))
    return Jobs(min(cpus, by_memory),
                f"{cpus} usable CPUs, {mem_gb:.1f} GB available / {GB_PER_JOB:g} GB per nvcc = {by_memory}")


# --- targets -----------------------------------------------------------------------------------

_ARCH_RE = re.compile(r"^(\d+)\.(\d)([af]?)(\+PTX)?$")


def parse_arch_list(value: str) -> Tuple[str, ...]:
    """``TORCH_CUDA_ARCH_LIST`` syntax → -gencode targets: ``"8.0;9.0+PTX"`` →
    ``("80", "90+PTX")``. Entries are separated by ``;`` or whitespace; ``+PTX`` embeds PTX of
    that target (only there: an explicit list gets exactly what it names)."""
    targets: List[str] = []
    for raw in re.split(r"[;\s]+", value.strip()):
        if not raw:
            continue
        names = NAMED_ARCHS.get(raw.lower().replace("+ptx", ""))
        if names:  # "Ampere+PTX": PTX for the newest of the family, as torch does
            entries = list(names[:-1]) + [names[-1] + ("+PTX" if raw.lower().endswith("+ptx") else "")]
        else:
            entries = [raw]
        for entry in entries:
            match = _ARCH_RE.match(entry)
            if not match:
                raise _config_error(ARCH_LIST_ENV, value, f"{entry!r} is not an architecture",
                                    "Use TORCH_CUDA_ARCH_LIST syntax: e.g. '8.0;9.0+PTX' or '8.6 8.9' "
                                    f"(names: {', '.join(n.title() for n in NAMED_ARCHS)}).")
            major, minor, suffix, ptx = match.groups()
            arch = f"{major}{minor}{suffix}"
            if int(f"{major}{minor}") < OLDEST_ARCH:
                raise _config_error(ARCH_LIST_ENV, value, f"{entry} is older than sm_{OLDEST_ARCH}, the oldest "
                                    "architecture these kernels run on", "Remove it from the list.")
            if suffix and ptx:
                raise _config_error(ARCH_LIST_ENV, value, f"{entry}: an arch-specific target ({arch}) has no "
                                    "forward-compatible PTX", f"Write {major}.{minor}+PTX, or drop '+PTX'.")
            target = arch + ("+PTX" if ptx else "")
            if target not in targets:
                targets.append(target)
    if not targets:
        raise _config_error(ARCH_LIST_ENV, value, "empty", f"Unset {ARCH_LIST_ENV} to use each op's arch: list.")
    return tuple(targets)


def is_arch_specific(target: str) -> bool:
    """``90a`` / ``100f``: cubins for exactly that architecture (family); no PTX fallback."""
    return not target.split("+")[0].isdigit()


def gencode_flags(targets: Sequence[str], override: Optional[Sequence[str]] = None) -> List[str]:
    """The -gencode flags of a unit whose backend chose ``targets``.

    ``override`` (a parsed ``CUTLASS_SPLITK_CUDA_ARCH_LIST``) replaces the targets of a unit
    whose targets are all forward compatible, with PTX only where it says ``+PTX``. Without
    it, PTX is embedded for the newest forward-compatible target, so the library still loads
    on GPUs newer than any listed (sm_100 and sm_120 reject sm_80/sm_90 cubins). Arch-specific
    targets never get PTX and are never overridden."""
    explicit = override is not None and not any(is_arch_specific(t) for t in targets)
    entries = list(override) if explicit else [t.replace("+PTX", "") for t in targets]
    plain = [int(t.split("+")[0]) for t in entries if not is_arch_specific(t)]
    newest = max(plain) if plain else None
    flags = []
    for entry in entries:
        arch = entry.split("+")[0]
        ptx = entry.endswith("+PTX") if explicit else (not is_arch_specific(arch) and int(arch) == newest)
        code = f"[sm_{arch},compute_{arch}]" if ptx else f"sm_{arch}"
        flags.append(f"-gencode=arch=compute_{arch},code={code}")
    return flags


# --- flags and launcher ------------------------------------------------------------------------


def split_flags(env: Mapping[str, str], variable: str) -> Tuple[str, ...]:
    value = env.get(variable, "")
    try:
        return tuple(shlex.split(value))
    except ValueError as exc:
        raise _config_error(variable, value, f"not valid shell syntax ({exc})", "Fix the quoting.") from None


@dataclass(frozen=True)
class Settings:
    """Everything the environment says about a build (see the module docstring)."""

    nvcc_flags: Tuple[str, ...] = ()
    link_flags: Tuple[str, ...] = ()
    launcher: Tuple[str, ...] = ()
    arch_list: Optional[Tuple[str, ...]] = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Settings":
        arch = env.get(ARCH_LIST_ENV, "").strip()
        return cls(split_flags(env, NVCC_FLAGS_ENV), split_flags(env, LDFLAGS_ENV), split_flags(env, LAUNCHER_ENV),
                   parse_arch_list(arch) if arch else None)


def nvcc_environment(env: Mapping[str, str] = os.environ) -> Tuple[Tuple[str, str], ...]:
    """The variables nvcc reads itself that are set (they change the objects)."""
    return tuple((name, env[name]) for name in NVCC_ENV if env.get(name))


def _words(value: str) -> List[str]:
    try:
        return shlex.split(value)
    except ValueError:  # nvcc will complain about it itself
        return value.split()


def host_compiler_name(flags: Sequence[str], env: Mapping[str, str] = os.environ) -> str:
    """The host compiler nvcc will run: ``-ccbin``/``--compiler-bindir`` in its flags (the
    last wins; ``NVCC_APPEND_FLAGS`` come last), else ``NVCC_CCBIN``, else ``gcc`` (nvcc's
    default on Linux). A directory means the ``gcc`` in it."""
    words = [*_words(env.get("NVCC_PREPEND_FLAGS", "")), *flags, *_words(env.get("NVCC_APPEND_FLAGS", ""))]
    found = None
    for i, word in enumerate(words):
        for name in ("-ccbin", "--compiler-bindir"):
            if word == name and i + 1 < len(words):
                found = words[i + 1]
            elif word.startswith(name + "="):
                found = word.split("=", 1)[1]
    name = found or env.get("NVCC_CCBIN") or "gcc"
    return str(Path(name) / "gcc") if os.path.isdir(name) else name


__all__ = ["BuildError", "Jobs", "Settings", "default_jobs", "gencode_flags", "host_compiler_name",
           "is_arch_specific", "mem_available_gb", "nvcc_environment", "parse_arch_list", "run", "usable_cpus"]
