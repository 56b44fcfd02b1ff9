"""YAML config validation and expansion (cutlass_splitk.config)."""

from __future__ import annotations

import copy
import itertools

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cks_testutil import CONFIGS, MINIMAL_GROUP, MINIMAL_OP_YAML, MINIMAL_VARIANTS, ROOT
from cutlass_splitk.backends.sm80.rules import auto_warp
from cutlass_splitk.backends.sm90 import rules as sm90_rules
from cutlass_splitk.config import Config, ConfigError, Pruned, load_config, parse_config
from cutlass_splitk.spec import (
    Activation,
    Backend,
    BiasMode,
    DType,
    EOp,
    EpilogueSpec,
    KernelVariant,
    Layout,
    Permute,
    Schedule,
    Sm80Params,
    SplitMode,
)


def error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "x.yaml")
    return info.value


def with_op_lines(extra: str, after: str = "    dtype: f16\n") -> str:
    """The minimal config with ``extra`` inserted after the line ``after``."""
    assert after in MINIMAL_OP_YAML
    return MINIMAL_OP_YAML.replace(after, after + extra, 1)


def with_epilogue(body: str) -> str:
    return with_op_lines("    epilogue:\n" + body)


def with_variant_lines(extra: str) -> str:
    return with_op_lines(extra, after="      stages: [3]\n")


# --- the minimal config -------------------------------------------------------------------------


def test_minimal_config_parses_to_the_expected_model():
    config = parse_config(MINIMAL_OP_YAML, "x.yaml")
    assert isinstance(config, Config)
    assert config.path == "x.yaml" and config.stem == "x" and config.pruned == ()
    (op,) = config.ops
    assert op.name == "tiny_f16"
    assert op.dtype is DType.F16 and op.layout is Layout.TN and op.archs == (90,)
    assert op.epilogue == EpilogueSpec()  # all defaults
    assert op.epilogue.alpha is True and op.epilogue.beta is False
    common = dict(tile=(64, 64, 64), alignment=8, params=Sm80Params((32, 32, 64), (16, 8, 16), 3, 1))
    assert op.variants == (
        KernelVariant("tiny_f16", SplitMode.SERIAL, splits=(1, 2), **common),
        KernelVariant("tiny_f16", SplitMode.PARALLEL, splits=(2, 4), **common),
    )
    assert [v.splits for v in op.variants] == [(1, 2), (2, 4)]  # splits are compare=False: check them
    assert [v.name for v in op.variants] == [
        "tiny_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1",
        "tiny_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1",
    ]
    assert {v.group for v in op.variants} == {"t64x64x64_w32x32x64_i16x8x16_s3_a8_z1"}


def test_load_config_reads_a_file(write_yaml, minimal_op_yaml, tmp_path):
    path = write_yaml(minimal_op_yaml, "tiny.yaml")
    assert path == tmp_path / "tiny.yaml"
    config = load_config(path)
    assert config.path == str(path) and config.stem == "tiny"
    assert config == parse_config(MINIMAL_OP_YAML, str(path))
    assert load_config(str(path)) == config


def test_load_config_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: file not found"
    assert info.value.line is None and info.value.field == ""


def test_load_config_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"ops: {caf\xe9: 1}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: not UTF-8 text (invalid continuation byte)"


# --- unknown keys -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected, line, field", [
    (MINIMAL_OP_YAML + "bogus: 1\n",
     "x.yaml:11: bogus: unknown key 'bogus'; valid keys: ops", 11, "bogus"),
    (with_op_lines("    colour: red\n"),
     "x.yaml:4: ops.tiny_f16.colour: unknown key 'colour'; valid keys: dtype, layout, arch, epilogue, variants",
     4, "ops.tiny_f16.colour"),
    (with_epilogue("      bias: per_col\n      foo: 1\n"),
     "x.yaml:6: ops.tiny_f16.epilogue.foo: unknown key 'foo'; valid keys: alpha, beta, bias, activation, "
     "leaky_slope, e_op, permute", 6, "ops.tiny_f16.epilogue.foo"),
    (with_variant_lines("      threads: 128\n"),
     "x.yaml:8: ops.tiny_f16.variants.threads: unknown key 'threads'; valid keys: tile, warp, instruction, "
     "stages, alignment, swizzle, split_k", 8, "ops.tiny_f16.variants.threads"),
    (MINIMAL_OP_YAML.replace("        parallel: [2, 4]\n", "        parallel: [2, 4]\n        stream: [2]\n"),
     "x.yaml:11: ops.tiny_f16.variants.split_k.stream: unknown key 'stream'; valid keys: serial, parallel",
     11, "ops.tiny_f16.variants.split_k.stream"),
], ids=["top", "op", "epilogue", "variants", "split_mode"])
def test_unknown_keys(text, expected, line, field):
    exc = error(text)
    assert str(exc) == expected
    assert exc.file == "x.yaml" and exc.line == line and exc.field == field


def test_missing_required_keys():
    assert str(error("x-foo: 1\n")) == "x.yaml:1: missing required key 'ops'"
    assert str(error(MINIMAL_OP_YAML.replace("    dtype: f16\n", ""))) == \
        "x.yaml:2: ops.tiny_f16: missing required key 'dtype'"
    text = "ops:\n  tiny_f16:\n    dtype: f16\n    variants:\n      tile: [[64, 64, 64]]\n"
    assert str(error(text)) == "x.yaml:4: ops.tiny_f16.variants: missing required key 'split_k'"


# --- wrong types ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, expected", [
    ("stages: [3]", "stages: three",
     "x.yaml:7: ops.tiny_f16.variants.stages: expected an integer, got string 'three'"),
    ("stages: [3]", "stages: ['3']",
     "x.yaml:7: ops.tiny_f16.variants.stages[0]: expected an integer, got string '3'"),
    ("stages: [3]", "stages: true",
     "x.yaml:7: ops.tiny_f16.variants.stages: expected an integer, got boolean True"),
    ("serial: [1, 2]", "serial: [true, 2]",
     "x.yaml:9: ops.tiny_f16.variants.split_k.serial[0]: expected an integer, got boolean True"),
    ("stages: [3]", "stages: [3.5]",
     "x.yaml:7: ops.tiny_f16.variants.stages[0]: expected an integer, got number 3.5"),
    ("tile: [[64, 64, 64]]", "tile: 64",
     "x.yaml:6: ops.tiny_f16.variants.tile: expected a list of [M, N, K] triples, e.g. [[128, 128, 32]], "
     "got integer"),
    ("tile: [[64, 64, 64]]", "tile: [64, 64, 64]",
     "x.yaml:6: ops.tiny_f16.variants.tile: expected a list of [M, N, K] triples, e.g. [[64, 64, 64]]"),
    ("tile: [[64, 64, 64]]", "tile: [[64, 64]]",
     "x.yaml:6: ops.tiny_f16.variants.tile[0]: expected [M, N, K], got [64, 64]"),
    ("tile: [[64, 64, 64]]", "tile: [[[64], 64, 64]]",
     "x.yaml:6: ops.tiny_f16.variants.tile[0][0]: expected an integer, got list [64]"),
    ("arch: [90]", "arch: sm90",
     "x.yaml:4: ops.tiny_f16.arch: expected an integer, got string 'sm90'"),
    ("    dtype: f16\n", "    dtype: f16\n    epilogue: {beta: 1}\n",
     "x.yaml:4: ops.tiny_f16.epilogue.beta: expected true or false, got integer 1"),
    ("      split_k:\n        serial: [1, 2]\n        parallel: [2, 4]\n", "      split_k: [1, 2]\n",
     "x.yaml:8: ops.tiny_f16.variants.split_k: expected a mapping, got list"),
    ("ops:\n", "ops: [1]\nx-rest:\n",
     "x.yaml:1: ops: expected a mapping of op names to op definitions, got list"),
], ids=["string_for_int", "quoted_int_in_list", "bool_for_int", "bool_in_list", "float_for_int",
        "int_for_list", "flat_triple", "short_triple", "nested_too_deep", "arch_string", "int_for_bool",
        "list_for_mapping", "ops_list"])
