"""The runtime: load a built directory, check inputs, pick a variant, launch.

Imports torch but nothing from the build side (no nvcc, no CUTLASS headers, no YAML).
"""

from .library import KernelError, Library, LibraryError, Op, PaddingWarning, load

__all__ = ["KernelError", "Library", "LibraryError", "Op", "PaddingWarning", "load"]
