"""What CUTLASS's sm80 multistage kernels (mma.sync, cp.async) accept: the hardware tables and
the legality rules of a variant.

Two kinds of rule: :func:`check_warp` finds a *mistake* in the config (a warp shape that
cannot work; validation reports it as an error at its line), :func:`prune` an *unbuildable
grid point* (the grid is a cartesian product; such points are dropped with the reason,
``cutlass-splitk list --why``). The messages are part of the interface (tests check them).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from ...spec import Backend, DType, KernelVariant, Layout, OpSpec, Shape3, target_arch, warp_count

# Largest dynamic shared memory per block (bytes) for each supported -gencode target.
SMEM_LIMIT: Dict[int, int] = {80: 166912, 86: 101376, 89: 101376, 90: 232448}
SUPPORTED_ARCHS: Tuple[int, ...] = tuple(sorted(SMEM_LIMIT))
DEFAULT_ARCHS: Tuple[int, ...] = (80, 90)
# mma.sync instruction shapes valid for 16-bit inputs with f32 accumulation (sm80+).
INSTRUCTION_SHAPES: Dict[DType, Tuple[Shape3, ...]] = {
    DType.F16: ((16, 8, 16), (16, 8, 8)),
    DType.BF16: ((16, 8, 16), (16, 8, 8)),
}
# cp.async moves 4, 8 or 16 bytes: the legal alignments in elements.
ALIGNMENTS: Dict[DType, Tuple[int, ...]] = {DType.F16: (8, 4, 2), DType.BF16: (8, 4, 2)}
SWIZZLES: Tuple[int, ...] = (1, 2, 4, 8)
MAX_STAGES = 8
MAX_WARPS = 8
# The tile and warp extents the GPU tests and the config fuzzer verify. CUTLASS 2.x's thread
# maps accept more, but the fuzzer found shapes outside these (tiles of 48, 96 or 192 rows,
# 16-wide warps, 16 warps per CTA) that fail to compile, cannot launch, or - worst -
# build and compute wrong results (issue 13), so they are refused.
TILE_MN = (32, 64, 128, 256)
TILE_K = (16, 32, 64, 128)  # K > 64 is pruned (see prune)
WARP_MN = (32, 64)
SMEM_ACCESS = 8  # elements of one 128-bit shared-memory access


def auto_warp(tile: Shape3) -> Shape3:
    """Four warps per threadblock where the tile allows (halving the larger of the warp's M/N
    until there are four, never below 32), and no warp tile above 64x64."""
    m, n, k = tile
    wm, wn = m, n
    while (m // wm) * (n // wn) < 4:
        if wn >= wm and wn // 2 >= WARP_MN[0]:
            wn //= 2
        elif wm // 2 >= WARP_MN[0]:
            wm //= 2
        else:
            break
    # Keep each warp's accumulator tile at most 64x64 (more spills): large tiles get 8+ warps.
    while wm > 64:
        wm //= 2
    while wn > 64:
        wn //= 2
    return (wm, wn, k)


def check_tile(tile: Shape3) -> Optional[str]:
    """Why ``tile`` is outside the sm80 tiles, or None."""
    m, n, k = tile
    if m not in TILE_MN or n not in TILE_MN:
        return (f"tile {list(tile)}: sm80 tile M and N must each be one of {', '.join(map(str, TILE_MN))} "
                "(the shapes its tests verify)")
    if k not in TILE_K:
        return f"tile {list(tile)}: sm80 tile K must be one of {', '.join(map(str, TILE_K))}"
    return None


def check_warp(tile: Shape3, warp: Shape3, inst: Shape3) -> Optional[str]:
    """Why ``warp`` cannot tile ``tile`` with instruction ``inst``, or None."""
    if warp[0] not in WARP_MN or warp[1] not in WARP_MN:
        return (f"warp {list(warp)}: sm80 warp M and N must each be one of {', '.join(map(str, WARP_MN))} "
                "(the shapes its tests verify)")
    if any(t % w for t, w in zip(tile, warp)):
        return f"warp {list(warp)} does not divide tile {list(tile)}"
    if warp[2] != tile[2]:
        # Sliced K (warp K < tile K) built cleanly and computed wrong results on the H100
        # in both split-K modes (issue 13); round 2 of the tile sweep found it <= 3 % faster
        # at best, so it is refused rather than repaired.
        return (f"warp K ({warp[2]}) must equal tile K ({tile[2]}): sliced-K warps "
                "(warp K < tile K) are not supported; use warp "
                f"{[warp[0], warp[1], tile[2]]}, or more warps along M or N")
    if warp[2] < 2 * inst[2]:
        # CUTLASS's multistage main loop needs at least two warp-level MMA steps per stage
        return f"warp K ({warp[2]}) must be at least twice the instruction K ({inst[2]})"
    count = warp_count(tile, warp)
    if count > MAX_WARPS:
        return f"tile {list(tile)} with warp {list(warp)} needs {count} warps; at most {MAX_WARPS}"
    return None


def prune(variant: KernelVariant, dtype: DType, layout: Layout, archs: Sequence[int]) -> Optional[str]:
    """Why ``variant`` cannot be built for ``dtype``/``layout`` on every arch of ``archs``
    (the first rule it breaks), or None when it can."""
    tile, align = variant.tile, variant.alignment
    smem_limit = min(SMEM_LIMIT[a] for a in archs)
    limiting_arch = min(archs, key=lambda a: SMEM_LIMIT[a])
    warps = variant.params.warp_count(tile)
    threads = 32 * warps
    smem = variant.params.smem_bytes(tile, dtype)
    contiguous_b = tile[2] if layout is Layout.TN else tile[1]
    if tile[2] > 64:
        return (f"tile K {tile[2]} > 64: CUTLASS's crosswise shared-memory layout for 16-bit "
                "operands needs K <= 64 (128 bytes)")
    if smem > smem_limit:
        return f"shared memory {smem} B > {smem_limit} B limit of sm_{limiting_arch}"
    if tile[2] % align or contiguous_b % align:
        return f"tile {list(tile)} is not a multiple of alignment {align} along the contiguous dimension"
    # global loads move `align` elements; the shared-memory tile iterators always move 128 bits
    # (8 elements), so both must give every thread whole accesses (CUTLASS's thread maps assert
    # a non-zero iteration count: the fuzzer's t32x256x16 with 4 warps failed to compile)
    for access in sorted({align, SMEM_ACCESS}, reverse=True):
        if (tile[0] * tile[2] // access) % threads or (tile[1] * tile[2] // access) % threads:
            return (f"tile {list(tile)} does not split evenly into {access}-element accesses "
                    f"over {threads} threads")
    return None


def for_targets(op: OpSpec, targets: Sequence[str]) -> Tuple[OpSpec, List[str]]:
    """``op`` as built for the -gencode ``targets`` (a parsed ``CUTLASS_SPLITK_CUDA_ARCH_LIST``, e.g. ``("80",
    "90+PTX")``) instead of its ``arch:`` list: their architectures become its sm80 archs, which the manifest
    records (the runtime offers the variants where that code runs), and a variant that does not fit a target's shared
    memory is left out. Returns the op and a note for each reason a group of variants was left out."""
    archs = tuple(sorted({target_arch(t) for t in targets}))
    known = [a for a in archs if a in SMEM_LIMIT]  # newer GPUs: no smaller limit than sm_90's is known
    kept: List[KernelVariant] = []
    dropped: Dict[str, List[str]] = {}  # reason -> the groups it leaves out (both modes of a group share one)
    for v in op.variants:
        reason = prune(v, op.dtype, op.layout, known) if v.backend is Backend.SM80 and known else None
        if not reason:
            kept.append(v)
        elif v.group not in dropped.setdefault(reason, []):
            dropped[reason].append(v.group)
    notes = [f"{op.name}: its sm80 group{'s' * (len(groups) > 1)} {', '.join(groups)} "
             f"{'are' if len(groups) > 1 else 'is'} left out: {reason}" for reason, groups in dropped.items()]
    return dataclasses.replace(op, archs=archs if any(v.backend is Backend.SM80 for v in kept) else (),
                               variants=tuple(kept)), notes
