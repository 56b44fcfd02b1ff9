"""Source generation (cutlass_splitk.codegen) and the C ABI mirror (runtime/abi.py)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess

import pytest

from cks_testutil import CONFIGS, MINIMAL_GROUP, MINIMAL_OP_YAML, MINIMAL_UNIT, MINIMAL_VARIANTS, ROOT, TEMPLATES
from cutlass_splitk.backends import units as backend_units
from cutlass_splitk.spec import Backend, EOp, Permute, SplitMode
from cutlass_splitk import artifact, codegen, fsutil
from cutlass_splitk.config import load_config, parse_config
from cutlass_splitk.runtime import abi

STAMP_LINE = "// generated from x.yaml by cutlass-splitk; do not edit"


@pytest.fixture
def minimal_config():
    return parse_config(MINIMAL_OP_YAML, "x.yaml")


def test_stamp():
    assert codegen.stamp("x.yaml") == "generated from x.yaml by cutlass-splitk; do not edit"
    assert codegen.STAMP_MARK in codegen.stamp("anything")


def test_render_minimal_units(minimal_config):
    units = codegen.render(minimal_config)
    assert [u.relpath for u in units] == [f"tiny_f16/{MINIMAL_UNIT}.cu", "tiny_f16/library.cu"]
    assert [u.name for u in units] == [MINIMAL_UNIT, "library"]
    assert [u.op for u in units] == ["tiny_f16", "tiny_f16"]
    assert set(units[0].variants) == set(MINIMAL_VARIANTS) and units[1].variants == ()
    for u in units:
        assert u.text.split("\n", 1)[0] == STAMP_LINE
        assert u.text.endswith("\n")


def test_render_is_pure_and_stable(minimal_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = codegen.render(minimal_config)
    assert codegen.render(minimal_config) == first
    assert list(tmp_path.iterdir()) == []


def test_group_source_instantiation(minimal_config):
    text = codegen.render(minimal_config)[0].text
    expected_config = (
        "using Config = cks::VariantConfig<\n"
        "    cutlass::half_t, /*B column-major=*/true,\n"
        "    cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>,\n"
        "    cutlass::gemm::GemmShape<16, 8, 16>, /*stages=*/3, /*alignment=*/8,\n"
        "    /*swizzle=*/1, cks::Act::kIdentity, cks::EOp::kNone, cks::Bias::kNone, cks::Permute::kNone>;\n"
    )
    assert expected_config in text
    assert text.count("cks::VariantConfig<") == 1
    assert '#include "cks_sm80.cuh"' in text
    assert f"// op tiny_f16, sm80 groups: {MINIMAL_GROUP}\n" in text
    # the group in a namespace of its own (a unit holds several), its entry points inside it
    body = text.split(f"\n// {MINIMAL_GROUP}\nnamespace group_{MINIMAL_GROUP} {{\n", 1)[1]
    assert body.endswith(f"}}  // namespace group_{MINIMAL_GROUP}\n") and expected_config in body
    symbols = re.findall(r'extern "C" CKS_EXPORT int (cks_\w+)\(', text)
    assert sorted(symbols) == sorted(f"cks_{v}_{fn}" for v in MINIMAL_VARIANTS for fn in ("query", "run"))
    # each variant's entry points use its own split-K strategy
    for variant, impl in ((MINIMAL_VARIANTS[0], "cks::SerialGemm"), (MINIMAL_VARIANTS[1], "cks::ParallelGemm")):
        body = text.split(f"cks_{variant}_query(", 1)[1].split("\n}\n", 1)[0]
        assert f"{impl}<Config>::query(*args, *query)" in body
        body = text.split(f"cks_{variant}_run(", 1)[1].split("\n}\n", 1)[0]
        assert f"cks::replayed_run<{impl}<Config>>(*args, static_cast<cudaStream_t>(stream))" in body


def test_group_source_enum_spellings():
    text = MINIMAL_OP_YAML.replace("dtype: f16", "dtype: bf16").replace(
        "    arch: [90]\n",
        "    arch: [90]\n    layout: nn\n    epilogue: {bias: per_row, activation: leaky_relu, e_op: add, "
        "permute: head_split}\n").replace("      stages: [3]\n",
                                          "      stages: [4]\n      alignment: 2\n      swizzle: 4\n"
                                          "      instruction: [16, 8, 8]\n")
    unit = codegen.render(parse_config(text, "x.yaml"))[0]
    assert unit.relpath == "tiny_f16/sm80.cu"
    assert "namespace group_t64x64x64_w32x32x64_i16x8x8_s4_a2_z4 {" in unit.text
    assert ("    cutlass::bfloat16_t, /*B column-major=*/false,\n"
            "    cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<32, 32, 64>,\n"
            "    cutlass::gemm::GemmShape<16, 8, 8>, /*stages=*/4, /*alignment=*/2,\n"
            "    /*swizzle=*/4, cks::Act::kLeakyRelu, cks::EOp::kAdd, cks::Bias::kPerRow, "
            "cks::Permute::k0213>;\n") in unit.text


@pytest.mark.parametrize("activation, cpp", [
    ("identity", "kIdentity"), ("relu", "kRelu"), ("gelu", "kGelu"), ("gelu_tanh", "kGeluTanh"),
    ("silu", "kSilu"), ("sigmoid", "kSigmoid"), ("leaky_relu", "kLeakyRelu")])
def test_activation_spellings(activation, cpp):
    text = MINIMAL_OP_YAML.replace("    arch: [90]\n", f"    arch: [90]\n    epilogue: {{activation: {activation}, "
                                                       "bias: per_col, e_op: mul, permute: qkv_split}\n")
    unit = codegen.render(parse_config(text, "x.yaml"))[0]
    assert f"cks::Act::{cpp}, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k20314>;" in unit.text


def test_library_source_embeds_the_description(minimal_config):
    unit = codegen.render(minimal_config)[1]
    assert unit.text.split("\n", 1)[0] == STAMP_LINE
    assert '#include "cks_error.cuh"' in unit.text  # the shared templates only: no CUTLASS
    assert unit.backend == "" and codegen.render(minimal_config)[0].backend == "sm80"
    match = re.search(r'R"cks_json\((.*)\)cks_json"', unit.text, re.S)
    assert match
    (op,) = minimal_config.ops
    description = json.loads(match.group(1))
    assert description == artifact.describe(op)
    assert description["abi_version"] == artifact.ABI_VERSION
    assert [v["name"] for v in description["variants"]] == list(MINIMAL_VARIANTS)
    for fn in ("int cks_abi_version(void)", "char const* cks_describe(void)", "char const* cks_last_error(void)"):
        assert f'extern "C" CKS_EXPORT {fn}' in unit.text


def test_describe_round_trips_through_opspec(minimal_config):
    from cutlass_splitk.spec import OpSpec

    (op,) = minimal_config.ops
    d = artifact.describe(op)
    assert d["abi_version"] == 1 and d["name"] == "tiny_f16"
    assert OpSpec.from_json(json.loads(json.dumps(d))) == op


def test_unit_count_for_the_shipped_configs():
    from cutlass_splitk.backends.sm80 import codegen as sm80_codegen
    from cutlass_splitk.backends.sm90 import codegen as sm90_codegen

    for name in ("default", "epilogues"):
        config = load_config(CONFIGS / f"{name}.yaml")
        units = codegen.render(config)
        # per op: its sm80 groups in units of at most seven; its sm90 groups in units of at most seven
        # with serial or stream-K variants (the parallel-only ones between them); its sm90 partial GEMMs,
        # three tile shapes a unit; library.cu
        expected = 0
        for op in config.ops:
            sm80 = {v.group for v in op.variants if v.backend is Backend.SM80}
            sm90 = {v.group for v in op.variants if v.backend is Backend.SM90}
            kernels = {v.group for v in op.variants if v.backend is Backend.SM90 and v.mode is not SplitMode.PARALLEL}
            shapes = {sm90_codegen.shape_name(v) for v in op.variants
                      if v.backend is Backend.SM90 and v.mode is SplitMode.PARALLEL}
            expected += (-(-len(sm80) // sm80_codegen.KERNEL_GROUPS_PER_UNIT)
                         + (max(1, -(-len(kernels) // sm90_codegen.KERNEL_GROUPS_PER_UNIT)) if sm90 else 0)
                         + -(-len(shapes) // sm90_codegen.PARTIAL_SHAPES_PER_UNIT) + 1)
        assert len(units) == expected
        assert len({u.relpath for u in units}) == len(units)
        # every variant's entry points in exactly one unit, library.cu last; every parallel sm90 group's
        # partial GEMM in exactly one partial unit
        for op in config.ops:
            mine = [u for u in units if u.op == op.name]
            assert [u.name for u in mine][-1] == "library"
            assert sorted(x for u in mine for x in u.variants) == sorted(v.name for v in op.variants)
            for v in op.variants:
                (unit,) = [u for u in mine if v.name in u.variants]
                assert f"namespace group_{v.group} {{" in unit.text and f"int cks_{v.name}_run(" in unit.text
                if v.backend is Backend.SM90 and v.mode is SplitMode.PARALLEL:
                    gemm = re.search(r"using Gemm = (cks::sm90::GemmConfig<[^;]*>);", unit.text[
                        unit.text.index(f"namespace group_{v.group} {{"):]).group(1)
                    declared = re.sub(r"\s+", " ", f"template struct cks::sm90::PartialGemm<{gemm}>;")
                    assert sum(re.sub(r"\s+", " ", u.text).count(declared)
                               for u in mine if u.name.startswith("partial_")) == 1
        if name == "default":
            # every sm80 shape is built in both split modes; each op's sm80 groups fit one unit. Its sm90
            # groups: seventeen (eighteen for the ops without E or permute: the ping-pong 128x128 tile), since
            # session 41 with round 67's three swapped wide tiles; their six (seven) with serial or stream-K
            # variants in one unit. The partial GEMMs (twelve per op, nine tile shapes) are shared by the ops
            # of one dtype: three units per dtype
            for op in config.ops:
                sm80 = [v for v in op.variants if v.backend is Backend.SM80]
                assert len(sm80) == 2 * len({v.group for v in sm80})
                groups = 18 if op.epilogue.e_op is EOp.NONE and op.epilogue.permute is Permute.NONE else 17
                assert len({v.group for v in op.variants if v.backend is Backend.SM90}) == groups
                assert [u.name for u in units if u.op == op.name and not u.name.startswith("partial_")] == [
                    "sm80", "sm90", "library"]
            partials = [u for u in units if u.name.startswith("partial_")]
            assert [u.name for u in partials if u.op == "linear_f16"] == [
                "partial_f16_tn_t128x112x64_t128x128x64_t128x144x64_swab",
                "partial_f16_tn_t128x176x64_swab_t128x208x64_swab_t128x80x64_swab",
                "partial_f16_tn_t64x128x64_t64x16x128_swab_t64x64x64"]
            assert len({u.text for u in partials}) == len({(u.name) for u in partials}) == 6
            assert len(partials) == 3 * len(config.ops)


def test_groups_beyond_one_unit_are_split_in_order():
    text = MINIMAL_OP_YAML.replace("stages: [3]", "stages: [3, 4, 5]\n      alignment: [8, 4, 2]")
    units = codegen.render(parse_config(text, "x.yaml"))
    assert [u.relpath for u in units] == ["tiny_f16/sm80_1.cu", "tiny_f16/sm80_2.cu", "tiny_f16/library.cu"]
    groups = [re.findall(r"^namespace group_(\w+) \{$", u.text, re.M) for u in units[:2]]
    # nine groups at seven a unit: two units, the groups spread evenly in order
    assert [len(g) for g in groups] == [5, 4] and groups[0] + groups[1] == sorted(groups[0] + groups[1])
    assert backend_units.batches("sm90", [], 4) == [] and backend_units.batches("sm90", ["a"], 4) == [("sm90", ["a"])]


def test_units_hold_a_few_kernel_groups_and_the_parallel_only_ones_between_them():
    """A unit holds at most the backend's number of groups that compile a GEMM kernel (upper case here),
    spread evenly over as few units as that takes; the groups that do not (lower case: an sm90 group of
    parallel variants only, whose kernel is its partial unit's) ride along in order, since they cost
    ~0.5 s and no memory to speak of."""
    def cut(groups, limit):
        return [(name, "".join(chunk)) for name, chunk in backend_units.batches("sm90", list(groups), limit, str.isupper)]

    assert cut("abCdEFgHIjk", 4) == [("sm90_1", "abCdEFg"), ("sm90_2", "HIjk")]
    assert cut("ABCDE", 4) == [("sm90_1", "ABC"), ("sm90_2", "DE")]
    assert cut("ABCD", 4) == [("sm90", "ABCD")]
    assert cut("abcdefghij", 4) == [("sm90", "abcdefghij")]  # no kernel group: one unit
    assert cut("aBCDEFGHIJ", 3) == [("sm90_1", "aBCD"), ("sm90_2", "EFG"), ("sm90_3", "HIJ")]


def test_sm90_partial_gemms_are_packed_by_tile_shape():
    """The partial GEMMs of one tile shape (every cluster, schedule and stage count of it) share a unit, since
    cicc compiles once what they share (the 128x128 tile in three clusters: 44 s, against 42 s for one);
    three shapes a unit, in the shapes' order."""
    text = ("ops:\n  p_bf16:\n    dtype: bf16\n    variants:\n"
            "      - {backend: sm90, tile: [[128, 128, 64]], cluster: [[1, 2], [2, 1]], split_k: {parallel: [2]}}\n"
            "      - {backend: sm90, tile: [[128, 80, 64], [128, 144, 64]], cluster: [[1, 2]], swap_ab: true,\n"
            "         split_k: {parallel: [2]}}\n"
            "      - {backend: sm90, tile: [[64, 64, 64]], split_k: {parallel: [2], serial: [1]}}\n"
            "      - {backend: sm90, tile: [[64, 16, 128]], swap_ab: true, split_k: {parallel: [4]}}\n")
    units = {u.name: u.text for u in codegen.render(parse_config(text, "x.yaml")) if u.name.startswith("partial_")}
    assert sorted(units) == ["partial_bf16_tn_t128x128x64_t128x144x64_swab_t128x80x64_swab",
                             "partial_bf16_tn_t64x16x128_swab_t64x64x64"]
    first = units["partial_bf16_tn_t128x128x64_t128x144x64_swab_t128x80x64_swab"]
    assert re.findall(r"/\*tile=\*/(\d+), (\d+), 64, /\*cluster=\*/(\d), (\d)", first) == [
        ("128", "128", "1", "2"), ("128", "128", "2", "1"), ("128", "144", "1", "2"), ("128", "80", "1", "2")]
    assert first.count("/*swap AB=*/true") == 2 and "bf16" in first
    assert first.count("// wgmma m64n144k16") == first.count("// wgmma m64n80k16") == 1
    second = units["partial_bf16_tn_t64x16x128_swab_t64x64x64"]
    assert re.findall(r"/\*tile=\*/(\d+), (\d+),", second) == [("64", "16"), ("64", "64")]


# --- writing ---------------------------------------------------------------------------------------------------


def test_write_if_different(tmp_path):
    path = tmp_path / "sub" / "f.cu"
    assert fsutil.write_if_different(path, "hello\n") is True
    assert path.read_text() == "hello\n"
    old = 1_000_000_000_000_000_000  # 2001-09-09, far from "now"
    os.utime(path, ns=(old, old))
    assert fsutil.write_if_different(path, "hello\n") is False
    assert path.stat().st_mtime_ns == old
    assert fsutil.write_if_different(path, "changed\n") is True
    assert path.read_text() == "changed\n"
    assert path.stat().st_mtime_ns != old
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.cu"]  # no temp file left


def test_write_sources(tmp_path, minimal_config):
    out = tmp_path / "gen"
    sources = codegen.write_sources(minimal_config, out)
    units = sources.units
    assert sources.changed == [out / u.relpath for u in units] and sources.stale == []
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(
        u.relpath for u in units)
    for u in units:
        assert (out / u.relpath).read_text() == u.text
    again = codegen.write_sources(minimal_config, out)
    assert again.changed == [] and again.units == units


def test_write_sources_check_mode_writes_nothing(tmp_path, minimal_config):
    out = tmp_path / "gen"
    sources = codegen.write_sources(minimal_config, out, check=True)
    assert sources.changed == [out / u.relpath for u in sources.units] and sources.stale == []
    assert not out.exists()
    codegen.write_sources(minimal_config, out)
    extra = out / "tiny_f16" / "extra.cu"
    extra.write_text("// not ours\n")
    sources = codegen.write_sources(minimal_config, out, check=True)
    assert sources.changed == [] and sources.stale == [extra]
    assert extra.exists()


def test_write_sources_removes_stale_files_of_the_same_config_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the stamp names the config relative to the cwd
    out = tmp_path / "gen"
    many = parse_config(MINIMAL_OP_YAML.replace("stages: [3]", "stages: [3, 4, 5]\n      alignment: [8, 4, 2]"),
                        "x.yaml")
    codegen.write_sources(many, out)
    stale = [out / "tiny_f16" / "sm80_1.cu", out / "tiny_f16" / "sm80_2.cu"]  # nine groups: two units
    assert all(p.is_file() for p in stale)
    foreign = out / "tiny_f16" / "handwritten.cu"
    foreign.write_text("// my own kernel\n" + codegen.STAMP_MARK + " (not on the first line)\n")
    other_config = out / "tiny_f16" / "t32x32x32_other.cu"
    other_config.write_text("// " + codegen.stamp("other.yaml") + "\n")
    gone_op = out / "old_op" / "library.cu"
    gone_op.parent.mkdir()
    gone_op.write_text("// " + codegen.stamp("x.yaml") + "\n")
    other_op = out / "other_op" / "library.cu"
    other_op.parent.mkdir()
    other_op.write_text("// " + codegen.stamp("configs/x.yaml") + "\n")
    empty = out / "empty_dir"
    empty.mkdir()

    sources = codegen.write_sources(parse_config(MINIMAL_OP_YAML, "x.yaml"), out)
    # one group now: one new unit, library.cu changed (its description lists the variants)
    assert sources.changed == [out / "tiny_f16" / f"{MINIMAL_UNIT}.cu", out / "tiny_f16" / "library.cu"]
    assert sorted(sources.stale) == sorted([*stale, gone_op])
    assert not any(p.exists() for p in stale)
    assert not gone_op.exists() and not gone_op.parent.exists()  # the op directory it emptied
    # another config's files, files without the stamp, directories it did not empty: untouched
    assert foreign.read_text().startswith("// my own kernel")
    assert other_config.exists() and other_op.exists() and empty.is_dir()
    assert sorted(p.name for p in (out / "tiny_f16").iterdir()) == sorted(
        [f"{MINIMAL_UNIT}.cu", "library.cu", "handwritten.cu", "t32x32x32_other.cu"])


def test_write_sources_without_prune_removes_nothing(tmp_path):
    out = tmp_path / "gen"
    many = MINIMAL_OP_YAML.replace("stages: [3]", "stages: [3, 4, 5]\n      alignment: [8, 4, 2]")
    codegen.write_sources(parse_config(many, "x.yaml"), out)
    sources = codegen.write_sources(parse_config(MINIMAL_OP_YAML, "x.yaml"), out, prune=False)
    assert sources.stale == []
    assert (out / "tiny_f16" / "sm80_1.cu").is_file() and (out / "tiny_f16" / "sm80_2.cu").is_file()


@pytest.mark.parametrize("name", ["default", "epilogues"])
def test_committed_generated_sources_match(name, monkeypatch):
    directory = ROOT / "generated" / name
    if not directory.is_dir():
        pytest.skip(f"{directory} does not exist yet: run cutlass-splitk generate configs/{name}.yaml")
    monkeypatch.chdir(ROOT)  # the stamp names the config relative to the cwd
    units = codegen.render(load_config(f"configs/{name}.yaml"))
    expected = {u.relpath: u.text for u in units}
    on_disk = {p.relative_to(directory).as_posix(): p.read_text() for p in directory.glob("*/*.cu")}
    assert sorted(on_disk) == sorted(expected), "stale or missing files in generated/"
    for relpath, text in expected.items():
        assert on_disk[relpath] == text, f"generated/{name}/{relpath} is out of date"
        assert text.startswith(f"// generated from configs/{name}.yaml by cutlass-splitk; do not edit\n")


# --- the ABI -----------------------------------------------------------------------------------------------------

HEADER = (TEMPLATES / "cks_abi.h").read_text()


def test_abi_version_matches_the_header():
    match = re.search(r"^#define CKS_ABI_VERSION (\d+)$", HEADER, re.M)
    assert match
    assert int(match.group(1)) == artifact.ABI_VERSION
    assert abi.ABI_VERSION is artifact.ABI_VERSION  # the runtime's mirror speaks the one defined there


def _c_struct_fields(name: str):
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), HEADER, re.S)
    assert body, name
    code = re.sub(r"//[^\n]*", "", body.group(1))
    fields = []
    for decl in code.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = re.match(r"^((?:const )?(?:void|int32_t|int64_t|float)\*?) (.*)$", decl)
        assert m, decl
        ctype = m.group(1)
        for part in m.group(2).split(","):
            part = part.strip()
            if part.startswith("*"):
                ctype, part = ctype + "*", part[1:].strip()
            assert re.fullmatch(r"[a-z_][a-z0-9_]*", part), part
            fields.append((part, ctype))
    return fields


