"""The dispatcher's time model: the predicted microseconds of one (variant, split) on one
problem and device. dispatch.py evaluates it for every candidate and picks the smallest. It
needs only the problem, the device's SM count and memory bandwidth, and each variant's tile,
so it runs on the CPU with fake device properties (see tests/test_dispatch.py).

Model (all times in microseconds):

* K partitioning follows CUTLASS: ``gemm_k_size = round_up(ceil(K / split), 64)`` (64 =
  one 128-byte cache line of 16-bit elements); ``parts = ceil(K / gemm_k_size)``.
* Grid: ``ctas = tiles_m * tiles_n * parts``; ``slots = SMs * occupancy`` (occupancy from
  shared memory, at most 2 CTAs per SM for these 128-thread, ~230-register kernels);
  ``waves = ceil(ctas / slots)``. A half-empty last wave costs as much as a full one.
* Memory: the operands cross DRAM at least once (``2 (MK + KN)`` bytes at DRAM bandwidth);
  the CTAs' own loads, ``ctas * (tm + tn) * gemm_k_size * 2`` bytes, are served by L2 at
  ~3x DRAM bandwidth. Compute: per wave, ``2 * tm * tn * gemm_k_size`` flops per CTA at the
  per-SM mma.sync rate, scaled by a tile efficiency ``(tm * tn / 128^2) ** 0.1`` (capped at
  1.12) and shared by the CTAs resident on an SM, plus 4 µs per wave (pipeline fill and the
  CTA's epilogue). ``t_main = max(memory, compute)``.
* Serial split-K adds the fix-up chain: each tile's partitions finish their main loops at
  about the same time, then run their epilogues one after another through the semaphore
  (wait, read the partial back, write it) -> cost ``(parts - 1) * (1.5 + tm * tn * 7.3e-4)``
  µs, fitted to H100 measurements (~13.5 µs per step for a 128x128 tile).
* Parallel split-K adds the reduction: ``parts * M * N * 4`` bytes of partials written
  and read back at DRAM bandwidth (the writes overlap the GEMM's main loop), plus 0.5 µs
  (the reduction's launch overlaps the GEMM's tail through programmatic dependent launch).
* Each launch costs ~3 µs of fixed latency.

sm90 variants (persistent CTAs, one per SM) use the same memory terms, the wgmma rate per SM
and their own decompositions: parallel = K slices of ``round_up(ceil(K / split), 64 or 8)``
(a remainder slice is one more launch) + the reduction; serial = ``split`` partitions per tile
meeting in an f32 workspace in K order (a chain of ``parts - 1`` fix-ups, one memset launch);
stream_k = every K iteration spread evenly over the SMs + one fix-up; the in-kernel modes'
epilogue is not overlapped with the main loop. A variant is a candidate only where it runs:
sm90 variants (sm_90a cubins) on compute capability 9.0, sm80 variants where one of their
cubins does (same major version, minor at least the target's).

The sm80 constants were refitted on an H100 sweep of every (variant, split) of the sm80 tiles
(``benchmarks/fit_model.py --backend sm80`` over ``benchmarks/explore_h100.json``): the pick
is within 5 % of the best candidate on every suite shape. The sm90 constants were fitted on
sweeps of the shipped sm90 grid (``--backend sm90`` over ``benchmarks/sweep_default_*_h100.json``:
the bench suite in f16 and bf16 and twelve other skinny shapes): the pick is within 10 % of
the best candidate on 27 of those 28 shapes, 13 % on the last (BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from ..spec import Backend, DType, KernelVariant, SplitMode

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
# sm90 (fitted on an H100 sweep: benchmarks/fit_model.py --backend sm90)
SM90_FLOPS_PER_SM = 4.05e12  # wgmma f16/bf16, f32 accumulation, as a 128x128 tile reaches it
SM90_EFF_EXPONENT = 0.44  # smaller tiles: (tile area / 128^2) ** exponent of that rate
SM90_BW_FRACTION = 1.0  # share of DRAM bandwidth the TMA main loop streams at (the fit found the full copy rate)
SM90_SM_BYTES_PER_S = 23.3e9  # what one CTA's TMA pipeline streams: few work units cannot fill DRAM
SM90_L2_FACTOR = 5.4
SM90_WAVE_OVERHEAD_US = 2.7  # per work unit a CTA takes: pipeline fill
SM90_FIXUP_LATENCY_US = 1.8
SM90_FIXUP_US_PER_ELEMENT = 2.46 / (128 * 128)
SM90_MEMSET_US = 1.0  # zeroing the stream-K turnstiles before a split launch
SM90_EPILOGUE_US_PER_ELEMENT = 2.06 / (128 * 128)
SM90_STREAMK_US = 16.0  # stream-K's partial-tile fix-ups and imbalance

@dataclass(frozen=True)
class DeviceInfo:
    """What the model needs to know about a GPU."""

    name: str
    sm_count: int
    bandwidth: float  # bytes/s, device memory (read + write)
    mma_flops_per_sm: float  # flop/s of mma.sync f16/bf16 per SM
    major: int = 9  # compute capability
    minor: int = 0

    @property
    def capability(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def from_properties(cls, name: str, sm_count: int, major: int, minor: int) -> "DeviceInfo":
        key = name.upper()
        if "H200" in key:
            bw = 4.3e12
        elif "H100" in key or "H800" in key:
            bw = 3.0e12 if "PCIE" not in key else 1.9e12
        elif "A100" in key or "A800" in key:
            bw = 1.8e12
        elif major >= 9:
            bw = 3.0e12
        else:
            bw = 0.9e12
        # Our mma.sync kernels reach ~390 TFLOP/s on a 132-SM H100 (128x128x32, 4 stages); 312 peak on an A100.
        per_sm = 2.95e12 if major >= 9 else 2.9e12 if (major, minor) == (8, 0) else 1.3e12
        return cls(name, sm_count, bw, per_sm, major, minor)


@dataclass(frozen=True)
class Candidate:
    variant: KernelVariant
    split: int
    parts: int
    predicted_us: float
    detail: str

    @property
    def mode(self) -> SplitMode:
        return self.variant.mode

    def describe(self) -> str:
        return (f"{self.variant.name} split={self.split} ({self.parts} partitions): "
                f"predicted {self.predicted_us:.1f} us [{self.detail}]")


def k_partitions(k: int, split: int, align_k: int = 64) -> Tuple[int, int]:
    """(gemm_k_size, partitions) the way CUTLASS's UniversalParamsBase computes them."""
    if k <= 0:
        return 0, 1
    size = -(-k // split)
    size = -(-size // align_k) * align_k
    return size, -(-k // size)


def occupancy(v: KernelVariant) -> int:
    """CTAs per SM: limited by shared memory and by registers (accumulators dominate:
    ~96 + warp_m * warp_n / 32 registers per thread), at most 2. sm90 kernels are persistent,
    one CTA per SM."""
    if v.backend is Backend.SM90:
        return 1
    p = v.params
    smem = max(p.smem_bytes(v.tile, DType.F16), 1)  # both supported dtypes are 16-bit
    regs = 96 + p.warp[0] * p.warp[1] // 32
    by_regs = REGISTERS_PER_SM // (32 * p.warp_count(v.tile) * regs)
    return max(1, min(2, SMEM_PER_SM // smem, by_regs))


def tile_efficiency(v: KernelVariant) -> float:
    """Tensor-core efficiency relative to a 128x128 tile: smaller tiles load more per flop;
    larger ones (8 warps) amortise a little more, up to +12 %."""
    tm, tn, _ = v.tile
    return min(1.12, ((tm * tn) / (128.0 * 128.0)) ** EFF_EXPONENT)


def sm90_slices(k: int, split: int) -> Tuple[int, int, int]:
    """(slice length, full slices, remainder) of parallel split-K on sm90 (ParallelGemm::slices)."""
    unit = 64 if k % 64 == 0 else 8
    length = -(-k // split)
    length = -(-length // unit) * unit
    return length, k // length, k % length


def _memory_us(m: int, n: int, k: int, units: int, tm: int, tn: int, k_len: int, dev: DeviceInfo,
               bw_fraction: float = 1.0, l2_factor: float = 0.0, multicast: Tuple[int, int] = (1, 1)) -> float:
    """Every operand byte from DRAM at least once; the CTAs' re-reads served by L2 (a cluster
    of (cm, cn) CTAs multicasts B tiles cm-fold and A tiles cn-fold)."""
    unique_bytes = 2.0 * (m * k + k * n)
    cta_bytes = units * (tm / multicast[1] + tn / multicast[0]) * k_len * 2.0
    l2 = l2_factor or L2_FACTOR
    return max(unique_bytes / (bw_fraction * dev.bandwidth), cta_bytes / (l2 * dev.bandwidth)) * 1e6


def _reduce_us(m: int, n: int, parts: int, dev: DeviceInfo) -> float:
    return REDUCE_LAUNCH_US + (parts * m * n * 4.0 * 2 + m * n * 2.0) / (REDUCE_BW_FRACTION * dev.bandwidth) * 1e6


def _predict_sm90(v: KernelVariant, m: int, n: int, k: int, split: int, dev: DeviceInfo) -> Candidate:
    tm, tn, _ = v.tile
    tiles = -(-m // tm) * -(-n // tn)
    rate = SM90_FLOPS_PER_SM * min(1.0, (tm * tn / (128.0 * 128.0)) ** SM90_EFF_EXPONENT)
    launches = 1
    if v.mode is SplitMode.PARALLEL:
        k_len, full, rem = sm90_slices(k, split)
        parts = full + (rem > 0)
        launches += rem > 0
    elif v.mode is SplitMode.SERIAL:
        parts = max(1, min(split, -(-k // v.tile[2])))
        k_len = -(-k // parts)
    else:  # stream-K: the K iterations of every tile spread evenly over the SMs
        parts, k_len = 1, k
    units = tiles * parts
    streams = min(units, dev.sm_count) * SM90_SM_BYTES_PER_S
    t_mem = _memory_us(m, n, k, units, tm, tn, k_len, dev, min(SM90_BW_FRACTION, streams / dev.bandwidth),
                       SM90_L2_FACTOR, v.params.cluster)
    if v.mode is SplitMode.STREAM_K:
        waves = 1
        t_compute = 2.0 * tiles * tm * tn * k / (dev.sm_count * rate) * 1e6 + SM90_WAVE_OVERHEAD_US
    else:
        waves = -(-units // dev.sm_count)
        t_compute = waves * (2.0 * tm * tn * k_len / rate * 1e6 + SM90_WAVE_OVERHEAD_US)
    t_main = max(t_mem, t_compute)
    total = launches * LAUNCH_US + t_main
    if v.mode is SplitMode.PARALLEL:
        extra = _reduce_us(m, n, parts, dev)
        kind = "reduce"
    else:
        steps = parts - 1
        extra = steps * (SM90_FIXUP_LATENCY_US + tm * tn * SM90_FIXUP_US_PER_ELEMENT) + (SM90_MEMSET_US if steps else 0.0)
        extra += SM90_STREAMK_US if v.mode is SplitMode.STREAM_K else 0.0
        extra += -(-tiles // dev.sm_count) * tm * tn * SM90_EPILOGUE_US_PER_ELEMENT
        kind = "fix-up + epilogue"
    total += extra
    detail = (f"{units} work units, {waves} wave(s) of {dev.sm_count}, main {t_main:.1f} us "
              f"(memory {t_mem:.1f}, compute {t_compute:.1f}), {kind} {extra:.1f} us")
    return Candidate(v, split, parts, total, detail)


def predict(v: KernelVariant, m: int, n: int, k: int, split: int, dev: DeviceInfo) -> Candidate:
    if v.backend is Backend.SM90:
        return _predict_sm90(v, m, n, k, split, dev)
    tm, tn, _ = v.tile
    gemm_k, parts = k_partitions(k, split, 64 if k % 64 == 0 else 8)
    tiles = -(-m // tm) * -(-n // tn)
    ctas = tiles * parts
    slots = dev.sm_count * occupancy(v)
    waves = -(-ctas // slots)
    t_mem = _memory_us(m, n, k, ctas, tm, tn, gemm_k, dev)
    # Compute: waves of CTAs, each at the per-SM mma.sync rate shared by the CTAs on an SM.
    per_cta_rate = dev.mma_flops_per_sm * tile_efficiency(v) / occupancy(v)
    t_compute = waves * (2.0 * tm * tn * gemm_k / per_cta_rate * 1e6 + WAVE_OVERHEAD_US)
    t_main = max(t_mem, t_compute)
    total = LAUNCH_US + t_main
    if v.mode is SplitMode.SERIAL:
        extra = (parts - 1) * (FIXUP_LATENCY_US + tm * tn * FIXUP_US_PER_ELEMENT)
        kind = "fix-up"
    else:
        extra = _reduce_us(m, n, parts, dev)
        kind = "reduce"
    total += extra
    detail = (f"{ctas} CTAs, {waves} wave(s) of {slots}, main {t_main:.1f} us "
              f"(memory {t_mem:.1f}, compute {t_compute:.1f}), {kind} {extra:.1f} us")
    return Candidate(v, split, parts, total, detail)
