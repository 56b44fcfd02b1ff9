"""benchmarks/candidate_picks.py: where a candidate grid moves the time model's pick, with the swept times of both
picks where a sweep has them."""

from __future__ import annotations

import json
import sys

from cks_testutil import ROOT
from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import dispatch

sys.path.insert(0, str(ROOT / "benchmarks"))
import candidate_picks  # noqa: E402

OP = "bias_gelu_mul_permute_f16"
DEFAULT = str(ROOT / "configs" / "default.yaml")
CANDIDATE = str(ROOT / "benchmarks" / "default_r70_candidate.yaml")
SHAPE = (160, 8192, 1024)


def run(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["candidate_picks.py", *args])
    candidate_picks.main()
    return capsys.readouterr().out.splitlines()


def picks(path):
    op = candidate_picks.op_of(path, OP)
    kw = dict(archs=tuple(op.archs), tma_epilogue=op.epilogue.tma_in_kernel, activation=op.epilogue.transcendental)
    c = dispatch.rank(op.variants, *SHAPE, candidate_picks.DEVICES["h100"], **kw)[0]
    return candidate_picks.group_key(c.variant.name), c.split


def test_a_grid_against_itself_moves_nothing(monkeypatch, capsys):
    out = run(monkeypatch, capsys, DEFAULT, DEFAULT)
    n = len(candidate_picks.shapes([]))
    assert out == [f"0 shapes of {n} change pick; new variants: 0"]


def test_a_moved_pick_is_reported_with_both_swept_times(tmp_path, monkeypatch, capsys):
    (old, old_split), (new, new_split) = picks(DEFAULT), picks(CANDIDATE)
    assert (old, old_split) != (new, new_split)  # the candidate's swapped in-kernel tile takes this shape
    sweep = tmp_path / "sweep.json"
    row = {"shape": "x".join(map(str, SHAPE)), "dtype": "f16", "m": SHAPE[0], "n": SHAPE[1], "k": SHAPE[2], "extra": {f"{OP}_{old}/split{old_split}": 15.0,
                                                         f"{OP}_{new}/split{new_split}": 10.0}}
    sweep.write_text(json.dumps({"rows": [row]}))
    out = run(monkeypatch, capsys, DEFAULT, CANDIDATE, "--sweeps", str(sweep))
    line = f"160x8192x1024: {old}/{old_split} -> {new}/{new_split} (new); measured 15.0 -> 10.0 us (0.67x)"
    assert line in out
    assert len(load_config(CANDIDATE).ops[0].variants) > len(load_config(DEFAULT).ops[0].variants)
