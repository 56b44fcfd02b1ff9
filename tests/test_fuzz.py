"""The config fuzzer without a GPU (issue 13, part 2): the generator draws valid configs only,
covers every knob value in 48 draws and is deterministic per seed; the problem runner passes
a correct CPU emulation of the kernels and catches injected faults; the driver reports a
config that fails to build (a fake nvcc). tests/gpu/test_gpu_fuzz.py runs the real thing."""

from __future__ import annotations

import json
import sys

import pytest

from cks_testutil import ROOT, fake_nvcc
from cutlass_splitk.config import parse_config

sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz_grammar  # noqa: E402

SCOPES = ("op", "sm80", "sm90")


@pytest.mark.parametrize("seed", [1, 2])
def test_every_draw_validates_and_is_one_group(seed):
    draws, _ = fuzz_grammar.draw_run(seed, 200, "both")
    assert [d.backend for d in draws[:4]] == ["sm80", "sm90", "sm80", "sm90"]
    for d in draws:
        config = parse_config(d.yaml, f"{d.op}.yaml")  # what the build will read
        assert [o.name for o in config.ops] == [d.op]
        op = config.ops[0]
        assert op.variants and {v.group for v in op.variants} == {op.variants[0].group}, d.yaml
        assert {v.backend.value for v in op.variants} == {d.backend}
        if d.backend == "sm80":
            assert op.archs == (90,)  # so that the sm80 kernels run on the H100
        assert d.attempts == len(d.rejections) + 1


@pytest.mark.parametrize("seed,backend", [(0, "both"), (1, "both"), (2, "both"), (3, "sm80"), (4, "sm90")])
def test_48_draws_cover_every_knob_value(seed, backend):
    draws, coverage = fuzz_grammar.draw_run(seed, 48, backend)
    scopes = ("op",) + (fuzz_grammar.BACKENDS if backend == "both" else (backend,))
    assert coverage.missing(scopes) == []
    odd = [s for d in draws for key in ("serial_split", "parallel_split")
           for s in d.knobs.get(f"{d.backend}.{key}", ()) if s % 2 and s > 1]
    assert odd
    # the refusals are recorded with a normalised reason
    refusals = fuzz_grammar.rejection_summary(draws)
    assert sum(refusals.values()) == sum(d.attempts - 1 for d in draws)
    assert all(r.startswith(("error: ", "pruned: ")) for r in refusals)
    table = "\n".join(coverage.table(scopes))
    assert "op.activation" in table and "leaky_relu:" in table


def test_sm90_draws_swap_operands_in_the_in_kernel_modes_too():
    # swap_ab is legal in every sm90 mode (session 48): the fuzzer builds swapped serial and stream-K kernels,
    # and the narrow tile widths drawn on purpose are listed apart from the wild values
    draws, coverage = fuzz_grammar.draw_run(4, 48, "sm90")
    swapped_modes = {m for d in draws if d.knobs["sm90.swap_ab"] for m in d.knobs["sm90.modes"].split("+")}
    assert {"serial", "stream_k", "parallel"} <= swapped_modes
    assert all(v.params.swap_ab == d.knobs["sm90.swap_ab"] for d in draws for op in d.config.ops for v in op.variants)
    line = next(l for l in coverage.table(("sm90",)) if "sm90.tile_n" in l)
    assert "drawn beside: " in line and "outside the domain" not in line


def test_generator_is_deterministic_per_seed():
    first, _ = fuzz_grammar.draw_run(7, 12)
    again, _ = fuzz_grammar.draw_run(7, 12)
    other, _ = fuzz_grammar.draw_run(8, 12)
    assert [d.yaml for d in first] == [d.yaml for d in again]
    assert [d.yaml for d in first] != [d.yaml for d in other]
    assert "seed 7, config 3 of 12" in first[3].yaml


def test_wild_values_are_refused_or_kept_as_configs():
    # out-of-domain values are tried; any the validator accepts is a real config (built and run)
    draws, coverage = fuzz_grammar.draw_run(5, 60)
    for d in draws:
        if "wild" in d.knobs:
            parse_config(d.yaml, "x.yaml")
    assert all(v not in fuzz_grammar.DOMAINS[s][k] for (s, k, v) in coverage.extra)


