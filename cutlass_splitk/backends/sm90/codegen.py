"""The sm90 backend's translation units, per op:

* the op's *groups*, one per (tile, cluster, schedule, stages), at most
  ``KERNEL_GROUPS_PER_UNIT`` with serial or stream-K variants per unit, parallel-only groups
  between them (``units.batches``; ``templates/unit.cu.in``): each group
  (``templates/group.cu.in``, in a namespace of its own) has its variants' entry points
  (``entry.cu.in``), instantiating SplitKGemm (serial, stream-K: the fused-epilogue kernel)
  and ParallelGemm (the reduction and the host code);
* the *partial* units (``templates/partial.cu.in``): the batched f32 partial GEMMs of the groups
  with parallel variants, which do not depend on the op's epilogue, packed by tile shape:
  ``PARTIAL_SHAPES_PER_UNIT`` shapes (tile and swap) a unit, each shape's clusters, schedules
  and stages together. Their text names only the dtype, layout and GEMM shapes, so every op of
  a config with the same parallel groups has the same texts, and the content-hashed object
  cache compiles them once.

Measured (session 41, nvcc 13.0, 2 cores, two compiles at once): one partial GEMM compiles in
42 s (24 s of it cicc) and peaks at 2.9 GB; the 128x128 tile in three clusters in one unit, 44 s
and 3.0 GB (cicc compiles what the clusters share once); two shapes a unit 50-65 s and 4-4.6 GB,
three 67-98 s and 4.6-5.4 GB (the default config's ten pair units 515 s in one cold build, its six
triple units 473 s in a rebuild right after). Group units: the seven groups with serial or
stream-K variants of an op without E or a permute (CUTLASS's TMA epilogue in the kernel) and its
eleven parallel-only groups compile in 125.5 s as one unit (7.1 GB), against 85.4 + 77.0 s as two
of four and three; the shipped ops have at most seven, so each op's sm90 groups are one unit.

A unit that instantiates the main loop of a tile whose width is outside CUTLASS's standard wgmma
set (``rules.extended_mma``: tile N not 16, 32, 64, 96, 128, 192 or 256) gets that width's m64nNk16
instruction after its includes (``templates/wide_wgmma.cuh.in``; ``sm90_wide_mma.cuh`` puts it in
the builder's collective): such a tile's partial unit, and a group unit holding its serial or
stream-K variants (a parallel variant's kernel is its partial unit's). The main loop asserts that
its wgmma spans the whole tile N, and a unit missing its width's instruction fails to compile
rather than running narrow MMAs (CUTLASS's builder would take the widest standard width dividing N).
"""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from ...spec import (ACTIVATION_CPP, BIAS_CPP, DTYPE_CPP, EOP_CPP, PERMUTE_CPP, Backend, KernelVariant, Layout,
                     OpSpec, Schedule, SplitMode)
from .. import units
from . import rules

TEMPLATE_DIR = Path(__file__).parent / "templates"
KERNEL_GROUPS_PER_UNIT = 7  # with serial or stream-K variants (units.py)
PARTIAL_SHAPES_PER_UNIT = 3
SCHEDULE_CPP: Dict[Schedule, str] = {Schedule.COOPERATIVE: "cks::sm90::Schedule::kCooperative",
                                     Schedule.PINGPONG: "cks::sm90::Schedule::kPingpong"}
MODE_CPP: Dict[SplitMode, str] = {SplitMode.SERIAL: "cks::sm90::SplitKGemm<Config, false>",
                                  SplitMode.STREAM_K: "cks::sm90::SplitKGemm<Config, true>",
                                  SplitMode.PARALLEL: "cks::sm90::ParallelGemm<Config>"}


@lru_cache(maxsize=None)
def _template(name: str) -> string.Template:
    return string.Template((TEMPLATE_DIR / name).read_text())


def _gemm_fields(op: OpSpec, v: KernelVariant) -> Dict[str, str]:
    p = v.params
    return {
        "element": DTYPE_CPP[op.dtype],
        "b_column_major": "true" if op.layout is Layout.TN else "false",
        "tile": ", ".join(map(str, v.tile)),
        "cluster": ", ".join(map(str, p.cluster)),
        "schedule": SCHEDULE_CPP[p.schedule],
        "stages": str(p.stages),
        "swap_ab": ", /*swap AB=*/true" if p.swap_ab else "",
    }


def shape_name(v: KernelVariant) -> str:
    """A partial GEMM's tile shape, as its unit's name spells it: ``t128x80x64_swab``."""
    return "t" + "x".join(map(str, v.tile)) + ("_swab" if v.params.swap_ab else "")


def mode_impl(v: KernelVariant) -> str:
    """The C++ implementation of a variant's entry points. A serial variant whose only split is 1
    (no in-kernel split-K to fix up) runs CUTLASS's persistent data-parallel tile scheduler instead
    of the stream-K one in its data-parallel decomposition: 0-9 % faster on the H100, most where
    the epilogue weighs (BENCHMARKS.md, session 20, rounds 31 and 33)."""
    if v.mode is SplitMode.SERIAL and tuple(v.splits) == (1,):
        return "cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>"
    return MODE_CPP[v.mode]


