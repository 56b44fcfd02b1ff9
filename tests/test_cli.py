"""The command line (cutlass_splitk.cli.main)."""

from __future__ import annotations

import importlib.util

import pytest

from cks_testutil import CONFIGS, MINIMAL_OP_YAML, MINIMAL_VARIANTS, ROOT
from cutlass_splitk import codegen
from cutlass_splitk.cli import main
from cutlass_splitk.config import load_config

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="explain loads the runtime, which needs torch")


@pytest.fixture
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_list_default_why(in_root, capsys):
    assert main(["list", "configs/default.yaml", "--why"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    config = load_config("configs/default.yaml")
    assert len(lines) == sum(1 + len(op.variants) for op in config.ops) + 1
    assert lines[0] == "linear_f16: f16 tn archs=[80] bias=per_col act=identity e_op=none permute=none"
    first = config.ops[0].variants
    assert first[0].mode.value == "parallel" and first[0].backend.value == "sm90"
    assert lines[1] == f"  {first[0].name}  splits=[2, 4, 8, 16, 24, 32]"
    assert lines[1] == "  linear_f16_parallel_sm90_t64x128x64_c1x2_pp_sauto_a8  splits=[2, 4, 8, 16, 24, 32]"
    assert lines[2] == "  linear_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab  splits=[1, 2, 4, 8, 12, 16, 24, 32]"
    assert ("bias_gelu_mul_permute_bf16: bf16 tn archs=[80] bias=per_col act=gelu e_op=mul "
            "permute=head_split") in lines
    listed = {line.split()[0] for line in lines if line.startswith("  ")}
    assert listed == {v.name for op in config.ops for v in op.variants}
    # each op's header line, then its variants in config order
    i = 0
    for op in config.ops:
        assert lines[i].startswith(f"{op.name}: {op.dtype.value} {op.layout.value} archs={list(op.archs)} ")
        assert lines[i + 1:i + 1 + len(op.variants)] == [f"  {v.name}  splits={list(v.splits)}" for v in op.variants]
        i += 1 + len(op.variants)
    assert lines[-1] == "pruned: none"


def test_list_without_why(in_root, capsys):
    assert main(["list", "configs/epilogues.yaml"]) == 0
    out = capsys.readouterr().out
    assert "pruned" not in out
    assert ("leaky_add_permute_f16: f16 tn archs=[90] bias=per_row act=leaky_relu e_op=add permute=head_split"
            in out.splitlines())


def test_list_why_shows_pruned(write_yaml, capsys):
    path = write_yaml(MINIMAL_OP_YAML.replace("arch: [90]", "arch: [80, 90]")
                      .replace("tile: [[64, 64, 64]]", "tile: [[128, 256, 64]]").replace("stages: [3]", "stages: [2, 4]"))
    assert main(["list", str(path), "--why"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "pruned:\n"
        "  tiny_f16_serial_t128x256x64_w64x64x64_i16x8x16_s4_a8_z1: shared memory 196608 B > 166912 B limit of sm_80\n"
        "  tiny_f16_parallel_t128x256x64_w64x64x64_i16x8x16_s4_a8_z1: shared memory 196608 B > 166912 B limit of "
        "sm_80\n")


def test_list_why_shows_the_tile_k_rule(write_yaml, capsys):
    path = write_yaml(MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [64, 64, 128]]"))
    assert main(["list", str(path), "--why"]) == 0
    out = capsys.readouterr().out
    reason = ("tile K 128 > 64: CUTLASS's crosswise shared-memory layout for 16-bit operands needs K <= 64 "
              "(128 bytes)")
    assert out == (
        "tiny_f16: f16 tn archs=[90] bias=none act=identity e_op=none permute=none\n"
        f"  {MINIMAL_VARIANTS[0]}  splits=[1, 2]\n"
        f"  {MINIMAL_VARIANTS[1]}  splits=[2, 4]\n"
        "pruned:\n"
        f"  tiny_f16_serial_t64x64x128_w32x32x128_i16x8x16_s3_a8_z1: {reason}\n"
        f"  tiny_f16_parallel_t64x64x128_w32x32x128_i16x8x16_s3_a8_z1: {reason}\n")


def test_generate_check_then_generate(in_root, tmp_path, capsys):
    gen = tmp_path / "gen"
    config = load_config("configs/default.yaml")
    units = codegen.render(config)

    assert main(["generate", "configs/default.yaml", "--generated", str(gen), "--check"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    err_lines = err.splitlines()
    assert err_lines[-1] == "run: cutlass-splitk generate configs/default.yaml"
    assert sorted(err_lines[:-1]) == sorted(f"out of date: {gen / 'default' / u.relpath}" for u in units)
    assert not gen.exists()  # --check writes nothing

    assert main(["generate", "configs/default.yaml", "--generated", str(gen)]) == 0
    assert capsys.readouterr().out == f"{gen / 'default'}: {len(units)} sources, {len(units)} written\n"
    for u in units:
        assert (gen / "default" / u.relpath).read_text() == u.text

    assert main(["generate", "configs/default.yaml", "--generated", str(gen), "--check"]) == 0
    assert capsys.readouterr().out == f"{gen / 'default'}: up to date\n"

    assert main(["generate", "configs/default.yaml", "--generated", str(gen)]) == 0
    assert capsys.readouterr().out == f"{gen / 'default'}: {len(units)} sources, 0 written\n"


def test_generate_check_detects_edits_and_extra_files(write_yaml, tmp_path, capsys):
    path = write_yaml(MINIMAL_OP_YAML, "tiny.yaml")
    gen = tmp_path / "gen"
    assert main(["generate", str(path), "--generated", str(gen)]) == 0
    capsys.readouterr()
    library = gen / "tiny" / "tiny_f16" / "library.cu"
    library.write_text(library.read_text() + "// edited\n")
    extra = gen / "tiny" / "tiny_f16" / "extra.cu"
    extra.write_text("// not ours\n")
    assert main(["generate", str(path), "--generated", str(gen), "--check"]) == 1
    assert capsys.readouterr().err == (f"out of date: {library}\n"
                                       f"not generated by {path}: {extra}\n"
                                       f"run: cutlass-splitk generate {path}\n")


def test_committed_sources_are_up_to_date(in_root, capsys):
    for name in ("default", "epilogues"):
        if not (ROOT / "generated" / name).is_dir():
            pytest.skip(f"generated/{name} does not exist yet")
        assert main(["generate", f"configs/{name}.yaml", "--check"]) == 0
        assert capsys.readouterr().out == f"generated/{name}: up to date\n"


@pytest.mark.parametrize("command", ["list", "generate", "build"])
def test_bad_config_exit_code_2(write_yaml, tmp_path, capsys, command):
    path = write_yaml(MINIMAL_OP_YAML.replace("dtype: f16", "dtype: f32"))
    extra = {"generate": ["--generated", str(tmp_path / "gen")],
             "build": ["-o", str(tmp_path / "out"), "-q"]}.get(command, [])
    assert main([command, str(path), *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"error: {path}:3: ops.tiny_f16.dtype: invalid value 'f32'; valid values: f16, bf16\n"
    assert not (tmp_path / "gen").exists() and not (tmp_path / "out").exists()


def test_missing_config_exit_code_2(tmp_path, capsys):
    path = tmp_path / "missing.yaml"
    assert main(["list", str(path)]) == 2
    assert capsys.readouterr().err == f"error: {path}: file not found\n"


def test_build_error_exit_code_1(write_yaml, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    path = write_yaml(MINIMAL_OP_YAML)
    assert main(["build", str(path), "-o", str(tmp_path / "out"), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: nvcc not found\ncommand: \n--- output ---\nCUDA_HOME={tmp_path} has no bin/nvcc\n")


@needs_torch
def test_explain_missing_directory(tmp_path, capsys):
    d = tmp_path / "nope"
    assert main(["explain", str(d), "linear_f16", "16", "4096", "4096", "--sms", "132"]) == 1
    assert capsys.readouterr().err == (f"error: {d}: no such directory; rebuild it with: cutlass-splitk build "
                                       f"<config.yaml> -o {d}\n")


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["list"])
    assert info.value.code == 2


@needs_torch
@pytest.mark.nvcc
def test_explain_with_a_modelled_device(tiny_build, capsys):
    assert main(["explain", str(tiny_build.out), "tiny_f16", "16", "4096", "4096", "--sms", "132", "--top", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("tiny_f16: M=16 N=4096 K=4096 on NVIDIA H100 80GB HBM3 (132 SMs, compute capability 9.0), heuristic ranking:")
    assert lines[1].startswith("  -> tiny_f16_") and " split=" in lines[1] and "predicted" in lines[1]
    assert lines[2].startswith("     tiny_f16_")
    assert lines[3] == "     ... 2 more"  # 4 candidates: serial [1, 2] + parallel [2, 4]
    assert len(lines) == 4
    assert any(v in lines[1] for v in MINIMAL_VARIANTS)


@needs_torch
@pytest.mark.nvcc
def test_explain_unknown_op_is_a_clean_error(tiny_build, capsys):
    # an unknown op (AttributeError from Library.op) is "error: ..." on stderr and exit code 1,
    # not a Python traceback
    code = None
    try:
        code = main(["explain", str(tiny_build.out), "nosuch", "16", "64", "64", "--sms", "132"])
    except AttributeError as exc:
        pytest.fail(f"traceback instead of an error message: AttributeError: {exc}")
    assert code == 1
    assert capsys.readouterr().err == f"error: no op 'nosuch' in {tiny_build.out}; built ops: tiny_f16\n"


@needs_torch
@pytest.mark.nvcc
def test_explain_unbuilt_split_is_a_clean_error(tiny_build, capsys):
    code = None
    try:
        code = main(["explain", str(tiny_build.out), "tiny_f16", "16", "64", "64", "--sms", "132", "--split-k", "3"])
    except ValueError as exc:
        pytest.fail(f"traceback instead of an error message: ValueError: {exc}")
    assert code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error: tiny_f16: split_k=3 is not available; built split factors: [1, 2, 4]\n"
    assert main(["explain", str(tiny_build.out), "tiny_f16", "16", "64", "64", "--sms", "132", "--split-k", "1",
                 "--mode", "parallel"]) == 1
    assert capsys.readouterr().err == ("error: tiny_f16: split_k=1 is not available in mode parallel; "
                                       "built split factors: [2, 4]\n")


@needs_torch
@pytest.mark.nvcc
def test_explain_without_a_gpu_needs_sms(tiny_build, capsys, monkeypatch):
    torch = pytest.importorskip("torch")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["explain", str(tiny_build.out), "tiny_f16", "16", "64", "64"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error: no CUDA GPU here: pass --sms (and --device-name, --major) to model one\n"


def test_python_dash_m_and_a_closed_pipe(tmp_path):
    """``python -m cutlass_splitk`` is the CLI; ``cutlass-splitk list ... | head`` stops quietly
    (exit 141, no BrokenPipeError traceback) when the reader goes away."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    help_text = subprocess.run([sys.executable, "-m", "cutlass_splitk", "--help"], capture_output=True, text=True,
                               env=env, cwd=tmp_path, check=True).stdout
    assert help_text.startswith("usage: cutlass-splitk ")
    assert "doctor" in help_text and "package" in help_text
    # a reader that takes one line and closes the pipe before the writer is done
    proc = subprocess.Popen([sys.executable, "-m", "cutlass_splitk", "list", str(CONFIGS / "default.yaml"), "--why"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(60) in (0, 141)  # 0 if everything fitted in the pipe before it closed
    assert first.decode().startswith("linear_f16: f16 tn archs=[80]")
    assert err == ""
    # the same with a pipe that is closed before anything is written: always a broken pipe
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run([sys.executable, "-m", "cutlass_splitk", "list", str(CONFIGS / "default.yaml")],
                          stdout=write, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    os.close(write)
    assert (done.returncode, done.stderr.decode()) == (141, "")


def test_bench_shape_views_split_any_n_into_heads():
    from cutlass_splitk.bench import Shape

    # D = 128 where N allows; else the largest multiple of 8 up to 128 dividing N; else the largest divisor
    assert [Shape.parse(t).view for t in ("16,4096,14336", "1000,3000,5000", "64,64,131072", "7,1112,2224", "5,1111,64")] == [
        [1, 16, 32, 128], [1, 1000, 25, 120], [1, 64, 1, 64], [1, 7, 139, 8], [1, 5, 11, 101]]
    assert Shape.parse("1000,3000,5000").name == "1000x3000x5000"


@needs_torch
def test_bench_bad_shape_exit_code_2(tmp_path, capsys):
    assert main(["bench", str(tmp_path), "--op", "linear_f16", "--shape", "16,4096"]) == 2
    assert capsys.readouterr().err == "error: --shape '16,4096': expected M,N,K (three integers, e.g. 256,4096,14336)\n"


def test_bench_table_compares_with_cublas_flushed_and_in_graphs():
    """The bench table's columns: cuBLAS's GEMM against ours flushed ('vs mm') and as graph replays ('mm grph',
    'vs mm g'), the heuristic against the best swept candidate."""
    from cutlass_splitk.bench import Row, format_table

    row = Row("skinny_512", "f16", 512, 512, 32768, 25.0, 50.0, "v split=4", 45.0, 75.0, None, 40.0, "v split=8",
              {"ours_graph_us": 36.0, "matmul_graph_us": 34.2, "host_us": 4.0})
    head, rule, line, note = format_table([row]).splitlines()
    cols = dict(zip(head.replace("x floor", "x_floor").replace("vs eager", "vs_eager").replace("vs comp", "vs_comp")
                    .replace("mm grph", "mm_grph").replace("vs mm g", "vs_mm_g").replace("vs mm", "vs_mm").split(),
                    line.split()))
    assert cols["ours"] == "50.0" and cols["matmul"] == "45.0" and cols["vs_mm"] == "0.90"
    assert cols["graph"] == "36.0" and cols["mm_grph"] == "34.2" and cols["vs_mm_g"] == "0.95"
    assert cols["best"] == "40.0" and cols["heur/best"] == "0.90" and cols["compile"] == "-"
    assert "'vs mm g' their ratio" in note and set(rule) == {"-"}
    # where the sweep timed the pick, heur/best is the sweep's own time of it over its best (one pass, the same
    # order effects), not the graph column, which is timed in rounds beside cuBLAS
    row.choice = "v split=4 (4 partitions): predicted 41.0 us [...]"
    row.extra["v/split4"] = 42.0
    line = format_table([row]).splitlines()[2]
    assert line.split()[-1] == "1.05" and line.split()[-6] == "36.0"
