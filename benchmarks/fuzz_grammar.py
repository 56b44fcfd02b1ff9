"""Random valid configs drawn from the YAML grammar (issue 13, part 2): the generator half of
the config fuzzer (``benchmarks/fuzz_configs.py`` is the driver; ``fuzz_problems.py`` runs
problems through a built config).

Each draw is one op with ONE variant group (one sm80 tile/warp/instruction/stages/alignment/
swizzle, or one sm90 tile/cluster/schedule/stages/swap_ab) and its split factors, odd ones included,
in one or both modes (sm90: any of serial, parallel, stream-K): one or two heavy translation
units plus the op's ``library.cu``, so a run's compile time is bounded by its config count.

Values come from knob domains that reach beyond the shipped configs (tiles of 48, 96 or 192,
stage counts 2..8 / 2..12, alignment 2 and 4, every swizzle, split factors up to 64). A run
covers every value of every knob: each draw first picks, for every knob, one of its least
used values so far ("wanted"), then completes the config at random and asks the validator
(``config.parse_config``); a refused draw is redrawn, forcing fewer wanted values each time
(the knobs whose wanted value is rarest are kept longest), and every refusal is recorded with
its reason. A small share of attempts also tries a value outside the domains (tile K 128 on
sm80, alignment 4 on sm90, a [4, 4] cluster, sliced-K warps, ...): the validator must refuse
those or, if it accepts one, the driver builds and checks it like any other.

Deterministic per seed (``random.Random``); needs neither torch nor nvcc.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from cutlass_splitk.config import Config, parse_config
from cutlass_splitk.yaml_doc import ConfigError

BACKENDS = ("sm80", "sm90")
SPLITS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 32, 64)  # odd factors on purpose
MODES80 = ("serial", "parallel", "serial+parallel")
MODES90 = ("serial", "parallel", "stream_k", "serial+parallel", "serial+stream_k", "parallel+stream_k",
           "serial+parallel+stream_k")
ACTIVATIONS = ("identity", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "leaky_relu")

# Knob domains, by scope ("op": every config; "sm80"/"sm90": that backend's configs). A run of
# >= 48 configs (both backends alternating) is meant to hit every value of every knob.
DOMAINS: Dict[str, Dict[str, Tuple[Any, ...]]] = {
    "op": {
        "dtype": ("f16", "bf16"),
        "layout": ("tn", "nn"),
        "alpha": (True, False),
        "beta": (True, False),
        "bias": ("none", "per_col", "per_row"),
        "activation": ACTIVATIONS,
        "e_op": ("none", "add", "mul"),
        "permute": ("none", "head_split", "qkv_split"),
    },
    "sm80": {
        "tile_m": (32, 64, 128, 256),  # the verified sm80 domain (backends/sm80/rules.py)
        "tile_n": (32, 64, 128, 256),
        "tile_k": (16, 32, 64),
        "warp": ("auto", "explicit"),
        "instruction": ("auto", "16x8x16", "16x8x8"),
        "stages": (2, 3, 4, 5, 6, 7, 8),
        "alignment": (8, 4, 2),
        "swizzle": (1, 2, 4, 8),
        "modes": MODES80,
        "serial_split": SPLITS,
        "parallel_split": SPLITS,
    },
    "sm90": {
        "tile_m": (64, 128, 256),
        "tile_n": (32, 64, 96, 128, 160, 192, 224, 256),
        "tile_k": (32, 64, 128),
        "cluster": ("1x1", "2x1", "1x2", "2x2", "4x1", "1x4", "2x4", "4x2"),
        "schedule": ("auto", "cooperative", "pingpong"),
        "stages": ("auto", 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
        "modes": MODES90,
        "swap_ab": (False, True),  # every mode since session 48: balanced like the others
        "serial_split": SPLITS,
        "parallel_split": SPLITS,
    },
}
LIST_KNOBS = ("serial_split", "parallel_split")  # a config holds several values of these
# Out-of-domain values tried now and then (the validator should refuse them; see module doc).
WILD: Dict[str, Dict[str, Tuple[Any, ...]]] = {
    "sm80": {"tile_k": (128, 8, 24), "tile_m": (8, 16, 24, 48, 96, 192, 320), "tile_n": (8, 16, 40, 96, 512),
             "stages": (1, 9), "alignment": (16, 1), "swizzle": (3, 16), "warp": ("sliced_k", "odd")},
    "sm90": {"tile_m": (32, 192), "tile_n": (8, 40, 288), "tile_k": (16, 256), "stages": (1, 13),
             "cluster": ("4x4", "8x1"), "alignment": (4, 2, 16)},
}
WILD_RATE = 0.08
NARROW_TILE_RATE = 0.3  # share of parallel or swapped sm90 draws that take a tile N below
NARROW_TILE_N = (16, 48, 80, 112)  # unswapped: parallel only; 48, 80, 112: CUTLASS's extended wgmma shapes (session 36)
BESIDE = {("sm90", "tile_n"): NARROW_TILE_N}  # values drawn outside the balanced domains on purpose (above)
MAX_ATTEMPTS = 400
KEEP, HOLD = 3, 60


@dataclass
class Draw:
    """One drawn (and validated) config."""

    index: int
    backend: str
    op: str
    yaml: str
    knobs: Dict[str, Any]  # "scope.knob" -> value (a tuple for the split lists)
    config: Config = field(repr=False)
    attempts: int = 1
    rejections: List[str] = field(default_factory=list)  # normalised reasons of the refused attempts
    pruned: List[str] = field(default_factory=list)  # grid points of the accepted config dropped by the validator

    @property
    def variants(self) -> List[str]:
        return [v.name for op in self.config.ops for v in op.variants]


class Coverage:
    """How often each value of each knob was used over the accepted draws."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()  # (scope, knob, value) -> configs using it
        self.extra: Counter = Counter()  # accepted values outside DOMAINS

    def add(self, scope: str, knob: str, value: Any) -> None:
        values = value if knob in LIST_KNOBS else (value,)
        for v in values:
            if v in DOMAINS[scope][knob]:
                self.counts[(scope, knob, v)] += 1
            else:
                self.extra[(scope, knob, v)] += 1

    def add_draw(self, d: Draw) -> None:
        for key, value in d.knobs.items():
            if "." not in key:
                continue
            scope, knob = key.split(".", 1)
            if knob in DOMAINS.get(scope, {}):
                self.add(scope, knob, value)

    def count(self, scope: str, knob: str, value: Any) -> int:
        return self.counts[(scope, knob, value)]

    def missing(self, scopes: Iterable[str]) -> List[Tuple[str, str, Any]]:
        return [(s, k, v) for s in scopes for k, dom in DOMAINS[s].items() for v in dom
                if not self.counts[(s, k, v)]]

    def table(self, scopes: Iterable[str]) -> List[str]:
        lines = []
        for s in scopes:
            for k, dom in DOMAINS[s].items():
                cells = " ".join(f"{_fmt(v)}:{self.counts[(s, k, v)]}" for v in dom)
                extra = sorted(((v, n) for (s2, k2, v), n in self.extra.items() if (s2, k2) == (s, k)), key=str)
                beside = " ".join(f"{_fmt(v)}:{n}" for v, n in extra if v in BESIDE.get((s, k), ()))
                wild = " ".join(f"{_fmt(v)}:{n}!" for v, n in extra if v not in BESIDE.get((s, k), ()))
                lines.append(f"  {s + '.' + k:<20} {cells}" + (f"   drawn beside: {beside}" if beside else "")
                             + (f"   outside the domain: {wild}" if wild else ""))
        return lines

    def to_json(self) -> dict:
        return {f"{s}.{k}": {_fmt(v): self.counts[(s, k, v)] for v in dom}
                for s in DOMAINS for k, dom in DOMAINS[s].items()} | {
            "outside_domain": {f"{s}.{k}={_fmt(v)}": n for (s, k, v), n in self.extra.items()}}


