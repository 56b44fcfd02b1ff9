"""The sm80 backend's translation units: an op's variant groups (its variants that differ
only by split mode), up to ``KERNEL_GROUPS_PER_UNIT`` per unit (``templates/unit.cu.in``; every sm80 group
compiles its own GEMM kernels, ``units.batches``). Each
group (``templates/group.cu.in``, in a namespace of its own) instantiates ``cks::VariantConfig``
and exports each variant's ``cks_<variant>_query`` / ``cks_<variant>_run`` through
``SerialGemm`` or ``ParallelGemm`` (``templates/entry.cu.in``); the logic they instantiate is
in ``templates/cks_sm80.cuh`` and the shared headers.
"""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from .. import units
from ...spec import (ACTIVATION_CPP, BIAS_CPP, DTYPE_CPP, EOP_CPP, PERMUTE_CPP, Backend, KernelVariant, Layout, OpSpec,
                     SplitMode)

TEMPLATE_DIR = Path(__file__).parent / "templates"
MODE_CPP: Dict[SplitMode, str] = {SplitMode.SERIAL: "cks::SerialGemm", SplitMode.PARALLEL: "cks::ParallelGemm"}
# Five sm80 groups compile in 36 s as one unit, 15-20 s each alone (units.py); seven since session 25.
KERNEL_GROUPS_PER_UNIT = 7


@lru_cache(maxsize=None)
def _template(name: str) -> string.Template:
    return string.Template((TEMPLATE_DIR / name).read_text())


def _shape(s: Sequence[int]) -> str:
    return ", ".join(map(str, s))


def render_group(op: OpSpec, variants: Sequence[KernelVariant]) -> str:
    """The source of one group: ``variants`` share everything but the split mode."""
    first = variants[0]
    entries = "".join(
        _template("entry.cu.in").substitute(variant=v.name, impl=MODE_CPP[v.mode]) for v in variants
    )
    return _template("group.cu.in").substitute(
        group=first.group,
        element=DTYPE_CPP[op.dtype],
        b_column_major="true" if op.layout is Layout.TN else "false",
        tile=_shape(first.tile),
        warp=_shape(first.params.warp),
        instruction=_shape(first.params.instruction),
        stages=first.params.stages,
        alignment=first.alignment,
        swizzle=first.params.swizzle,
        activation=ACTIVATION_CPP[op.epilogue.activation],
        e_op=EOP_CPP[op.epilogue.e_op],
        bias=BIAS_CPP[op.epilogue.bias],
        permute=PERMUTE_CPP[op.epilogue.permute],
        entry_points=entries,
    )


def targets(op: OpSpec) -> Tuple[str, ...]:
    """-gencode targets of the op's sm80 units: the op's ``arch:`` list."""
    return tuple(str(a) for a in op.archs)


def render_units(op: OpSpec, stamp: str) -> List[Tuple[str, Tuple[str, ...], str]]:
    """(unit name, variant names, source) of ``op``'s sm80 units (``units.render_units``)."""
    return units.render_units(op, stamp, Backend.SM80, _template("unit.cu.in"), render_group, KERNEL_GROUPS_PER_UNIT)
