"""The runtime: load a built directory, check inputs, pick a variant, launch.

Imports torch but nothing from the build side (no nvcc, no CUTLASS headers, no YAML): from
the package's top level only ``spec``, ``artifact`` and ``fsutil``. The names below are
resolved lazily, so ``cutlass_splitk.runtime.dispatch`` (pure Python) can be used without
torch.
"""

from typing import Any

_HOMES = {"KernelError": "errors", "LibraryError": "errors", "PaddingWarning": "errors", "Library": "library",
          "load": "library", "Op": "op"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module 'cutlass_splitk.runtime' has no attribute {name!r}")
