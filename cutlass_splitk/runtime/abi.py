"""ctypes mirror of ``templates/cks_abi.h`` (and ``cks_timemodel.h``) and the binding of one
generated library."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional

from ..artifact import ABI_VERSION

STATUS_NAMES = {
    0: "ok",
    1: "invalid problem",
    2: "workspace",
    3: "ABI mismatch",
    4: "CUDA error",
    5: "internal error",
}
STATUS_INVALID_PROBLEM = 1
STATUS_CUDA = 4


class CksArgs(ctypes.Structure):
    _fields_ = [
        ("abi_version", ctypes.c_int32),
        ("m", ctypes.c_int32),
        ("n", ctypes.c_int32),
        ("k", ctypes.c_int32),
        ("split_k", ctypes.c_int32),
        ("permute_s", ctypes.c_int32),
        ("permute_h", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("a", ctypes.c_void_p),
        ("lda", ctypes.c_int64),
        ("b", ctypes.c_void_p),
        ("ldb", ctypes.c_int64),
        ("c", ctypes.c_void_p),
        ("ldc", ctypes.c_int64),
        ("bias", ctypes.c_void_p),
        ("e", ctypes.c_void_p),
        ("lde", ctypes.c_int64),
        ("d", ctypes.c_void_p),
        ("ldd", ctypes.c_int64),
        ("alpha", ctypes.c_float),
        ("beta", ctypes.c_float),
        ("act_arg", ctypes.c_float),
        ("reserved1", ctypes.c_float),
        ("semaphores", ctypes.c_void_p),
        ("semaphore_bytes", ctypes.c_int64),
        ("partials", ctypes.c_void_p),
        ("partial_bytes", ctypes.c_int64),
    ]


class CksQuery(ctypes.Structure):
    _fields_ = [
        ("k_partitions", ctypes.c_int32),
        ("tiles_m", ctypes.c_int32),
        ("tiles_n", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        ("semaphore_bytes", ctypes.c_int64),
        ("partial_bytes", ctypes.c_int64),
    ]


# The constants of timemodel.py that CksModel carries (each the lower-case name of one there).
MODEL_CONSTANTS = (
    "launch_us", "reduce_launch_us", "fixup_latency_us", "fixup_us_per_element", "l2_factor", "wave_overhead_us",
    "reduce_bw_fraction", "sm90_flops_per_sm", "sm90_eff_exponent", "sm90_bw_fraction", "sm90_sm_bytes_per_s",
    "sm90_k_depth_exponent", "sm90_l2_factor", "sm90_wave_overhead_us", "sm90_fixup_latency_us",
    "sm90_fixup_us_per_element", "sm90_memset_us", "sm90_epilogue_us_per_element", "sm90_streamk_us",
    "sm90_streamk_fraction", "sm90_box_bytes_per_s", "sm90_oob_bytes_per_s", "sm90_l2_bytes", "sm90_weight_reread",
    "sm90_tma_epilogue_us_per_element", "sm90_pp_activation_us_per_element", "sm90_underfill_exponent",
    "sm90_underfill_max", "sm90_gpc_box_gain", "sm90_fixup_wave", "sm90_reduce_launch_us")


class CksModel(ctypes.Structure):
    """timemodel.py's constants (MODEL_CONSTANTS), then the device's figures (cks_timemodel.h)."""

    _fields_ = [(name, ctypes.c_double) for name in MODEL_CONSTANTS + ("bandwidth", "mma_flops_per_sm")] + [
        ("sm_count", ctypes.c_int64), ("cluster4_ctas", ctypes.c_int64), ("gpc_order", ctypes.c_int64)]


MODEL_SWAP_AB = 1  # CksModelVariant.flags (CKS_MODEL_SWAP_AB): an sm90 kernel with swapped operands
MODEL_TMA_EPILOGUE = 2  # CKS_MODEL_TMA_EPILOGUE: its in-kernel modes take CUTLASS's TMA epilogue
MODEL_PINGPONG = 4  # CKS_MODEL_PINGPONG: its schedule is ping-pong
MODEL_ACTIVATION = 8  # CKS_MODEL_ACTIVATION: the op's epilogue evaluates a transcendental activation


class CksModelVariant(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in ("backend", "mode", "tm", "tn", "tk", "cm", "cn", "occupancy")] + [
        ("tile_efficiency", ctypes.c_double)] + [
        (name, ctypes.c_int32) for name in ("name_order", "first_split", "split_count", "flags")]


class CksRanked(ctypes.Structure):
    _fields_ = [("variant", ctypes.c_int32), ("split", ctypes.c_int32), ("parts", ctypes.c_int32),
                ("reserved", ctypes.c_int32), ("predicted_us", ctypes.c_double)]


QueryFn = Callable[[ctypes.c_void_p, ctypes.c_void_p], int]


@dataclass
class BoundLibrary:
    """One loaded ``lib<op>.so``: its library-level functions and per-variant entry points."""

    path: Path
    handle: ctypes.CDLL
    abi_version: int
    description: str
    query: Dict[str, Callable[..., int]]
    run: Dict[str, Callable[..., int]]
    rank: Optional[Callable[..., int]] = None  # cks_rank_v16 (cks_timemodel.h); None in older libraries
    # cks_sm90_set_placement(device, cluster, slots, groups) (sm90_gpc_scheduler.cuh); None without sm90 partial GEMMs
    set_placement: Optional[Callable[..., int]] = None

    def last_error(self) -> str:
        return self.handle.cks_last_error().decode("utf-8", "replace")


def bind(path: Path, variant_names) -> BoundLibrary:
    """dlopens ``path`` and binds the entry points of ``variant_names``. Raises OSError or
    AttributeError (a missing symbol) for the caller to turn into a LibraryError."""
    handle = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
    handle.cks_abi_version.restype = ctypes.c_int
    handle.cks_abi_version.argtypes = []
    handle.cks_describe.restype = ctypes.c_char_p
    handle.cks_describe.argtypes = []
    handle.cks_last_error.restype = ctypes.c_char_p
    handle.cks_last_error.argtypes = []
    query: Dict[str, Callable[..., int]] = {}
    run: Dict[str, Callable[..., int]] = {}
    for name in variant_names:
        q = getattr(handle, f"cks_{name}_query")
        q.restype = ctypes.c_int
        q.argtypes = [ctypes.POINTER(CksArgs), ctypes.POINTER(CksQuery)]
        r = getattr(handle, f"cks_{name}_run")
        r.restype = ctypes.c_int
        # (CksArgs const*, cudaStream_t) as plain pointers: the args come as ctypes.byref(CksArgs)
        # or, on the fast path, as the bytes of a CksArgs; the stream as an int.
        r.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        query[name] = q
        run[name] = r
    return BoundLibrary(path, handle, int(handle.cks_abi_version()),
                        handle.cks_describe().decode("utf-8", "replace"), query, run, bind_rank(handle),
                        bind_placement(handle))


def bind_rank(handle: ctypes.CDLL) -> Optional[Callable[..., int]]:
    """The library's ``cks_rank_v16`` (the time model in C), or None where it was built without it."""
    try:
        fn = handle.cks_rank_v16
    except AttributeError:
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(CksModel), ctypes.POINTER(CksModelVariant), ctypes.c_int,
                   ctypes.POINTER(ctypes.c_int32), ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int32,
                   ctypes.POINTER(CksRanked), ctypes.c_int]
    return fn


def bind_placement(handle: ctypes.CDLL) -> Optional[Callable[..., int]]:
    """The library's ``cks_sm90_set_placement`` (the sm90 partial GEMMs' GPC order), or None where
    it has no sm90 partial GEMM (or was built before it)."""
    try:
        fn = handle.cks_sm90_set_placement
    except AttributeError:
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p]
    return fn


__all__ = ["ABI_VERSION", "BoundLibrary", "CksArgs", "CksModel", "CksModelVariant", "CksQuery", "CksRanked",
           "MODEL_ACTIVATION", "MODEL_CONSTANTS", "MODEL_PINGPONG", "MODEL_SWAP_AB", "MODEL_TMA_EPILOGUE", "STATUS_CUDA", "STATUS_INVALID_PROBLEM", "STATUS_NAMES", "bind", "bind_placement", "bind_rank"]
