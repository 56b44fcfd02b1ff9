"""Validated config → CUDA sources.

One translation unit per variant group (an op's variants that differ only by split mode)
plus one ``library.cu`` per op with the library-level entry points. Templates live in
``templates/*.cu.in``; they instantiate, the logic is in ``templates/cks_kernels.cuh``.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from .config import Config
from .spec import (
    ACTIVATION_CPP,
    BIAS_CPP,
    DTYPE_CPP,
    EOP_CPP,
    MODE_CPP,
    PERMUTE_CPP,
    KernelVariant,
    Layout,
    OpSpec,
)

TEMPLATE_DIR = Path(__file__).parent / "templates"
ABI_VERSION = 1  # must match CKS_ABI_VERSION in templates/cks_abi.h (checked by the tests)


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


STAMP_MARK = "by cutlass-splitk; do not edit"


def stamp(config_path: str) -> str:
    return f"generated from {config_path} {STAMP_MARK}"


def display_path(path: str) -> str:
    """The config path as written into generated files: relative to the cwd when possible."""
    p = Path(path)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def describe(op: OpSpec) -> dict:
    """The self-description each library embeds (and the manifest repeats)."""
    return {"abi_version": ABI_VERSION, **op.to_json()}


def _shape(s: Sequence[int]) -> str:
    return ", ".join(map(str, s))


def render_group(op: OpSpec, variants: Sequence[KernelVariant], config_path: str) -> SourceUnit:
    first = variants[0]
    entries = "".join(
        _template("entry.cu.in").substitute(variant=v.name, impl=MODE_CPP[v.mode]) for v in variants
    )
    text = _template("group.cu.in").substitute(
        stamp=stamp(config_path),
        op=op.name,
        group=first.group,
        element=DTYPE_CPP[op.dtype],
        b_column_major="true" if op.layout is Layout.TN else "false",
        tile=_shape(first.tile),
        warp=_shape(first.warp),
        instruction=_shape(first.instruction),
        stages=first.stages,
        alignment=first.alignment,
        swizzle=first.swizzle,
        activation=ACTIVATION_CPP[op.epilogue.activation],
        e_op=EOP_CPP[op.epilogue.e_op],
        bias=BIAS_CPP[op.epilogue.bias],
        permute=PERMUTE_CPP[op.epilogue.permute],
        entry_points=entries,
    )
    return SourceUnit(op.name, first.group, f"{op.name}/{first.group}.cu", text, tuple(v.name for v in variants))


def render_library(op: OpSpec, config_path: str) -> SourceUnit:
    description = json.dumps(describe(op), sort_keys=True)
    text = _template("library.cu.in").substitute(stamp=stamp(config_path), op=op.name, description=description)
    return SourceUnit(op.name, "library", f"{op.name}/library.cu", text, ())


def render(config: Config) -> List[SourceUnit]:
    """All sources for a config, in a stable order. Pure: writes nothing."""
    path = display_path(config.path)
    units: List[SourceUnit] = []
    for op in config.ops:
        groups: Dict[str, List[KernelVariant]] = {}
        for v in op.variants:
            groups.setdefault(v.group, []).append(v)
        for name in sorted(groups):
            units.append(render_group(op, sorted(groups[name], key=lambda v: v.mode.value), path))
        units.append(render_library(op, path))
    return units


def write_if_different(path: Path, text: str) -> bool:
    """Atomically writes ``text`` unless the file already holds it. Returns True if written."""
    try:
        if path.read_text() == text:
            return False
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


def write_sources(config: Config, out_dir: Path) -> Tuple[List[SourceUnit], int]:
    """Writes the config's sources under ``out_dir`` (changed files only) and removes
    generated files of variants that are no longer in the config. Returns (units, written)."""
    units = render(config)
    written = sum(write_if_different(out_dir / u.relpath, u.text) for u in units)
    keep = {(out_dir / u.relpath).resolve() for u in units}
    if out_dir.is_dir():
        for old in out_dir.glob("*/*.cu"):
            if old.resolve() not in keep and STAMP_MARK in old.read_text(errors="replace").split("\n", 1)[0]:
                old.unlink()
        for d in out_dir.iterdir():
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
    return units, written