def test_wrong_types(old, new, expected):
    assert old in MINIMAL_OP_YAML
    assert str(error(MINIMAL_OP_YAML.replace(old, new, 1))) == expected


def test_top_level_not_a_mapping():
    assert str(error("- 1\n")) == "x.yaml:1: expected a mapping, got list"
    assert str(error("hello\n")) == "x.yaml:1: expected a mapping, got string"
    assert str(error("ops:\n  a:\n")) == "x.yaml:2: ops.a: expected a mapping, got null"


def test_non_string_keys():
    assert str(error("ops:\n  1: {}\n")) == "x.yaml:2: ops: mapping keys must be strings, got int 1"
    assert str(error("? [1, 2]\n: 3\n")) == "x.yaml:1: mapping keys must be plain strings"


# --- enums ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    (MINIMAL_OP_YAML.replace("dtype: f16", "dtype: f32"),
     "x.yaml:3: ops.tiny_f16.dtype: invalid value 'f32'; valid values: f16, bf16"),
    (with_op_lines("    layout: nt\n"),
     "x.yaml:4: ops.tiny_f16.layout: invalid value 'nt'; valid values: tn, nn"),
    (with_epilogue("      bias: per_tile\n"),
     "x.yaml:5: ops.tiny_f16.epilogue.bias: invalid value 'per_tile'; valid values: none, per_col, per_row"),
    (with_epilogue("      activation: tanh\n"),
     "x.yaml:5: ops.tiny_f16.epilogue.activation: invalid value 'tanh'; valid values: identity, relu, gelu, "
     "gelu_tanh, silu, sigmoid, leaky_relu"),
    (with_epilogue("      e_op: sub\n"),
     "x.yaml:5: ops.tiny_f16.epilogue.e_op: invalid value 'sub'; valid values: none, add, mul"),
    (with_epilogue("      permute: transpose\n"),
     "x.yaml:5: ops.tiny_f16.epilogue.permute: invalid value 'transpose'; valid values: none, head_split, "
     "qkv_split"),
    (with_epilogue("      bias: 1\n"),
     "x.yaml:5: ops.tiny_f16.epilogue.bias: invalid value 1; valid values: none, per_col, per_row"),
    (MINIMAL_OP_YAML.replace("arch: [90]", "arch: [70]"),
     "x.yaml:4: ops.tiny_f16.arch[0]: invalid value 70; valid values: 80, 86, 89, 90"),
    (with_variant_lines("      swizzle: 3\n"),
     "x.yaml:8: ops.tiny_f16.variants.swizzle: invalid value 3; valid values: 1, 2, 4, 8"),
], ids=["dtype", "layout", "bias", "activation", "e_op", "permute", "bias_not_a_string", "arch", "swizzle"])
def test_invalid_enum_values_list_the_valid_ones(text, expected):
    assert str(error(text)) == expected


def test_invalid_split_mode_lists_valid_modes():
    text = MINIMAL_OP_YAML.replace("        serial: [1, 2]\n", "        batched: [1, 2]\n")
    assert str(error(text)) == ("x.yaml:9: ops.tiny_f16.variants.split_k.batched: unknown key 'batched'; "
                                "valid keys: serial, parallel")


@pytest.mark.parametrize("old, new, expected", [
    ("stages: [3]", "stages: [9]", "x.yaml:7: ops.tiny_f16.variants.stages[0]: 9 is out of range [2, 8]"),
    ("stages: [3]", "stages: [1]", "x.yaml:7: ops.tiny_f16.variants.stages[0]: 1 is out of range [2, 8]"),
    ("serial: [1, 2]", "serial: [257]",
     "x.yaml:9: ops.tiny_f16.variants.split_k.serial[0]: 257 is out of range [1, 256]"),
    ("serial: [1, 2]", "serial: [0]",
     "x.yaml:9: ops.tiny_f16.variants.split_k.serial[0]: 0 is out of range [1, 256]"),
    ("tile: [[64, 64, 64]]", "tile: [[0, 64, 64]]",
     "x.yaml:6: ops.tiny_f16.variants.tile[0][0]: 0 is out of range [1, 1024]"),
], ids=["stages_high", "stages_low", "split_high", "split_zero", "tile_zero"])
def test_out_of_range(old, new, expected):
    assert str(error(MINIMAL_OP_YAML.replace(old, new, 1))) == expected


# --- epilogue rules ---------------------------------------------------------------------------------------


def test_leaky_slope_needs_leaky_relu():
    exc = error(with_epilogue("      activation: relu\n      leaky_slope: 0.2\n"))
    assert str(exc) == ("x.yaml:6: ops.tiny_f16.epilogue.leaky_slope: leaky_slope is only valid with "
                        "activation: leaky_relu")
    # without an activation at all (identity) as well
    assert error(with_epilogue("      leaky_slope: 0.2\n")).field == "ops.tiny_f16.epilogue.leaky_slope"


def test_leaky_slope_with_leaky_relu():
    config = parse_config(with_epilogue("      activation: leaky_relu\n      leaky_slope: 0.2\n"), "x.yaml")
    ep = config.ops[0].epilogue
    assert ep.activation is Activation.LEAKY_RELU and ep.leaky_slope == 0.2
    config = parse_config(with_epilogue("      activation: leaky_relu\n"), "x.yaml")
    assert config.ops[0].epilogue.leaky_slope == 0.01


@pytest.mark.parametrize("value, expected", [
    (".nan", "expected a finite number, got nan"),
    (".inf", "expected a finite number, got inf"),
    ("fast", "expected a number, got string 'fast'"),
    ("true", "expected a number, got boolean True"),
])
def test_leaky_slope_must_be_a_finite_number(value, expected):
    exc = error(with_epilogue(f"      activation: leaky_relu\n      leaky_slope: {value}\n"))
    assert str(exc) == f"x.yaml:6: ops.tiny_f16.epilogue.leaky_slope: {expected}"


def test_huge_leaky_slope_is_a_config_error():
    # float(10**400) raises OverflowError: it must become a located ConfigError, not escape.
    exc = error(with_epilogue("      activation: leaky_relu\n      leaky_slope: " + "9" * 400 + "\n"))
    assert exc.field == "ops.tiny_f16.epilogue.leaky_slope" and exc.line == 6
    assert str(exc) == "x.yaml:6: ops.tiny_f16.epilogue.leaky_slope: number out of range"


def test_full_epilogue_is_parsed():
    text = with_op_lines(
        "    layout: nn\n"
        "    epilogue: {alpha: false, beta: true, bias: per_row, activation: leaky_relu, leaky_slope: 0.5,"
        " e_op: mul, permute: qkv_split}\n")
    op = parse_config(text, "x.yaml").ops[0]
    assert op.layout is Layout.NN
    assert op.epilogue == EpilogueSpec(False, True, BiasMode.PER_ROW, Activation.LEAKY_RELU, 0.5, EOp.MUL,
                                       Permute.QKV_SPLIT)


