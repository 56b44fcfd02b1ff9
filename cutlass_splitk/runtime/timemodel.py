"""The dispatcher's time model: the predicted microseconds of one (variant, split) on one problem and device.
dispatch.py ranks every candidate with it on a problem's first call (a variant's splits in one pass; ``detail`` is
formatted only when read). The libraries evaluate it in C (``templates/cks_timemodel.h``, ``cks_rank_v16``; given this
module's constants by dispatch.NativeRanking): **a change to the arithmetic below must be made there too**, in the same
order of operations (tests/test_timemodel_c.py compares them bit for bit). All times in microseconds.

* sm80: K split as CUTLASS does (``gemm_k_size = round_up(ceil(K / split), 64)``, ``parts = ceil(K / gemm_k_size)``);
  ``ctas = tiles * parts`` in waves of ``SMs * occupancy`` (shared memory, registers; at most 2 per SM). Memory: the
  operands cross DRAM once, the CTAs' own loads come from L2 at ``L2_FACTOR`` x DRAM bandwidth. Compute: per wave, each
  CTA's flops at the per-SM mma.sync rate x ``tile_efficiency``, shared by an SM's CTAs, + ``WAVE_OVERHEAD_US``.
* Serial split-K adds the fix-up chain (the partitions' epilogues in turn); parallel split-K the reduction
  (``parts * M * N * 4`` bytes of partials written and read back; PDL starts it under the GEMM's tail). ``LAUNCH_US``.

sm90 variants (persistent CTAs, one per SM) use the same memory terms, the wgmma rate per SM and their own
decompositions: parallel = ``ceil(K / slice)`` K slices of ``slice = round_up(ceil(K / split), tk)`` in one launch +
the reduction (launched at ``SM90_REDUCE_LAUNCH_US``); serial = ``split`` partitions per tile meeting in an f32
workspace in K order (``parts - 1`` fix-ups, one memset launch, and ``SM90_FIXUP_WAVE`` of a fix-up again per further
wave of work units: each wave's later partitions wait on its earlier ones); stream_k = every K iteration spread evenly
over the SMs (a pipeline fill per tile an SM takes) + one fix-up + ``SM90_STREAMK_FRACTION`` of its main loop. The
in-kernel epilogue follows the main loop; CUTLASS's TMA epilogue (every op since session 43: ``tma_epilogue``) mostly
overlaps the next tile's where no fix-up precedes it, and a ping-pong kernel's (its CTA at its two tiles' rate) hides
under the other warpgroup's MMAs (one pipeline fill per two tiles) as long as they last (a transcendental
activation's, ``SM90_PP_ACTIVATION_US_PER_ELEMENT`` per element, outlasts a short K's). One CTA's TMA pipeline streams
``SM90_SM_BYTES_PER_S * (tk / 64) ** SM90_K_DEPTH_EXPONENT`` from DRAM (64-deep tiles as 128-deep ones where 128
divides K: promoted), its TMA boxes (``tm + tn`` rows of ``k_len``) at most at ``SM90_BOX_BYTES_PER_S``, rows past the
edge (per tile on average) at ``SM90_OOB_BYTES_PER_S``: ``t_mem``'s floor per wave. Under the GPC order
(``DeviceInfo.gpc_order``: sm90_gpc_order.h) the rows a CTA loads for itself, merged with its sharers' in the GPC,
stream ``SM90_GPC_BOX_GAIN`` times faster, and a swapped kernel's weight past L2 (else once per cluster row: the row
multicasts it) is read as an unswapped one's, once + ``SM90_WEIGHT_REREAD`` per further row. Waves count the CTAs
CUTLASS's schedulers launch (whole clusters) over those the device runs at once (clusters of four: its own count,
runtime/clusters.py); one wave of fewer CTAs than SMs runs each one's MMAs and TMA boxes faster
(``SM90_UNDERFILL_*``). Fitted by benchmarks/fit_model.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, List, NamedTuple, Tuple

from ..spec import Backend, DType, KernelVariant, Schedule, SplitMode

LAUNCH_US = 3.0
REDUCE_LAUNCH_US = 0.5  # the reduction's launch overlaps the GEMM's tail (PDL on sm_90)
FIXUP_LATENCY_US = 1.5
FIXUP_US_PER_ELEMENT = 12.0 / (128 * 128)  # fitted on an H100: ~13.5 us per step for a 128x128 tile
SMEM_PER_SM = 228 * 1024
L2_FACTOR = 3.0
EFF_EXPONENT = 0.1  # tile efficiency ~ (tile area / 128^2) ** EFF_EXPONENT
WAVE_OVERHEAD_US = 4.0  # per wave of CTAs: pipeline fill and the CTA's epilogue
REDUCE_BW_FRACTION = 1.0  # partials written by the GEMM and read back, at this share of DRAM bandwidth
REGISTERS_PER_SM = 65536
# sm90 (fitted on H100 and H200 sweeps: benchmarks/fit_model.py --backend sm90; last in session 38, BENCHMARKS.md)
SM90_FLOPS_PER_SM = 4.05e12  # wgmma f16/bf16, f32 accumulation, as a 128x128 tile reaches it
SM90_EFF_EXPONENT = 0.44  # smaller tiles: (tile area / 128^2) ** exponent of that rate
SM90_BW_FRACTION = 0.93  # share of DRAM bandwidth the TMA main loop streams at (1.0 to session 36)
SM90_SM_BYTES_PER_S = 26.17e9  # what one CTA's TMA pipeline streams: few work units cannot fill DRAM
SM90_K_DEPTH_EXPONENT = 0.49  # ... times (tk / 64) ** this: deeper K tiles move more bytes per stage (1.0 to 36)
SM90_L2_FACTOR = 5.4
SM90_WAVE_OVERHEAD_US = 1.203  # per work unit a CTA takes: pipeline fill
SM90_FIXUP_LATENCY_US = 1.8
SM90_FIXUP_US_PER_ELEMENT = 4.13 / (128 * 128)
SM90_MEMSET_US = 1.0  # zeroing the stream-K turnstiles before a split launch
SM90_REDUCE_LAUNCH_US = 0.9  # the reduction's launch under the partial GEMM's tail (PDL; 0.5 to session 38)
SM90_EPILOGUE_US_PER_ELEMENT = 1.543 / (128 * 128)
SM90_TMA_EPILOGUE_US_PER_ELEMENT = 0.2 / (128 * 128)  # CUTLASS's TMA epilogue (round 33: 0.19-0.26)
SM90_PP_ACTIVATION_US_PER_ELEMENT = 6.0 / (128 * 128)  # one warpgroup's TMA epilogue with GELU / SiLU / sigmoid
SM90_STREAMK_US = 16.0  # stream-K's partial-tile fix-ups and imbalance
SM90_STREAMK_FRACTION = 0.10  # ... plus this share of its main loop (3-15 % measured on the squares)
SM90_BOX_BYTES_PER_S = 61.2e9  # one CTA's TMA boxes, rows inside the matrix, at most at this rate
SM90_GPC_BOX_GAIN = 1.638  # ... its own operand's rows this much faster under the GPC order (1.64-1.9 fit)
SM90_OOB_BYTES_PER_S = 19.53e9  # ... and rows past the matrix's edge (zero-filled) at this rate
SM90_L2_BYTES = 50e6  # an sm_90 GPU's L2 (H100, H200: 50 MB)
SM90_WEIGHT_REREAD = 0.706  # share of a weight past L2 read from DRAM again per further cluster row (0.45-0.71 fit)
SM90_UNDERFILL_EXPONENT = 0.395  # one wave of fewer CTAs than SMs: each CTA's rate and box rate x (SMs / CTAs) ** this,
SM90_UNDERFILL_MAX = 1.85  # ... at most this (989 TFLOP/s over 132 SMs: an H100's dense f16 peak per SM, / 4.05)
SM90_FIXUP_WAVE = 0.4  # serial split-K: this share of a fix-up again per further wave of work units (session 40)

_BANDWIDTHS = ((("H200",), 4.3e12), (("H100", "PCIE"), 1.9e12), (("H800", "PCIE"), 1.9e12), (("H100",), 3.0e12),
               (("H800",), 3.0e12), (("A100",), 1.8e12), (("A800",), 1.8e12))  # bytes/s, by the first name match


@dataclass(frozen=True)
class DeviceInfo:
    """What the model needs to know about a GPU."""
    name: str
    sm_count: int
    bandwidth: float  # bytes/s, device memory (read + write)
    mma_flops_per_sm: float  # flop/s of mma.sync f16/bf16 per SM
    major: int = 9  # compute capability
    minor: int = 0
    cluster4_ctas: int = 0  # CTAs resident at once in clusters of four (runtime/clusters.py); 0: unknown
    gpc_order: bool = False  # the sm90 partial GEMMs run in the GPC order here (Launcher.device_info)

    @property
    def capability(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def from_properties(cls, name: str, sm_count: int, major: int, minor: int, cluster4_ctas: int = 0) -> "DeviceInfo":
        key = name.upper()
        bw = next((b for tag, b in _BANDWIDTHS if all(t in key for t in tag)), 3.0e12 if major >= 9 else 0.9e12)
        # Our mma.sync kernels reach ~390 TFLOP/s on a 132-SM H100 (128x128x32, 4 stages); 312 peak on an A100.
        per_sm = 2.95e12 if major >= 9 else 2.9e12 if (major, minor) == (8, 0) else 1.3e12
        return cls(name, sm_count, bw, per_sm, major, minor, cluster4_ctas)


class Candidate(NamedTuple):
    """One (variant, split) and its predicted time; ``detail`` formats ``terms`` only when read (first-call path)."""

    variant: KernelVariant
    split: int
    parts: int
    predicted_us: float
    terms: Tuple[Any, ...]  # (units, noun, waves, slots, main, memory, compute, kind, extra)

    @property
    def mode(self) -> SplitMode:
        return self.variant.mode

    @property
    def detail(self) -> str:
        units, noun, waves, slots, t_main, t_mem, t_compute, kind, extra = self.terms
        return (f"{units} {noun}, {waves} wave(s) of {slots}, main {t_main:.1f} us "
                f"(memory {t_mem:.1f}, compute {t_compute:.1f}), {kind} {extra:.1f} us")

    def describe(self) -> str:
        return (f"{self.variant.name} split={self.split} ({self.parts} partitions): "
                f"predicted {self.predicted_us:.1f} us [{self.detail}]")


def k_partitions(k: int, split: int, align_k: int = 64) -> Tuple[int, int]:
    """(gemm_k_size, partitions) the way CUTLASS's UniversalParamsBase computes them."""
    if k <= 0:
        return 0, 1
    size = -(-(-(-k // split)) // align_k) * align_k  # ceil(K / split) rounded up to align_k
    return size, -(-k // size)


def occupancy(v: KernelVariant) -> int:
    """CTAs per SM: limited by shared memory and by registers (accumulators dominate: ~96 + warp_m * warp_n / 32
    registers per thread), at most 2. sm90 kernels are persistent, one CTA per SM."""
    if v.backend is Backend.SM90:
        return 1
    p = v.params
    smem = max(p.smem_bytes(v.tile, DType.F16), 1)  # both supported dtypes are 16-bit
    regs = 96 + p.warp[0] * p.warp[1] // 32
    by_regs = REGISTERS_PER_SM // (32 * p.warp_count(v.tile) * regs)
    return max(1, min(2, SMEM_PER_SM // smem, by_regs))


def tile_efficiency(v: KernelVariant) -> float:
    """Tensor-core efficiency against a 128x128 tile: smaller tiles load more per flop; larger ones gain up to 12 %."""
    tm, tn, _ = v.tile
    return min(1.12, ((tm * tn) / (128.0 * 128.0)) ** EFF_EXPONENT)


def sm90_slices(k: int, split: int, depth: int) -> Tuple[int, int]:
    """(slice length, slices) of sm90 parallel split-K, whole ``depth``-deep k-tiles (ParallelGemm::slices)."""
    length = -(-(-(-k // split)) // depth) * depth  # ceil(K / split) rounded up to whole k-tiles
    return length, -(-k // length)


def cluster_slots(dev: DeviceInfo, cluster: int) -> int:  # an sm90 kernel's persistent grid in clusters of ``cluster``
    known = dev.cluster4_ctas if cluster == 4 else 0  # the device's own count (runtime/clusters.py), else the H100's share
    return dev.sm_count if cluster <= 2 else known if known > 0 else dev.sm_count * 10 // 11 // cluster * cluster


def _predict_sm90(v: KernelVariant, m: int, n: int, k: int, splits: Iterable[int], dev: DeviceInfo, tma: bool,
                  activation: bool) -> List[Candidate]:
    # Every split at once: what does not depend on the split is computed once per variant.
    (tm, tn), tk = v.params.output_tile(v.tile), v.tile[2]  # over the op's output (swap_ab: see spec)
    cm, cn = v.params.output_cluster()
    mode, sms, bw = v.mode, cluster_slots(dev, cm * cn), dev.bandwidth  # sms: the persistent grid
    tiles_m, tiles_n = -(-m // tm), -(-n // tn)
    tiles = tiles_m * tiles_n
    cmt, cnt = -(-tiles_m // cm), -(-tiles_n // cn)  # clusters along M, N (GPC order: M's share a B tile)
    padded_tiles = cmt * cm * (cnt * cn)  # CUTLASS launches whole clusters: padding too
    oob_rows = (tiles_m * tm - m) / tiles_m + (tiles_n * tn - n) / tiles_n  # past the edge, per tile on average
    box_s_per_k = ((tm + tn - oob_rows) / SM90_BOX_BYTES_PER_S + oob_rows / SM90_OOB_BYTES_PER_S) * 2.0
    mma_area = tm * tn * (2 if v.params.schedule is Schedule.PINGPONG else 1)  # ping-pong: two tiles in flight
    rate = SM90_FLOPS_PER_SM * min(1.0, (mma_area / (128.0 * 128.0)) ** SM90_EFF_EXPONENT)
    parallel, stream_k = mode is SplitMode.PARALLEL, mode is SplitMode.STREAM_K
    along_m = cm == 1 and (cn == 2 or (cnt < cmt if v.params.swap_ab else cmt >= cnt))  # (op's view of the kernel's)
    ordered = dev.gpc_order and parallel and cm * cn <= 2 and (cmt if along_m else cnt) >= 2
    # A and B once (a swapped kernel streams a B past L2 once per cluster of tiles along M, which multicasts it:
    # BENCHMARKS.md, sessions 13, 23 and 37; one that fits stays in L2 for the other tiles), and
    weight_past_l2 = 2.0 * k * n > SM90_L2_BYTES  # an unswapped one partly again per further cluster row:
    unswapped_bytes = 2.0 * (m * k + k * n) + (2.0 * k * n * (cmt - 1) * SM90_WEIGHT_REREAD if weight_past_l2 else 0.0)
    unique_bytes = 2.0 * (m * k + k * n * cmt) if v.params.swap_ab and weight_past_l2 else unswapped_bytes
    # a swapped one as an unswapped one where the GPC order runs its sharers along M in one GPC (session 42)
    ordered_bytes = unswapped_bytes if ordered and along_m else unique_bytes
    cta_bytes_per_k = (tm / cn + tn / cm) * 2.0  # a cluster multicasts B tiles cm-fold, A tiles cn-fold
    cta_stream = SM90_SM_BYTES_PER_S * ((128 if tk == 64 and k % 128 == 0 else tk) / 64.0) ** SM90_K_DEPTH_EXPONENT
    l2_bw, flops_per_k = SM90_L2_FACTOR * bw, 2.0 * tm * tn
    fixup = SM90_FIXUP_LATENCY_US + tm * tn * SM90_FIXUP_US_PER_ELEMENT
    box_gpc = box_s_per_k - (tn if along_m else tm) * 2.0 / SM90_BOX_BYTES_PER_S * (1.0 - 1.0 / SM90_GPC_BOX_GAIN)
    pair = tma and v.params.schedule is Schedule.PINGPONG and not (parallel or stream_k)  # two tiles per SM
    pp_epilogue = tm * tn * SM90_PP_ACTIVATION_US_PER_ELEMENT if activation else 0.0  # one warpgroup's, per tile
    k_tiles = max(1, -(-k // tk))  # serial: at most one partition per k-tile
    reduce_fixed = SM90_REDUCE_LAUNCH_US + m * n * 2.0 / (REDUCE_BW_FRACTION * bw) * 1e6
    reduce_per_part = m * n * 8.0 / (REDUCE_BW_FRACTION * bw) * 1e6
    streamk_us, area = (SM90_STREAMK_US if stream_k else 0.0), -(-tiles // sms) * tm * tn  # area: epilogue waves
    sk_units = padded_tiles / sms if padded_tiles > sms else 1.0  # stream-K: pipeline fills per SM
    in_kernel = streamk_us + area * SM90_EPILOGUE_US_PER_ELEMENT
    # CUTLASS's TMA epilogue where no fix-up precedes it: split 1, stream-K (after a fix-up: no faster)
    in_kernel_one = streamk_us + area * SM90_TMA_EPILOGUE_US_PER_ELEMENT if tma else in_kernel
    new, out, kind = tuple.__new__, [], ("reduce" if parallel else "fix-up + epilogue")
    def main_loop(work: int, units: int, k_len: int) -> Tuple[float, float, float, int]:
        # one launch: ``work`` tiles x partitions (``units`` slots) over k_len of K; few units cannot fill DRAM
        in_order = ordered and units <= 1024 * cm * cn  # the GPC order applies (sm90_gpc_order.h: kMaxOrderedUnits)
        dram_bytes = ordered_bytes if in_order else unique_bytes
        streamed = (work if work < sms else sms) * cta_stream / bw
        t_mem = dram_bytes / ((SM90_BW_FRACTION if streamed >= SM90_BW_FRACTION else streamed) * bw) * 1e6
        t_l2 = work * cta_bytes_per_k * k_len / l2_bw * 1e6
        t_mem = t_l2 if t_l2 > t_mem else t_mem
        if stream_k:
            waves = 1
            t_compute = flops_per_k * padded_tiles * k / (sms * rate) * 1e6 + SM90_WAVE_OVERHEAD_US * sk_units
            t_box = box_s_per_k * (padded_tiles * k / sms) * 1e6
        else:
            waves = -(-units // sms)  # one wave of fewer CTAs than SMs: each computes and streams its boxes faster
            fast = 1.0 if units >= sms else min(SM90_UNDERFILL_MAX, (sms / units) ** SM90_UNDERFILL_EXPONENT)
            if pair and k_len == k:  # a pipeline fill per pair of tiles; an epilogue longer than a tile's MMAs shows
                t_tile = flops_per_k * k_len / (rate * fast) * 1e6
                t_tile = t_tile if t_tile >= pp_epilogue else (t_tile + pp_epilogue) * 0.5
                t_compute = waves * t_tile + -(-units // (2 * sms)) * SM90_WAVE_OVERHEAD_US
            else:
                t_compute = waves * (flops_per_k * k_len / (rate * fast) * 1e6 + SM90_WAVE_OVERHEAD_US)
            box = box_gpc if in_order else box_s_per_k
            t_box = waves * box * k_len * 1e6 / fast  # one CTA streaming its TMA boxes, per wave
        t_mem = t_box if t_box > t_mem else t_mem
        return (t_mem if t_mem > t_compute else t_compute), t_mem, t_compute, waves

    for split in splits:
        if parallel:
            k_len, parts = sm90_slices(k, split, tk)
        elif stream_k:  # the K iterations of every tile spread evenly over the SMs
            parts, k_len = 1, k
        else:
            parts = split if split < k_tiles else k_tiles
            k_len = -(-k // parts)
        t_main, t_mem, t_compute, waves = main_loop(tiles * parts, padded_tiles * parts, k_len)
        units = padded_tiles * parts
        if parallel:
            extra = reduce_fixed + parts * reduce_per_part
        else:
            steps = parts - 1
            extra = ((steps + (waves - 1) * SM90_FIXUP_WAVE) * fixup + SM90_MEMSET_US) + in_kernel if steps else (
                0.0 if pair else in_kernel_one)
            if stream_k:
                extra += SM90_STREAMK_FRACTION * t_main
        out.append(new(Candidate, (v, split, parts, LAUNCH_US + t_main + extra,
                                   (units, "work units", waves, sms, t_main, t_mem, t_compute, kind, extra))))
    return out


def _predict_sm80(v: KernelVariant, m: int, n: int, k: int, splits: Iterable[int], dev: DeviceInfo) -> List[Candidate]:
    (tm, tn, _), bw = v.tile, dev.bandwidth
    tiles = -(-m // tm) * -(-n // tn)
    occ = occupancy(v)
    slots = dev.sm_count * occ
    align_k = 64 if k % 64 == 0 else 8
    unique_us = 2.0 * (m * k + k * n) / bw * 1e6
    l2_bw = L2_FACTOR * bw
    # Compute: waves of CTAs, each at the per-SM mma.sync rate shared by the CTAs on an SM.
    per_cta_rate = dev.mma_flops_per_sm * tile_efficiency(v) / occ
    serial = v.mode is SplitMode.SERIAL
    fixup = FIXUP_LATENCY_US + tm * tn * FIXUP_US_PER_ELEMENT
    flops_per_k = 2.0 * tm * tn / per_cta_rate * 1e6  # us per k of one CTA
    bytes_per_k = (tm + tn) * 2.0 / l2_bw * 1e6  # us per k of one CTA's loads, from L2
    reduce_fixed = REDUCE_LAUNCH_US + m * n * 2.0 / (REDUCE_BW_FRACTION * bw) * 1e6
    reduce_per_part = m * n * 8.0 / (REDUCE_BW_FRACTION * bw) * 1e6
    kind = "fix-up" if serial else "reduce"
    out = []
    for split in splits:
        gemm_k, parts = k_partitions(k, split, align_k)
        ctas = tiles * parts
        waves = -(-ctas // slots)
        t_mem = max(unique_us, ctas * gemm_k * bytes_per_k)
        t_compute = waves * (gemm_k * flops_per_k + WAVE_OVERHEAD_US)
        t_main = t_mem if t_mem > t_compute else t_compute
        extra = (parts - 1) * fixup if serial else reduce_fixed + parts * reduce_per_part
        out.append(Candidate(v, split, parts, LAUNCH_US + t_main + extra,
                             (ctas, "CTAs", waves, slots, t_main, t_mem, t_compute, kind, extra)))
    return out


def predict_splits(v: KernelVariant, m: int, n: int, k: int, splits: Iterable[int], dev: DeviceInfo,
                   tma_epilogue: bool = False, activation: bool = False) -> List[Candidate]:
    """The candidates of ``v`` at each of ``splits`` (in that order). ``tma_epilogue``: EpilogueSpec.tma_in_kernel (its
    sm90 in-kernel modes take CUTLASS's TMA epilogue; off: the earlier epilogue's cost); ``activation``: its
    epilogue evaluates a transcendental activation (EpilogueSpec.transcendental)."""
    sm90 = v.backend is Backend.SM90
    return _predict_sm90(v, m, n, k, splits, dev, tma_epilogue, activation) if sm90 else _predict_sm80(v, m, n, k, splits, dev)


def predict(v: KernelVariant, m: int, n: int, k: int, split: int, dev: DeviceInfo, tma_epilogue: bool = False,
            activation: bool = False) -> Candidate:
    return predict_splits(v, m, n, k, (split,), dev, tma_epilogue, activation)[0]
