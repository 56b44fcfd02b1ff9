"""YAML config → validated :class:`~cutlass_splitk.spec.OpSpec` objects.

Every error is a :class:`ConfigError` naming the file, the line and the dotted field path.
Nothing is written anywhere by this module; callers validate the whole file before any
output is produced.

Schema (see README.md, "YAML reference")::

    ops:
      <op name>:
        dtype: f16 | bf16
        layout: tn | nn                       # default tn
        arch: [80, 90]                        # -gencode targets (80, 86, 89, 90)
        epilogue:
          alpha: true                         # accept alpha=
          beta: false                         # accept c= and beta=
          bias: none | per_col | per_row
          activation: identity | relu | gelu | gelu_tanh | silu | sigmoid | leaky_relu
          leaky_slope: 0.01                   # default negative slope (leaky_relu only)
          e_op: none | add | mul              # elementwise with a second (M, N) tensor E
          permute: none | head_split | qkv_split
        variants:                             # a grid, or a list of grids (their union)
          tile: [[128, 128, 32], ...]         # threadblock M, N, K
          warp: auto | [[64, 64, 32], ...]    # one per tile
          instruction: auto | [16, 8, 16]
          stages: [3, 4]
          alignment: 8                        # elements per access (8, 4, 2)
          swizzle: 1                          # threadblock swizzle (1, 2, 4, 8)
          split_k:
            serial: [1, 2, 4, 8]
            parallel: [4, 8, 16, 32]
"""

from __future__ import annotations

import enum
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, Union

import yaml

from .spec import (
    ALIGNMENTS,
    INSTRUCTION_SHAPES,
    SMEM_LIMIT,
    SUPPORTED_ARCHS,
    Activation,
    BiasMode,
    DType,
    EOp,
    EpilogueSpec,
    KernelVariant,
    Layout,
    OpSpec,
    Permute,
    Shape3,
    SplitMode,
)

OP_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
SWIZZLES = (1, 2, 4, 8)
MAX_SPLIT = 256
MAX_STAGES = 8
DEFAULT_ARCHS = (80, 90)

E = TypeVar("E", bound=enum.Enum)


class ConfigError(ValueError):
    """A config problem, located: ``file:line: field: message``."""

    def __init__(self, file: str, line: Optional[int], field: str, message: str):
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


@dataclass(frozen=True)
class Pruned:
    """A grid point that was dropped, and why (``cutlass-splitk list --why``)."""

    op: str
    description: str
    reason: str


@dataclass(frozen=True)
class Config:
    path: str
    ops: Tuple[OpSpec, ...]
    pruned: Tuple[Pruned, ...]

    @property
    def stem(self) -> str:
        return Path(self.path).stem


# --- YAML with line numbers -----------------------------------------------------------------

