"""benchmarks/fit_model.py, the time model's refit, on a hand-made sweep: --protect counts a suite shape whose pick
is over the limit as a miss (so that a fit cannot trade the suite's rows away), --held-out scores sweeps it does
not fit."""

from __future__ import annotations

import json
import sys

from cks_testutil import ROOT
from cutlass_splitk.runtime import dispatch, timemodel

sys.path.insert(0, str(ROOT / "benchmarks"))
import fit_model  # noqa: E402

CANDIDATES = ("bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8",
              "bias_gelu_mul_permute_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8")


def sweep(path, shape, m, n, k, ratio):
    """A bench --sweep JSON of one row: the two candidates at split 4, the model's pick ``ratio`` times the other."""
    vs = [fit_model.variant(name, (4,)) for name in CANDIDATES]
    pick = dispatch.rank(vs, m, n, k, fit_model.H100, archs=(80,), activation=True)[0].variant.name
    times = {f"{name}/split4": 30.0 * (ratio if name == pick else 1.0) for name in CANDIDATES}
    path.write_text(json.dumps({"rows": [{"shape": shape, "dtype": "f16", "m": m, "n": n, "k": k, "extra": times}]}))
    return f"{path}@act"


def fitted_line(monkeypatch, capsys, args):
    monkeypatch.setattr(sys, "argv", ["fit_model.py", *args, "--samples", "0", "--rounds", "0"])
    fit_model.main()
    return capsys.readouterr().out.splitlines()


def test_protect_counts_a_suite_row_over_the_limit_and_held_out_sweeps_are_scored(tmp_path, monkeypatch, capsys):
    assert {"skinny_512", "512x512x32768", "square_4096"} <= fit_model.suite_labels()
    suite = sweep(tmp_path / "suite.json", "skinny_512", 512, 512, 32768, 1.05)  # 1.05: not a miss without --protect
    other = sweep(tmp_path / "other.json", "700x700x9000", 700, 700, 9000, 1.05)  # not a suite shape
    held = sweep(tmp_path / "held.json", "300x300x9000", 300, 300, 9000, 1.2)
    out = fitted_line(monkeypatch, capsys, [suite, other])
    assert [line.split(":")[0] for line in out if line.startswith("fitted")] == ["fitted"]
    assert next(line for line in out if line.startswith("fitted")).startswith("fitted: 0 shapes over 1.10, worst 1.050")
    out = fitted_line(monkeypatch, capsys, [suite, other, "--protect", "1.03", "--held-out", held])
    assert next(line for line in out if line.startswith("fitted")).startswith(
        "fitted: 1 shapes over 1.10 (or suite shapes over 1.03), worst 1.050")
    assert [line for line in out if line.startswith("held out")] == [
        "held out, current constants: worst 1.200, mean 1.2000, 1 over 1.10 (1 records)",
        "held out, fitted constants: worst 1.200, mean 1.2000, 1 over 1.10 (1 records)"]


def test_a_constant_at_zero_is_tried_at_its_listed_values(tmp_path, monkeypatch, capsys):
    """A term switched off (here SM90_FIXUP_WAVE, set to 0) is not stuck at 0 by the fit's factors: on a sweep where
    the 128x192 serial split 1 beats the 128x128 serial split 2 (576 work units in 5 waves, each wave's second
    partitions waiting on its first) as on 704 x 6144 x 4096 (78.3 against 97.6 us, session 40), the fit takes one
    of the listed values."""
    names = ("bias_gelu_mul_permute_f16_serial_sm90_t128x128x64_c2x1_coop_sauto_a8/split2",
             "bias_gelu_mul_permute_f16_serial_sm90_t128x192x64_c2x1_coop_sauto_a8/split1")
    path = tmp_path / "fixup.json"
    monkeypatch.setattr(timemodel, "SM90_FIXUP_WAVE", 0.0)  # the fit sets it: restored after
    path.write_text(json.dumps({"rows": [{"shape": "704x6144x4096", "dtype": "f16", "m": 704, "n": 6144, "k": 4096,
                                          "extra": dict(zip(names, (97.6, 78.3)))}]}))
    monkeypatch.setattr(sys, "argv", ["fit_model.py", f"{path}@act", "--gpc-order", "--samples", "0", "--rounds", "1",
                                      "--only", "SM90_FIXUP_WAVE"])
    fit_model.main()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "current constants: worst 1.246, mean 1.246"
    assert next(line for line in out if line.startswith("fitted")) == (
        "fitted: 0 shapes over 1.10, worst 1.000, mean 1.000: SM90_FIXUP_WAVE = 0.2")


