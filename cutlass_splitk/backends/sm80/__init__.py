"""The sm80 backend: CUTLASS 2.x multistage kernels (mma.sync + cp.async) for sm_80 to sm_90,
serial split-K (our kernel around CUTLASS's main loop) and parallel split-K (GemmUniversal
partials + the shared reduction).

The backend contract (see ``cutlass_splitk/backends/__init__.py``): ``NAME``,
``TEMPLATE_DIR``, ``SUPPORTED_ARCHS``, ``DEFAULT_ARCHS``, ``parse_grid``, ``render_units``, ``targets`` and
``for_targets``.
"""

from .codegen import TEMPLATE_DIR, render_units, targets
from .grid import parse_grid
from .rules import DEFAULT_ARCHS, SUPPORTED_ARCHS, for_targets

NAME = "sm80"
UNIT_SECONDS = 28.0  # 23-33 s (session 41, BENCHMARKS.md)

__all__ = ["DEFAULT_ARCHS", "NAME", "SUPPORTED_ARCHS", "TEMPLATE_DIR", "UNIT_SECONDS", "for_targets", "parse_grid",
           "render_units", "targets"]
