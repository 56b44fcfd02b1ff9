"""benchmarks/group_value.py: what each variant group of a config is worth on recorded sweeps."""

from __future__ import annotations

import json
import sys

from cks_testutil import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import group_value  # noqa: E402
from fit_model import backend_of, group_key, offered_splits  # noqa: E402

OP = "bias_gelu_mul_permute_f16"
DEFAULT = str(ROOT / "configs" / "default.yaml")
A = "serial_sm90_t128x64x64_c1x1_coop_sauto_a8"
B = "serial_sm90_t128x128x64_c2x1_coop_sauto_a8"
SM80 = "serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1"


def sweep(tmp_path, rows):
    """A `bench --sweep --json` file of the chain op: rows [(m, n, k, {(group, split): us})]."""
    out = [{"shape": f"{m}x{n}x{k}", "dtype": "f16", "m": m, "n": n, "k": k,
            "extra": {"matmul_graph_us": 1.0, **{f"{OP}_{g}/split{s}": us for (g, s), us in times.items()}}}
           for m, n, k, times in rows]
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"header": {}, "ceilings": {}, "rows": out}))
    return str(path)


def every_sm90_group(us):
    """Every offered sm90 (group, split) of the chain op in default.yaml, at ``us``."""
    return {(g, s): us for g, s in offered_splits(DEFAULT)
            if backend_of(g) == "sm90" and g != "serial_sm90_t128x128x64_c2x1_pp_sauto_a8"}


def test_a_group_alone_best_costs_the_ratio_to_the_next_best(tmp_path):
    full = every_sm90_group(20.0)
    full[(A, 1)] = 10.0  # A alone best: without it 20 / 10
    tied = every_sm90_group(20.0)
    tied[(A, 1)] = tied[(B, 1)] = 10.0  # a tie: neither is the only best
    path = sweep(tmp_path, [(128, 7168, 2048, full), (256, 4096, 1024, tied)])
    offered = offered_splits(DEFAULT)
    table = group_value.complete(group_value.rows([path], offered), offered, 0.8)
    assert len(table) == 2
    assert group_value.only_best(table, A) == [(2.0, (128, 7168, 2048))]
    assert group_value.only_best(table, B) == []


def test_rows_with_a_few_anchors_do_not_count(tmp_path):
    path = sweep(tmp_path, [(112, 6144, 2048, {(A, 1): 10.0, (B, 1): 16.4})])
    offered = offered_splits(DEFAULT)
    every = group_value.rows([path], offered)
    assert len(every) == 1 and group_value.only_best(every, A) == [(1.64, (112, 6144, 2048))]
    assert group_value.complete(every, offered, 0.8) == []


def test_sm80_wins_lists_the_rows_where_mma_sync_is_faster(tmp_path):
    ahead = every_sm90_group(11.7)
    ahead[(SM80, 1)] = 8.4
    behind = every_sm90_group(11.7)
    behind[(SM80, 1)] = 12.0
    path = sweep(tmp_path, [(32, 11008, 1024, ahead), (64, 4096, 4096, behind)])
    offered = offered_splits(DEFAULT)
    (ratio, mnk, p80, us80, p90, us90), = group_value.sm80_wins(group_value.rows([path], offered))
    assert mnk == (32, 11008, 1024) and p80 == (SM80, 1) and (us80, us90) == (8.4, 11.7)
    assert abs(ratio - 8.4 / 11.7) < 1e-12 and group_key(f"{OP}_{p90[0]}") == p90[0]