def test_null_epilogue_is_the_default():
    assert parse_config(with_op_lines("    epilogue:\n"), "x.yaml").ops[0].epilogue == EpilogueSpec()


# --- warps, instructions, alignment ------------------------------------------------------------------------


def test_warp_not_dividing_tile():
    exc = error(with_variant_lines("      warp: [[64, 32, 64]]\n").replace("tile: [[64, 64, 64]]", "tile: [[32, 64, 64]]"))
    assert str(exc) == "x.yaml:8: ops.tiny_f16.variants.warp[0]: warp [64, 32, 64] does not divide tile [32, 64, 64]"
    assert exc.line == 8 and exc.field == "ops.tiny_f16.variants.warp[0]"


@pytest.mark.parametrize("warp", [(48, 32, 64), (16, 32, 64), (32, 16, 64), (128, 64, 64)])
def test_warps_outside_the_verified_shapes_are_refused(warp):
    """The config fuzzer found 16/48/96-wide warps that built and computed wrong results
    (issue 13): sm80 warps are 32 or 64 by 32 or 64."""
    exc = error(with_variant_lines(f"      warp: [{list(warp)}]\n").replace("tile: [[64, 64, 64]]", "tile: [[128, 128, 64]]"))
    assert str(exc) == (f"x.yaml:8: ops.tiny_f16.variants.warp[0]: warp {list(warp)}: sm80 warp M and N must each be "
                        "one of 32, 64 (the shapes its tests verify)")


@pytest.mark.parametrize("tile, line", [((48, 64, 64), 6), ((64, 96, 64), 6), ((16, 64, 64), 6), ((64, 64, 24), 6)])
def test_tiles_outside_the_verified_shapes_are_refused(tile, line):
    exc = error(MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", f"tile: [{list(tile)}]"))
    if tile[2] == 24:
        assert str(exc) == (f"x.yaml:{line}: ops.tiny_f16.variants.tile[0]: tile {list(tile)}: sm80 tile K must be "
                            "one of 16, 32, 64, 128")
    else:
        assert str(exc) == (f"x.yaml:{line}: ops.tiny_f16.variants.tile[0]: tile {list(tile)}: sm80 tile M and N "
                            "must each be one of 32, 64, 128, 256 (the shapes its tests verify)")


def test_warp_list_length_mismatch():
    exc = error(with_variant_lines("      warp: [[32, 32, 64], [64, 32, 64]]\n"))
    assert str(exc) == "x.yaml:8: ops.tiny_f16.variants.warp: expected one warp shape per tile (1), got 2"


def test_warp_k_needs_two_mma_steps():
    exc = error(with_variant_lines("      warp: [[32, 32, 16]]\n").replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 16]]"))
    assert str(exc) == "x.yaml:8: ops.tiny_f16.variants.warp[0]: warp K (16) must be at least twice the instruction K (16)"


@pytest.mark.parametrize("tile, warp, line, suggestion", [
    ((128, 128, 64), (64, 64, 32), 8, [64, 64, 64]),  # the knob of issue 13: built, computed garbage
    ((64, 64, 64), (32, 32, 32), 8, [32, 32, 64]),
])
def test_sliced_k_warps_are_refused(tile, warp, line, suggestion):
    """warp K < tile K (CUTLASS sliced-K) computed wrong results on the H100 in both modes:
    refused at validation, with what to use instead."""
    text = with_variant_lines(f"      warp: [{list(warp)}]\n").replace("tile: [[64, 64, 64]]", f"tile: [{list(tile)}]")
    exc = error(text)
    assert str(exc) == (f"x.yaml:{line}: ops.tiny_f16.variants.warp[0]: warp K ({warp[2]}) must equal tile K "
                        f"({tile[2]}): sliced-K warps (warp K < tile K) are not supported; use warp {suggestion}, "
                        "or more warps along M or N")


def test_too_many_warps():
    exc = error(MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[256, 128, 32]]")
                .replace("      stages: [3]\n", "      warp: [[32, 32, 32]]\n      stages: [3]\n"))
    assert str(exc) == ("x.yaml:7: ops.tiny_f16.variants.warp[0]: tile [256, 128, 32] with warp [32, 32, 32] "
                        "needs 32 warps; at most 8")


def test_warp_must_be_auto_or_a_list():
    exc = error(with_variant_lines("      warp: automatic\n"))
    assert str(exc) == ("x.yaml:8: ops.tiny_f16.variants.warp: expected 'auto' or a list of [M, N, K] triples, "
                        "got 'automatic'")


def test_explicit_warps_are_used():
    text = MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [128, 64, 64]]").replace(
        "      stages: [3]\n", "      warp: [[64, 32, 64], [64, 64, 64]]\n      stages: [3]\n")
    op = parse_config(text, "x.yaml").ops[0]
    assert sorted({(v.tile, v.params.warp) for v in op.variants}) == [
        ((64, 64, 64), (64, 32, 64)), ((128, 64, 64), (64, 64, 64))]


def test_two_tiles_may_share_a_warp_shape():
    # Regression: the explicit warp list ("one warp shape per tile") used to be checked for
    # duplicates like the tile list ("warp[1]: duplicate value [32, 32, 64]").
    text = MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [64, 128, 64]]").replace(
        "      stages: [3]\n", "      warp: [[32, 32, 64], [32, 32, 64]]\n      stages: [3]\n")
    op = parse_config(text, "x.yaml").ops[0]
    assert sorted({(v.tile, v.params.warp) for v in op.variants}) == [
        ((64, 64, 64), (32, 32, 64)), ((64, 128, 64), (32, 32, 64))]


def test_instruction_shape_must_match_dtype():
    exc = error(with_variant_lines("      instruction: [16, 8, 32]\n"))
    assert str(exc) == ("x.yaml:8: ops.tiny_f16.variants.instruction: instruction shape [16, 8, 32] does not "
                        "match dtype f16; valid shapes: [16, 8, 16], [16, 8, 8]")


def test_explicit_instruction_shape_is_used():
    op = parse_config(with_variant_lines("      instruction: [16, 8, 8]\n"), "x.yaml").ops[0]
    assert {v.params.instruction for v in op.variants} == {(16, 8, 8)}
    assert op.variants[0].name == "tiny_f16_serial_t64x64x64_w32x32x64_i16x8x8_s3_a8_z1"


@pytest.mark.parametrize("value, field, bad", [
    ("1", "alignment", 1), ("[8, 16]", "alignment[1]", 16), ("16", "alignment", 16)])
def test_impossible_alignment(value, field, bad):
    exc = error(with_variant_lines(f"      alignment: {value}\n"))
    assert str(exc) == (f"x.yaml:8: ops.tiny_f16.variants.{field}: alignment {bad} is not possible for f16 "
                        "(cp.async moves 4, 8 or 16 bytes); valid values: 8, 4, 2")


# --- pruning -------------------------------------------------------------------------------------------------


def test_everything_pruned_by_shared_memory_is_an_empty_grid_error():
    text = (MINIMAL_OP_YAML.replace("arch: [90]", "arch: [80]")
            .replace("tile: [[64, 64, 64]]", "tile: [[256, 128, 64]]").replace("stages: [3]", "stages: [4]"))
    exc = error(text)
    # 4 stages * (256*64 + 128*64) * 2 bytes = 196608 > sm_80's 166912
    assert str(exc) == ("x.yaml:5: ops.tiny_f16.variants: empty grid: every combination was pruned: "
                        "shared memory 196608 B > 166912 B limit of sm_80")
    assert exc.line == 5 and exc.field == "ops.tiny_f16.variants"


