"""Kernel backends, by name: an explicit registry (a plain dict; importing it registers
nothing and builds nothing).

A backend is a module (package) providing:

* ``NAME``: its key here;
* ``TEMPLATE_DIR``: the directory of its ``.cu.in`` templates and headers (the compile
  command adds it after the shared ``cutlass_splitk/templates``);
* ``SUPPORTED_ARCHS`` / ``DEFAULT_ARCHS``: the ``arch:`` values it accepts / assumes;
* ``parse_grid(reader, value, path, *, op, dtype, layout, archs)`` → ``(variants, pruned)``:
  reads one ``variants:`` grid (config.py calls it);
* ``render_units(op, stamp)`` → ``[(unit name, variant names, source), ...]``: the op's
  translation units (codegen.py adds the shared ``library.cu``);
* ``targets(op)`` → the -gencode targets of those units, e.g. ``("80", "90")``.

Adding a backend is one entry in ``BACKENDS`` and a package next to ``sm80/``; no shared stage
changes. Every op uses ``DEFAULT_BACKEND`` until the config grows a key to choose.
"""

from __future__ import annotations

from types import ModuleType
from typing import Dict

from ..spec import OpSpec
from . import sm80

BACKENDS: Dict[str, ModuleType] = {"sm80": sm80}
DEFAULT_BACKEND = "sm80"


def get(name: str) -> ModuleType:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; backends: {', '.join(sorted(BACKENDS))}") from None


def for_op(op: OpSpec) -> ModuleType:
    """The backend that builds ``op``."""
    return BACKENDS[DEFAULT_BACKEND]
