"""The typed model of what gets built: enums, their C++ spellings, and frozen dataclasses.

A :class:`KernelVariant` is one CUTLASS instantiation. Its ``name`` encodes every template
parameter; it is the variant's identity, its C symbol suffix and its filter key. Split
factors are run-time values and are not part of the name: each variant carries the list it
accepts.

This module is shared by the build side and the runtime and imports neither YAML nor torch.
What a backend's hardware accepts lives with the backend (``backends/sm80/rules.py``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, Tuple, Union


class DType(enum.Enum):
    F16 = "f16"
    BF16 = "bf16"


class Layout(enum.Enum):
    TN = "tn"  # A row-major (M, K); B column-major (K, N), i.e. an nn.Linear weight (N, K)
    NN = "nn"  # A row-major (M, K); B row-major (K, N)


class SplitMode(enum.Enum):
    SERIAL = "serial"  # in-kernel reduction of the K partitions, in K order
    PARALLEL = "parallel"  # float32 partials + reduction kernel that owns the epilogue
    STREAM_K = "stream_k"  # sm90: data-parallel tiles plus stream-K work units (split factor 1)


class Backend(enum.Enum):
    SM80 = "sm80"  # CUTLASS 2.x: mma.sync + cp.async, runs on sm_80 and newer
    SM90 = "sm90"  # CUTLASS 3.x: TMA + wgmma, built for sm_90a (Hopper only)


class Schedule(enum.Enum):
    """sm90 kernel schedules (CUTLASS ``KernelTmaWarpSpecialized*``)."""

    COOPERATIVE = "cooperative"  # two consumer warpgroups share one tile; takes split-K / stream-K
    PINGPONG = "pingpong"  # consumer warpgroups alternate tiles; epilogue overlaps the main loop


class Activation(enum.Enum):
    IDENTITY = "identity"
    RELU = "relu"
    GELU = "gelu"  # erf form, torch.nn.functional.gelu(approximate="none")
    GELU_TANH = "gelu_tanh"  # torch.nn.functional.gelu(approximate="tanh")
    SILU = "silu"
    SIGMOID = "sigmoid"
    LEAKY_RELU = "leaky_relu"


class EOp(enum.Enum):
    NONE = "none"
    ADD = "add"
    MUL = "mul"


class BiasMode(enum.Enum):
    NONE = "none"
    PER_COL = "per_col"  # length N, the nn.Linear bias
    PER_ROW = "per_row"  # length M


class Permute(enum.Enum):
    NONE = "none"
    # (M, N) seen as (B, S, H, D), stored as (B, H, S, D): attention head split.
    HEAD_SPLIT = "head_split"
    # (M, N) seen as (B, S, 3, H, D), stored as (3, B, H, S, D): fused QKV split.
    QKV_SPLIT = "qkv_split"


# --- C++ spellings: the one table per enum -------------------------------------------------

DTYPE_CPP: Dict[DType, str] = {DType.F16: "cutlass::half_t", DType.BF16: "cutlass::bfloat16_t"}
DTYPE_BYTES: Dict[DType, int] = {DType.F16: 2, DType.BF16: 2}
ACTIVATION_CPP: Dict[Activation, str] = {
    Activation.IDENTITY: "cks::Act::kIdentity",
    Activation.RELU: "cks::Act::kRelu",
    Activation.GELU: "cks::Act::kGelu",
    Activation.GELU_TANH: "cks::Act::kGeluTanh",
    Activation.SILU: "cks::Act::kSilu",
    Activation.SIGMOID: "cks::Act::kSigmoid",
    Activation.LEAKY_RELU: "cks::Act::kLeakyRelu",
}
EOP_CPP: Dict[EOp, str] = {EOp.NONE: "cks::EOp::kNone", EOp.ADD: "cks::EOp::kAdd", EOp.MUL: "cks::EOp::kMul"}
BIAS_CPP: Dict[BiasMode, str] = {
    BiasMode.NONE: "cks::Bias::kNone",
    BiasMode.PER_COL: "cks::Bias::kPerCol",
    BiasMode.PER_ROW: "cks::Bias::kPerRow",
}
PERMUTE_CPP: Dict[Permute, str] = {
    Permute.NONE: "cks::Permute::kNone",
    Permute.HEAD_SPLIT: "cks::Permute::k0213",
    Permute.QKV_SPLIT: "cks::Permute::k20314",
}

Shape3 = Tuple[int, int, int]


def target_arch(target: str) -> int:
    """The architecture number of a -gencode target: ``"90+PTX"`` -> 90, ``"90a"`` -> 90, ``"100f"`` -> 100."""
    return int(re.match(r"\d+", target).group())


def warp_count(tile: Shape3, warp: Shape3) -> int:
    """Warps per threadblock when ``warp`` tiles ``tile``."""
    return (tile[0] // warp[0]) * (tile[1] // warp[1]) * (tile[2] // warp[2])


@dataclass(frozen=True, order=True)
class EpilogueSpec:
    alpha: bool = True
    beta: bool = False
    bias: BiasMode = BiasMode.NONE
    activation: Activation = Activation.IDENTITY
    leaky_slope: float = 0.01
    e_op: EOp = EOp.NONE
    permute: Permute = Permute.NONE

    @property
    def tma_in_kernel(self) -> bool:
        """Whether the sm90 in-kernel modes store this epilogue through CUTLASS's TMA epilogue (the time
        model's cheaper in-kernel epilogue, ``dispatch.rank``'s ``tma_epilogue``): every epilogue since
        session 43 (round 68 put E and the permuted stores on it: sm90_tma_epilogue.cuh); until then only
        those without E and without a permuted store."""
        return True

    @property
    def transcendental(self) -> bool:
        """Whether the activation evaluates erf, tanh or exp per element (the time model's ping-pong
        epilogue cost: timemodel.SM90_PP_ACTIVATION_US_PER_ELEMENT)."""
        return self.activation in (Activation.GELU, Activation.GELU_TANH, Activation.SILU, Activation.SIGMOID)

    def to_json(self) -> dict:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "bias": self.bias.value,
            "activation": self.activation.value,
            "leaky_slope": self.leaky_slope,
            "e_op": self.e_op.value,
            "permute": self.permute.value,
        }


def _dims(shape: Tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


@dataclass(frozen=True, order=True)
class Sm80Params:
    """The sm80 backend's template parameters beyond the tile: CUTLASS 2.x warp tile,
    mma.sync instruction shape, cp.async pipeline depth and threadblock swizzle."""

    warp: Shape3
    instruction: Shape3
    stages: int
    swizzle: int

    BACKEND = Backend.SM80

    def tag(self, tile: Shape3, alignment: int) -> str:
        return (f"t{_dims(tile)}_w{_dims(self.warp)}_i{_dims(self.instruction)}_s{self.stages}"
                f"_a{alignment}_z{self.swizzle}")

    def warp_count(self, tile: Shape3) -> int:
        return warp_count(tile, self.warp)

    def smem_bytes(self, tile: Shape3, dtype: DType) -> int:
        """Main-loop shared memory: stages x (A tile + B tile)."""
        m, n, k = tile
        return self.stages * (m * k + n * k) * DTYPE_BYTES[dtype]

    def to_json(self) -> dict:
        return {"warp": list(self.warp), "instruction": list(self.instruction), "stages": self.stages,
                "swizzle": self.swizzle}

    @classmethod
    def from_json(cls, d: dict) -> "Sm80Params":
        return cls(tuple(d["warp"]), tuple(d["instruction"]), int(d["stages"]), int(d["swizzle"]))


@dataclass(frozen=True, order=True)
class Sm90Params:
    """The sm90 backend's template parameters beyond the tile: thread-block cluster (M, N),
    kernel schedule, the TMA pipeline depth (0: as many stages as shared memory holds), and
    whether the kernel computes the transposed product (``swap_ab``: D^T = B^T A^T, so that a
    small M runs along the wgmma instruction's N; the tile and cluster are then the kernel's,
    their first dimension along the op's N)."""

    cluster: Tuple[int, int]
    schedule: Schedule
    stages: int
    swap_ab: bool = False

    BACKEND = Backend.SM90
    SCHEDULE_TAG = {Schedule.COOPERATIVE: "coop", Schedule.PINGPONG: "pp"}

    def tag(self, tile: Shape3, alignment: int) -> str:
        stages = str(self.stages) if self.stages else "auto"
        return (f"sm90_t{_dims(tile)}_c{_dims(self.cluster)}_{self.SCHEDULE_TAG[self.schedule]}"
                f"_s{stages}_a{alignment}" + ("_swab" if self.swap_ab else ""))

    def output_tile(self, tile: Shape3) -> Tuple[int, int]:
        """The tile over the op's output (rows along M, columns along N)."""
        return (tile[1], tile[0]) if self.swap_ab else (tile[0], tile[1])

    def output_cluster(self) -> Tuple[int, int]:
        """The cluster over the op's output tiles (along M, along N)."""
        return (self.cluster[1], self.cluster[0]) if self.swap_ab else self.cluster

    def to_json(self) -> dict:
        d = {"cluster": list(self.cluster), "schedule": self.schedule.value, "stages": self.stages}
        if self.swap_ab:  # absent: False (manifests written before the knob)
            d["swap_ab"] = True
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Sm90Params":
        return cls(tuple(d["cluster"]), Schedule(d["schedule"]), int(d["stages"]), bool(d.get("swap_ab", False)))


BackendParams = Union[Sm80Params, Sm90Params]
PARAMS: Dict[Backend, type] = {Backend.SM80: Sm80Params, Backend.SM90: Sm90Params}


@dataclass(frozen=True, order=True)
class KernelVariant:
    """One CUTLASS instantiation of one op: the backend-independent part (op, split mode,
    tile, alignment, accepted split factors) and the backend's own parameters."""

    op: str
    mode: SplitMode
    tile: Shape3
    alignment: int
    params: BackendParams
    splits: Tuple[int, ...] = field(compare=False)

    @property
    def backend(self) -> Backend:
        return self.params.BACKEND

    @cached_property  # computed once: the dispatcher reads it for every candidate of every new problem
    def name(self) -> str:
        return f"{self.op}_{self.mode.value}_{self.group}"

    @cached_property
    def group(self) -> str:
        """Variants of one op that differ only by split mode compile as one unit."""
        return self.params.tag(self.tile, self.alignment)

    def to_json(self) -> dict:
        return {"name": self.name, "backend": self.backend.value, "mode": self.mode.value,
                "tile": list(self.tile), "alignment": self.alignment, **self.params.to_json(),
                "splits": list(self.splits)}

    @classmethod
    def from_json(cls, op: str, d: dict) -> "KernelVariant":
        params = PARAMS[Backend(d["backend"])].from_json(d)
        v = cls(op, SplitMode(d["mode"]), tuple(d["tile"]), int(d["alignment"]), params, tuple(d["splits"]))
        if v.name != d["name"]:
            raise ValueError(f"variant name {d['name']!r} does not match its parameters ({v.name!r})")
        return v


@dataclass(frozen=True)
class OpSpec:
    """One callable: a signature (dtype, layout, epilogue) and the variants that implement it."""

    name: str
    dtype: DType
    layout: Layout
    epilogue: EpilogueSpec
    archs: Tuple[int, ...]
    variants: Tuple[KernelVariant, ...]

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "dtype": self.dtype.value,
            "layout": self.layout.value,
            "epilogue": self.epilogue.to_json(),
            "archs": list(self.archs),
            "variants": [v.to_json() for v in self.variants],
        }

    @classmethod
    def from_json(cls, d: dict) -> "OpSpec":
        e = d["epilogue"]
        epilogue = EpilogueSpec(bool(e["alpha"]), bool(e["beta"]), BiasMode(e["bias"]), Activation(e["activation"]),
                                float(e["leaky_slope"]), EOp(e["e_op"]), Permute(e["permute"]))
        return cls(d["name"], DType(d["dtype"]), Layout(d["layout"]), epilogue, tuple(d["archs"]),
                   tuple(KernelVariant.from_json(d["name"], v) for v in d["variants"]))