def test_partly_pruned_grid_keeps_the_rest_and_records_why():
    text = (MINIMAL_OP_YAML.replace("arch: [90]", "arch: [90, 80]")
            .replace("tile: [[64, 64, 64]]", "tile: [[128, 256, 64]]").replace("stages: [3]", "stages: [2, 4]"))
    config = parse_config(text, "x.yaml")
    (op,) = config.ops
    assert op.archs == (80, 90)  # sorted
    assert [v.name for v in op.variants] == [
        "tiny_f16_serial_t128x256x64_w64x64x64_i16x8x16_s2_a8_z1",
        "tiny_f16_parallel_t128x256x64_w64x64x64_i16x8x16_s2_a8_z1",
    ]
    reason = "shared memory 196608 B > 166912 B limit of sm_80"
    assert config.pruned == (
        Pruned("tiny_f16", "tiny_f16_serial_t128x256x64_w64x64x64_i16x8x16_s4_a8_z1", reason),
        Pruned("tiny_f16", "tiny_f16_parallel_t128x256x64_w64x64x64_i16x8x16_s4_a8_z1", reason),
    )
    # the same tile/stages fit sm_90's larger shared memory
    assert not parse_config(text.replace("arch: [90, 80]", "arch: [90]"), "x.yaml").pruned


def test_pruned_when_the_tile_does_not_split_into_accesses():
    # 32x256x16 -> auto warp 32x64x16 -> 4 warps = 128 threads; A has 32*16/8 = 64 accesses
    text = MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [32, 256, 16]]").replace(
        "      stages: [3]\n", "      stages: [3]\n      instruction: [16, 8, 8]\n")
    config = parse_config(text, "x.yaml")
    assert {v.tile for v in config.ops[0].variants} == {(64, 64, 64)}
    assert {p.reason for p in config.pruned} == {
        "tile [32, 256, 16] does not split evenly into 8-element accesses over 128 threads"}
    assert len(config.pruned) == 2


K128_REASON = ("tile K 128 > 64: CUTLASS's crosswise shared-memory layout for 16-bit operands needs "
               "K <= 64 (128 bytes)")


def test_tile_k_above_64_is_pruned():
    text = MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [64, 64, 128]]")
    config = parse_config(text, "x.yaml")
    assert [v.name for v in config.ops[0].variants] == list(MINIMAL_VARIANTS)
    assert config.pruned == (
        Pruned("tiny_f16", "tiny_f16_serial_t64x64x128_w32x32x128_i16x8x16_s3_a8_z1", K128_REASON),
        Pruned("tiny_f16", "tiny_f16_parallel_t64x64x128_w32x32x128_i16x8x16_s3_a8_z1", K128_REASON),
    )
    # K == 64 is the largest K kept (the shipped 64-deep tiles)
    assert {v.tile[2] for v in config.ops[0].variants} == {64}


def test_tile_k_rule_comes_before_shared_memory():
    # 4 stages * (256*128 + 256*128) * 2 bytes = 524288 B would also exceed shared memory: the
    # K rule is the reason reported; a grid with nothing else left is an empty-grid error.
    text = (MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[256, 128, 128]]")
            .replace("stages: [3]", "stages: [4]"))
    exc = error(text)
    assert str(exc) == f"x.yaml:5: ops.tiny_f16.variants: empty grid: every combination was pruned: {K128_REASON}"


# --- empty and duplicate values ---------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, expected", [
    ("tile: [[64, 64, 64]]", "tile: []",
     "x.yaml:6: ops.tiny_f16.variants.tile: empty grid: expected a list of [M, N, K] triples, e.g. [[128, 128, 32]]"),
    ("stages: [3]", "stages: []", "x.yaml:7: ops.tiny_f16.variants.stages: empty grid: give at least one value"),
    ("      split_k:\n        serial: [1, 2]\n        parallel: [2, 4]\n", "      split_k: {}\n",
     "x.yaml:8: ops.tiny_f16.variants.split_k: empty grid: give 'serial' and/or 'parallel' split factors"),
    ("serial: [1, 2]", "serial: []",
     "x.yaml:9: ops.tiny_f16.variants.split_k.serial: empty grid: give at least one value"),
    ("arch: [90]", "arch: []", "x.yaml:4: ops.tiny_f16.arch: empty grid: give at least one value"),
], ids=["tile", "stages", "split_k", "serial", "arch"])
def test_empty_lists(old, new, expected):
    assert str(error(MINIMAL_OP_YAML.replace(old, new, 1))) == expected


def test_no_ops():
    assert str(error("ops: {}\n")) == "x.yaml:1: ops: empty grid: define at least one op"


def test_duplicate_yaml_key_reports_the_duplicate_line():
    exc = error(with_op_lines("    layout: tn\n    dtype: bf16\n"))
    assert str(exc) == "x.yaml:5: ops.tiny_f16.dtype: duplicate key (first defined on line 3)"
    assert exc.line == 5 and exc.field == "ops.tiny_f16.dtype"


def test_duplicate_top_level_and_op_keys():
    text = MINIMAL_OP_YAML + "ops: {}\n"
    assert str(error(text)) == "x.yaml:11: ops: duplicate key (first defined on line 1)"
    doubled = MINIMAL_OP_YAML + MINIMAL_OP_YAML[len("ops:\n"):]
    assert str(error(doubled)) == "x.yaml:11: ops.tiny_f16: duplicate key (first defined on line 2)"


@pytest.mark.parametrize("old, new, expected", [
    ("serial: [1, 2]", "serial: [1, 2, 1]",
     "x.yaml:9: ops.tiny_f16.variants.split_k.serial[2]: duplicate value 1"),
    ("stages: [3]", "stages: [3, 4, 3]", "x.yaml:7: ops.tiny_f16.variants.stages[2]: duplicate value 3"),
    ("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [64, 64, 64]]",
     "x.yaml:6: ops.tiny_f16.variants.tile[1]: duplicate value [64, 64, 64]"),
    ("arch: [90]", "arch: [90, 90]", "x.yaml:4: ops.tiny_f16.arch[1]: duplicate value 90"),
], ids=["splits", "stages", "tiles", "arch"])
def test_duplicate_values(old, new, expected):
    assert str(error(MINIMAL_OP_YAML.replace(old, new, 1))) == expected


# --- YAML syntax and file-level errors ----------------------------------------------------------------------


def test_invalid_yaml_reports_the_line():
    exc = error(MINIMAL_OP_YAML.replace("stages: [3]", "stages: [3"))
    # the parser notices the unclosed flow sequence at the next line's ':'
    assert str(exc) == "x.yaml:8: invalid YAML: expected ',' or ']', but got ':'"
    assert exc.line == 8 and exc.field == ""


def test_invalid_yaml_indentation():
    exc = error(with_op_lines("   bad_indent: 1\n"))
    assert str(exc) == "x.yaml:4: invalid YAML: expected <block end>, but found '<block mapping start>'"


def test_tab_indentation():
    assert str(error("ops:\n\tx: 1\n")) == "x.yaml:2: invalid YAML: found character '\\t' that cannot start any token"


def test_two_documents():
    assert str(error(MINIMAL_OP_YAML + "---\nops: {}\n")) == "x.yaml:11: invalid YAML: but found another document"