def _fmt(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def normalise_reason(message: str) -> str:
    """A refusal's message with numbers and lists abstracted, so equal causes count together."""
    message = re.sub(r"\[[^\]]*\]", "[..]", message)
    message = re.sub(r"\d+", "N", message)
    return message


def _reasons(exc: ConfigError) -> List[str]:
    msg = exc.message
    prefix = "empty grid: every combination was pruned: "
    if msg.startswith(prefix):  # (the reasons are joined with "; ", which some contain too)
        return ["pruned: " + normalise_reason(msg[len(prefix):])]
    return ["error: " + normalise_reason(msg)]


# --- drawing one config ----------------------------------------------------------------------


def _pick(rng: random.Random, domain: Sequence[Any], knob: str, want: Dict[str, Any],
          wild: Optional[Tuple[str, Any]] = None) -> Any:
    if wild is not None and wild[0] == knob:
        return wild[1]
    return want[knob] if knob in want else rng.choice(list(domain))


def _split_list(rng: random.Random, wanted: Sequence[int] = ()) -> List[int]:
    """1..4 distinct factors (sorted), the ``wanted`` ones among them; mostly small ones."""
    weights = [4 if s <= 8 else 2 if s <= 16 else 1 for s in SPLITS]
    out = set(wanted)
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4)) - len(out)):
        out.add(rng.choices(SPLITS, weights)[0])
    return sorted(out)


