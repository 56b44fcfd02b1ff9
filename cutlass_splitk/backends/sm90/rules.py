"""What the sm90 backend (CUTLASS 3.x ``KernelTmaWarpSpecialized*`` kernels: TMA loads, wgmma,
built for ``sm_90a``) accepts: the hardware facts and the legality rules of a variant.

As in the sm80 backend, :func:`check_tile` / :func:`check_cluster` find *mistakes* in the
config (reported as errors at their line) and :func:`prune` drops *unbuildable grid points*
with the reason (``cutlass-splitk list --why``). The messages are part of the interface.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Sequence, Tuple

from ...spec import (DTYPE_BYTES, Backend, DType, EOp, EpilogueSpec, KernelVariant, OpSpec, Permute, Schedule, Shape3,
                     SplitMode, target_arch)

TARGETS: Tuple[str, ...] = ("90a",)  # wgmma and setmaxnreg exist only in the arch-specific target
SMEM_LIMIT = 232448  # bytes of dynamic shared memory per block on sm_90
SMEM_RESERVED = 4096  # pipeline barriers, scheduler and tensor-map storage (upper bound)
TILE_M = (64, 128, 256)  # one or two 64-row wgmma atoms per consumer warpgroup
TILE_K = (32, 64, 128)  # 64 elements = one 128-byte TMA swizzle row of 16-bit data
MAX_TILE_N = 256  # wgmma N <= 256
CLUSTERS: Tuple[Tuple[int, int], ...] = ((1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4), (2, 4), (4, 2))
ALIGNMENT = 8  # TMA moves 16-byte rows: 8 elements of 16 bits
MAX_STAGES = 12
MAX_ACCUMULATORS = 128  # f32 accumulators per consumer thread before registers spill
EPILOGUE_WARPS = 8  # the fused epilogue's consumer warps (two warpgroups)
# The wgmma N widths CUTLASS's collective builder chooses from by default (cute::GMMA::ss_op_selector):
# for any other tile N it takes the widest of these that divides N (112 -> m64n16k16, seven narrow MMAs
# where one would do: 50-100x slower on the H100, BENCHMARKS.md session 36). Every other multiple of 8
# up to 256 is an instruction too: the generator writes those a unit needs into it (codegen.wide_mma;
# CUTLASS's own, behind CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, add 37 s of parsing to every unit).
STANDARD_MMA_N = (8, 16, 32, 64, 96, 128, 192, 256)


def consumer_threads(schedule: Schedule) -> int:
    """Threads that hold one tile's accumulators: both consumer warpgroups (cooperative) or
    one (ping-pong)."""
    return 256 if schedule is Schedule.COOPERATIVE else 128


def accumulators_per_thread(tile: Shape3, schedule: Schedule) -> int:
    return tile[0] * tile[1] // consumer_threads(schedule)


def epilogue_columns(tile: Shape3, schedule: Schedule) -> int:
    """Columns the in-kernel epilogue before session 43 staged at a time per warp: 64 where registers
    allow, else 32. What it took is still the in-kernel epilogue's budget (:func:`epilogue_smem`)."""
    return 64 if tile[1] % 64 == 0 and accumulators_per_thread(tile, schedule) < MAX_ACCUMULATORS else 32


def three_staged_buffers(schedule: Schedule, epilogue: EpilogueSpec) -> bool:
    """Whether the TMA epilogue stages C, E and a permuted D in three buffers of 128-row subtiles (the
    cooperative schedule, an op with beta, E and a permute): one of each (~25 KB) outgrows the 32-column
    budget (18 KB), so such a kernel takes the 64-column one."""
    return (schedule is Schedule.COOPERATIVE and epilogue.beta and epilogue.e_op is not EOp.NONE
            and epilogue.permute is not Permute.NONE)


def epilogue_smem(tile: Shape3, schedule: Schedule, mode: SplitMode, epilogue: EpilogueSpec) -> int:
    """Shared memory of the epilogue: the budget of the in-kernel modes' TMA epilogue (serial,
    stream-K; mirrors sm90_tma_epilogue.cuh's kEpilogueSmem, eight warps' staging of 16 rows of
    :func:`epilogue_columns`, 64 for :func:`three_staged_buffers`, which it fits with two or one buffers
    of each kind; the kernel gives it two wherever the stages this budget prices leave room for them,
    sm90_gemm.cuh's InKernelEpilogue) or CUTLASS's TMA store of f32 partials (parallel: at most one 64 x 32 f32 subtile,
    double buffered, per consumer warpgroup)."""
    if mode is SplitMode.PARALLEL:
        return 2 * 2 * 64 * 32 * 4
    columns = 64 if three_staged_buffers(schedule, epilogue) else epilogue_columns(tile, schedule)
    return EPILOGUE_WARPS * 16 * (columns + 4) * 4