Path_ = Tuple[Union[str, int], ...]
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _field(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class _Doc:
    """Plain Python values plus the source line of every path."""

    def __init__(self, file: str):
        self.file = file
        self.lines: Dict[Path_, int] = {}
        self._memo: Dict[int, Tuple[Any, Path_]] = {}
        self.aliases: Dict[Path_, Path_] = {}  # a path reached through an alias -> the anchor's path

    def line(self, path: Path_) -> Optional[int]:
        """The line of ``path``, or of its nearest ancestor that has one. A path through an
        alias is translated to the anchored node's own path, where the value is written."""
        for _ in range(64):
            for cut in range(len(path), -1, -1):
                prefix = path[:cut]
                if prefix in self.aliases:
                    path = self.aliases[prefix] + path[cut:]
                    break
                if prefix in self.lines:
                    return self.lines[prefix]
            else:
                return None
        return None

    def error(self, path: Path_, message: str) -> ConfigError:
        return ConfigError(self.file, self.line(path), _field(path), message)

    def scalar(self, node: yaml.ScalarNode, path: Path_) -> Any:
        """A scalar's value; a malformed explicitly tagged scalar (``!!int abc``) is a
        ConfigError, not whatever exception the YAML constructor raises."""
        try:
            return yaml.SafeLoader("").construct_object(node)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, AttributeError, OverflowError, IndexError, KeyError):
            raise ConfigError(self.file, node.start_mark.line + 1, _field(path),
                              f"invalid {node.tag.rsplit(':', 1)[-1]} scalar {node.value!r}") from None

    def convert(self, node: yaml.Node, path: Path_, depth: int = 0) -> Any:
        """Plain values for ``node``. A node reached again through an alias is converted once
        (memoised by identity): aliases cannot blow up into exponential work, and a merged
        mapping is flattened only once."""
        key = id(node)
        if key in self._memo:
            value, first = self._memo[key]
            if first != path:
                self.aliases.setdefault(path, first)
            return value
        self.lines.setdefault(path, node.start_mark.line + 1)
        if depth > 64:
            raise ConfigError(self.file, node.start_mark.line + 1, _field(path), "nesting deeper than 64 levels")
        value = self._convert(node, path, depth)
        self._memo[key] = (value, path)
        return value

    def _convert(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path)
        if node.tag not in (_SEQ_TAG, _MAP_TAG):
            raise ConfigError(self.file, node.start_mark.line + 1, _field(path),
                              f"unsupported tag {node.tag!r}: use plain YAML mappings and lists")
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            seen: Dict[str, int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _MERGE_TAG:
                    continue
                key = self.key(key_node, path)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise ConfigError(self.file, line, _field(path + (key,)),
                                      f"duplicate key (first defined on line {seen[key]})")
                seen[key] = line
            loader = yaml.SafeLoader("")
            try:
                loader.flatten_mapping(node)  # resolves '<<' merge keys
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None) or node.start_mark
                raise ConfigError(self.file, mark.line + 1, _field(path),
                                  f"invalid merge: {getattr(exc, 'problem', None) or exc}") from None
            out: Dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.key(key_node, path)
                self.lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.convert(value_node, path + (key,), depth + 1)
            return out
        raise ConfigError(self.file, node.start_mark.line + 1, _field(path), "unsupported YAML node")

    def key(self, key_node: yaml.Node, path: Path_) -> str:
        if not isinstance(key_node, yaml.ScalarNode):
            raise ConfigError(self.file, key_node.start_mark.line + 1, _field(path),
                              "mapping keys must be plain strings")
        key = self.scalar(key_node, path)
        if not isinstance(key, str):
            raise ConfigError(self.file, key_node.start_mark.line + 1, _field(path),
                              f"mapping keys must be strings, got {type(key).__name__} {key!r}")
        return key


