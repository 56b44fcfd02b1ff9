"""The sm90 backend: CUTLASS 3.x warp-specialized kernels (TMA loads, wgmma, thread-block
clusters) built for sm_90a (H100, H200), in three modes: serial split-K and stream-K (CUTLASS's
stream-K tile scheduler with a deterministic in-kernel reduction, then our fused epilogue on
the finished f32 sum) and parallel split-K (a batched f32 partial GEMM + the shared
reduction kernel).

The backend contract (see ``cutlass_splitk/backends/__init__.py``): ``NAME``,
``TEMPLATE_DIR``, ``SUPPORTED_ARCHS``, ``DEFAULT_ARCHS``, ``parse_grid``, ``render_units``, ``targets`` and
``for_targets``.
"""

from .codegen import TEMPLATE_DIR, render_units, targets
from .grid import parse_grid
from .rules import for_targets

NAME = "sm90"
UNIT_SECONDS = 90.0  # 35-125 s (session 41, BENCHMARKS.md)
SUPPORTED_ARCHS = (90,)
DEFAULT_ARCHS = (90,)

__all__ = ["DEFAULT_ARCHS", "NAME", "SUPPORTED_ARCHS", "TEMPLATE_DIR", "UNIT_SECONDS", "for_targets", "parse_grid",
           "render_units", "targets"]
