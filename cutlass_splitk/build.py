"""Validated config → shared libraries: validate, render, write the sources to
``<out>/src/``, compile every unit in parallel through a content-hash cache, link each op,
and write the compile database and the manifest last.

Each translation unit compiles to an object whose cache key is sha256(source + every file of
the template directories it compiles against + full nvcc command + nvcc version + the
variables nvcc reads itself + host compiler and version + CUTLASS version); each op links its
objects into ``lib<op>.so`` (CUDA runtime linked statically, only the ``extern "C"`` entry
points exported).

nvcc compiles a byte-identical copy of the unit staged under
``$TMPDIR/cutlass-splitk-<uid>/stage/<object key>/`` (cwd) by its relative path, removed
after a successful compile and kept after a failed one (the printed command can be pasted):
nothing nvcc sees depends on the output or cache directory, so neither does the object cache
key nor a compiler launcher's cache (sccache hashes nvcc's device-side steps with the absolute
source path). ``compile_commands.json`` names the sources under ``<out>/src``.

The manifest is written last, atomically: a failed build leaves the previous manifest (and
libraries it names, and ``compile_commands.json``) untouched. A build writes only under the
output directory, the cache and the staging directory: never into ``generated/``
(``cutlass-splitk generate`` writes that).

The runner is a thread pool, not ninja: the content-hash cache already does what ninja's
mtimes and depfiles would (and more: it is shared between output directories, see README
"Building at scale"), and with nvcc's minutes per unit the scheduler's overhead is noise.
"""

from __future__ import annotations

import concurrent.futures
import json
import shutil
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from . import artifact, backends, codegen
from .config import Config, for_targets, load_config
from .buildenv import ARCH_LIST_ENV, BuildError, default_jobs, run
from .fsutil import atomic_output, cache_root, file_sha256, locked, sha256_parts, staging_root, write_if_different
from .toolchain import NATIVE_DIR, PYCALL_LIBRARY, Toolchain, default_toolchain

COMPILE_COMMANDS = "compile_commands.json"

__all__ = ["BuildError", "BuildResult", "Progress", "build"]


def _cached(cache: Path, key: str, suffix: str, make: Callable[[Path], None]) -> Path:
    """Returns the cache entry for ``key``, producing it with ``make(tmp)`` under a lock.
    An entry exists only once completely written (temp file + os.replace)."""
    final = cache / key[:2] / f"{key}{suffix}"
    if final.is_file():
        return final
    with locked(cache / "locks" / f"{key}.lock"):
        if final.is_file():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(final) as tmp:
            make(tmp)
    return final


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


@dataclass
class BuildResult:
    out_dir: Path
    manifest: dict
    compiled: int = 0  # objects compiled (cache misses)
    linked: int = 0  # libraries re-linked or copied
    seconds: float = 0.0
    libraries: Dict[str, Path] = field(default_factory=dict)
    jobs: int = 1
    launcher: str = ""  # the compiler launcher's program name, if any (its cache may have served "compiled" units)
    unit_seconds: Dict[str, float] = field(default_factory=dict)  # relpath -> nvcc seconds, compiled units only
    pycall: Optional[Path] = None  # the C call path's library (None: no Python headers here)
    notes: List[str] = field(default_factory=list)  # what the build left out, and why

    def slowest(self, n: int = 5) -> List[tuple]:
        """The ``n`` slowest compiled units: [(seconds, relpath), ...], slowest first."""
        return sorted(((s, u) for u, s in self.unit_seconds.items()), reverse=True)[:n]


def compile_order(units: Sequence[codegen.SourceUnit]) -> List[codegen.SourceUnit]:
    """The order the pool starts ``units`` in: each distinct text once, the slowest backends' units first (their
    ``UNIT_SECONDS``; ``library.cu`` last, 1-2 s), so that the jobs end close together; then the repeats (the partial
    GEMMs that ops share), which wait for the first compile and take its object instead of holding a job while it
    runs. Stable: the config's order within each backend."""
    def seconds(unit: codegen.SourceUnit) -> float:
        return backends.get(unit.backend).UNIT_SECONDS if unit.backend else 0.0

    seen = set()
    first: List[codegen.SourceUnit] = []
    repeats: List[codegen.SourceUnit] = []
    for unit in units:
        (repeats if (unit.backend, unit.text) in seen else first).append(unit)
        seen.add((unit.backend, unit.text))
    return sorted(first, key=seconds, reverse=True) + sorted(repeats, key=seconds, reverse=True)


def python_include() -> Optional[Path]:
    """This interpreter's header directory, where it has Python.h (the C call path needs it)."""
    include = Path(sysconfig.get_paths()["include"])
    return include if (include / "Python.h").is_file() else None


