"""The sm80 variant grid: one ``variants:`` mapping of an op (or one entry of a list of them)
→ :class:`~cutlass_splitk.spec.KernelVariant` objects, expanded as a cartesian product and
pruned by :mod:`.rules`.

Keys::

    tile: [[128, 128, 32], ...]         # threadblock M, N, K (required)
    warp: auto | [[64, 64, 32], ...]    # one per tile
    instruction: auto | [16, 8, 16]
    stages: [3, 4]                      # 2..8
    alignment: 8                        # elements per access (8, 4, 2)
    swizzle: 1                          # threadblock swizzle (1, 2, 4, 8)
    split_k:                            # required
      serial: [1, 2, 4, 8]
      parallel: [4, 8, 16, 32]

Values are read with the config's shared reader, so every error names the file, the line and
the field.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, List, Sequence, Tuple

from ...spec import DType, EpilogueSpec, KernelVariant, Layout, Sm80Params, SplitMode
from ...yaml_doc import FieldPath
from . import rules

if TYPE_CHECKING:  # the reader is passed in; config imports this backend, not the reverse
    from ...config import Reader

KEYS = ("tile", "warp", "instruction", "stages", "alignment", "swizzle", "split_k")
MAX_SPLIT = 256
MODES = (SplitMode.SERIAL, SplitMode.PARALLEL)


def parse_grid(r: "Reader", value: Any, path: FieldPath, *, op: str, dtype: DType, layout: Layout,
               archs: Sequence[int], epilogue: EpilogueSpec) -> Tuple[List[KernelVariant], List[Tuple[str, str]]]:
    """(variants, pruned) of one grid: ``pruned`` holds (variant name, reason) for each grid
    point :func:`rules.prune` dropped (the op's ``epilogue`` does not change sm80's rules). Raises
    ConfigError for a mistake in the grid."""
    v = r.mapping(value, path, KEYS, required=("tile", "split_k"))
    tiles = r.shape3_list(v["tile"], path + ("tile",), check=rules.check_tile)

    warp_value = v.get("warp", "auto")
    if warp_value == "auto":
        warps = tuple(rules.auto_warp(t) for t in tiles)
    else:
        warps = r.shape3_list(warp_value, path + ("warp",), unique=False) if isinstance(warp_value, list) else None
        if warps is None:
            raise r.doc.error(path + ("warp",), f"expected 'auto' or a list of [M, N, K] triples, got {warp_value!r}")
        if len(warps) != len(tiles):
            raise r.doc.error(path + ("warp",), f"expected one warp shape per tile ({len(tiles)}), got {len(warps)}")

    inst_value = v.get("instruction", "auto")
    valid_inst = rules.INSTRUCTION_SHAPES[dtype]
    if inst_value == "auto":
        inst = valid_inst[0]
    else:
        inst = r.shape3(inst_value, path + ("instruction",))
        if inst not in valid_inst:
            raise r.doc.error(path + ("instruction",),
                              f"instruction shape {list(inst)} does not match dtype {dtype.value}; valid shapes: "
                              + ", ".join(str(list(s)) for s in valid_inst))

    for i, (tile, warp) in enumerate(zip(tiles, warps)):
        why = rules.check_warp(tile, warp, inst)
        if why:
            raise r.doc.error(path + (("warp", i) if warp_value != "auto" else ("tile", i)), why)

    stages = r.int_list(v.get("stages", 3), path + ("stages",), 2, rules.MAX_STAGES)
    valid_alignments = rules.ALIGNMENTS[dtype]
    alignments = r.int_list(v.get("alignment", valid_alignments[0]), path + ("alignment",), 1, 64)
    for i, a in enumerate(alignments):
        if a not in valid_alignments:
            p = path + ("alignment", i) if isinstance(v.get("alignment"), list) else path + ("alignment",)
            raise r.doc.error(p, f"alignment {a} is not possible for {dtype.value} (cp.async moves 4, 8 or 16 bytes); "
                                 f"valid values: {', '.join(map(str, valid_alignments))}")
    swizzles = r.int_list(v.get("swizzle", 1), path + ("swizzle",), 1, 8, rules.SWIZZLES)

    split = r.mapping(v["split_k"], path + ("split_k",), [m.value for m in MODES])
    if not split:
        raise r.doc.error(path + ("split_k",), "empty grid: give 'serial' and/or 'parallel' split factors")
    modes: List[Tuple[SplitMode, Tuple[int, ...]]] = []
    for mode in MODES:
        if mode.value in split:
            modes.append((mode, r.int_list(split[mode.value], path + ("split_k", mode.value), 1, MAX_SPLIT)))

    out: List[KernelVariant] = []
    pruned: List[Tuple[str, str]] = []
    for (tile, warp), st, align, swz in itertools.product(zip(tiles, warps), stages, alignments, swizzles):
        for mode, splits in modes:
            kv = KernelVariant(op, mode, tile, align, Sm80Params(warp, inst, st, swz), tuple(sorted(splits)))
            reason = rules.prune(kv, dtype, layout, archs)
            if reason:
                pruned.append((kv.name, reason))
            else:
                out.append(kv)
    return out, pruned