def test_pick_moves_lists_what_a_model_change_moves_and_draws_a_sample(tmp_path, monkeypatch, capsys):
    """benchmarks/pick_moves.py (how held-out shapes are drawn for a time-model change): its picks are dispatch.rank's
    first candidate, a moved suite or extra-shape pick fails the diff (those rows need the bench), and the sample of
    moved grid shapes is the same for the same seed."""
    import pick_moves
    from cutlass_splitk.config import load_config

    before = pick_moves.picks()
    chain = next(o for o in load_config(pick_moves.CONFIG).ops if o.name == "bias_gelu_mul_permute_f16")
    best = dispatch.rank(chain.variants, 16, 4096, 14336, pick_moves.devices()["h100"], archs=chain.archs,
                         tma_epilogue=chain.epilogue.tma_in_kernel, activation=chain.epilogue.transcendental)[0]
    assert before["bias_gelu_mul_permute_f16|h100|16x4096x14336"] == f"{best.variant.name} {best.split}"
    assert len(before) == 8 * 2 * len(set(pick_moves.named_shapes())) + len(
        {(m, n, k) for m in pick_moves.GRID_M for n in pick_moves.GRID_N for k in pick_moves.GRID_K}
        - set(pick_moves.named_shapes()))
    grid_keys = [key for key in sorted(before) if key.startswith("bias_gelu_mul_permute_f16|h100|1552x")][:5]
    after = dict(before, **{key: "another 1" for key in grid_keys})
    assert pick_moves.moved(before, after) == ([], grid_keys)
    assert pick_moves.draw(grid_keys, 3, 7) == pick_moves.draw(grid_keys, 3, 7) != pick_moves.draw(grid_keys, 3, 8)
    paths = [tmp_path / "before.json", tmp_path / "after.json"]
    for path, picks in zip(paths, (before, after)):
        path.write_text(json.dumps(picks))
    monkeypatch.setattr(sys, "argv", ["pick_moves.py", "diff", *map(str, paths), "--draw", "2", "--seed", "1"])
    assert pick_moves.main() == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("5 of ") and out[0].endswith("; 0 suite or extra-shape picks moved")
    assert out[-1].startswith('SHAPES="1552,') and len(out[-1].split()) == 2
    paths[1].write_text(json.dumps(dict(after, **{"qkv_bf16|h200|16x4096x14336": "another 1"})))
    assert pick_moves.main() == 1
    assert "  MOVED qkv_bf16|h200|16x4096x14336: " in capsys.readouterr().out
    # --grid-device h200: the grid ranked for the GPU the sweeps will run on (session 46: an H200), with the GPC order
    # on as there; the diff counts its grid the same
    on_h200 = pick_moves.picks(grid_device="h200")
    assert not any(key.startswith("bias_gelu_mul_permute_f16|h100|1552x") for key in on_h200)
    assert pick_moves.devices()["h200"].gpc_order
    assert on_h200["bias_gelu_mul_permute_f16|h200|192x1024x32768"] == before["bias_gelu_mul_permute_f16|h200|192x1024x32768"]
    grid_keys = [key for key in sorted(on_h200) if key.startswith("bias_gelu_mul_permute_f16|h200|1552x")][:4]
    for path, picks in zip(paths, (on_h200, dict(on_h200, **{key: "another 1" for key in grid_keys}))):
        path.write_text(json.dumps(picks))
    monkeypatch.setattr(sys, "argv", ["pick_moves.py", "diff", *map(str, paths)])
    assert pick_moves.main() == 0
    grid = out[0].split(" of ")[1].split()[0]  # the H100 grid's count above: the same grid
    assert capsys.readouterr().out.splitlines()[0] == (
        f"4 of {grid} grid shapes moved (the grid's others are suite or extra shapes); 0 suite or extra-shape picks moved")


def test_file_flags_take_the_gpc_order_for_h200_sweeps_only_where_named():
    """PATH@FLAGS: the command line's --gpc-order reaches H100 sweeps only (session 21's H200 sweeps ran before the
    GPC order); an H200 sweep of libraries that ran it (session 46's) says gpc."""
    f = fit_model.file_flags
    assert f("a.json", True, True, "h100", True) == ("a.json", (True, True, "h100", True))
    assert f("a.json", False, True, "h200", True) == ("a.json", (False, True, "h200", False))
    assert f("a.json@act,h100", True, False, "h200", True) == ("a.json", (False, True, "h100", True))
    assert f("a.json@tma,act,h200", False, False, "h100", True) == ("a.json", (True, True, "h200", False))
    assert f("a.json@tma,act,h200,gpc", False, False, "h100", False) == ("a.json", (True, True, "h200", True))
    assert f("a.json@", True, True, "h100", False) == ("a.json", (False, False, "h100", False))


def test_splits_from_ranks_only_the_pairs_a_config_builds(tmp_path, monkeypatch, capsys):
    """A sweep of a build offering more splits than a config lists is scored as that config would run: with
    --splits-from, records of (variant, split) pairs the config does not build are neither picked nor the best.
    Here the sweep has the 128x128 tile at splits 1 and 4; a config listing split 4 alone leaves split 4's record."""
    names = {"bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8/split1": 20.0,
             "bias_gelu_mul_permute_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8/split4": 30.0}
    path = tmp_path / "more.json"
    path.write_text(json.dumps({"rows": [{"shape": "512x512x32768", "dtype": "f16", "m": 512, "n": 512, "k": 32768,
                                          "extra": names}]}))
    config = tmp_path / "four.yaml"
    config.write_text("ops:\n  other_op_f16:\n    dtype: f16\n    variants:\n"
                      "      - {backend: sm90, tile: [[128, 128, 64]], cluster: [[1, 2]], split_k: {parallel: [4]}}\n")
    assert fit_model.offered_splits(str(config)) == {("parallel_sm90_t128x128x64_c1x2_coop_sauto_a8", 4)}
    out = fitted_line(monkeypatch, capsys, [f"{path}@act", "--splits-from", str(config)])
    assert out[1].split() == ["512x512x32768", "f16", "pick", "30.0", "best", "30.0", "ratio", "1.00", "parallel",
                              "sm90_t128x128x64_c1x2_coop_sauto_a8", "split", "4"]
    out = fitted_line(monkeypatch, capsys, [f"{path}@act"])  # every record: the model's pick among both splits
    assert out[1].split()[4:6] == ["best", "20.0"]
