"""Kernel backends, by name: an explicit registry (a plain dict; importing it registers
nothing and builds nothing).

A backend is a module (package) providing:

* ``NAME``: its key here;
* ``TEMPLATE_DIR``: the directory of its ``.cu.in`` templates and headers (the compile
  command adds it after the shared ``cutlass_splitk/templates``);
* ``SUPPORTED_ARCHS`` / ``DEFAULT_ARCHS``: the ``arch:`` values it accepts / assumes;
* ``parse_grid(reader, value, path, *, op, dtype, layout, archs, epilogue)`` → ``(variants, pruned)``:
  reads one ``variants:`` grid of an op with that epilogue (config.py calls it);
* ``render_units(op, stamp)`` → ``[(unit name, variant names, source), ...]``: the op's
  translation units (codegen.py adds the shared ``library.cu``), its groups packed by
  ``units.batches`` (each group in a C++ namespace of its own);
* ``targets(op)`` → the -gencode targets of those units, e.g. ``("80", "90")``;
* ``for_targets(op, targets)`` → ``(op, notes)``: ``op`` with only the variants of this backend whose code runs on
  the -gencode ``targets`` of ``CUTLASS_SPLITK_CUDA_ARCH_LIST`` (config.for_targets), and what it left out;
* ``UNIT_SECONDS``: a typical unit's cold compile time on two cores, by which the build starts
  the slower backends' units first (build.compile_order).

Adding a backend is one entry in ``BACKENDS`` and a package next to ``sm80/``; no shared stage
changes. A ``variants:`` grid names its backend with ``backend:`` (default ``sm80``); one op may
list grids of several backends.
"""

from __future__ import annotations

from types import ModuleType
from typing import Dict, List

from ..spec import Backend, OpSpec
from . import sm80, sm90

BACKENDS: Dict[str, ModuleType] = {"sm80": sm80, "sm90": sm90}
DEFAULT_BACKEND = "sm80"


def get(name: str) -> ModuleType:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; backends: {', '.join(sorted(BACKENDS))}") from None


def used_by(op: OpSpec) -> List[ModuleType]:
    """The backends whose variants ``op`` has, in registry order."""
    present = {v.backend for v in op.variants}
    return [module for name, module in BACKENDS.items() if Backend(name) in present]
