"""Loading a built directory: ``lib = cutlass_splitk.load("build/default")``.

The manifest and each ``lib<op>.so`` are checked through the build → runtime contract
(:mod:`cutlass_splitk.artifact`: present, same SHA-256 as at build time, same ABI, same
self-description as the manifest), then bound (ctypes) and, where torch is installed,
registered as torch custom ops; the manifest's C call path (``libcks_pycall.so``,
:mod:`.native`) is bound where torch can feed it. Without torch the library loads all the same
and its ops take any other CUDA array. Nothing is compiled here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..artifact import locate, read_manifest
from . import abi, core_memory, cudacore, dispatch, native, tuning
from .op import Op
from .platform import CudaPlatform, torch_or_none
from .workspace import Workspace


def load(directory: Union[str, Path], *, verify: bool = True, tune_cache: Optional[Union[str, Path]] = None,
         autotune: Optional[bool] = None, platform: Any = None, gpc_order: Optional[bool] = None) -> "Library":
    """Loads a directory written by ``cutlass-splitk build``, or an installed kernel package
    by its name (``load("my-kernels")``: a ``str`` without ``/`` that is not a directory here;
    see ``cutlass-splitk package``).

    ``tune_cache``: the autotuning cache file (default ``$CUTLASS_SPLITK_TUNE_CACHE`` or
    ``~/.cache/cutlass-splitk/tune.json``). ``autotune``: tune each new problem on its first
    call (default: ``CUTLASS_SPLITK_AUTOTUNE=1`` in the environment). ``platform``: see
    :mod:`.platform` (default: CUDA). ``gpc_order``: see :attr:`Library.gpc_order` (default: on,
    unless ``CUTLASS_SPLITK_GPC_ORDER=0``)."""
    manifest = read_manifest(locate(directory))
    if autotune is None:
        autotune = os.environ.get("CUTLASS_SPLITK_AUTOTUNE", "0") not in ("", "0")
    ops: Dict[str, Op] = {}
    library = Library(manifest.directory, manifest.data, ops, tuning.TuneCache(tune_cache), autotune, platform)
    for entry in manifest.libraries(verify):
        try:
            bound = abi.bind(entry.path, [v.name for v in entry.spec.variants])
        except OSError as exc:
            raise manifest.error(f"{entry.path}: cannot be loaded ({exc})") from None
        except AttributeError as exc:
            raise manifest.error(f"{entry.path}: missing entry point ({exc})") from None
        manifest.check_loaded(entry, bound.abi_version, bound.description)
        op = ops[entry.name] = Op(library, entry.spec, bound)
        if torch_or_none() is not None:
            from . import torch_op

            # Registered now, not on first use: torch.compile must find the op already there.
            op.torch_op = torch_op.register(op)
    pycall = manifest.pycall(verify)
    try:
        make = native.load(pycall)
    except OSError as exc:
        raise manifest.error(f"{pycall}: cannot be loaded ({exc})") from None
    if make is not None:
        for op in ops.values():
            op.native = native.NativeOp(op, make)
    if gpc_order is None:
        gpc_order = os.environ.get("CUTLASS_SPLITK_GPC_ORDER", "1") not in ("", "0")
    library.gpc_order = gpc_order
    return library


class Library:
    """The ops of one built directory. Ops are attributes: ``lib.linear_f16(a, b)``."""

    def __init__(self, directory: Path, manifest: dict, ops: Dict[str, Op],
                 tune_cache: Optional[tuning.TuneCache] = None, autotune: bool = False, platform: Any = None):
        self.directory = directory
        self.manifest = manifest
        self._ops = ops
        self.platform = platform or CudaPlatform()
        self.workspace = Workspace()  # the torch path's, from torch's caching allocator
        self.array_workspace = Workspace(core_memory.CoreMemory(self.platform.devices))  # any other array's
        self.tuner = tuning.Tuner(tune_cache or tuning.TuneCache(), str(manifest.get("build_hash", "")),
                                  self.platform.device_key, autotune)

    def __getattr__(self, name: str) -> Op:
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return ops[name]
        raise AttributeError(f"no op {name!r} in {self.__dict__.get('directory')}; built ops: "
                             + ", ".join(sorted(ops)))

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._ops))

    @property
    def ops(self) -> List[str]:
        return sorted(self._ops)

    @property
    def build_hash(self) -> str:
        return self.tuner.build_hash

    @property
    def tune_cache(self) -> tuning.TuneCache:
        return self.tuner.cache

    @property
    def autotune(self) -> bool:
        return self.tuner.autotune

    @autotune.setter
    def autotune(self, value: bool) -> None:
        self.tuner.autotune = value

    @property
    def gpc_order(self) -> bool:
        """Whether the sm90 partial GEMMs (parallel split-K) run their work units in the GPC order:
        the CTAs that load the same tile of their own operand run in one GPC in the same round, so
        that its L2 request coalescer merges their loads. Each device's placement is measured by a
        probe kernel before the first launch there (runtime/placement.py). The partials are the same
        bits either way. Setting it applies to the launches planned from then on (not to an argument
        block the library already replays as a CUDA graph: README, "CUDA graphs")."""
        return all(op.launcher.placer.on for op in self._ops.values())

    @gpc_order.setter
    def gpc_order(self, on: bool) -> None:
        for op in self._ops.values():
            op.launcher.placer.turn(bool(on))

    def op(self, name: str) -> Op:
        return getattr(self, name)

    def variants(self, op: str) -> List[str]:
        return [v.name for v in self.op(op).spec.variants]

    def release_workspace(self, stream: Any = None) -> int:
        """Frees the split-K workspace (semaphores, partials) kept for ``stream`` (a torch or
        cuda.core stream, anything with ``__cuda_stream__``, or a raw handle) on every device, or
        all of it where ``stream`` is None; returns how many (device, stream) sets went. Each set
        is kept from its stream's first split call on, so code that makes a stream per request
        calls this when it drops one. The memory is freed on its stream, behind the work queued
        there; the next split call on that stream allocates again. With no stream, every device
        holding an array-path set is synchronised first and those sets are freed on its legacy
        default stream (their own streams may have been destroyed meanwhile). Not while another
        thread is launching on that stream, and not inside a CUDA graph capture (freeing memory there
        invalidates the capture)."""
        handle = None if stream is None else cudacore.stream_handle(stream)
        return self.workspace.release(handle) + self.array_workspace.release(handle)

    def device_info(self, index: int) -> dispatch.DeviceInfo:
        """Device ``index``'s figures (``lib.<op>.device_info``: as that op's time model sees it, the GPC order too)."""
        return self.platform.device_info(index)

    def tune(self, op: str, shapes: Sequence[Tuple[int, int, int]], *, view: Any = None,
             verbose: bool = False) -> List[dict]:
        """Times every (variant, split) of ``op`` on the current device for each (M, N, K)
        on random inputs (rotating over enough input sets to defeat L2), stores the fastest
        in the tuning cache and returns the entries. ``view`` is needed for permuted ops."""
        o = self.op(op)
        return [o.tune(m, n, k, view=view, verbose=verbose) for (m, n, k) in shapes]

    def explain(self, op: str, m: int, n: int, k: int, *, device: Optional[dispatch.DeviceInfo] = None,
                split_k: Optional[int] = None, mode: Optional[str] = None, variant: Optional[str] = None,
                top: int = 5) -> str:
        """Which variant, mode and split the heuristic picks for (m, n, k), and why."""
        o = self.op(op)
        dev = device or o.device_info(self.platform.current_device())
        cands = o.candidates(m, n, k, dev, split_k, mode, variant)
        quads = f", {dev.cluster4_ctas} of them in clusters of four" if dev.cluster4_ctas else ""
        quads += ", partial GEMMs in the GPC order" if dev.gpc_order else ""
        lines = [f"{op}: M={m} N={n} K={k} on {dev.name} ({dev.sm_count} SMs{quads}, compute capability "
                 f"{dev.capability}), heuristic ranking:"]
        if device is None and split_k is None and mode is None and variant is None:
            entry = self.tuner.entry(o.spec, self.platform.current_device(), m, n, k)
            if entry is not None:
                lines[0] = (f"{op}: M={m} N={n} K={k}: tuned choice {entry['variant']} split={entry['split']} "
                            f"({entry['us']:.1f} us measured {entry['when']}, cache {self.tune_cache.path}); "
                            "heuristic ranking:")
        if not cands:
            pool = o.candidates(m, n, k, dev, split_k, mode, variant, runnable_only=False)
            lines.append(f"   none: no built variant runs here ({dispatch.why_not([c.variant for c in pool], o.spec.archs, dev)})")
        for i, c in enumerate(cands[:top]):
            lines.append(f"  {'->' if i == 0 else '  '} {c.describe()}")
        if len(cands) > top:
            lines.append(f"     ... {len(cands) - top} more")
        if len({c.variant.backend for c in cands}) > 1:  # both native: an sm_90 GPU (dispatch.hopper_first)
            lines.append("   (its sm80 variants run here too and rank after the sm90 ones, as fallbacks; tune times them all)")
        return "\n".join(lines)
