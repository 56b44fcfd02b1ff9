"""How a backend packs an op's variant groups into translation units.

A CUTLASS translation unit spends most of its compile time on what every unit repeats: nvcc
parses the CUTLASS headers four times (host preprocessing, cudafe++, device preprocessing,
cicc) and the host compiler compiles their inline code once more. Measured on a 2-core
machine (nvcc 13.0): one sm80 group alone compiles in 15-20 s, five of them in one unit in
36 s; the six sm90 groups of one op take 134 s as six units and 39 s as one. So a backend
puts an op's groups into as few units as memory allows: batches of at most
``GROUPS_PER_UNIT`` groups (one merged unit of six sm90 groups peaks at ~2 GB in cicc, against
the ~3 GB per compile job the build budgets for), each group in its own C++ namespace. Seven, not
six, since session 25: the ops with thirteen sm90 groups compiled a third unit for the last one,
~19 s of nvcc's fixed cost each, and the default config's cold build had crept to 905 s on 2 cores.
"""

from __future__ import annotations

import string
from typing import Callable, Dict, List, Sequence, Tuple, TypeVar

from ..spec import Backend, KernelVariant, OpSpec

GROUPS_PER_UNIT = 7

T = TypeVar("T")


def batches(backend: str, groups: Sequence[T]) -> List[Tuple[str, Sequence[T]]]:
    """``groups`` (already in their stable order) in units of at most GROUPS_PER_UNIT: [(unit
    name, groups), ...]; the unit is named after the backend (``sm80``), numbered from 1
    (``sm80_1``, ``sm80_2``, ...) where there is more than one."""
    chunks = [groups[i:i + GROUPS_PER_UNIT] for i in range(0, len(groups), GROUPS_PER_UNIT)]
    if len(chunks) <= 1:
        return [(backend, chunks[0])] if chunks else []
    return [(f"{backend}_{i}", chunk) for i, chunk in enumerate(chunks, 1)]


def render_units(op: OpSpec, stamp: str, backend: Backend, unit: string.Template,
                 render_group: Callable[[OpSpec, Sequence[KernelVariant]], str],
                 declarations: Callable[[Sequence[KernelVariant]], str] = lambda variants: "",
                 ) -> List[Tuple[str, Tuple[str, ...], str]]:
    """(unit name, variant names, source) of ``op``'s units of ``backend``: its groups, sorted
    by name, in batches, each unit ``unit`` (``stamp``, ``op``, ``groups``, ``declarations``, ``bodies``)
    around the groups' ``render_group(op, variants)`` (variants sorted by split mode);
    ``declarations(variants)`` is what the unit declares after its includes, before its groups (empty by
    default)."""
    groups: Dict[str, List[KernelVariant]] = {}
    for v in op.variants:
        if v.backend is backend:
            groups.setdefault(v.group, []).append(v)
    out = []
    for name, names in batches(backend.value, sorted(groups)):
        members = [sorted(groups[g], key=lambda v: v.mode.value) for g in names]
        text = unit.substitute(stamp=stamp, op=op.name, groups=", ".join(names),
                               declarations=declarations([v for m in members for v in m]),
                               bodies="".join(render_group(op, m) for m in members))
        out.append((name, tuple(v.name for m in members for v in m), text))
    return out