def stage_bytes(tile: Shape3, dtype: DType) -> int:
    """One main-loop stage: an A tile and a B tile."""
    m, n, k = tile
    return (m * k + n * k) * DTYPE_BYTES[dtype]


def check_tile(tile: Shape3) -> Optional[str]:
    """Why ``tile`` is not an sm90 tile shape, or None."""
    m, n, k = tile
    if m not in TILE_M:
        return f"tile M {m} is not possible for sm90 (wgmma warpgroups of 64 rows); valid values: 64, 128, 256"
    if n % 16 or not 16 <= n <= MAX_TILE_N:
        return f"tile N {n} is not possible for sm90: use a multiple of 16 from 16 to {MAX_TILE_N}"
    if k not in TILE_K:
        return f"tile K {k} is not possible for sm90; valid values: {', '.join(map(str, TILE_K))}"
    return None


def extended_mma(tile: Shape3) -> bool:
    """Whether a kernel tile's wgmma (m64nNk16, N the tile's N) is outside CUTLASS's standard widths,
    so that its units carry the instruction themselves (``codegen.wide_mma``)."""
    return tile[1] not in STANDARD_MMA_N


def check_cluster(cluster: Tuple[int, int]) -> Optional[str]:
    if cluster not in CLUSTERS:
        return (f"cluster {list(cluster)} is not supported; valid values: "
                + ", ".join(str(list(c)) for c in CLUSTERS))
    return None


def prune(variant: KernelVariant, dtype: DType, epilogue: EpilogueSpec) -> Optional[str]:
    """Why ``variant`` of an op with ``epilogue`` cannot be built (the first rule it breaks), or None when it can."""
    p = variant.params
    tile, mode, schedule = variant.tile, variant.mode, p.schedule
    if schedule is Schedule.COOPERATIVE and tile[0] < 128:
        return f"the cooperative schedule needs tile M >= 128 (two warpgroups of 64 rows), got {tile[0]}"
    accumulators = accumulators_per_thread(tile, schedule)
    if accumulators > MAX_ACCUMULATORS:
        fix = "a smaller tile" + (" or the cooperative schedule" if schedule is Schedule.PINGPONG else "")
        return (f"tile {list(tile)} with the {schedule.value} schedule holds {accumulators} f32 accumulators "
                f"per thread (at most {MAX_ACCUMULATORS}): use {fix}")
    # A swapped kernel's in-kernel epilogue stages subtiles of 16 of its columns (the op's rows) where its tile N
    # is not a multiple of 32; an unswapped one's permuted store takes 32-column subtiles (sm90_tma_epilogue.cuh).
    if tile[1] % 32 and mode is not SplitMode.PARALLEL and not p.swap_ab:
        return (f"tile N {tile[1]} with {mode.value} split-K: the in-kernel fused epilogue stages 32-column "
                "chunks; use a multiple of 32, parallel split-K or swap_ab: true")
    if schedule is Schedule.PINGPONG and mode is SplitMode.STREAM_K:
        return "stream-K needs the cooperative schedule (CUTLASS's ping-pong kernel has no stream-K scheduler)"
    if schedule is Schedule.PINGPONG and mode is SplitMode.SERIAL and max(variant.splits) > 1:
        return ("serial split factors above 1 need the cooperative schedule (CUTLASS's ping-pong kernel "
                "has no in-kernel split-K); use serial: [1] or parallel split-K")
    fixed = epilogue_smem(tile, schedule, mode, epilogue) + SMEM_RESERVED
    need = (p.stages or 2) * stage_bytes(tile, dtype) + fixed
    if need > SMEM_LIMIT:
        what = f"{p.stages} stages" if p.stages else "2 stages"
        return f"shared memory {need} B ({what} + epilogue) > {SMEM_LIMIT} B limit of sm_90"
    return None


def for_targets(op: OpSpec, targets: Sequence[str]) -> Tuple[OpSpec, List[str]]:
    """``op`` as built for the -gencode ``targets`` (a parsed ``CUTLASS_SPLITK_CUDA_ARCH_LIST``): its sm90 variants are
    sm_90a code, which runs on compute capability 9.0 alone, so they are left out unless a target is 9.0. Returns the
    op and a note of what was left out."""
    if any(target_arch(t) == 90 for t in targets):
        return op, []
    kept = tuple(v for v in op.variants if v.backend is not Backend.SM90)
    return dataclasses.replace(op, variants=kept), [
        f"{op.name}: its sm90 variants ({len(op.variants) - len(kept)}) are left out: sm_90a code runs on compute "
        "capability 9.0 alone, which the targets do not name"]