C_TO_CTYPES = {"int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64, "float": ctypes.c_float,
               "void*": ctypes.c_void_p, "const void*": ctypes.c_void_p}


@pytest.mark.parametrize("name, cls", [("CksArgs", abi.CksArgs), ("CksQuery", abi.CksQuery)])
def test_ctypes_structs_mirror_the_header(name, cls):
    c_fields = _c_struct_fields(name)
    assert [f for f, _ in c_fields] == [f for f, _ in cls._fields_]
    for (field, ctype), (_, py) in zip(c_fields, cls._fields_):
        assert C_TO_CTYPES[ctype] is py, field


def test_struct_sizes_from_the_c_layout():
    # CksArgs: 8 x int32 (32) + 11 x 8-byte pointer/int64 (a, lda, b, ldb, c, ldc, bias, e, lde, d, ldd)
    # + 4 x float (16) + 4 x 8 bytes (semaphores, semaphore_bytes, partials, partial_bytes) = 168.
    assert ctypes.sizeof(abi.CksArgs) == 168
    assert abi.CksArgs.a.offset == 32 and abi.CksArgs.alpha.offset == 120 and abi.CksArgs.semaphores.offset == 136
    assert ctypes.sizeof(abi.CksQuery) == 32
    assert abi.CksQuery.semaphore_bytes.offset == 16


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on PATH")
def test_struct_layout_matches_the_c_compiler(tmp_path):
    lines = []
    for name, cls in (("CksArgs", abi.CksArgs), ("CksQuery", abi.CksQuery)):
        lines.append(f'printf("{name} sizeof %zu\\n", sizeof({name}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    src = tmp_path / "layout.c"
    src.write_text("#include <stdio.h>\n#include <stddef.h>\n#include \"cks_abi.h\"\nint main(void) {\n"
                   + "\n".join(lines) + "\nreturn 0;\n}\n")
    exe = tmp_path / "layout"
    subprocess.run(["cc", f"-I{TEMPLATES}", str(src), "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    expected = []
    for name, cls in (("CksArgs", abi.CksArgs), ("CksQuery", abi.CksQuery)):
        expected.append(f"{name} sizeof {ctypes.sizeof(cls)}")
        expected += [f"{name} {field} {getattr(cls, field).offset}" for field, _ in cls._fields_]
    assert [line for line in out if line] == expected


def test_status_codes_match_the_header():
    codes = dict((int(v), n) for n, v in re.findall(r"(CKS_\w+) = (\d+)", HEADER))
    assert codes == {0: "CKS_OK", 1: "CKS_ERROR_INVALID_PROBLEM", 2: "CKS_ERROR_WORKSPACE", 3: "CKS_ERROR_ABI",
                     4: "CKS_ERROR_CUDA", 5: "CKS_ERROR_INTERNAL"}
    assert sorted(abi.STATUS_NAMES) == sorted(codes)
    assert abi.STATUS_INVALID_PROBLEM == 1 and abi.STATUS_CUDA == 4