# --- the problem runner on a CPU emulation of the kernels -----------------------------------------

SMALL = 1 << 22  # M*N*K of the problems run on the CPU


@pytest.fixture
def runner():
    """(fuzz_problems, emulated_op, EMU_DEVICE); skips without torch."""
    pytest.importorskip("torch", reason="the problem runner needs torch")
    import fuzz_problems
    from fuzz_emulator import EMU_DEVICE, emulated_op

    return fuzz_problems, emulated_op, EMU_DEVICE


def _small(spec, config, seed, count):
    import fuzz_problems

    return [p for p in fuzz_problems.draw_problems(spec, config, seed, count) if p.m * p.n * max(p.k, 1) <= SMALL]


def test_problems_are_deterministic_and_force_every_split(runner):
    fuzz_problems = runner[0]
    draws, _ = fuzz_grammar.draw_run(3, 4)
    spec = draws[1].config.ops[0]
    a = fuzz_problems.draw_problems(spec, 1, 3, 60)
    assert [p.to_json() for p in a] == [p.to_json() for p in fuzz_problems.draw_problems(spec, 1, 3, 60)]
    forced = {(p.force["variant"], p.force["split_k"]) for p in a if p.target}
    assert forced == {(v.name, s) for v in spec.variants for s in v.splits}
    assert sum(p.target is None for p in a) == 12  # every fifth: the dispatcher chooses


def test_runner_passes_a_correct_emulation(runner):
    fuzz_problems, emulated_op, EMU_DEVICE = runner
    draws, _ = fuzz_grammar.draw_run(11, 10)
    ran = kinds = 0
    for d in draws:
        spec = d.config.ops[0]
        op = emulated_op(spec)
        only = [p.index for p in _small(spec, d.index, 11, 40)]
        stats = fuzz_problems.run_config(op, spec, d.index, 11, 40, "cpu", EMU_DEVICE, only=only)
        assert stats["failures"] == [], (d.yaml, stats["failures"][:3])
        ran += stats["problems"]
        kinds += len(stats["pairs"])
    assert ran >= 100 and kinds >= 20


@pytest.mark.parametrize("bug,kind", [("garbage", "wrong"), ("unwritten", "wrong"),
                                      ("nondeterministic", "nonrepro"), ("overflow", "wrong")])
