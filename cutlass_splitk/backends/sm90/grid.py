"""The sm90 variant grid: one ``variants:`` mapping with ``backend: sm90`` →
:class:`~cutlass_splitk.spec.KernelVariant` objects, expanded as a cartesian product and pruned
by :mod:`.rules`.

Keys::

    backend: sm90                       # read by config.py
    tile: [[128, 128, 64], ...]         # CTA tile M (64, 128, 256), N (16..256, step 16; serial and
                                        # stream-K: step 32), K (32, 64, 128)
    cluster: [[1, 1], [2, 1]]           # thread-block cluster (M, N): [1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [1, 4],
                                        # [2, 4], [4, 2]
    schedule: auto | cooperative | pingpong | [cooperative, pingpong]
                                        # auto: cooperative for tile M >= 128, else pingpong
    stages: auto | [4, 6]               # TMA pipeline depth; auto fills shared memory
    alignment: 8                        # TMA moves 16-byte rows: 8 is the only value
    swap_ab: false | true | [false, true]
                                        # true: the kernel computes D^T = B^T A^T (parallel split-K
                                        # only), its tile and cluster then run along (N, M): for
                                        # small M, e.g. tile [64, 16, 128] puts M = 16 on wgmma's N
    split_k:                            # required
      serial: [1, 2, 4, 8]              # in-kernel split-K (stream-K scheduler, SplitK decomposition)
      parallel: [2, 4, 8, 16]           # f32 partials + the shared reduction kernel
      stream_k: true                    # data-parallel tiles + stream-K units (no split factor)
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, List, Sequence, Tuple

from ...spec import DType, EpilogueSpec, KernelVariant, Layout, Schedule, Sm90Params, SplitMode
from ...yaml_doc import FieldPath
from . import rules

if TYPE_CHECKING:  # the reader is passed in; config imports this backend, not the reverse
    from ...config import Reader

KEYS = ("tile", "cluster", "schedule", "stages", "alignment", "swap_ab", "split_k")
MAX_SPLIT = 256


def _clusters(r: "Reader", value: Any, path: FieldPath) -> Tuple[Tuple[int, int], ...]:
    items = value if isinstance(value, list) and value and isinstance(value[0], list) else None
    if items is None:
        raise r.doc.error(path, f"expected a list of [M, N] cluster shapes, e.g. [[1, 1], [2, 1]], got {value!r}")
    out: List[Tuple[int, int]] = []
    for i, item in enumerate(items):
        if not isinstance(item, list) or len(item) != 2:
            raise r.doc.error(path + (i,), f"expected [M, N], got {item!r}")
        cluster = (r.integer(item[0], path + (i, 0), 1, 16), r.integer(item[1], path + (i, 1), 1, 16))
        why = rules.check_cluster(cluster)
        if why:
            raise r.doc.error(path + (i,), why)
        if cluster in out:
            raise r.doc.error(path + (i,), f"duplicate value {list(cluster)}")
        out.append(cluster)
    return tuple(out)


def _schedules(r: "Reader", value: Any, path: FieldPath) -> Tuple[Schedule, ...]:
    """The schedules asked for; () for auto."""
    if value == "auto":
        return ()
    items = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        raise r.doc.error(path, "empty grid: give at least one value")
    out: List[Schedule] = []
    for i, item in enumerate(items):
        p = path + (i,) if isinstance(value, list) else path
        schedule = r.enum(item, p, Schedule)
        if schedule in out:
            raise r.doc.error(p, f"duplicate value {schedule.value!r}")
        out.append(schedule)
    return tuple(out)


def _swaps(r: "Reader", value: Any, path: FieldPath) -> Tuple[bool, ...]:
    if not isinstance(value, list):
        return (r.boolean(value, path),)
    if not value:
        raise r.doc.error(path, "empty grid: give at least one value")
    out: List[bool] = []
    for i, item in enumerate(value):
        swap = r.boolean(item, path + (i,))
        if swap in out:
            raise r.doc.error(path + (i,), f"duplicate value {str(swap).lower()}")
        out.append(swap)
    return tuple(out)


def parse_grid(r: "Reader", value: Any, path: FieldPath, *, op: str, dtype: DType, layout: Layout,
               archs: Sequence[int], epilogue: EpilogueSpec) -> Tuple[List[KernelVariant], List[Tuple[str, str]]]:
    """(variants, pruned) of one grid of an op with ``epilogue``: ``pruned`` holds (variant name, reason)
    for each grid point :func:`rules.prune` dropped. Raises ConfigError for a mistake in the grid."""
    v = r.mapping(value, path, KEYS, required=("tile", "split_k"))
    tiles = r.shape3_list(v["tile"], path + ("tile",), check=rules.check_tile)
    clusters = _clusters(r, v["cluster"], path + ("cluster",)) if "cluster" in v else ((1, 1),)
    schedules = _schedules(r, v.get("schedule", "auto"), path + ("schedule",))
    stages_value = v.get("stages", "auto")
    stages = (0,) if stages_value == "auto" else r.int_list(stages_value, path + ("stages",), 2, rules.MAX_STAGES)
    alignment = r.integer(v.get("alignment", rules.ALIGNMENT), path + ("alignment",), 1, 64)
    if alignment != rules.ALIGNMENT:
        raise r.doc.error(path + ("alignment",), f"alignment {alignment} is not possible for sm90 (TMA moves "
                                                 f"16-byte rows); valid values: {rules.ALIGNMENT}")

    swaps = _swaps(r, v["swap_ab"], path + ("swap_ab",)) if "swap_ab" in v else (False,)

    split = r.mapping(v["split_k"], path + ("split_k",), [m.value for m in SplitMode])
    if not split:
        raise r.doc.error(path + ("split_k",), "empty grid: give 'serial', 'parallel' and/or 'stream_k'")
    modes: List[Tuple[SplitMode, Tuple[int, ...]]] = []
    for mode in SplitMode:
        if mode.value not in split:
            continue
        mpath = path + ("split_k", mode.value)
        if mode is SplitMode.STREAM_K:
            if r.boolean(split[mode.value], mpath):
                modes.append((mode, (1,)))
        else:
            modes.append((mode, tuple(sorted(r.int_list(split[mode.value], mpath, 1, MAX_SPLIT)))))
    if not modes:
        raise r.doc.error(path + ("split_k",), "empty grid: give 'serial', 'parallel' and/or 'stream_k'")

    out: List[KernelVariant] = []
    pruned: List[Tuple[str, str]] = []
    for tile, cluster, st, swap in itertools.product(tiles, clusters, stages, swaps):
        auto = Schedule.COOPERATIVE if tile[0] >= 128 else Schedule.PINGPONG
        for schedule in schedules or (auto,):
            for mode, splits in modes:
                kv = KernelVariant(op, mode, tile, alignment, Sm90Params(cluster, schedule, st, swap), splits)
                reason = rules.prune(kv, dtype, epilogue)
                if reason:
                    pruned.append((kv.name, reason))
                else:
                    out.append(kv)
    return out, pruned
