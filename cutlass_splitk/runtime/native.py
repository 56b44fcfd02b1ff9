"""The repeated-signature torch call in C (``libcks_pycall.so``, source ``native/cks_pycall.c``).

``cutlass-splitk build`` compiles it beside the op libraries (Python's limited API: one binary
for every CPython >= 3.9) and lists it in the manifest. Where torch publishes DLPack's C exchange
table (``torch.Tensor.__dlpack_c_exchange_api__``, torch >= 2.10), :func:`load` binds it and
each op gets a :class:`NativeOp`: ``Op.__call__`` offers every torch call to it first. It
handles exactly the calls the Python fast path (:mod:`.fastpath`) would, with the same checks,
and returns None for anything else, which then goes on in Python as before. Its entries mirror
the op's Prepared signatures: registered when one is prepared, dropped whenever the op's
signature or plan cache is emptied; a change to the library's workspace makes it re-read the
stream's buffers.

``CUTLASS_SPLITK_NATIVE_CALL=0`` (read by :func:`load`) or ``op.native = None`` leaves every call
to the Python paths (A/B timing, ``benchmarks/host_overhead.py``).

Imports torch only through :func:`.platform.torch_or_none`.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from . import abi
from .platform import CudaPlatform, torch_or_none

if TYPE_CHECKING:
    from .op import Op
    from .prepared import Prepared

ENV = "CUTLASS_SPLITK_NATIVE_CALL"


def exchange_api() -> Any:
    """torch's DLPack C exchange table (a PyCapsule), or None (no torch, or a torch before 2.10)."""
    torch = torch_or_none()
    return getattr(torch.Tensor, "__dlpack_c_exchange_api__", None) if torch is not None else None


def load(path: Optional[Path]) -> Optional[Callable[[tuple], tuple]]:
    """The library's ``cks_pycall_make`` (None where there is no library, the switch is off or
    torch has no exchange table). Raises OSError where the file cannot be loaded."""
    if path is None or os.environ.get(ENV, "1") in ("", "0") or exchange_api() is None:
        return None
    handle = ctypes.PyDLL(str(path), mode=ctypes.RTLD_LOCAL)  # keeps the GIL; Python errors propagate
    make = handle.cks_pycall_make
    make.restype = ctypes.py_object
    make.argtypes = [ctypes.py_object]
    return make


class NativeOp:
    """One op's state in the C library: ``call(a, b, kwargs)`` is the hot path (output or None)."""

    def __init__(self, op: "Op", make: Callable[[tuple], tuple]):
        torch = torch_or_none()
        platform = op.platform
        # a stand-in platform's own stream(index); torch's current stream through the table otherwise
        stream_fn = None if type(platform).stream is CudaPlatform.stream else platform.stream
        self.op = op
        self.call, self._register, self.clear, self.workspace_changed, self.stats = make(
            (exchange_api(), (torch.Tensor, torch.nn.Parameter), torch.empty_like, stream_fn,
             op.library.workspace.get, self._fail, op.bound))
        op.prepared.on_clear.append(self.clear)
        op.launcher.plans.on_clear.append(self.clear)
        op.library.workspace.on_change.append(self.workspace_changed)

    def _fail(self, p: "Prepared", status: int, raw: bytes) -> None:
        raise self.op.launcher.run_error(p.variant, p.split, abi.CksArgs.from_buffer_copy(raw), status)

    def register(self, a: Any, b: Any, kwargs: Any, p: "Prepared") -> bool:
        """Mirrors ``p`` (prepared from this call of ``a``, ``b``, ``kwargs``); False where the C
        path does not take it (a keyword it does not handle, no output template, an entry point
        that is not the library's own C function)."""
        bound = self.op.bound
        run = bound.run.get(p.variant)
        if run is None or run is not getattr(bound.handle, f"cks_{p.variant}_run", None) or p.template is None:
            return False
        address = ctypes.cast(run, ctypes.c_void_p).value
        return bool(self._register(a, b, kwargs, bytes(p.args), run, address, p.variant, p, p.template, p.device,
                                   p.device_index, int(p.use_c), int(p.bias_aligned), int(p.c_may_alias_out),
                                   p.align_bytes, tuple(p.spans), p.sem_bytes, p.partial_bytes))


__all__ = ["ENV", "NativeOp", "exchange_api", "load"]