def test_unknown_tag_is_a_config_error():
    exc = error(MINIMAL_OP_YAML.replace("dtype: f16", "dtype: !foo bar"))
    assert exc.line == 3
    assert str(exc).startswith("x.yaml:3: invalid YAML: could not determine a constructor for the tag '!foo'")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n"], ids=["empty", "comment", "blank"])
def test_empty_file(text):
    exc = error(text)
    assert str(exc) == "x.yaml:1: empty file: expected a mapping with an 'ops' key"


def test_recursive_alias_is_a_config_error():
    exc = error("ops: &a {x: *a}\n")
    assert exc.message == "nesting deeper than 64 levels"
    assert exc.field.startswith("ops.x.x.x")


@pytest.mark.parametrize("name", ["Bad-Name", "1op", "_op", "op name", "linéaire", "a" * 65])
def test_invalid_op_names(name):
    exc = error(MINIMAL_OP_YAML.replace("tiny_f16", name))
    assert str(exc) == (f"x.yaml:2: ops.{name}: invalid op name {name!r}: use lower-case letters, digits and "
                        "'_', starting with a letter (it becomes a Python attribute and a C symbol)")


def test_longest_valid_op_name():
    name = "a" * 64
    assert parse_config(MINIMAL_OP_YAML.replace("tiny_f16", name), "x.yaml").ops[0].name == name


def test_op_name_with_trailing_newline_is_rejected():
    # The whole name must match ('$' alone would also match before a trailing newline, letting
    # "tiny_f16\n" through into a C symbol and a file name).
    exc = error(MINIMAL_OP_YAML.replace("  tiny_f16:", '  "tiny_f16\\n":'))
    assert exc.line == 2 and "invalid op name" in exc.message
    assert exc.message.startswith("invalid op name 'tiny_f16\\n': use lower-case letters")


@pytest.mark.parametrize("scalar, message", [
    ("!!int abc", "invalid int scalar 'abc'"),
    ("!!float abc", "invalid float scalar 'abc'"),
    ("!!timestamp foo", "invalid timestamp scalar 'foo'"),
])
def test_malformed_tagged_scalar_is_a_config_error(scalar, message):
    # SafeLoader.construct_object raises ValueError / AttributeError (not yaml.YAMLError) for an
    # explicitly tagged but malformed scalar: it must become a located ConfigError.
    exc = error(MINIMAL_OP_YAML.replace("dtype: f16", f"dtype: {scalar}"))
    assert exc.line == 3
    assert str(exc) == f"x.yaml:3: ops.tiny_f16.dtype: {message}"


# --- x- keys, anchors, merge keys, line numbers -----------------------------------------------------------


ANCHORED = """\
x-grid: &grid
  tile: [[64, 64, 64]]
  stages: [3]
  split_k: {serial: [1, 2]}
x-unused: {anything: [goes, here], nested: {deep: [1, 2]}}
ops:
  a_f16:
    dtype: f16
    arch: [90]
    variants: *grid
  b_bf16:
    dtype: bf16
    arch: [90]
    variants:
      <<: *grid
      stages: [4]
      alignment: [8, 4]
"""


def test_x_keys_are_ignored_and_anchors_and_merge_keys_work():
    config = parse_config(ANCHORED, "x.yaml")
    a, b = config.ops
    assert [v.name for v in a.variants] == ["a_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1"]
    assert [v.name for v in b.variants] == [
        "b_bf16_serial_t64x64x64_w32x32x64_i16x8x16_s4_a8_z1",
        "b_bf16_serial_t64x64x64_w32x32x64_i16x8x16_s4_a4_z1",
    ]
    assert all(v.splits == (1, 2) for v in a.variants + b.variants)


def test_errors_inside_an_anchor_point_at_the_anchor():
    exc = error(ANCHORED.replace("  stages: [3]\n", "  stages: [9]\n", 1))
    # reached through ops.a_f16.variants (*grid), reported where the value is written
    assert exc.field == "ops.a_f16.variants.stages[0]" and exc.line == 3
    assert str(exc) == "x.yaml:3: ops.a_f16.variants.stages[0]: 9 is out of range [2, 8]"


def test_merge_key_override_error_points_at_the_override():
    exc = error(ANCHORED.replace("      stages: [4]\n", "      stages: [4, 4]\n"))
    assert str(exc) == "x.yaml:16: ops.b_bf16.variants.stages[1]: duplicate value 4"


def test_x_prefix_only_applies_at_top_level():
    exc = error(with_op_lines("    x-note: hello\n"))
    assert exc.field == "ops.tiny_f16.x-note" and exc.line == 4


# --- a list of grids (their union) ------------------------------------------------------------------------

GRIDS = """\
ops:
  tiny_f16:
    dtype: f16
    arch: [90]
    variants:
      - tile: [[64, 64, 64]]
        stages: [3]
        split_k: {serial: [1, 2], parallel: [2, 4]}
      - tile: [[32, 64, 64], [128, 128, 32]]
        warp: [[32, 32, 64], [64, 64, 32]]
        stages: [6]
        split_k: {serial: [1]}
"""


def test_list_of_grids_is_their_union_in_order():
    config = parse_config(GRIDS, "x.yaml")
    (op,) = config.ops
    assert config.pruned == ()
    assert [v.name for v in op.variants] == list(MINIMAL_VARIANTS) + [
        "tiny_f16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1",
        "tiny_f16_serial_t128x128x32_w64x64x32_i16x8x16_s6_a8_z1",
    ]
    assert [v.splits for v in op.variants] == [(1, 2), (2, 4), (1,), (1,)]
    # one grid mapping and a one-element list of it are the same thing
    single = parse_config(MINIMAL_OP_YAML, "x.yaml")
    listed = parse_config(MINIMAL_OP_YAML.replace("      tile:", "      - tile:").replace(
        "      stages:", "        stages:").replace("      split_k:", "        split_k:").replace(
        "        serial:", "          serial:").replace("        parallel:", "          parallel:"), "x.yaml")
    assert listed == single


def test_grids_may_split_the_modes_of_one_shape():
    text = GRIDS.replace("tile: [[32, 64, 64], [128, 128, 32]]", "tile: [[64, 64, 64]]").replace(
        "        warp: [[32, 32, 64], [64, 64, 32]]\n", "").replace("stages: [6]", "stages: [3]").replace(
        "split_k: {serial: [1, 2], parallel: [2, 4]}", "split_k: {serial: [1, 2]}").replace(
        "split_k: {serial: [1]}", "split_k: {parallel: [2, 4]}")
    op = parse_config(text, "x.yaml").ops[0]
    assert [v.name for v in op.variants] == list(MINIMAL_VARIANTS)
    assert {v.group for v in op.variants} == {MINIMAL_GROUP}


def test_duplicate_variant_across_grids():
    text = GRIDS.replace("tile: [[32, 64, 64], [128, 128, 32]]", "tile: [[32, 64, 64], [64, 64, 64]]").replace(
        "warp: [[32, 32, 64], [64, 64, 32]]", "warp: [[32, 32, 64], [32, 32, 64]]").replace(
        "stages: [6]", "stages: [6, 3]")
    exc = error(text)
    assert str(exc) == ("x.yaml:9: ops.tiny_f16.variants[1]: variant "
                        "tiny_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1 is already defined by an earlier grid")
    assert (exc.line, exc.field) == (9, "ops.tiny_f16.variants[1]")
    # the same grid twice (e.g. an anchor listed twice) as well
    twice = "x-g: &g {tile: [[64, 64, 64]], stages: [3], split_k: {parallel: [2]}}\n" + GRIDS.replace(
        "    variants:\n", "    variants:\n      - *g\n      - *g\n", 1)
    exc = error(twice)
    assert str(exc) == ("x.yaml:1: ops.tiny_f16.variants[1]: variant "
                        "tiny_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1 is already defined by an earlier grid")