def _install(cached: Path, target: Path) -> Tuple[str, bool]:
    """Copies ``cached`` to ``target`` unless it holds the same bytes: (their SHA-256, copied)."""
    digest = file_sha256(cached)
    if target.is_symlink() or not target.is_file() or file_sha256(target) != digest:
        with atomic_output(target) as tmp:
            shutil.copyfile(cached, tmp)
        return digest, True
    return digest, False


def _output_error(out_dir: Path, exc: OSError) -> BuildError:
    return BuildError(f"cannot write the output directory {out_dir}", [], f"{type(exc).__name__}: {exc}",
                      "Choose a writable directory with -o (it must not be an existing file).")


def build(
    config_path: Path,
    out_dir: Optional[Path] = None,
    jobs: Optional[int] = None,
    cache_dir: Optional[Path] = None,
    ops: Optional[Sequence[str]] = None,
    progress: bool = True,
    toolchain: Optional[Toolchain] = None,
) -> BuildResult:
    """Validates, generates (into ``out_dir/src``), compiles and links ``config_path``;
    writes ``compile_commands.json`` and the manifest last. ``out_dir`` defaults to
    ``build/<config stem>``; ``jobs`` to :func:`.buildenv.default_jobs` (``MAX_JOBS``)."""
    start = time.monotonic()
    config = load_config(config_path)  # raises ConfigError before anything is written
    if ops:
        unknown = sorted(set(ops) - {o.name for o in config.ops})
        if unknown:
            raise BuildError(f"unknown op(s) {', '.join(unknown)} in {config_path}", [], "",
                             "Valid ops: " + ", ".join(o.name for o in config.ops))
        config = Config(config.path, tuple(o for o in config.ops if o.name in ops), config.pruned)
    toolchain = toolchain or default_toolchain()
    left_out: List[str] = []
    if toolchain.arch_list:  # only the code that runs on the targets, and a manifest that says where it runs
        config, left_out = for_targets(config, toolchain.arch_list)
        if not config.ops:
            raise BuildError(f"nothing in {config_path} runs on {ARCH_LIST_ENV}={';'.join(toolchain.arch_list)}",
                             [], "\n".join(left_out),
                             f"sm90 variants need a 9.0 target, sm80 variants any; set {ARCH_LIST_ENV} to the GPUs "
                             "the libraries are for (e.g. '9.0'), or unset it to build each op's arch: list.")
    out_dir = Path(out_dir) if out_dir is not None else Path("build") / config.stem
    # absolute: nvcc runs in the staging directory, so a relative -o would land there
    cache = (Path(cache_dir) if cache_dir is not None else cache_root()).absolute()
    src_dir = out_dir / "src"
    try:  # a subset leaves the other ops' sources alone
        units = codegen.write_sources(config, src_dir, prune=not ops).units
    except OSError as exc:
        raise _output_error(out_dir, exc) from None
    fingerprint = toolchain.cache_fingerprint().encode()
    digests = {b: toolchain.templates_digest(b) for b in sorted({u.backend for u in units})}
    src_abs = src_dir.resolve()

    jobs = max(1, jobs or default_jobs().count)
    bar = Progress(len(units), enabled=progress)
    result = BuildResult(out_dir, {}, jobs=jobs, launcher=Path(toolchain.launcher[0]).name if toolchain.launcher else "",
                         notes=[f"{ARCH_LIST_ENV}: {note}" for note in left_out])
    counter_lock = threading.Lock()
    database: List[dict] = []

    def compile_unit(unit: codegen.SourceUnit) -> Path:
        # The key leaves out where the source and object live (and nvcc compiles a staged copy):
        # the same text and flags give the same object in any output directory.
        probe = toolchain.compile_command(Path("SRC.cu"), Path("OUT.o"), unit.targets, unit.backend)
        key = sha256_parts(unit.text.encode(), digests[unit.backend], "\0".join(probe).encode(), fingerprint)
        seconds = []

        def make(tmp: Path) -> None:  # under the key's lock: the staged copy is this call's own
            hint = (f"The generated source is {src_abs / unit.relpath}. If the config is valid, this is a bug in "
                    "cutlass-splitk: report it with this log.")
            stage = staging_root() / key[:32]
            write_if_different(stage / unit.relpath, unit.text)
            seconds.append(run(toolchain.compile_invocation(Path(unit.relpath), tmp, unit.targets, unit.backend),
                               f"nvcc failed on {unit.relpath}", hint, cwd=stage))
            shutil.rmtree(stage, ignore_errors=True)
            # nvcc read the headers from the template directories themselves: an object compiled
            # while one of them changed is not what its key says, and must not enter the cache.
            if toolchain.templates_digest(unit.backend) != digests[unit.backend]:
                raise BuildError(f"the template files changed while {unit.relpath} compiled", [], "",
                                 "Run the build again once the edits are done; nothing compiled "
                                 "against the changing files was kept.")
            with counter_lock:
                result.compiled += 1
                result.unit_seconds[unit.relpath] = seconds[0]

        obj = _cached(cache, key, ".o", make)
        with counter_lock:
            database.append({"directory": str(src_abs), "file": unit.relpath, "output": str(obj),
                             "arguments": toolchain.compile_command(Path(unit.relpath), obj, unit.targets,
                                                                    unit.backend)})
        bar.step(f"{unit.relpath} ({seconds[0]:.1f}s)" if seconds else f"{unit.relpath} (cached)")
        return obj

    def compile_pycall() -> Optional[Path]:
        include = python_include()
        if include is None:
            result.notes.append(f"no Python.h under {sysconfig.get_paths()['include']}: the C call path "
                                f"({PYCALL_LIBRARY}) is not built, and repeated torch calls take the Python fast path "
                                "(install the Python development headers, e.g. python3-dev, and build again)")
            return None
        probe = toolchain.pycall_command(Path("OUT.so"), Path("PYTHON"))
        sources = b"".join(p.name.encode() + p.read_bytes() for p in sorted(NATIVE_DIR.iterdir()) if p.is_file())
        key = sha256_parts(sources, toolchain.templates_digest(), "\0".join(probe).encode(), fingerprint,
                           (include / "patchlevel.h").read_bytes())

        def make(tmp: Path) -> None:
            run(toolchain.pycall_command(tmp, include), f"compiling {PYCALL_LIBRARY} failed",
                "If the op libraries build, this is a bug in cutlass-splitk: report it with this log.")

        return _cached(cache, key, ".so", make)

    def link_op(name: str, objs: List[Path]) -> Path:
        # Into the cache first: a failed link leaves the output directory as it was.
        objs = sorted(objs, key=lambda p: p.name)
        key = sha256_parts(*(o.name.encode() for o in objs), "\0".join(toolchain.link_command([], Path())).encode(),
                           fingerprint)

        def make_so(tmp: Path) -> None:
            run(toolchain.link_command(objs, tmp), f"linking lib{name}.so failed",
                "Check that the CUDA toolkit's static runtime (libcudart_static.a) is installed.")

        return _cached(cache, key, ".so", make_so)

    # One pool for compiles and links: an op links as soon as its last unit is compiled, while
    # other ops' units still compile (as ninja would schedule it).
    objects: Dict[str, List[Path]] = {}
    remaining = {op.name: sum(u.op == op.name for u in units) for op in config.ops}
    linked_by_op: Dict[str, Path] = {}
    pycall: Optional[Path] = None
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = {pool.submit(compile_unit, u): ("compile", u.op) for u in compile_order(units)}
        pending[pool.submit(compile_pycall)] = ("pycall", "")
        try:
            while pending:
                done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in done:
                    kind, name = pending.pop(fut)
                    if kind == "pycall":
                        pycall = fut.result()
                        continue
                    if kind == "link":
                        linked_by_op[name] = fut.result()
                        continue
                    objects.setdefault(name, []).append(fut.result())
                    remaining[name] -= 1
                    if remaining[name] == 0:
                        pending[pool.submit(link_op, name, objects[name])] = ("link", name)
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    linked = {op.name: linked_by_op[op.name] for op in config.ops}  # manifest order: the config's

    libraries: Dict[str, tuple] = {}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, cached_so in linked.items():
            target = out_dir / f"lib{name}.so"
            digest, copied = _install(cached_so, target)
            result.linked += copied
            libraries[name] = (target.name, digest)
            result.libraries[name] = target
        pycall_entry = None
        if pycall is not None:
            result.pycall = out_dir / PYCALL_LIBRARY
            pycall_entry = (PYCALL_LIBRARY, _install(pycall, result.pycall)[0])
        order = {u.relpath: i for i, u in enumerate(units)}
        database.sort(key=lambda e: order[e["file"]])
        write_if_different(out_dir / COMPILE_COMMANDS, json.dumps(database, indent=1) + "\n")
        result.manifest = artifact.write_manifest(out_dir, codegen.display_path(config.path), toolchain.fingerprint,
                                                  libraries, config.ops, pycall_entry)
    except OSError as exc:
        raise _output_error(out_dir, exc) from None
    result.seconds = time.monotonic() - start
    return result
