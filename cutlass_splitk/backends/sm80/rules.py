"""What CUTLASS's sm80 multistage kernels (mma.sync, cp.async) accept: the hardware tables and
the legality rules of a variant.

Two kinds of rule: :func:`check_warp` finds a *mistake* in the config (a warp shape that
cannot work; validation reports it as an error at its line), :func:`prune` an *unbuildable
grid point* (the grid is a cartesian product; such points are dropped with the reason,
``cutlass-splitk list --why``). The messages are part of the interface (tests check them).
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from ...spec import DType, KernelVariant, Layout, Shape3, warp_count

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
MAX_WARPS = 16


def auto_warp(tile: Shape3) -> Shape3:
    """Four warps per threadblock (halving the larger of the warp's M/N until there are
    four), and no warp tile above 64x64."""
    m, n, k = tile
    wm, wn = m, n
    while (m // wm) * (n // wn) < 4:
        if wn >= wm and wn // 2 >= 16 and (wn // 2) % 8 == 0:
            wn //= 2
        elif wm // 2 >= 16 and (wm // 2) % 16 == 0:
            wm //= 2
        else:
            break
    # Keep each warp's accumulator tile at most 64x64 (more spills): large tiles get 8+ warps.
    while wm > 64:
        wm //= 2
    while wn > 64:
        wn //= 2
    return (wm, wn, k)


def check_warp(tile: Shape3, warp: Shape3, inst: Shape3) -> Optional[str]:
    """Why ``warp`` cannot tile ``tile`` with instruction ``inst``, or None."""
    if any(t % w for t, w in zip(tile, warp)):
        return f"warp {list(warp)} does not divide tile {list(tile)}"
    if warp[0] % inst[0] or warp[1] % inst[1] or warp[2] % inst[2]:
        return f"warp {list(warp)} is not a multiple of instruction shape {list(inst)}"
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


def epilogue_rows_fit(tile: Shape3, warp: Shape3, elements_per_access: int, element_bits: int) -> bool:
    """Whether CUTLASS's epilogue thread map (OutputTileOptimalThreadMap over the output
    tile's 8-row steps) gives every warp at least one row and one column iteration. Narrow
    tiles with many warps cannot: t32x64x64 with 16x16x64 warps (8 of them) fails CUTLASS's
    "Iteration Count Row must be > 0". (The rule also covers warps along K, which validation
    refuses before it is asked.)"""
    warps_m = tile[0] // warp[0]
    warps = warp_count(tile, warp)
    rows, columns = 8, tile[1]
    warps_for_rows = 1 if warps_m > warps else warps // warps_m
    access_bytes = elements_per_access * element_bits // 8
    if rows <= warps_for_rows:  # one row per warp: 32 accesses side by side
        return columns // elements_per_access // 32 > 0
    shape_row = rows // warps_for_rows
    shape_width = columns // elements_per_access
    target_rows = 32 // (256 // access_bytes)
    if target_rows > shape_row:
        access_width, access_rows = 32 // shape_row, shape_row
    else:
        access_width = min(shape_width, 32, 256 // access_bytes)
        access_rows = min(rows, 32 // access_width)
    return (access_width * elements_per_access <= columns and shape_width // access_width > 0
            and shape_row // access_rows > 0)


def prune(variant: KernelVariant, dtype: DType, layout: Layout, archs: Sequence[int]) -> Optional[str]:
    """Why ``variant`` cannot be built for ``dtype``/``layout`` on every arch of ``archs``
    (the first rule it breaks), or None when it can."""
    tile, warp, align = variant.tile, variant.params.warp, variant.alignment
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
    if (tile[0] * tile[2] // align) % threads or (tile[1] * tile[2] // align) % threads:
        return (f"tile {list(tile)} does not split evenly into {align}-element accesses "
                f"over {threads} threads")
    if not (epilogue_rows_fit(tile, warp, align, 16) and epilogue_rows_fit(tile, warp, 4, 32)):
        return (f"CUTLASS's epilogue cannot spread the {tile[0]}x{tile[1]} output tile over "
                f"{warps} warps (warp {list(warp)}): use a wider tile or fewer warps")
    return None