def render_group(op: OpSpec, variants: Sequence[KernelVariant]) -> str:
    first = variants[0]
    entries = "".join(_template("entry.cu.in").substitute(variant=v.name, impl=mode_impl(v)) for v in variants)
    extern = ""
    if any(v.mode is SplitMode.PARALLEL for v in variants):
        extern = (f"extern template struct cks::sm90::PartialGemm<group_{first.group}::Gemm>;  "
                  "// defined in its own unit\n")
    return _template("group.cu.in").substitute(
        group=first.group, activation=ACTIVATION_CPP[op.epilogue.activation], e_op=EOP_CPP[op.epilogue.e_op],
        bias=BIAS_CPP[op.epilogue.bias], permute=PERMUTE_CPP[op.epilogue.permute],
        beta="true" if op.epilogue.beta else "false", extern_partial=extern,
        entry_points=entries, **_gemm_fields(op, first))


def wide_mma(op: OpSpec, variants: Sequence[KernelVariant]) -> str:
    """The wgmma instructions (of ``op``'s dtype) a unit of ``variants`` instantiates beyond CUTLASS's
    standard widths (``rules.extended_mma``), one per tile N, to follow its includes; else nothing."""
    def rows(items: List[str], per_row: int) -> List[str]:  # items joined by ", ", per_row a line
        return [", ".join(items[i:i + per_row]) for i in range(0, len(items), per_row)]

    text = []
    for n in sorted({v.tile[1] for v in variants if rules.extended_mma(v.tile)}):
        registers = n // 2  # f32 accumulators a thread: 64 x n over 128 threads
        d = [f"d{i:03d}" for i in range(registers)]
        text.append(_template("wide_wgmma.cuh.in").substitute(
            n=n, registers=registers, element=DTYPE_CPP[op.dtype], ptx_type=op.dtype.value,
            accumulators=", \"\n".join(" " * 17 + '"' + r for r in rows([f"%{i}" for i in range(registers)], 16)) + '"',
            parameters="\n".join(f"      {r}," for r in rows([f"float& {x}" for x in d], 8)),
            outputs=(",\n" + " " * 19).join(rows([f'"+f"({x})' for x in d], 8)),
            desc_index=registers, desc_b_index=registers + 1,
            scale_index=registers + 2, major_index=registers + 3, major_b_index=registers + 4))
    return "".join(text)


def render_partials(op: OpSpec, shapes: Sequence[str], variants: Sequence[KernelVariant],
                    stamp: str) -> Tuple[str, str]:
    """(unit name, source) of the partial GEMMs of ``variants`` (parallel, one per group), whose tile shapes
    (``shape_name``) are ``shapes``, in order."""
    instantiations = "".join(_template("partial_gemm.cu.in").substitute(**_gemm_fields(op, v)) for v in variants)
    name = "_".join(["partial", op.dtype.value, op.layout.value, *shapes])
    return name, _template("partial.cu.in").substitute(
        stamp=stamp, dtype=op.dtype.value, layout=op.layout.value, shapes=", ".join(shapes),
        wide_mma=wide_mma(op, variants), instantiations=instantiations)


def targets(op: OpSpec) -> Tuple[str, ...]:
    """-gencode targets of every sm90 unit: sm_90a (wgmma exists only there)."""
    return rules.TARGETS


def render_units(op: OpSpec, stamp: str) -> List[Tuple[str, Tuple[str, ...], str]]:
    """(unit name, variant names, source) of ``op``'s sm90 units: its groups
    (``units.render_units``), then the partial GEMMs its parallel variants call (one per group),
    ``PARTIAL_SHAPES_PER_UNIT`` tile shapes a unit in the shapes' order."""
    # A group unit instantiates the main loop only for its in-kernel variants: a parallel group's
    # kernel is its partial unit's (the op's unit declares it), so only that unit needs the instruction.
    out = units.render_units(op, stamp, Backend.SM90, _template("unit.cu.in"), render_group, KERNEL_GROUPS_PER_UNIT,
                             lambda variants: any(v.mode is not SplitMode.PARALLEL for v in variants),
                             lambda variants: wide_mma(op, [v for v in variants if v.mode is not SplitMode.PARALLEL]))
    by_shape: Dict[str, List[KernelVariant]] = {}
    for v in sorted(op.variants, key=lambda v: v.group):
        if v.backend is Backend.SM90 and v.mode is SplitMode.PARALLEL:
            by_shape.setdefault(shape_name(v), []).append(v)
    shapes = sorted(by_shape)
    for i in range(0, len(shapes), PARTIAL_SHAPES_PER_UNIT):
        chunk = shapes[i:i + PARTIAL_SHAPES_PER_UNIT]
        name, text = render_partials(op, chunk, [v for s in chunk for v in by_shape[s]], stamp)
        out.append((name, (), text))
    return out
