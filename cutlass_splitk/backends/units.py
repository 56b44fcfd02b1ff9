"""How a backend packs an op's variant groups into translation units.

A CUTLASS translation unit spends most of its compile time on what every unit repeats: nvcc
parses the CUTLASS headers four times (host preprocessing, cudafe++, device preprocessing,
cicc) and the host compiler compiles their inline code once more. Measured on a 2-core
machine (nvcc 13.0): one sm80 group alone compiles in 15-20 s, five of them in one unit in
36 s; the six sm90 groups of one op take 134 s as six units and 39 s as one. So a backend
puts an op's groups into as few units as memory allows.

What a group weighs is the GEMM kernels it compiles. A group whose variants run a kernel of
their own (every sm80 group; an sm90 group with serial or stream-K variants, which compiles the
op's fused epilogue into the GEMM) is a *kernel group*; an sm90 group of parallel variants only
compiles the shared reduction kernel and host code (its GEMM is the partial GEMM's unit). Session
41, nvcc 13.0, 2 cores: an sm90 unit of one parallel-only group 14.2 s, of four 15.7 s, both
peaking under 1 GB; three kernel groups and four parallel-only ones 52.5 s, 3.2 GB. So a unit
holds at most ``kernel_groups`` kernel groups (the backend's limit: seven for both backends) and
the parallel-only groups between them; an op's kernel groups are spread evenly over as few units
as that takes, each group in its own C++ namespace. Fewer, larger units are cheaper as long as
memory allows: the chain op's six sm90 kernel groups compile in 88.9 s as one unit against
60.6 + 52.8 s as two, side by side (sm90/codegen.py has the other measurements).
"""

from __future__ import annotations

import string
from typing import Callable, Dict, List, Sequence, Tuple, TypeVar

from ..spec import Backend, KernelVariant, OpSpec

T = TypeVar("T")


def batches(backend: str, groups: Sequence[T], kernel_groups: int,
            is_kernel: Callable[[T], bool] = lambda group: True) -> List[Tuple[str, Sequence[T]]]:
    """``groups`` (already in their stable order) cut in order into as few units as hold at most
    ``kernel_groups`` of those that ``is_kernel`` each (all by default), the kernel groups spread
    evenly (the first units take the extra one), a unit's last kernel group followed by the groups
    up to the next one: [(unit name, groups), ...]. The unit is named after the backend (``sm80``),
    numbered from 1 (``sm80_1``, ``sm80_2``, ...) where there is more than one."""
    if not groups:
        return []
    kernels = sum(1 for g in groups if is_kernel(g))
    count = max(1, -(-kernels // kernel_groups))
    quotas = [kernels // count + (i < kernels % count) for i in range(count)]
    chunks: List[List[T]] = [[]]
    taken = 0  # kernel groups in the current chunk
    for g in groups:
        if is_kernel(g):
            if taken == quotas[len(chunks) - 1]:
                chunks.append([])
                taken = 0
            taken += 1
        chunks[-1].append(g)
    if len(chunks) == 1:
        return [(backend, chunks[0])]
    return [(f"{backend}_{i}", chunk) for i, chunk in enumerate(chunks, 1)]


def render_units(op: OpSpec, stamp: str, backend: Backend, unit: string.Template,
                 render_group: Callable[[OpSpec, Sequence[KernelVariant]], str], kernel_groups: int,
                 is_kernel: Callable[[Sequence[KernelVariant]], bool] = lambda variants: True,
                 declarations: Callable[[Sequence[KernelVariant]], str] = lambda variants: "",
                 ) -> List[Tuple[str, Tuple[str, ...], str]]:
    """(unit name, variant names, source) of ``op``'s units of ``backend``: its groups, sorted
    by name, in ``batches`` of at most ``kernel_groups`` groups whose variants ``is_kernel``, each unit ``unit``
    (``stamp``, ``op``, ``groups``, ``declarations``, ``bodies``) around the groups' ``render_group(op, variants)``
    (variants sorted by split mode); ``declarations(variants)`` is what the unit declares after its includes, before
    its groups (empty by default)."""
    groups: Dict[str, List[KernelVariant]] = {}
    for v in op.variants:
        if v.backend is backend:
            groups.setdefault(v.group, []).append(v)
    out = []
    for name, names in batches(backend.value, sorted(groups), kernel_groups, lambda g: is_kernel(groups[g])):
        members = [sorted(groups[g], key=lambda v: v.mode.value) for g in names]
        text = unit.substitute(stamp=stamp, op=op.name, groups=", ".join(names),
                               declarations=declarations([v for m in members for v in m]),
                               bodies="".join(render_group(op, m) for m in members))
        out.append((name, tuple(v.name for m in members for v in m), text))
    return out