SHARED = """\
x-shared: &shared
  - tile: [[64, 64, 64]]
    stages: [3]
    split_k: {serial: [1, 2], parallel: [2, 4]}
ops:
  tiny_f16:
    dtype: f16
    arch: [90]
    variants: [*shared, {tile: [[32, 64, 64]], warp: [[32, 32, 64]], stages: [6], split_k: {serial: [1]}}]
"""


def test_a_shared_list_of_grids_and_more_grids_are_their_union():
    # an op may list a shared list of grids (a YAML alias) beside grids of its own
    op = parse_config(SHARED, "x.yaml").ops[0]
    assert [v.name for v in op.variants] == list(MINIMAL_VARIANTS) + [
        "tiny_f16_serial_t32x64x64_w32x32x64_i16x8x16_s6_a8_z1"]
    # the same variants as the flat list
    flat = SHARED.replace("[*shared, {", "[{tile: [[64, 64, 64]], stages: [3], split_k: {serial: [1, 2], "
                          "parallel: [2, 4]}}, {")
    assert parse_config(flat, "x.yaml").ops[0].variants == op.variants
    # an error inside the shared list names its place in it, at the anchor's line
    exc = error(SHARED.replace("stages: [3]", "stages: [9]"))
    assert str(exc) == "x.yaml:3: ops.tiny_f16.variants[0][0].stages[0]: 9 is out of range [2, 8]"
    exc = error(SHARED.replace("x-shared: &shared\n  - tile: [[64, 64, 64]]\n    stages: [3]\n"
                               "    split_k: {serial: [1, 2], parallel: [2, 4]}\n", "x-shared: &shared []\n"))
    assert str(exc) == "x.yaml:1: ops.tiny_f16.variants[0]: empty grid: give a grid mapping or a list of them"


def test_empty_list_of_grids():
    text = "ops:\n  tiny_f16:\n    dtype: f16\n    arch: [90]\n    variants: []\n"
    exc = error(text)
    assert str(exc) == "x.yaml:5: ops.tiny_f16.variants: empty grid: give a grid mapping or a list of them"
    assert (exc.line, exc.field) == (5, "ops.tiny_f16.variants")


def test_errors_inside_a_listed_grid_name_the_grid():
    exc = error(GRIDS.replace("stages: [6]", "stages: [9]"))
    assert str(exc) == "x.yaml:11: ops.tiny_f16.variants[1].stages[0]: 9 is out of range [2, 8]"
    exc = error(GRIDS.replace("warp: [[32, 32, 64], [64, 64, 32]]", "warp: [[32, 32, 64], [48, 64, 32]]"))
    assert str(exc) == ("x.yaml:10: ops.tiny_f16.variants[1].warp[1]: warp [48, 64, 32]: sm80 warp M and N must "
                        "each be one of 32, 64 (the shapes its tests verify)")
    exc = error("ops:\n  tiny_f16:\n    dtype: f16\n    variants: [1]\n")
    assert str(exc) == "x.yaml:4: ops.tiny_f16.variants[0]: expected a mapping, got integer"


def test_line_numbers_and_fields_deep_in_a_file():
    text = ("# comment\n\nops:\n"  # lines 1-3
            "  first_f16:\n    dtype: f16\n    arch: [90]\n"  # 4-6
            "    variants:\n      tile: [[64, 64, 64]]\n      split_k:\n        serial: [1]\n"  # 7-10
            "  second_f16:\n    dtype: f16\n    arch: [90]\n"  # 11-13
            "    variants:\n      tile:\n        - [64, 64, 64]\n        - [128, 128, 0]\n"  # 14-17
            "      split_k:\n        serial: [1]\n")
    exc = error(text)
    assert (exc.line, exc.field) == (17, "ops.second_f16.variants.tile[1][2]")
    assert exc.message == "0 is out of range [1, 1024]"
    assert exc.file == "x.yaml"


def test_config_error_formatting_without_line_or_field():
    assert str(ConfigError("f.yaml", None, "", "boom")) == "f.yaml: boom"
    assert str(ConfigError("f.yaml", 3, "", "boom")) == "f.yaml:3: boom"
    assert str(ConfigError("f.yaml", None, "a.b", "boom")) == "f.yaml: a.b: boom"
    assert isinstance(ConfigError("f", 1, "", "m"), ValueError)


# --- expansion -----------------------------------------------------------------------------------------------


def test_cartesian_product_count_and_contents():
    text = """\
ops:
  grid_f16:
    dtype: f16
    arch: [90]
    variants:
      tile: [[64, 64, 64], [128, 128, 32]]
      stages: [3, 4]
      alignment: [8, 4]
      swizzle: [1, 2]
      split_k:
        serial: [1, 2]
        parallel: [4]
"""
    config = parse_config(text, "x.yaml")
    (op,) = config.ops
    assert config.pruned == ()
    assert len(op.variants) == 2 * 2 * 2 * 2 * 2
    got = {(v.tile, v.params.warp, v.params.stages, v.alignment, v.params.swizzle, v.mode) for v in op.variants}
    want = set()
    for (tile, warp), st_, al, sw, mode in itertools.product(
            [((64, 64, 64), (32, 32, 64)), ((128, 128, 32), (64, 64, 32))], [3, 4], [8, 4], [1, 2], (SplitMode.SERIAL, SplitMode.PARALLEL)):
        want.add((tile, warp, st_, al, sw, mode))
    assert got == want
    assert len({v.name for v in op.variants}) == 32
    assert len({v.group for v in op.variants}) == 16  # modes share a group
    assert all(v.splits == ((1, 2) if v.mode is SplitMode.SERIAL else (4,)) for v in op.variants)


def test_only_one_split_mode():
    op = parse_config(MINIMAL_OP_YAML.replace("        parallel: [2, 4]\n", ""), "x.yaml").ops[0]
    assert [v.mode for v in op.variants] == [SplitMode.SERIAL]


@pytest.mark.parametrize("tile, warp", [
    ((128, 128, 32), (64, 64, 32)),
    ((64, 64, 64), (32, 32, 64)),
    ((32, 128, 64), (32, 32, 64)),
    ((32, 64, 64), (32, 32, 64)),  # never below 32: two warps
    ((128, 64, 32), (64, 32, 32)),
    # four warps reached, then each warp dimension is capped at 64: larger tiles get 8+ warps
    ((256, 128, 32), (64, 64, 32)),
    ((128, 256, 32), (64, 64, 32)),
    ((128, 256, 64), (64, 64, 64)),
    ((32, 32, 16), (32, 32, 16)),  # cannot split further: one warp
])
def test_auto_warp(tile, warp):
    assert auto_warp(tile) == warp
    assert warp[0] <= 64 and warp[1] <= 64 and warp[2] == tile[2]


def test_auto_warp_large_tile_gets_eight_warps():
    op = parse_config(MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[256, 128, 32]]"), "x.yaml").ops[0]
    assert {v.params.warp for v in op.variants} == {(64, 64, 32)}
    assert {v.params.warp_count(v.tile) for v in op.variants} == {8}
    assert op.variants[0].name == "tiny_f16_serial_t256x128x32_w64x64x32_i16x8x16_s3_a8_z1"


