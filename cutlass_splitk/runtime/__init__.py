"""The runtime: load a built directory, check inputs, pick a variant, launch.

Imports torch but nothing from the build side (no nvcc, no CUTLASS headers, no YAML). The
names below are resolved lazily, so ``cutlass_splitk.runtime.dispatch`` (pure Python) can be
used without torch.
"""

from typing import Any

__all__ = ["KernelError", "Library", "LibraryError", "Op", "PaddingWarning", "load"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import library

        return getattr(library, name)
    raise AttributeError(f"module 'cutlass_splitk.runtime' has no attribute {name!r}")