def _flow(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return str(value)


def _draw_op_keys(rng: random.Random, want: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(knobs, epilogue mapping as written) of the op-level keys; defaults sometimes omitted."""
    dom = DOMAINS["op"]
    k = {name: want.get(name, rng.choice(list(values))) for name, values in dom.items()}
    ep: Dict[str, Any] = {}
    defaults = {"alpha": True, "beta": False, "bias": "none", "activation": "identity", "e_op": "none",
                "permute": "none"}
    for name in ("alpha", "beta", "bias", "activation", "e_op", "permute"):
        if k[name] != defaults[name] or rng.random() < 0.3:
            ep[name] = k[name]
    if k["activation"] == "leaky_relu" and rng.random() < 0.8:
        k["leaky_slope"] = ep["leaky_slope"] = rng.choice((0.01, 0.2, 0.5, round(rng.uniform(0.0, 1.0), 3), -0.25))
    return k, ep


def _draw_sm80(rng: random.Random, want: Dict[str, Any], wild: Optional[Tuple[str, Any]], dtype: str
               ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    dom = DOMAINS["sm80"]
    k: Dict[str, Any] = {}
    for name in ("tile_m", "tile_n", "tile_k", "warp", "instruction", "stages", "alignment", "swizzle", "modes"):
        k[name] = _pick(rng, dom[name], name, want, wild)
    if k["tile_k"] == 16 and "instruction" not in want and rng.random() < 0.9:
        k["instruction"] = "16x8x8"  # warp K must be >= 2x instruction K: mostly draw what can work
    tm, tn, tk = k["tile_m"], k["tile_n"], k["tile_k"]
    grid: Dict[str, Any] = {}
    if rng.random() < 0.3:
        grid["backend"] = "sm80"
    grid["tile"] = [[tm, tn, tk]]
    if k["warp"] == "auto":
        if rng.random() < 0.5:
            grid["warp"] = "auto"
    else:
        wms = [d for d in (32, 64) if tm % d == 0] or [tm]
        wns = [d for d in (32, 64) if tn % d == 0] or [tn]
        wk = tk
        if k["warp"] == "sliced_k":  # the refused sliced-K form (warp K < tile K)
            wk = max(tk // 2, 1)
        elif k["warp"] == "odd":  # a warp that need not divide the tile
            wms, wns = [16, 48, 80], [24, 40, 56]
        grid["warp"] = [[rng.choice(wms), rng.choice(wns), wk]]
        k["warp_shape"] = tuple(grid["warp"][0])
    inst = {"auto": "auto", "16x8x16": [16, 8, 16], "16x8x8": [16, 8, 8]}[k["instruction"]]
    if inst != "auto" or rng.random() < 0.5:
        grid["instruction"] = inst
    grid["stages"] = k["stages"] if rng.random() < 0.5 else [k["stages"]]
    if k["alignment"] != 8 or rng.random() < 0.5:
        grid["alignment"] = k["alignment"] if rng.random() < 0.7 else [k["alignment"]]
    if k["swizzle"] != 1 or rng.random() < 0.5:
        grid["swizzle"] = k["swizzle"]
    grid["split_k"] = _split_modes(rng, k, want, k["modes"].split("+"))
    return k, grid


def _draw_sm90(rng: random.Random, want: Dict[str, Any], wild: Optional[Tuple[str, Any]], dtype: str
               ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    dom = DOMAINS["sm90"]
    k: Dict[str, Any] = {}
    for name in ("tile_m", "tile_n", "tile_k", "cluster", "schedule", "stages", "modes", "swap_ab"):
        k[name] = _pick(rng, dom[name], name, want, wild)
    # Drawn beside the balanced knobs: tile N 16 / 48 / 80 / 112, which an unswapped kernel takes in parallel
    # split-K only (the other modes are pruned).
    if (k["modes"] == "parallel" or k["swap_ab"]) and "tile_n" not in want and rng.random() < NARROW_TILE_RATE:
        k["tile_n"] = rng.choice(NARROW_TILE_N)
    # Serial split factors > 1 and stream-K need the cooperative schedule (tile M >= 128):
    # mostly complete a draw with those modes so that it can work.
    if ({"serial", "stream_k"} & set(k["modes"].split("+"))) and rng.random() < 0.8:
        if "schedule" not in want:
            k["schedule"] = rng.choice(("cooperative", "auto"))
        if "tile_m" not in want and k["tile_m"] == 64 and k["schedule"] != "pingpong":
            k["tile_m"] = rng.choice((128, 256))
    grid: Dict[str, Any] = {"backend": "sm90", "tile": [[k["tile_m"], k["tile_n"], k["tile_k"]]]}
    if k["cluster"] != "1x1" or rng.random() < 0.4:
        grid["cluster"] = [[int(x) for x in k["cluster"].split("x")]]
    if k["schedule"] != "auto" or rng.random() < 0.4:
        grid["schedule"] = k["schedule"] if k["schedule"] == "auto" or rng.random() < 0.7 else [k["schedule"]]
    if k["stages"] != "auto" or rng.random() < 0.4:
        grid["stages"] = k["stages"] if k["stages"] == "auto" or rng.random() < 0.5 else [k["stages"]]
    if k["swap_ab"] or rng.random() < 0.2:
        grid["swap_ab"] = k["swap_ab"] if rng.random() < 0.7 else [k["swap_ab"]]
    if wild is not None and wild[0] == "alignment":
        grid["alignment"] = wild[1]
    elif rng.random() < 0.3:
        grid["alignment"] = 8
    grid["split_k"] = _split_modes(rng, k, want, k["modes"].split("+"), sm90=True)
    return k, grid


def _split_modes(rng: random.Random, k: Dict[str, Any], want: Dict[str, Any], modes: List[str],
                 sm90: bool = False) -> Dict[str, Any]:
    split: Dict[str, Any] = {}
    for mode in ("serial", "parallel"):
        if mode in modes:
            factors = _split_list(rng, want.get(f"{mode}_split", ()))
            k[f"{mode}_split"] = tuple(factors)
            split[mode] = factors if len(factors) > 1 or rng.random() < 0.7 else factors[0]
    if "stream_k" in modes:
        split["stream_k"] = True
    elif sm90 and rng.random() < 0.1:  # spelled, but off
        split["stream_k"] = False
    return split


def render(op: str, backend: str, opk: Dict[str, Any], ep: Dict[str, Any], grid: Dict[str, Any],
           header: str, as_list: bool, sm80_arch: int = 90) -> str:
    lines = [f"# {header}", "ops:", f"  {op}:", f"    dtype: {opk['dtype']}", f"    layout: {opk['layout']}"]
    if backend == "sm80":
        lines.append(f"    arch: [{sm80_arch}]  # the GPU the sm80 kernels are to run on")
    if ep:
        lines.append(f"    epilogue: {_flow(ep)}")
    lines.append("    variants:")
    if as_list:
        lines.append(f"      - {_flow(grid)}")
    else:
        lines += [f"      {key}: {_flow(value)}" for key, value in grid.items()]
    return "\n".join(lines) + "\n"


def draw_config(rng: random.Random, backend: str, index: int = 0, coverage: Optional[Coverage] = None,
                header: str = "", sm80_arch: int = 90) -> Draw:
    """One valid config of ``backend`` (YAML text and its knob values). With ``coverage``, each
    knob starts from one of its least used values; the draw is retried until the validator
    accepts it. ``sm80_arch``: the ``arch:`` of sm80 ops (90: their kernels run on the H100).
    Raises RuntimeError if nothing validates within MAX_ATTEMPTS attempts."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    op = f"fz{index:03d}_{backend}"
    scopes = ("op", backend)
    # The wanted value of every knob: one of the least used; priority: rarest first.
    # (List knobs want up to three of their least used values.) Ties: the knob with the most
    # values at its lowest count first (the one furthest from being covered).
    wanted: List[Tuple[int, int, float, str, str, Any]] = []
    for scope in scopes:
        for knob, dom in DOMAINS[scope].items():
            counts = [coverage.count(scope, knob, v) if coverage else 0 for v in dom]
            low = min(counts)
            rarest = [v for v, c in zip(dom, counts) if c == low]
            if knob in LIST_KNOBS:
                value: Any = tuple(sorted(rng.sample(rarest, min(len(rarest), rng.choice((1, 2, 3))))))
            else:
                value = rng.choice(rarest)
            wanted.append((low, -len(rarest), rng.random(), scope, knob, value))
    wanted.sort(key=lambda w: w[:3])
    rejections: List[str] = []
    for attempt in range(MAX_ATTEMPTS):
        # Release the least needed knob after each refusal, but hold on to the KEEP most
        # needed ones for HOLD attempts (the completions are random: one will fit them).
        keep = max(len(wanted) - attempt, KEEP if attempt < HOLD else 0) if coverage else 0
        want: Dict[str, Dict[str, Any]] = {"op": {}, backend: {}}
        for *_, scope, knob, value in wanted[:max(keep, 0)]:
            want[scope][knob] = value
        wild = None
        if rng.random() < WILD_RATE:
            knob = rng.choice(sorted(WILD[backend]))
            wild = (knob, rng.choice(WILD[backend][knob]))
        opk, ep = _draw_op_keys(rng, want["op"])
        drawer = _draw_sm80 if backend == "sm80" else _draw_sm90
        bk, grid = drawer(rng, want[backend], wild, opk["dtype"])
        text = render(op, backend, opk, ep, grid, header or f"cutlass-splitk fuzz config {index} ({backend})",
                      as_list=rng.random() < 0.6, sm80_arch=sm80_arch)
        try:
            config = parse_config(text, f"fuzz/{op}.yaml")
        except ConfigError as exc:
            rejections.extend(_reasons(exc))
            continue
        if not config.ops or not config.ops[0].variants:  # parse_config refuses this itself
            rejections.append("error: no variant")
            continue
        # What was built, not what was asked: pruning may drop a mode (stream-K with ping-pong).
        built = {v.mode.value for v in config.ops[0].variants}
        bk["modes"] = "+".join(m for m in ("serial", "parallel", "stream_k") if m in built)
        for mode in ("serial", "parallel"):
            if mode not in built:
                bk.pop(f"{mode}_split", None)
        knobs = {f"op.{n}": v for n, v in opk.items()}
        knobs.update({f"{backend}.{n}": v for n, v in bk.items()})
        if wild is not None:
            knobs["wild"] = f"{wild[0]}={wild[1]}"
        return Draw(index, backend, op, text, knobs, config, attempt + 1, rejections,
                    [f"{p.description}: {p.reason}" for p in config.pruned])
    raise RuntimeError(f"no valid {backend} config in {MAX_ATTEMPTS} attempts; last refusals: {rejections[-5:]}")


def backend_order(backend: str, n: int) -> List[str]:
    """The backend of each of ``n`` configs: one, or both alternating (sm80 first)."""
    if backend == "both":
        return [BACKENDS[i % 2] for i in range(n)]
    if backend not in BACKENDS:
        raise ValueError(f"backend must be sm80, sm90 or both, got {backend!r}")
    return [backend] * n


def draw_run(seed: int, n: int, backend: str = "both", sm80_arch: int = 90) -> Tuple[List[Draw], Coverage]:
    """``n`` valid configs for one run, covering the knob domains (see module doc)."""
    rng = random.Random(f"cutlass-splitk-fuzz:{seed}" + ("" if sm80_arch == 90 else f":sm{sm80_arch}"))
    coverage = Coverage()
    draws = []
    for i, b in enumerate(backend_order(backend, n)):
        d = draw_config(rng, b, i, coverage, header=f"cutlass-splitk fuzz: seed {seed}, config {i} of {n} ({b})",
                        sm80_arch=sm80_arch)
        coverage.add_draw(d)
        draws.append(d)
    return draws, coverage


def rejection_summary(draws: Sequence[Draw]) -> Counter:
    out: Counter = Counter()
    for d in draws:
        out.update(d.rejections)
    return out