def test_variant_names_and_splits_sorted():
    text = """\
ops:
  linear_f16:
    dtype: f16
    variants:
      tile: [[128, 128, 32], [32, 128, 64]]
      stages: [4]
      split_k: {serial: [1, 2], parallel: [2, 4]}
"""
    op = parse_config(text, "x.yaml").ops[0]
    names = [v.name for v in op.variants]
    assert names == [
        "linear_f16_serial_t128x128x32_w64x64x32_i16x8x16_s4_a8_z1",
        "linear_f16_parallel_t128x128x32_w64x64x32_i16x8x16_s4_a8_z1",
        "linear_f16_serial_t32x128x64_w32x32x64_i16x8x16_s4_a8_z1",
        "linear_f16_parallel_t32x128x64_w32x32x64_i16x8x16_s4_a8_z1",
    ]
    text = MINIMAL_OP_YAML.replace("serial: [1, 2]", "serial: [8, 1, 4]").replace("parallel: [2, 4]",
                                                                                  "parallel: [32, 2]")
    op = parse_config(text, "x.yaml").ops[0]
    assert [v.splits for v in op.variants] == [(1, 4, 8), (2, 32)]


def _expected_variants(raw_grids):
    """What a grid (or list of grids) as plain YAML data should expand to, for the fields the
    shipped configs use: {(mode, tile, warp, stages): splits}. (Independent of parse_config:
    computed from yaml.safe_load, with auto_warp for 'warp: auto'; sm90 keys are (mode, tile,
    cluster, swap_ab, schedule), the automatic schedule cooperative for tile M >= 128.)"""
    grids = raw_grids if isinstance(raw_grids, list) else [raw_grids]
    grids = [g for item in grids for g in (item if isinstance(item, list) else [item])]  # a shared list inside
    out = {}
    for g in grids:
        if g.get("backend") == "sm90":
            assert set(g) <= {"backend", "tile", "cluster", "swap_ab", "split_k", "schedule"}, g  # extend if it grows
            swap = g.get("swap_ab", False)
            assert isinstance(swap, bool), g
            for tile, cluster in itertools.product(g["tile"], g.get("cluster", [[1, 1]])):
                for mode in SplitMode:
                    if mode.value in g["split_k"]:
                        assert mode is SplitMode.PARALLEL or not swap, g  # the config prunes nothing
                        value = g["split_k"][mode.value]
                        schedule = g.get("schedule", "cooperative" if tile[0] >= 128 else "pingpong")
                        key = (mode, tuple(tile), tuple(cluster), swap, Schedule(schedule))
                        assert key not in out, key
                        out[key] = (1,) if value is True else tuple(sorted(value))
            continue
        assert set(g) <= {"tile", "warp", "stages", "split_k"}, g  # extend this helper if the config grows
        tiles = [tuple(t) for t in g["tile"]]
        warps = ([auto_warp(t) for t in tiles] if g.get("warp", "auto") == "auto"
                 else [tuple(w) for w in g["warp"]])
        stages = g.get("stages", 3)
        for (tile, warp), st_ in itertools.product(zip(tiles, warps), stages if isinstance(stages, list) else [stages]):
            for mode in SplitMode:
                if mode.value in g["split_k"]:
                    key = (mode, tile, warp, st_)
                    assert key not in out, key
                    out[key] = tuple(sorted(g["split_k"][mode.value]))
    return out


def test_default_config():
    config = load_config(CONFIGS / "default.yaml")
    raw = yaml.safe_load((CONFIGS / "default.yaml").read_text())["ops"]
    assert [o.name for o in config.ops] == [
        "linear_f16", "linear_bf16", "linear_bias_gelu_f16", "linear_bias_gelu_bf16",
        "bias_gelu_mul_permute_f16", "bias_gelu_mul_permute_bf16", "qkv_f16", "qkv_bf16"]
    assert [o.name for o in config.ops] == list(raw)
    assert config.pruned == ()
    for o in config.ops:
        assert o.archs == tuple(sorted(raw[o.name]["arch"]))
        expected = _expected_variants(raw[o.name]["variants"])
        assert len(o.variants) == len(expected)
        sm80 = [v for v in o.variants if v.backend is Backend.SM80]
        sm90 = [v for v in o.variants if v.backend is Backend.SM90]
        got = {(v.mode, v.tile, v.params.warp, v.params.stages): v.splits for v in sm80}
        got.update({(v.mode, v.tile, v.params.cluster, v.params.swap_ab, v.params.schedule): v.splits for v in sm90})
        assert got == expected
        assert {(v.params.instruction, v.alignment, v.params.swizzle) for v in sm80} == {((16, 8, 16), 8, 1)}
        assert {(v.alignment, v.params.stages) for v in sm90} == {(8, 0)}
        # every sm80 shape is built in both split modes (one translation unit per group)
        assert len(sm80) == 2 * len({v.group for v in sm80})
        for v in sm80:
            assert v.splits == ((1, 2, 4, 8, 16) if v.mode is SplitMode.SERIAL else (2, 4, 8, 16, 32))
    # every op is built with the same grid; the ops without E or permute add a ping-pong tile (the build budget)
    shapes = {o.name: sorted(v.name[len(o.name):] for v in o.variants) for o in config.ops}
    pingpong = "_serial_sm90_t128x128x64_c2x1_pp_sauto_a8"
    assert {o.name for o in config.ops if pingpong in shapes[o.name]} == {
        o.name for o in config.ops if o.epilogue.e_op is EOp.NONE and o.epilogue.permute is Permute.NONE} == {
        "linear_f16", "linear_bf16", "linear_bias_gelu_f16", "linear_bias_gelu_bf16"}
    assert len({tuple(s for s in shapes[o.name] if s != pingpong) for o in config.ops}) == 1


