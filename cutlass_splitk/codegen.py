"""Validated config → CUDA sources.

Each op's backend renders its translation units (its variant groups, an op's variants that
differ only by split mode, as few units as memory allows: ``backends/units.py``; the sm90
backend adds its shared partial GEMMs); this module adds one ``library.cu`` per op with the
library-level entry points (``templates/library.cu.in``) and owns writing them:
:func:`write_sources` is the one path by which ``cutlass-splitk generate``, ``generate
--check`` and ``cutlass-splitk build`` put sources on disk.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, List, Set, Tuple

from . import backends
from .artifact import describe
from .fsutil import write_if_different
from .spec import OpSpec

if TYPE_CHECKING:
    from .config import Config

TEMPLATE_DIR = Path(__file__).parent / "templates"  # shared by every backend
STAMP_MARK = "by cutlass-splitk; do not edit"


@lru_cache(maxsize=None)
def _template(name: str) -> string.Template:
    return string.Template((TEMPLATE_DIR / name).read_text())


@dataclass(frozen=True)
class SourceUnit:
    """One generated translation unit."""

    op: str
    name: str  # group name, or "library"
    relpath: str  # relative to the config's output directory: "<op>/<name>.cu"
    text: str
    variants: Tuple[str, ...]
    backend: str = ""  # the backend whose templates it includes ("": the shared ones only)
    targets: Tuple[str, ...] = ()  # -gencode targets, e.g. ("80", "90") or ("90a",)


def stamp(config_path: str) -> str:
    return f"generated from {config_path} {STAMP_MARK}"


def display_path(path: str) -> str:
    """The config path as written into generated files: relative to the cwd when possible."""
    p = Path(path)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def render_library(op: OpSpec, config_path: str, targets: Tuple[str, ...]) -> SourceUnit:
    description = json.dumps(describe(op), sort_keys=True)
    text = _template("library.cu.in").substitute(stamp=stamp(config_path), op=op.name, description=description)
    return SourceUnit(op.name, "library", f"{op.name}/library.cu", text, (), targets=targets)


def render(config: "Config") -> List[SourceUnit]:
    """All sources for a config, in a stable order. Pure: writes nothing."""
    path = display_path(config.path)
    units: List[SourceUnit] = []
    for op in config.ops:
        for backend in backends.used_by(op):
            targets = backend.targets(op)
            for name, variants, text in backend.render_units(op, stamp(path)):
                units.append(SourceUnit(op.name, name, f"{op.name}/{name}.cu", text, variants, backend.NAME, targets))
        # library.cu holds no device code: any target compiles it; the op's first one is used.
        units.append(render_library(op, path, backends.used_by(op)[0].targets(op)))
    return units


@dataclass
class Sources:
    """What :func:`write_sources` found: the units, and the files it wrote (checking: the
    ones out of date) and removed (checking: every ``*/*.cu`` that is not one of the units)."""

    units: List[SourceUnit]
    changed: List[Path] = field(default_factory=list)
    stale: List[Path] = field(default_factory=list)


def write_sources(config: "Config", out_dir: Path, *, check: bool = False, prune: bool = True) -> Sources:
    """Writes the config's sources under ``out_dir`` (changed files only). With ``prune``,
    removes the files generated earlier from the *same* config (same stamp) that it no longer
    produces, and the op directories that leaves empty; nothing else is ever removed. With
    ``check``, writes and removes nothing and reports instead."""
    units = render(config)
    result = Sources(units)
    for u in units:
        path = out_dir / u.relpath
        if check:
            if not path.is_file() or path.read_text() != u.text:
                result.changed.append(path)
        elif write_if_different(path, u.text):
            result.changed.append(path)
    keep = {(out_dir / u.relpath).resolve() for u in units}
    # (not the hidden temp files of a concurrent write: pathlib's "*" matches dot files)
    extra = [p for p in sorted(out_dir.glob("*/*.cu")) if not p.name.startswith(".") and p.resolve() not in keep] \
        if out_dir.is_dir() else []
    if check:
        result.stale = extra
    elif prune:
        ours = f"// {stamp(display_path(config.path))}"
        emptied: Set[Path] = set()
        for old in extra:
            if old.read_text(errors="replace").split("\n", 1)[0] == ours:
                old.unlink()
                result.stale.append(old)
                emptied.add(old.parent)
        for d in sorted(emptied):
            if not any(d.iterdir()):
                d.rmdir()
    return result