def test_runner_catches_injected_faults(runner, bug, kind):
    fuzz_problems, emulated_op, _ = runner
    draws, _ = fuzz_grammar.draw_run(12, 6)
    found = []
    for d in draws:
        spec = d.config.ops[0]
        op = emulated_op(spec, bug)
        recorder = fuzz_problems.Recorder(op)
        for p in _small(spec, d.index, 12, 40):
            if bug in ("unwritten", "overflow"):
                # Only an out= the kernel writes in place is poisoned (the runtime's padded buffers
                # are not), and only a strided one with slack can show an overflow (see the emulator).
                ld, _, col = p.layouts.get("out", (0, 0, 0))
                if p.out not in ("fresh", "strided") or ld % 8 or col % 8 or (bug == "overflow" and (
                        p.out != "strided" or ld <= p.n or p.m < 2 or p.view is not None)):
                    continue
                if p.view is not None and p.n % 8:
                    continue
                p.n, p.k = -(-p.n // 8) * 8, -(-p.k // 8) * 8  # aligned sizes and operands: in place
                p.layouts = {"out": p.layouts["out"]} if "out" in p.layouts else {}
            result = fuzz_problems.run_problem(op, spec, p, "cpu", recorder)
            if p.m and p.n and p.k:
                found.append(result["kind"])
    assert found and set(found) == {kind}, found


# --- the driver (fake nvcc: no CUDA compile) --------------------------------------------------------

# compiles by copying; fails on the unit of op fz001_sm90 (a stand-in for a config that does not build)
FAKE_NVCC = fake_nvcc('case "$src" in *fz001_sm90/sm90*) echo "$src(1): error: something CUTLASS did not like" >&2; '
                      'exit 2;; esac\n')


def _fake_toolchain(tmp_path, monkeypatch):
    cuda = tmp_path / "cuda"
    (cuda / "bin").mkdir(parents=True)
    (cuda / "bin" / "nvcc").write_text(FAKE_NVCC)
    (cuda / "bin" / "nvcc").chmod(0o755)
    cutlass = tmp_path / "cutlass" / "include" / "cutlass"
    cutlass.mkdir(parents=True)
    (cutlass / "cutlass.h").write_text("")
    (cutlass / "version.h").write_text("#define CUTLASS_MAJOR 9\n#define CUTLASS_MINOR 9\n#define CUTLASS_PATCH 9\n")
    monkeypatch.setenv("CUDA_HOME", str(cuda))
    monkeypatch.setenv("CUTLASS_PATH", str(cutlass.parent.parent))


def test_driver_reports_a_config_that_does_not_build(tmp_path, monkeypatch, capsys):
    import fuzz_configs

    _fake_toolchain(tmp_path, monkeypatch)
    out = tmp_path / "fuzz"
    rc = fuzz_configs.main(["--seed", "9", "--configs", "4", "--problems-per-config", "5", "--out", str(out),
                            "--jobs", "2", "--cache", str(tmp_path / "cache"), "--no-run"])
    assert rc == 1
    report = json.loads((out / "report.json").read_text())
    assert report["seed"] == 9 and report["totals"]["built"] == 3 and report["totals"]["build_failed"] == 1
    failed = report["configs"][1]
    assert failed["op"] == "fz001_sm90" and failed["build"]["ok"] is False
    assert "something CUTLASS did not like" in failed["build"]["error"] and "ops:" in failed["yaml"]
    assert (out / "configs" / "fz001_sm90.yaml").read_text() == failed["yaml"]
    assert report["coverage"]["op.dtype"] and "refusals" in report
    printed = capsys.readouterr().out
    assert "fuzz seed 9" in printed and "BUILD FAILED: config 1" in printed
    assert (out / "build" / "fz000_sm80" / "manifest.json").is_file()
    # the same seed again: every object comes from the cache
    rc = fuzz_configs.main(["--seed", "9", "--configs", "4", "--out", str(out), "--only-config", "0",
                            "--cache", str(tmp_path / "cache"), "--no-run"])
    assert rc == 0
    again = json.loads((out / "report.json").read_text())
    assert [c["index"] for c in again["configs"]] == [0] and again["configs"][0]["build"]["compiled"] == 0


@pytest.mark.parametrize("bug", [None, "garbage"])
def test_driver_runs_problems_and_reports_failures(tmp_path, monkeypatch, capsys, runner, bug):
    """The whole driver: fake nvcc, then each "built" op replaced by its CPU emulation."""
    import fuzz_configs
    from cutlass_splitk.config import load_config

    fuzz_problems, emulated_op, EMU_DEVICE = runner
    _fake_toolchain(tmp_path, monkeypatch)
    monkeypatch.setattr(fuzz_configs, "gpu_available", lambda: True)

    def load_op(build_dir, name):
        manifest = json.loads((build_dir / "manifest.json").read_text())
        spec = load_config(manifest["config"]).ops[0]
        return emulated_op(spec, bug), "cpu", EMU_DEVICE

    monkeypatch.setattr(fuzz_configs, "load_op", load_op)
    out = tmp_path / "fuzz"
    argv = ["--seed", "4", "--configs", "6", "--problems-per-config", "10", "--out", str(out), "--jobs", "2",
            "--cache", str(tmp_path / "cache")]
    rc = fuzz_configs.main(argv + ["--only-config", "0", "--only-config", "2", "--only-config", "3"])
    report = json.loads((out / "report.json").read_text())
    t = report["totals"]
    assert [c["index"] for c in report["configs"]] == [0, 2, 3]
    assert t["built"] == 3 and t["problems"] == 30 and t["skipped"] == 0
    printed = capsys.readouterr().out
    assert "problems: 30 run in 3 configs" in printed
    if bug is None:
        assert rc == 0 and t["wrong"] == t["nonrepro"] == t["error"] == 0 and report["failures"] == []
    else:
        assert rc == 1 and t["wrong"] > 0
        f = report["failures"][0]
        assert f["kind"] == "wrong" and f["yaml"].startswith("# cutlass-splitk fuzz: seed 4")
        assert {"m", "n", "k", "force", "layouts", "seed"} <= set(f["problem"])
        assert f"FAILED config {f['config']} problem {f['problem']['index']}" in printed