def _parse_yaml(text: str, file: str) -> Tuple[Any, _Doc]:
    doc = _Doc(file)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(file, line, "", f"invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(file, None, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(file, None, "", "invalid YAML: nesting too deep") from None
    if node is None:
        raise ConfigError(file, 1, "", "empty file: expected a mapping with an 'ops' key")
    try:
        return doc.convert(node, ()), doc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(file, mark.line + 1 if mark else None, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(file, None, "", "invalid YAML: nesting too deep") from None


# --- typed readers ---------------------------------------------------------------------------


def _type_name(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "mapping", type(None): "null"}.get(type(v), type(v).__name__)


class _Reader:
    def __init__(self, doc: _Doc):
        self.doc = doc

    def mapping(self, value: Any, path: Path_, allowed: Sequence[str], required: Sequence[str] = ()) -> Dict[str, Any]:
        if not isinstance(value, dict):
            raise self.doc.error(path, f"expected a mapping, got {_type_name(value)}")
        for key in value:
            if key not in allowed:
                raise self.doc.error(path + (key,), f"unknown key '{key}'; valid keys: {', '.join(allowed)}")
        for key in required:
            if key not in value:
                raise self.doc.error(path, f"missing required key '{key}'")
        return value

    def boolean(self, value: Any, path: Path_) -> bool:
        if not isinstance(value, bool):
            raise self.doc.error(path, f"expected true or false, got {_type_name(value)} {value!r}")
        return value

    def integer(self, value: Any, path: Path_, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.doc.error(path, f"expected an integer, got {_type_name(value)} {value!r}")
        if not lo <= value <= hi:
            raise self.doc.error(path, f"{value} is out of range [{lo}, {hi}]")
        return value

    def number(self, value: Any, path: Path_) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.doc.error(path, f"expected a number, got {_type_name(value)} {value!r}")
        try:
            number = float(value)
        except OverflowError:
            raise self.doc.error(path, "number out of range") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise self.doc.error(path, f"expected a finite number, got {value!r}")
        return number

    def enum(self, value: Any, path: Path_, cls: Type[E]) -> E:
        names = [m.value for m in cls]
        if not isinstance(value, str) or value not in names:
            raise self.doc.error(path, f"invalid value {value!r}; valid values: {', '.join(names)}")
        return cls(value)

    def int_list(self, value: Any, path: Path_, lo: int, hi: int, choices: Sequence[int] = ()) -> Tuple[int, ...]:
        """An integer or a non-empty list of distinct integers."""
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value:
            raise self.doc.error(path, "empty grid: give at least one value")
        out: List[int] = []
        for i, item in enumerate(items):
            p = path + (i,) if isinstance(value, list) else path
            n = self.integer(item, p, lo, hi)
            if choices and n not in choices:
                raise self.doc.error(p, f"invalid value {n}; valid values: {', '.join(map(str, choices))}")
            if n in out:
                raise self.doc.error(p, f"duplicate value {n}")
            out.append(n)
        return tuple(out)

    def shape3(self, value: Any, path: Path_) -> Shape3:
        if not isinstance(value, list) or len(value) != 3:
            raise self.doc.error(path, f"expected [M, N, K], got {value!r}")
        return tuple(self.integer(v, path + (i,), 1, 1024) for i, v in enumerate(value))  # type: ignore[return-value]

    def shape3_list(self, value: Any, path: Path_, unique: bool = True) -> Tuple[Shape3, ...]:
        if not isinstance(value, list) or not value:
            raise self.doc.error(path, "empty grid: expected a list of [M, N, K] triples, e.g. [[128, 128, 32]]"
                                 if isinstance(value, list) else
                                 f"expected a list of [M, N, K] triples, e.g. [[128, 128, 32]], got {_type_name(value)}")
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self.doc.error(path, f"expected a list of [M, N, K] triples, e.g. [{value!r}]")
        shapes = [self.shape3(v, path + (i,)) for i, v in enumerate(value)]
        for i, s in enumerate(shapes):
            if unique and s in shapes[:i]:
                raise self.doc.error(path + (i,), f"duplicate value {list(s)}")
        return tuple(shapes)


# --- the config --------------------------------------------------------------------------------

OP_KEYS = ("dtype", "layout", "arch", "epilogue", "variants")
EPILOGUE_KEYS = ("alpha", "beta", "bias", "activation", "leaky_slope", "e_op", "permute")
VARIANT_KEYS = ("tile", "warp", "instruction", "stages", "alignment", "swizzle", "split_k")


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


def epilogue_rows_fit(tile: Shape3, warp: Shape3, elements_per_access: int, element_bits: int) -> bool:
    """Whether CUTLASS's epilogue thread map (OutputTileOptimalThreadMap over the output
    tile's 8-row steps) gives every warp at least one row and one column iteration. Narrow
    tiles with many warps cannot: t32x64x64 with 16x16x64 warps (8 of them) fails CUTLASS's
    "Iteration Count Row must be > 0". (The rule also covers warps along K, which validation
    refuses before it is asked.)"""
    warps_m = tile[0] // warp[0]
    warps = warps_m * (tile[1] // warp[1]) * (tile[2] // warp[2])
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


def _parse_epilogue(r: _Reader, value: Any, path: Path_) -> EpilogueSpec:
    if value is None:
        return EpilogueSpec()
    e = r.mapping(value, path, EPILOGUE_KEYS)
    activation = r.enum(e["activation"], path + ("activation",), Activation) if "activation" in e else Activation.IDENTITY
    if "leaky_slope" in e and activation is not Activation.LEAKY_RELU:
        raise r.doc.error(path + ("leaky_slope",), "leaky_slope is only valid with activation: leaky_relu")
    return EpilogueSpec(
        alpha=r.boolean(e["alpha"], path + ("alpha",)) if "alpha" in e else True,
        beta=r.boolean(e["beta"], path + ("beta",)) if "beta" in e else False,
        bias=r.enum(e["bias"], path + ("bias",), BiasMode) if "bias" in e else BiasMode.NONE,
        activation=activation,
        leaky_slope=r.number(e["leaky_slope"], path + ("leaky_slope",)) if "leaky_slope" in e else 0.01,
        e_op=r.enum(e["e_op"], path + ("e_op",), EOp) if "e_op" in e else EOp.NONE,
        permute=r.enum(e["permute"], path + ("permute",), Permute) if "permute" in e else Permute.NONE,
    )


def _parse_variants(r: _Reader, name: str, dtype: DType, layout: Layout, archs: Tuple[int, ...],
                    value: Any, path: Path_, pruned: List[Pruned]) -> Tuple[KernelVariant, ...]:
    v = r.mapping(value, path, VARIANT_KEYS, required=("tile", "split_k"))
    tiles = r.shape3_list(v["tile"], path + ("tile",))

    warp_value = v.get("warp", "auto")
    if warp_value == "auto":
        warps = tuple(auto_warp(t) for t in tiles)
    else:
        warps = r.shape3_list(warp_value, path + ("warp",), unique=False) if isinstance(warp_value, list) else None
        if warps is None:
            raise r.doc.error(path + ("warp",), f"expected 'auto' or a list of [M, N, K] triples, got {warp_value!r}")
        if len(warps) != len(tiles):
            raise r.doc.error(path + ("warp",), f"expected one warp shape per tile ({len(tiles)}), got {len(warps)}")

    inst_value = v.get("instruction", "auto")
    valid_inst = INSTRUCTION_SHAPES[dtype]
    if inst_value == "auto":
        inst = valid_inst[0]
    else:
        inst = r.shape3(inst_value, path + ("instruction",))
        if inst not in valid_inst:
            raise r.doc.error(path + ("instruction",),
                              f"instruction shape {list(inst)} does not match dtype {dtype.value}; valid shapes: "
                              + ", ".join(str(list(s)) for s in valid_inst))

    for i, (tile, warp) in enumerate(zip(tiles, warps)):
        wpath = path + (("warp", i) if warp_value != "auto" else ("tile", i))
        if any(t % w for t, w in zip(tile, warp)):
            raise r.doc.error(wpath, f"warp {list(warp)} does not divide tile {list(tile)}")
        if warp[0] % inst[0] or warp[1] % inst[1] or warp[2] % inst[2]:
            raise r.doc.error(wpath, f"warp {list(warp)} is not a multiple of instruction shape {list(inst)}")
        if warp[2] != tile[2]:
            # Sliced K (warp K < tile K) built cleanly and computed wrong results on the H100
            # in both split-K modes (issue 13); round 2 of the tile sweep found it <= 3 % faster
            # at best, so it is refused rather than repaired.
            raise r.doc.error(wpath, f"warp K ({warp[2]}) must equal tile K ({tile[2]}): sliced-K warps "
                                     "(warp K < tile K) are not supported; use warp "
                                     f"{[warp[0], warp[1], tile[2]]}, or more warps along M or N")
        if warp[2] < 2 * inst[2]:
            # CUTLASS's multistage main loop needs at least two warp-level MMA steps per stage
            raise r.doc.error(wpath, f"warp K ({warp[2]}) must be at least twice the instruction K ({inst[2]})")
        count = (tile[0] // warp[0]) * (tile[1] // warp[1]) * (tile[2] // warp[2])
        if count > 16:
            raise r.doc.error(wpath, f"tile {list(tile)} with warp {list(warp)} needs {count} warps; at most 16")

    stages = r.int_list(v.get("stages", 3), path + ("stages",), 2, MAX_STAGES)
    alignments = r.int_list(v.get("alignment", ALIGNMENTS[dtype][0]), path + ("alignment",), 1, 64)
    for i, a in enumerate(alignments):
        if a not in ALIGNMENTS[dtype]:
            p = path + ("alignment", i) if isinstance(v.get("alignment"), list) else path + ("alignment",)
            raise r.doc.error(p, f"alignment {a} is not possible for {dtype.value} (cp.async moves 4, 8 or 16 bytes); "
                                 f"valid values: {', '.join(map(str, ALIGNMENTS[dtype]))}")
    swizzles = r.int_list(v.get("swizzle", 1), path + ("swizzle",), 1, 8, SWIZZLES)

    split = r.mapping(v["split_k"], path + ("split_k",), [m.value for m in SplitMode])
    if not split:
        raise r.doc.error(path + ("split_k",), "empty grid: give 'serial' and/or 'parallel' split factors")
    modes: List[Tuple[SplitMode, Tuple[int, ...]]] = []
    for mode in SplitMode:
        if mode.value in split:
            modes.append((mode, r.int_list(split[mode.value], path + ("split_k", mode.value), 1, MAX_SPLIT)))

    smem_limit = min(SMEM_LIMIT[a] for a in archs)
    limiting_arch = min(archs, key=lambda a: SMEM_LIMIT[a])
    out: List[KernelVariant] = []
    for (tile, warp), st, align, swz in itertools.product(zip(tiles, warps), stages, alignments, swizzles):
        for mode, splits in modes:
            kv = KernelVariant(name, mode, tile, warp, inst, st, align, swz, tuple(sorted(splits)))
            threads = 32 * kv.warp_count
            smem = kv.smem_bytes(dtype)
            contiguous_b = tile[2] if layout is Layout.TN else tile[1]
            reason = None
            if tile[2] > 64:
                reason = (f"tile K {tile[2]} > 64: CUTLASS's crosswise shared-memory layout for 16-bit "
                          "operands needs K <= 64 (128 bytes)")
            elif smem > smem_limit:
                reason = f"shared memory {smem} B > {smem_limit} B limit of sm_{limiting_arch}"
            elif tile[2] % align or contiguous_b % align:
                reason = f"tile {list(tile)} is not a multiple of alignment {align} along the contiguous dimension"
            elif (tile[0] * tile[2] // align) % threads or (tile[1] * tile[2] // align) % threads:
                reason = (f"tile {list(tile)} does not split evenly into {align}-element accesses "
                          f"over {threads} threads")
            elif not (epilogue_rows_fit(tile, warp, align, 16) and epilogue_rows_fit(tile, warp, 4, 32)):
                reason = (f"CUTLASS's epilogue cannot spread the {tile[0]}x{tile[1]} output tile over "
                          f"{kv.warp_count} warps (warp {list(warp)}): use a wider tile or fewer warps")
            if reason:
                pruned.append(Pruned(name, kv.name, reason))
            else:
                out.append(kv)
    if not out:
        reasons = sorted({p.reason for p in pruned if p.op == name})
        raise r.doc.error(path, "empty grid: every combination was pruned: " + "; ".join(reasons))
    return tuple(out)


def parse_config(text: str, file: str) -> Config:
    """Validates a whole config document. Raises :class:`ConfigError`."""
    data, doc = _parse_yaml(text, file)
    r = _Reader(doc)
    if isinstance(data, dict):  # top-level "x-..." keys are ignored: a place for YAML anchors
        data = {k: v for k, v in data.items() if not k.startswith("x-")}
    top = r.mapping(data, (), ("ops",), required=("ops",))
    ops_value = top["ops"]
    if not isinstance(ops_value, dict):
        raise doc.error(("ops",), f"expected a mapping of op names to op definitions, got {_type_name(ops_value)}")
    if not ops_value:
        raise doc.error(("ops",), "empty grid: define at least one op")
    ops: List[OpSpec] = []
    pruned: List[Pruned] = []
    for name, op_value in ops_value.items():
        path: Path_ = ("ops", name)
        if not OP_NAME_RE.fullmatch(name):
            raise doc.error(path, f"invalid op name {name!r}: use lower-case letters, digits and '_', "
                                  "starting with a letter (it becomes a Python attribute and a C symbol)")
        op = r.mapping(op_value, path, OP_KEYS, required=("dtype", "variants"))
        dtype = r.enum(op["dtype"], path + ("dtype",), DType)
        layout = r.enum(op["layout"], path + ("layout",), Layout) if "layout" in op else Layout.TN
        archs = r.int_list(op.get("arch", list(DEFAULT_ARCHS)), path + ("arch",), 0, 1000, SUPPORTED_ARCHS)
        epilogue = _parse_epilogue(r, op.get("epilogue"), path + ("epilogue",))
        grids = op["variants"]
        if isinstance(grids, list):  # a list of grids: their union
            if not grids:
                raise doc.error(path + ("variants",), "empty grid: give a grid mapping or a list of them")
            found: List[KernelVariant] = []
            for i, grid in enumerate(grids):
                for v in _parse_variants(r, name, dtype, layout, tuple(sorted(archs)), grid,
                                         path + ("variants", i), pruned):
                    if any(v.name == f.name for f in found):
                        raise doc.error(path + ("variants", i), f"variant {v.name} is already defined by an earlier grid")
                    found.append(v)
            variants = tuple(found)
        else:
            variants = _parse_variants(r, name, dtype, layout, tuple(sorted(archs)), grids,
                                       path + ("variants",), pruned)
        ops.append(OpSpec(name, dtype, layout, epilogue, tuple(sorted(archs)), variants))
    return Config(file, tuple(ops), tuple(pruned))


def load_config(path: Union[str, Path]) -> Config:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), None, "", "file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), None, "", f"not UTF-8 text ({exc.reason})") from None
    return parse_config(text, str(path))
