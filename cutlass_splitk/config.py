"""YAML config → validated :class:`~cutlass_splitk.spec.OpSpec` objects.

Every error is a :class:`ConfigError` naming the file, the line and the dotted field path.
Nothing is written anywhere by this module; callers validate the whole file before any
output is produced.

Schema (see README.md, "YAML reference")::

    ops:
      <op name>:
        dtype: f16 | bf16
        layout: tn | nn                       # default tn
        arch: [80, 90]                        # -gencode targets (the backend's list)
        epilogue:
          alpha: true                         # accept alpha=
          beta: false                         # accept c= and beta=
          bias: none | per_col | per_row
          activation: identity | relu | gelu | gelu_tanh | silu | sigmoid | leaky_relu
          leaky_slope: 0.01                   # default negative slope (leaky_relu only)
          e_op: none | add | mul              # elementwise with a second (M, N) tensor E
          permute: none | head_split | qkv_split
        variants:                             # a grid, or a list of grids (their union); an item may
                                              # itself be a list of grids (a YAML alias of a shared one)
          ...                                 # the backend's grid keys (backends/sm80/grid.py)

The op keys are read here; each ``variants:`` grid is handed to the op's backend
(``cutlass_splitk.backends``), which expands and prunes it.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, Union

from . import backends
from .spec import Activation, BiasMode, DType, EOp, EpilogueSpec, KernelVariant, Layout, OpSpec, Permute, Shape3
from .yaml_doc import ConfigError, Doc, FieldPath, parse

OP_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
OP_KEYS = ("dtype", "layout", "arch", "epilogue", "variants")
EPILOGUE_KEYS = ("alpha", "beta", "bias", "activation", "leaky_slope", "e_op", "permute")

E = TypeVar("E", bound=enum.Enum)

__all__ = ["Config", "ConfigError", "Pruned", "Reader", "for_targets", "load_config", "parse_config"]


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


# --- typed readers ---------------------------------------------------------------------------


def _type_name(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "mapping", type(None): "null"}.get(type(v), type(v).__name__)


class Reader:
    """Typed access to a document's values: each method checks one value and raises a
    ConfigError at its path. Shared by the op schema here and the backends' grid parsers."""

    def __init__(self, doc: Doc):
        self.doc = doc

    def mapping(self, value: Any, path: FieldPath, allowed: Sequence[str], required: Sequence[str] = ()) -> Dict[str, Any]:
        if not isinstance(value, dict):
            raise self.doc.error(path, f"expected a mapping, got {_type_name(value)}")
        for key in value:
            if key not in allowed:
                raise self.doc.error(path + (key,), f"unknown key '{key}'; valid keys: {', '.join(allowed)}")
        for key in required:
            if key not in value:
                raise self.doc.error(path, f"missing required key '{key}'")
        return value

    def boolean(self, value: Any, path: FieldPath) -> bool:
        if not isinstance(value, bool):
            raise self.doc.error(path, f"expected true or false, got {_type_name(value)} {value!r}")
        return value

    def integer(self, value: Any, path: FieldPath, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.doc.error(path, f"expected an integer, got {_type_name(value)} {value!r}")
        if not lo <= value <= hi:
            raise self.doc.error(path, f"{value} is out of range [{lo}, {hi}]")
        return value

    def number(self, value: Any, path: FieldPath) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.doc.error(path, f"expected a number, got {_type_name(value)} {value!r}")
        try:
            number = float(value)
        except OverflowError:
            raise self.doc.error(path, "number out of range") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise self.doc.error(path, f"expected a finite number, got {value!r}")
        return number

    def enum(self, value: Any, path: FieldPath, cls: Type[E]) -> E:
        names = [m.value for m in cls]
        if not isinstance(value, str) or value not in names:
            raise self.doc.error(path, f"invalid value {value!r}; valid values: {', '.join(names)}")
        return cls(value)

    def int_list(self, value: Any, path: FieldPath, lo: int, hi: int, choices: Sequence[int] = ()) -> Tuple[int, ...]:
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

    def shape3(self, value: Any, path: FieldPath) -> Shape3:
        if not isinstance(value, list) or len(value) != 3:
            raise self.doc.error(path, f"expected [M, N, K], got {value!r}")
        return tuple(self.integer(v, path + (i,), 1, 1024) for i, v in enumerate(value))  # type: ignore[return-value]

    def shape3_list(self, value: Any, path: FieldPath, unique: bool = True,
                    check: Optional[Callable[[Shape3], Optional[str]]] = None) -> Tuple[Shape3, ...]:
        """A non-empty list of [M, N, K] triples; ``check`` (a backend's rule) returns why a
        triple is not allowed, reported at its line."""
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
        for i, s in enumerate(shapes):
            why = check(s) if check else None
            if why:
                raise self.doc.error(path + (i,), why)
        return tuple(shapes)


# --- the config --------------------------------------------------------------------------------


def _parse_epilogue(r: Reader, value: Any, path: FieldPath) -> EpilogueSpec:
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


def _grids(r: Reader, value: Any, path: FieldPath) -> List[Tuple[Any, FieldPath, ModuleType]]:
    """The op's ``variants:`` as (grid, path, backend): one grid, or a list of grids (their
    union), whose items may be lists of grids themselves (``[*shared_grid, {...}]``: a shared list
    and op-specific grids). Each grid names its backend with ``backend:`` (default sm80); the key
    is taken out before the backend reads the grid."""
    if not isinstance(value, list):
        items = [(value, path + ("variants",))]
    elif not value:
        raise r.doc.error(path + ("variants",), "empty grid: give a grid mapping or a list of them")
    else:
        items = []
        for i, grid in enumerate(value):
            if isinstance(grid, list):
                if not grid:
                    raise r.doc.error(path + ("variants", i), "empty grid: give a grid mapping or a list of them")
                items += [(g, path + ("variants", i, j)) for j, g in enumerate(grid)]
            else:
                items.append((grid, path + ("variants", i)))
    out = []
    for grid, grid_path in items:
        name = backends.DEFAULT_BACKEND
        if isinstance(grid, dict) and "backend" in grid:
            name = grid["backend"]
            if not isinstance(name, str) or name not in backends.BACKENDS:
                raise r.doc.error(grid_path + ("backend",), f"invalid value {name!r}; valid values: "
                                  + ", ".join(backends.BACKENDS))
            grid = {k: v for k, v in grid.items() if k != "backend"}
        out.append((grid, grid_path, backends.BACKENDS[name]))
    return out


def _parse_variants(r: Reader, op: str, dtype: DType, layout: Layout, archs: Tuple[int, ...],
                    epilogue: EpilogueSpec, grids: List[Tuple[Any, FieldPath, ModuleType]],
                    pruned: List[Pruned]) -> Tuple[KernelVariant, ...]:
    """Every grid expanded and pruned by its backend; pruned grid points are appended to
    ``pruned``."""
    found: List[KernelVariant] = []
    for grid, grid_path, backend in grids:
        variants, dropped = backend.parse_grid(r, grid, grid_path, op=op, dtype=dtype, layout=layout, archs=archs,
                                               epilogue=epilogue)
        pruned.extend(Pruned(op, name, reason) for name, reason in dropped)
        if not variants:
            reasons = sorted({p.reason for p in pruned if p.op == op})
            raise r.doc.error(grid_path, "empty grid: every combination was pruned: " + "; ".join(reasons))
        for v in variants:
            if any(v.name == f.name for f in found):
                raise r.doc.error(grid_path, f"variant {v.name} is already defined by an earlier grid")
            found.append(v)
    return tuple(found)


def parse_config(text: str, file: str) -> Config:
    """Validates a whole config document. Raises :class:`ConfigError`."""
    data, doc = parse(text, file)
    r = Reader(doc)
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
    sm80 = backends.BACKENDS["sm80"]
    for name, op_value in ops_value.items():
        path: FieldPath = ("ops", name)
        if not OP_NAME_RE.fullmatch(name):
            raise doc.error(path, f"invalid op name {name!r}: use lower-case letters, digits and '_', "
                                  "starting with a letter (it becomes a Python attribute and a C symbol)")
        op = r.mapping(op_value, path, OP_KEYS, required=("dtype", "variants"))
        dtype = r.enum(op["dtype"], path + ("dtype",), DType)
        layout = r.enum(op["layout"], path + ("layout",), Layout) if "layout" in op else Layout.TN
        epilogue = _parse_epilogue(r, op.get("epilogue"), path + ("epilogue",))
        grids = _grids(r, op["variants"], path)
        # arch: the -gencode targets of the sm80 grids (sm90 grids always build for sm_90a).
        archs: Tuple[int, ...] = ()
        if any(backend is sm80 for _, _, backend in grids):
            archs = tuple(sorted(r.int_list(op.get("arch", list(sm80.DEFAULT_ARCHS)), path + ("arch",), 0, 1000,
                                            sm80.SUPPORTED_ARCHS)))
        elif "arch" in op:
            raise doc.error(path + ("arch",), "arch chooses the targets of sm80 grids, and this op has none "
                                              "(sm90 grids always build for sm_90a): remove it")
        variants = _parse_variants(r, name, dtype, layout, archs, epilogue, grids, pruned)
        ops.append(OpSpec(name, dtype, layout, epilogue, archs, variants))
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


def for_targets(config: Config, targets: Sequence[str]) -> Tuple[Config, List[str]]:
    """``config`` as built for the -gencode ``targets`` of ``CUTLASS_SPLITK_CUDA_ARCH_LIST`` (parsed: ``("80",
    "90+PTX")``) instead of each op's ``arch:`` list: each backend keeps the variants whose code runs there
    (its ``for_targets``: no sm90 variant without a 9.0 target; the sm80 variants' archs become the targets'), and an
    op none of whose variants is left is left out. Returns the config and notes of what was left out."""
    ops: List[OpSpec] = []
    notes: List[str] = []
    for op in config.ops:
        for backend in backends.used_by(op):
            op, left_out = backend.for_targets(op, targets)
            notes += left_out
        if op.variants:
            ops.append(op)
        else:
            notes.append(f"{op.name} is left out: none of its variants runs on {', '.join(targets)}")
    return Config(config.path, tuple(ops), config.pruned), notes
