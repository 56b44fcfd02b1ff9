"""cutlass-splitk: YAML-declared CUTLASS split-K GEMMs with fused epilogues, built ahead of
time and called from Python.

``cutlass_splitk.load(dir)`` is the runtime entry point; it is imported lazily so that the
build side (``cutlass_splitk.config``, ``.codegen``, ``.build``) works without torch.
"""

from typing import Any

__version__ = "0.1.0"


def load(directory: Any, **kwargs: Any) -> Any:
    """Loads a directory written by ``cutlass-splitk build`` (see runtime.library.load)."""
    from .runtime import load as _load

    return _load(directory, **kwargs)


__all__ = ["load", "__version__"]
