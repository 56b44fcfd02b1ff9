"""The runtime's exceptions and warnings (all re-exported by ``cutlass_splitk.runtime``)."""

from ..artifact import LibraryError


class KernelError(RuntimeError):
    """A kernel failed to launch or run (CUDA error, or a check inside the library)."""


class PaddingWarning(UserWarning):
    """The problem's sizes or pointers are not aligned for any built variant, so the
    operands were copied into padded, aligned buffers (correct, but slower)."""


__all__ = ["KernelError", "LibraryError", "PaddingWarning"]