def test_epilogues_config():
    config = load_config(CONFIGS / "epilogues.yaml")
    ops = {o.name: o for o in config.ops}
    assert len(ops) == 8 and config.pruned == ()
    # sm80: alignment [8, 2] x 2 modes; sm90: a cooperative tile in 3 modes, a ping-pong one in 2, a swapped one in 2
    assert len(ops["relu_rowbias_add_f16"].variants) == 4 + 3 + 2 + 2
    assert ops["leaky_add_permute_f16"].epilogue.leaky_slope == 0.1
    assert ops["nn_bias_silu_bf16"].layout is Layout.NN
    # the sm90 in-kernel TMA epilogue's coverage: a per-row bias with a slope, and nothing at all; with clusters of
    # four (a ping-pong tile in 1x4 in 2 modes, a cooperative one in 2x2 in 3) and of eight (4x2 in 2, 2x4 in 3)
    assert [(o.epilogue.tma_in_kernel, {v.backend.value for v in o.variants}, len(o.variants))
            for o in (ops["rowbias_leaky_f16"], ops["relu_nobias_bf16"])] == [(True, {"sm90"}, 12), (True, {"sm90"}, 15)]
    assert ops["rowbias_leaky_f16"].epilogue.leaky_slope == 0.2
    clusters = {o: sorted({v.params.cluster for v in ops[o].variants
                           if v.backend is Backend.SM90 and v.params.cluster[0] * v.params.cluster[1] == 4})
                for o in ("leaky_add_permute_f16", "rowbias_leaky_f16", "relu_nobias_bf16")}
    assert clusters == {"leaky_add_permute_f16": [(2, 2)], "rowbias_leaky_f16": [(1, 4)], "relu_nobias_bf16": [(2, 2)]}
    # and of eight: a cooperative tile in 2x4 in every mode through both epilogues, a ping-pong one in 4x2 in 2
    eight = {o: sorted({(v.params.cluster, v.mode.value) for v in ops[o].variants
                        if v.backend is Backend.SM90 and v.params.cluster[0] * v.params.cluster[1] == 8})
             for o in ("leaky_add_permute_f16", "rowbias_leaky_f16", "relu_nobias_bf16")}
    every = [((2, 4), m) for m in ("parallel", "serial", "stream_k")]
    assert eight == {"leaky_add_permute_f16": every, "rowbias_leaky_f16": [((4, 2), "parallel"), ((4, 2), "serial")],
                     "relu_nobias_bf16": every}
    # a width outside CUTLASS's standard wgmma set in every mode, through our epilogue (E, permute) and the TMA one
    wide = {o.name: sorted(v.mode.value for v in o.variants
                           if v.backend is Backend.SM90 and sm90_rules.extended_mma(v.tile) and not v.params.swap_ab)
            for o in config.ops}
    assert {o: m for o, m in wide.items() if m} == {"leaky_add_permute_f16": ["parallel", "serial", "stream_k"],
                                                    "relu_nobias_bf16": ["parallel", "serial", "stream_k"]}
    # swapped operands in the in-kernel modes on every op (the 128x80 tile: 16-column epilogue subtiles, an extended
    # wgmma width), with stream-K on two; a swapped ping-pong tile at split 1 in the kernel on four
    swapped = {o.name: sorted((v.tile, v.mode.value) for v in o.variants
                              if v.backend is Backend.SM90 and v.params.swap_ab and v.mode is not SplitMode.PARALLEL)
               for o in config.ops}
    serial80, streamk80, pingpong = ((128, 80, 64), "serial"), ((128, 80, 64), "stream_k"), ((64, 32, 64), "serial")
    assert swapped == {
        "relu_rowbias_add_f16": [serial80, streamk80], "gelu_tanh_add_bf16": [serial80], "silu_rowbias_mul_f16": [serial80],
        "sigmoid_qkv_bf16": [pingpong, serial80], "leaky_add_permute_f16": [pingpong, serial80, streamk80],
        "nn_bias_silu_bf16": [pingpong, serial80], "rowbias_leaky_f16": [pingpong, serial80],
        "relu_nobias_bf16": [serial80]}


# --- property: never anything but Config or ConfigError ----------------------------------------------------

_KEYS = ["ops", "dtype", "layout", "arch", "epilogue", "variants", "tile", "warp", "instruction", "stages",
         "alignment", "swizzle", "split_k", "serial", "parallel", "alpha", "beta", "bias", "activation",
         "leaky_slope", "e_op", "permute", "tiny_f16", "x-grid", "<<"]
_VALUES = ["f16", "bf16", "tn", "nn", "auto", "none", "per_col", "per_row", "relu", "leaky_relu", "gelu",
           "add", "mul", "head_split", "qkv_split", "serial", "parallel"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-4, max_value=300),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12), st.sampled_from(_VALUES))
keys = st.one_of(st.sampled_from(_KEYS), st.sampled_from(_KEYS), st.text(max_size=10), st.integers(-3, 3))
# Plausible values: mutations with these often still parse, exercising the success path too.
plausible = st.sampled_from([3, 4, 8, 2, 1, [3, 4], [1, 2, 4], [8, 4, 2], [2, 32], [90], [80, 90], [86],
                             [[128, 128, 32]], [[64, 64, 64], [32, 128, 64]], [[32, 32, 64]], [16, 8, 8],
                             [{"tile": [[64, 64, 64]], "split_k": {"serial": [1]}}], [[64, 64, 128]], [],
                             "auto", "f16", "bf16", "nn", "tn", {"serial": [1]}, {"parallel": [2, 4]}, None,
                             True, False, 0.25, "leaky_relu", "per_row", "qkv_split", "mul"])
documents = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(keys, children, max_size=5)),
    max_leaves=25)

BASES = [
    yaml.safe_load(MINIMAL_OP_YAML),
    yaml.safe_load(MINIMAL_OP_YAML.replace(
        "    dtype: f16\n",
        "    dtype: f16\n    layout: nn\n    epilogue: {alpha: true, beta: true, bias: per_row, "
        "activation: leaky_relu, leaky_slope: 0.1, e_op: add, permute: head_split}\n").replace(
        "      stages: [3]\n",
        "      warp: [[32, 32, 64]]\n      instruction: [16, 8, 16]\n      stages: [3, 4]\n"
        "      alignment: [8, 2]\n      swizzle: 2\n")),
    yaml.safe_load(GRIDS),  # variants as a list of grids
]


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated_configs(draw):
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 2))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for p in path[:-1]:
            parent = parent[p]
        action = draw(st.sampled_from(["delete", "scalar", "document", "list", "plausible", "plausible"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "scalar":
            parent[path[-1]] = draw(scalars)
        elif action == "document":
            parent[path[-1]] = draw(documents)
        elif action == "plausible":
            parent[path[-1]] = draw(plausible)
        else:
            parent[path[-1]] = draw(st.lists(scalars, max_size=4))
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=draw(st.booleans()))


yaml_texts = st.one_of(
    documents.map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    mutated_configs(),
    mutated_configs(),
    mutated_configs(),
    st.text(max_size=200),  # raw text: mostly invalid YAML
    st.lists(st.sampled_from(["ops:", "  a:", "    dtype: f16", "  - 1", "x: &a [1]", "y: *a", "<<: *a",
                              "  ? x", "'", "{", "]", "---", "    variants: {tile: [[64,64,64]]}"]),
             max_size=8).map("\n".join),
)


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(yaml_texts)
@example(MINIMAL_OP_YAML)
@example("ops:\n  a_f16: {dtype: f16, variants: {tile: [[64, 64, 64]], split_k: {serial: [1]}}}\n")
def test_property_parse_config_only_raises_config_error(text):
    try:
        result = parse_config(text, "p.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("p.yaml")
        assert exc.file == "p.yaml"
        assert exc.line is None or exc.line >= 1
    else:
        assert isinstance(result, Config)
        assert result.ops and all(op.variants for op in result.ops)
        for op in result.ops:
            assert len({v.name for v in op.variants}) == len(op.variants)


def test_tiles_whose_shared_memory_accesses_do_not_cover_the_threads_are_pruned():
    """Found by the GPU fuzz run: t32x256x16 (4 warps of 32x64) with alignment 4 passed the
    4-element rule but its 128-bit shared-memory tile iterators gave 64 accesses to 128 threads,
    a compile error ("Number of iterations must be non-zero"); now pruned with the reason."""
    text = (MINIMAL_OP_YAML.replace("tile: [[64, 64, 64]]", "tile: [[64, 64, 64], [32, 256, 16]]")
            .replace("      stages: [3]\n", "      stages: [3]\n      instruction: [16, 8, 8]\n      alignment: 4\n"))
    config = parse_config(text, "x.yaml")
    assert {v.tile for v in config.ops[0].variants} == {(64, 64, 64)}
    assert {p.reason for p in config.pruned} == {
        "tile [32, 256, 16] does not split evenly into 8-element accesses over 128 threads"}
