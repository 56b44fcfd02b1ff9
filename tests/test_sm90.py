"""The sm90 backend on the CPU: its YAML grammar (exact errors and pruning reasons), the model
of its variants, the bytes its generator emits, and (nvcc marker) a real sm_90a build."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from cutlass_splitk import codegen
from cutlass_splitk.backends.sm90 import rules
from cutlass_splitk.config import ConfigError, parse_config
from cutlass_splitk.spec import Backend, EOp, EpilogueSpec, KernelVariant, Permute, Schedule, Sm90Params, SplitMode

SM90_YAML = """\
ops:
  h_f16:
    dtype: f16
    epilogue: {bias: per_col, activation: gelu, e_op: mul, permute: head_split}
    variants:
      backend: sm90
      tile: [[128, 128, 64]]
      split_k:
        serial: [1, 2]
        parallel: [2, 4]
"""


def error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "x.yaml")
    return str(info.value)


def grid_lines(extra: str, text: str = SM90_YAML) -> str:
    """SM90_YAML with ``extra`` inserted after its tile line."""
    return text.replace("      tile: [[128, 128, 64]]\n", "      tile: [[128, 128, 64]]\n" + extra, 1)


def test_minimal_sm90_grid():
    (op,) = parse_config(SM90_YAML, "x.yaml").ops
    params = Sm90Params((1, 1), Schedule.COOPERATIVE, 0)
    assert op.archs == ()  # arch: is for sm80 grids
    assert op.variants == (
        KernelVariant("h_f16", SplitMode.SERIAL, (128, 128, 64), 8, params, (1, 2)),
        KernelVariant("h_f16", SplitMode.PARALLEL, (128, 128, 64), 8, params, (2, 4)),
    )
    assert [v.name for v in op.variants] == ["h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8",
                                             "h_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8"]
    assert {v.backend for v in op.variants} == {Backend.SM90}


def test_clusters_of_four_and_eight_are_accepted_in_every_mode():
    # session 25: the kernels size their persistent grid by the device's own count of clusters (120 CTAs of an
    # H100 in clusters of four), so 2x2, 4x1 and 1x4 are legal in every mode, as the fuzzer draws them; session
    # 38: clusters of eight (2x4, 4x2: the clusters cuBLAS runs on mid-size skinny shapes), checked in every
    # mode against float64 on an H100 (configs/epilogues.yaml, the fuzzer)
    clusters = ((1, 4), (2, 2), (2, 4), (4, 1), (4, 2))
    text = grid_lines("      cluster: [[2, 2], [4, 1], [1, 4], [2, 4], [4, 2]]\n").replace(
        "parallel: [2, 4]", "parallel: [2, 4]\n        stream_k: true")
    (op,) = parse_config(text, "x.yaml").ops
    assert sorted({(v.mode.value, v.params.cluster) for v in op.variants}) == [
        (mode, c) for mode in ("parallel", "serial", "stream_k") for c in clusters]
    assert "h_f16_serial_sm90_t128x128x64_c2x2_coop_sauto_a8" in [v.name for v in op.variants]
    assert "h_f16_stream_k_sm90_t128x128x64_c4x2_coop_sauto_a8" in [v.name for v in op.variants]


def test_schedule_auto_follows_tile_m_and_stream_k():
    text = SM90_YAML.replace("tile: [[128, 128, 64]]", "tile: [[64, 128, 64], [256, 128, 64]]").replace(
        "serial: [1, 2]", "serial: [1]").replace("parallel: [2, 4]", "parallel: [3]\n        stream_k: true")
    config = parse_config(text, "x.yaml")
    got = {(v.tile[0], v.mode.value, v.params.schedule.value) for v in config.ops[0].variants}
    assert got == {(64, "serial", "pingpong"), (64, "parallel", "pingpong"), (256, "serial", "cooperative"),
                   (256, "parallel", "cooperative"), (256, "stream_k", "cooperative")}
    # stream-K on ping-pong is pruned, with the reason
    assert [(p.description, p.reason) for p in config.pruned] == [
        ("h_f16_stream_k_sm90_t64x128x64_c1x1_pp_sauto_a8",
         "stream-K needs the cooperative schedule (CUTLASS's ping-pong kernel has no stream-K scheduler)")]
    assert [v.splits for v in config.ops[0].variants if v.mode is SplitMode.STREAM_K] == [(1,)]


@pytest.mark.parametrize("extra, message", [
    ("      cluster: [[8, 1]]\n", "x.yaml:8: ops.h_f16.variants.cluster[0]: cluster [8, 1] is not supported; "
                                   "valid values: [1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [1, 4], [2, 4], [4, 2]"),
    ("      cluster: [2, 1]\n", "x.yaml:8: ops.h_f16.variants.cluster: expected a list of [M, N] cluster shapes, "
                                "e.g. [[1, 1], [2, 1]], got [2, 1]"),
    ("      cluster: [[1, 1], [1, 1]]\n", "x.yaml:8: ops.h_f16.variants.cluster[1]: duplicate value [1, 1]"),
    ("      schedule: fast\n", "x.yaml:8: ops.h_f16.variants.schedule: invalid value 'fast'; valid values: "
                               "cooperative, pingpong"),
    ("      stages: [1]\n", "x.yaml:8: ops.h_f16.variants.stages[0]: 1 is out of range [2, 12]"),
    ("      alignment: 4\n", "x.yaml:8: ops.h_f16.variants.alignment: alignment 4 is not possible for sm90 "
                             "(TMA moves 16-byte rows); valid values: 8"),
    ("      warp: auto\n", "x.yaml:8: ops.h_f16.variants.warp: unknown key 'warp'; valid keys: tile, cluster, "
                           "schedule, stages, alignment, swap_ab, split_k"),
    ("      swap_ab: 1\n", "x.yaml:8: ops.h_f16.variants.swap_ab: expected true or false, got integer 1"),
    ("      swap_ab: []\n", "x.yaml:8: ops.h_f16.variants.swap_ab: empty grid: give at least one value"),
    ("      swap_ab: [true, true]\n", "x.yaml:8: ops.h_f16.variants.swap_ab[1]: duplicate value true"),
])
def test_grid_errors(extra, message):
    assert error(grid_lines(extra)) == message


@pytest.mark.parametrize("tile, message", [
    ([96, 128, 64], "x.yaml:7: ops.h_f16.variants.tile[0]: tile M 96 is not possible for sm90 (wgmma warpgroups "
                    "of 64 rows); valid values: 64, 128, 256"),
    ([128, 40, 64], "x.yaml:7: ops.h_f16.variants.tile[0]: tile N 40 is not possible for sm90: use a multiple of "
                    "16 from 16 to 256"),
    ([128, 512, 64], "x.yaml:7: ops.h_f16.variants.tile[0]: tile N 512 is not possible for sm90: use a multiple of "
                     "16 from 16 to 256"),
    ([128, 128, 16], "x.yaml:7: ops.h_f16.variants.tile[0]: tile K 16 is not possible for sm90; valid values: "
                     "32, 64, 128"),
])
def test_tile_errors(tile, message):
    assert error(SM90_YAML.replace("[[128, 128, 64]]", f"[{tile}]")) == message


def test_stream_k_must_be_a_boolean_and_split_k_not_empty():
    assert error(SM90_YAML.replace("parallel: [2, 4]", "stream_k: [1]")) == \
        "x.yaml:10: ops.h_f16.variants.split_k.stream_k: expected true or false, got list [1]"
    text = SM90_YAML.replace("        serial: [1, 2]\n        parallel: [2, 4]\n", "        stream_k: false\n")
    assert error(text) == "x.yaml:8: ops.h_f16.variants.split_k: empty grid: give 'serial', 'parallel' and/or 'stream_k'"


def test_unknown_backend_and_arch_without_sm80_grids():
    assert error(SM90_YAML.replace("backend: sm90", "backend: sm100")) == \
        "x.yaml:6: ops.h_f16.variants.backend: invalid value 'sm100'; valid values: sm80, sm90"
    assert error(SM90_YAML.replace("    dtype: f16\n", "    dtype: f16\n    arch: [90]\n")) == (
        "x.yaml:4: ops.h_f16.arch: arch chooses the targets of sm80 grids, and this op has none (sm90 grids "
        "always build for sm_90a): remove it")


@pytest.mark.parametrize("extra, tile, reason", [
    ("      schedule: pingpong\n", [256, 128, 64],
     "tile [256, 128, 64] with the pingpong schedule holds 256 f32 accumulators per thread (at most 128): use a "
     "smaller tile or the cooperative schedule"),
    ("      schedule: cooperative\n", [256, 256, 64],
     "tile [256, 256, 64] with the cooperative schedule holds 256 f32 accumulators per thread (at most 128): "
     "use a smaller tile"),
    ("      schedule: cooperative\n", [64, 128, 64],
     "the cooperative schedule needs tile M >= 128 (two warpgroups of 64 rows), got 64"),
    ("      stages: [5]\n", [128, 256, 64], {"shared memory 268288 B (5 stages + epilogue) > 232448 B limit of sm_90",
                                          "shared memory 282624 B (5 stages + epilogue) > 232448 B limit of sm_90"}),
])
def test_pruned_grid_points_say_why(extra, tile, reason):
    text = grid_lines(extra).replace("[[128, 128, 64]]", f"[[128, 128, 64], {tile}]").replace(
        "serial: [1, 2]", "serial: [1]")
    config = parse_config(text, "x.yaml")
    assert {p.reason for p in config.pruned} == (reason if isinstance(reason, set) else {reason})
    assert all(v.tile == (128, 128, 64) for v in config.ops[0].variants)


def test_swap_ab_grid_runs_every_mode():
    text = grid_lines("      swap_ab: [false, true]\n").replace("[[128, 128, 64]]", "[[128, 128, 64], [64, 16, 128]]")
    config = parse_config(text, "x.yaml")
    got = [(v.name, v.splits) for v in config.ops[0].variants]
    assert got == [
        ("h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8", (1, 2)),
        ("h_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8", (2, 4)),
        ("h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8_swab", (1, 2)),
        ("h_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8_swab", (2, 4)),
        ("h_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8", (2, 4)),
        ("h_f16_parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab", (2, 4)),
    ]
    reasons = {p.description: p.reason for p in config.pruned}
    # a swapped kernel's 16-wide tile N stages 16-column subtiles in the in-kernel modes: only the ping-pong
    # schedule's serial rule prunes it
    assert reasons == {
        "h_f16_serial_sm90_t64x16x128_c1x1_pp_sauto_a8":
            "tile N 16 with serial split-K: the in-kernel fused epilogue stages 32-column chunks; use a "
            "multiple of 32, parallel split-K or swap_ab: true",
        "h_f16_serial_sm90_t64x16x128_c1x1_pp_sauto_a8_swab":
            "serial split factors above 1 need the cooperative schedule (CUTLASS's ping-pong kernel has no "
            "in-kernel split-K); use serial: [1] or parallel split-K",
    }
    swapped = config.ops[0].variants[3]
    assert swapped.params == Sm90Params((1, 1), Schedule.COOPERATIVE, 0, True)
    # the manifest round trip keeps it, and a manifest without the key reads as not swapped
    assert KernelVariant.from_json("h_f16", swapped.to_json()) == swapped
    plain = config.ops[0].variants[1].to_json()
    assert "swap_ab" not in plain and KernelVariant.from_json("h_f16", plain).params.swap_ab is False


def test_swap_ab_tile_and_cluster_run_along_n_then_m():
    """The kernel's tile [64, 16, 128] with swapped operands covers 16 rows (M) by 64 columns (N) of
    the op's output, and the time model sees it so: exactly the prediction of the same kernel
    tile over (M, N), except that B is streamed once per tile along M."""
    from cutlass_splitk.runtime import timemodel
    swapped = Sm90Params((2, 1), Schedule.PINGPONG, 0, True)
    assert swapped.output_tile((64, 16, 128)) == (16, 64) and swapped.output_cluster() == (1, 2)
    dev = timemodel.DeviceInfo("H100", 132, 3.0e12, 2.95e12, 9, 0)
    v = KernelVariant("h", SplitMode.PARALLEL, (64, 16, 128), 8, swapped, (2,))
    same = KernelVariant("h", SplitMode.PARALLEL, (16, 64, 128), 8, Sm90Params((1, 2), Schedule.PINGPONG, 0), (2,))
    for m in (1, 16):  # one tile along M: the same DRAM bytes
        assert timemodel.predict(v, m, 4096, 14336, 2, dev).predicted_us == \
            timemodel.predict(same, m, 4096, 14336, 2, dev).predicted_us
    assert timemodel.predict(v, 32, 4096, 14336, 2, dev).predicted_us > \
        timemodel.predict(same, 32, 4096, 14336, 2, dev).predicted_us


def test_serial_split_above_one_needs_cooperative():
    text = SM90_YAML.replace("[[128, 128, 64]]", "[[64, 128, 64]]")
    config = parse_config(text, "x.yaml")
    assert [v.mode for v in config.ops[0].variants] == [SplitMode.PARALLEL]
    assert [p.reason for p in config.pruned] == [
        "serial split factors above 1 need the cooperative schedule (CUTLASS's ping-pong kernel has no "
        "in-kernel split-K); use serial: [1] or parallel split-K"]


def test_rules_mirror_the_epilogue_header():
    # kEpilogueSmem: 8 warps x 16 rows x (64 columns unless the accumulators fill the registers, + 4) floats
    assert rules.epilogue_columns((128, 128, 64), Schedule.COOPERATIVE) == 64
    assert rules.epilogue_columns((128, 256, 64), Schedule.COOPERATIVE) == 32
    assert rules.epilogue_columns((128, 96, 64), Schedule.COOPERATIVE) == 32
    assert rules.epilogue_smem((128, 128, 64), Schedule.COOPERATIVE, SplitMode.SERIAL, EpilogueSpec()) == 8 * 16 * 68 * 4
    header = (rules.__file__.rsplit("/", 1)[0] + "/templates/sm90_tma_epilogue.cuh")
    text = " ".join(open(header).read().split())
    assert ("constexpr int kEpilogueSmem = 8 * 16 * (((Cfg::kTileCols % 64 == 0 && Cfg::kTileRows * Cfg::kTileCols / "
            "(Cfg::kCooperative ? 256 : 128) < 128) || kThreeStagedBuffers<Cfg> ? 64 : 32) + 4) * 4;") in text
    assert ("constexpr bool kThreeStagedBuffers = Cfg::kCooperative && Cfg::kBeta && Cfg::kEOp != EOp::kNone && "
            "Cfg::kPermute != Permute::kNone;") in text
    # C, E and a permuted D staged in three buffers: the 64-column budget whatever the tile
    full = EpilogueSpec(beta=True, e_op=EOp.ADD, permute=Permute.HEAD_SPLIT)
    for tile in ((128, 256, 64), (128, 96, 64), (256, 128, 64)):
        assert rules.epilogue_smem(tile, Schedule.COOPERATIVE, SplitMode.SERIAL, full) == 8 * 16 * 68 * 4
        for partial in (dataclasses.replace(full, beta=False), dataclasses.replace(full, e_op=EOp.NONE),
                        dataclasses.replace(full, permute=Permute.NONE)):
            assert rules.epilogue_smem(tile, Schedule.COOPERATIVE, SplitMode.SERIAL, partial) == 8 * 16 * 36 * 4
    assert rules.epilogue_smem((64, 96, 64), Schedule.PINGPONG, SplitMode.SERIAL, full) == 8 * 16 * 36 * 4
    config = " ".join(open(header.replace("sm90_tma_epilogue.cuh", "sm90_config.cuh")).read().split())
    assert f"constexpr int kSmemLimit = {rules.SMEM_LIMIT};" in config


def test_mixed_backends_in_one_op_and_the_manifest_round_trip():
    text = SM90_YAML.replace("    variants:\n      backend: sm90\n", "    arch: [80]\n    variants:\n"
                             "      - {tile: [[64, 64, 64]], stages: [3], split_k: {serial: [1]}}\n"
                             "      - backend: sm90\n").replace("      tile: [[128", "        tile: [[128").replace(
        "      split_k:\n        serial: [1, 2]\n        parallel: [2, 4]\n",
        "        split_k: {serial: [1, 2], parallel: [2, 4]}\n")
    (op,) = parse_config(text, "x.yaml").ops
    assert [v.backend for v in op.variants] == [Backend.SM80, Backend.SM90, Backend.SM90]
    assert op.archs == (80,)
    from cutlass_splitk import artifact
    from cutlass_splitk.spec import OpSpec
    assert OpSpec.from_json(json.loads(json.dumps(artifact.describe(op)))) == op
    d = artifact.describe(op)["variants"][1]
    assert d == {"name": "h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8", "backend": "sm90", "mode": "serial",
                 "tile": [128, 128, 64], "alignment": 8, "cluster": [1, 1], "schedule": "cooperative", "stages": 0,
                 "splits": [1, 2]}
    units = codegen.render(parse_config(text, "x.yaml"))
    assert [(u.name, u.backend, u.targets) for u in units] == [
        ("sm80", "sm80", ("80",)),
        ("sm90", "sm90", ("90a",)),
        ("partial_f16_tn_t128x128x64", "sm90", ("90a",)),
        ("library", "", ("80",)),
    ]


def test_generated_sm90_units_byte_for_byte():
    units = codegen.render(parse_config(SM90_YAML, "x.yaml"))
    group, partial = units[0], units[1]
    assert group.text == """\
// generated from x.yaml by cutlass-splitk; do not edit
// op h_f16, sm90 groups: sm90_t128x128x64_c1x1_coop_sauto_a8
#include "cks_sm90.cuh"

// sm90_t128x128x64_c1x1_coop_sauto_a8
namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8 {
using Gemm = cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true, /*tile=*/128, 128, 64,
    /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>;
}  // namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8
extern template struct cks::sm90::PartialGemm<group_sm90_t128x128x64_c1x1_coop_sauto_a8::Gemm>;  // defined in its own unit
namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8 {
using Config = cks::sm90::VariantConfig<Gemm, cks::Act::kGelu, cks::EOp::kMul, cks::Bias::kPerCol, cks::Permute::k0213, /*beta=*/false>;

// h_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_h_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::ParallelGemm<Config>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_h_f16_parallel_sm90_t128x128x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::ParallelGemm<Config>>(*args, static_cast<cudaStream_t>(stream)); });
}

// h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8
extern "C" CKS_EXPORT int cks_h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8_query(CksArgs const* args, CksQuery* query) {
  return cks::entry([&] { return cks::sm90::SplitKGemm<Config, false>::query(*args, *query); });
}
extern "C" CKS_EXPORT int cks_h_f16_serial_sm90_t128x128x64_c1x1_coop_sauto_a8_run(CksArgs const* args, void* stream) {
  return cks::entry([&] { return cks::replayed_run<cks::sm90::SplitKGemm<Config, false>>(*args, static_cast<cudaStream_t>(stream)); });
}
}  // namespace group_sm90_t128x128x64_c1x1_coop_sauto_a8
"""
    assert partial.name == "partial_f16_tn_t128x128x64" and partial.variants == ()
    assert partial.text == """\
// generated from x.yaml by cutlass-splitk; do not edit
// sm90 partial GEMMs (f32 partials of K slices), f16 tn, tiles t128x128x64: one unit shared by every op
// of this config that uses the same ones (same text, so the object cache compiles it once)
#include "sm90_partial_impl.cuh"

template struct cks::sm90::PartialGemm<cks::sm90::GemmConfig<cutlass::half_t, /*B column-major=*/true,
    /*tile=*/128, 128, 64, /*cluster=*/1, 1, cks::sm90::Schedule::kCooperative, /*stages=*/0>>;
"""
    # the partial GEMM does not depend on the op: another op of the same dtype gets the same text
    other = parse_config(SM90_YAML.replace("h_f16", "other_f16").replace(
        "{bias: per_col, activation: gelu, e_op: mul, permute: head_split}", "{bias: per_row}"), "x.yaml")
    assert codegen.render(other)[1].text == partial.text


@pytest.mark.nvcc
def test_sm90_units_compile_and_link(tmp_path, monkeypatch):
    """A parallel-only sm90 group and its partial GEMM, built for sm_90a by the real nvcc (the
    serial kernel is covered on the GPU; its compile costs ~45 s more)."""
    from cutlass_splitk.build import build

    config = tmp_path / "h.yaml"
    config.write_text(SM90_YAML.replace("        serial: [1, 2]\n", ""))
    result = build(config, out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", jobs=2, progress=False)
    assert result.compiled == 3  # group, partial GEMM, library
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (variant,) = manifest["ops"]["h_f16"]["variants"]
    assert variant["backend"] == "sm90" and variant["mode"] == "parallel"
    # the partial GEMM's placement setter (sm90_gpc_scheduler.cuh), exported and checking its arguments
    from cutlass_splitk.runtime import abi

    bound = abi.bind(tmp_path / "out" / "libh_f16.so", [variant["name"]])
    setter = bound.set_placement
    assert setter is not None
    assert [setter(0, 2, 3, bytes([0, 1, 0])), setter(63, 1, 0, None), setter(0, 1, 255, bytes(255))] == [0, 0, 0]
    refused = [setter(-1, 2, 1, b"\0"), setter(64, 2, 1, b"\0"), setter(0, 4, 1, b"\0"), setter(0, 0, 1, b"\0"),
               setter(0, 2, 256, bytes(256)), setter(0, 2, -1, None), setter(0, 2, 1, None)]
    assert refused == [abi.STATUS_INVALID_PROBLEM] * 7
    # parallel split-K: f32 partials, and with CUTLASS_SPLITK_TAIL=1 (read at every query) one zeroed int32 counter
    # per 128x128 output tile for the reduction inside the partial GEMM (sm90_tail.cuh): 300 x 520 is 3 x 5 tiles;
    # K = 1000 at split 2 is two 512-deep slices
    import ctypes

    args = abi.CksArgs()
    args.abi_version, args.m, args.n, args.k, args.split_k = abi.ABI_VERSION, 300, 520, 1000, 2
    args.a, args.lda, args.b, args.ldb, args.lde, args.d, args.ldd = 0x10000, 1000, 0x20000, 1000, 520, 0x30000, 520
    args.e, args.permute_s, args.permute_h, args.alpha = 0x40000, 30, 13, 1.0
    for setting, counters in ((None, 0), ("1", 4 * 3 * 5), ("0", 0), ("free", 4 * 3 * 5)):
        if setting is None:
            monkeypatch.delenv("CUTLASS_SPLITK_TAIL", raising=False)
        else:
            monkeypatch.setenv("CUTLASS_SPLITK_TAIL", setting)
        q = abi.CksQuery()
        assert bound.query[variant["name"]](ctypes.byref(args), ctypes.byref(q)) == 0, bound.last_error()
        assert (q.tiles_m, q.tiles_n, q.k_partitions) == (3, 5, 2)
        assert (q.semaphore_bytes, q.partial_bytes) == (counters, 4 * 2 * 300 * 520), setting


@pytest.mark.nvcc
def test_tma_l2_promotion(tmp_path):
    """sm90_tma_promotion.cuh's rule (round 14), on hand-made descriptors and on the descriptors
    CUTLASS really encodes for our main loops in the scope the launches use. CUTLASS passes f16 /
    bf16 as UINT16, and a 128-deep K tile as the same 64-wide boxes as a 64-deep one: a rule written
    on the descriptor alone first never fired on the GPU, then fired on both (session 15). The
    64-deep K tiles of aligned problems get 256 bytes for A and B; K = 1000 rows, a base 128 bytes
    off and the 128-deep tiles (the decode tiles, swapped or not) keep 128. The same probe reads the
    L2 policy each main loop's parameters give its loads (sm90_mainloop.cuh's rule). Compiled by the real
    nvcc and run on the host, no GPU (tests/data/tma_promotion_probe.cu)."""
    import subprocess

    from cutlass_splitk.cudakit import find_cutlass, find_nvcc

    root = Path(__file__).resolve().parents[1] / "cutlass_splitk" / "templates"
    exe = tmp_path / "probe"
    subprocess.run([str(find_nvcc()), "-std=c++17", "-DNDEBUG", "--expt-relaxed-constexpr",
                    "-gencode=arch=compute_90a,code=sm_90a", f"-I{root}",
                    f"-I{root.parent / 'backends' / 'sm90' / 'templates'}", f"-I{find_cutlass().include}",
                    str(Path(__file__).parent / "data" / "tma_promotion_probe.cu"), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert dict(line.split(" ", 1) for line in out.splitlines()) == {
        # the rule itself: only inside a promoting scope, only 2-byte boxes of 128-byte rows with
        # every row on a 256-byte boundary
        "rule_outside_a_promoting_scope": "128",
        "rule_k64_aligned_u16": "256", "rule_k64_aligned_float16": "256", "rule_k64_aligned_bfloat16": "256",
        "rule_rows_2000_bytes": "128", "rule_base_128_bytes_off": "128", "rule_batch_stride_128_bytes": "128",
        "rule_box_of_256_bytes": "128", "rule_box_of_64_bytes": "128", "rule_f32_partials": "128",
        "rule_u32_box_of_128_bytes": "128", "rule_rank_1": "128",
        # what the main loops' descriptors get
        "coop_128x128x64_tn_k65536": "256 256",
        "coop_128x64x64_tn_bf16_k8192": "256 256",
        "coop_128x128x64_tn_k1000": "128 128",
        "coop_128x128x64_tn_a_plus_128": "128 256",
        "pp_64x128x128_tn": "128 128",
        "pp_64x16x128_swap_tn": "128 128",
        "coop_128x128x64_nn": "256 256",
        "coop_128x128x64_c2x1_m256": "256 256",
        "coop_128x128x64_c2x1_m257": "256 256",
        "pp_64x16x128_swap_m64": "128 128",
        "pp_64x16x128_swap_m1_k4096": "128 128",
        "pp_64x128x128_l2_unknown": "128 128",
        "coop_256x128x64_m256_k65536": "256 256",
        # the L2 policy of the main loop's loads (sm90_mainloop.cuh, round 26), "A B" of the kernel:
        # EVICT_FIRST on the weight (the kernel's B, or its A when swapped) where one cluster of tile
        # rows reads it and it is at least the L2's size
        "hints_coop_128x128x64_tn_k65536": "normal normal",
        "hints_coop_128x64x64_tn_bf16_k8192": "normal first",
        "hints_coop_128x128x64_tn_k1000": "normal normal",
        "hints_coop_128x128x64_tn_a_plus_128": "normal normal",
        "hints_pp_64x128x128_tn": "normal first",
        "hints_pp_64x16x128_swap_tn": "first normal",
        "hints_coop_128x128x64_nn": "normal normal",
        "hints_coop_128x128x64_c2x1_m256": "normal first",
        "hints_coop_128x128x64_c2x1_m257": "normal normal",
        "hints_pp_64x16x128_swap_m64": "normal normal",
        "hints_pp_64x16x128_swap_m1_k4096": "normal normal",
        "hints_pp_64x128x128_l2_unknown": "normal normal",
        "hints_coop_256x128x64_m256_k65536": "normal first",
    }


@pytest.mark.nvcc
def test_partial_gemm_releases_the_reduction_before_its_epilogue(tmp_path):
    """Parallel split-K's partial GEMM unit compiles CUTLASS's kernel with its grid-dependency
    control on (sm90_partial_impl.cuh, round 27): each CTA executes griddepcontrol.launch_dependents
    before its last tile's epilogue, so the PDL-launched reduction is scheduled before the GEMM's
    CTAs exit (CUTLASS emits that instruction only under the define). The generated partial unit of
    SM90_YAML, compiled to PTX by the real nvcc."""
    partial = codegen.render(parse_config(SM90_YAML, "x.yaml"))[1]
    assert compile_ptx(partial.text, tmp_path).count("griddepcontrol.launch_dependents;") >= 1


def run_nvcc(source_text: str, tmp_path: Path, *flags: str):
    """A unit including the sm90 templates given to the real nvcc with ``flags`` (the output's options):
    the finished process (stderr as text)."""
    import subprocess

    from cutlass_splitk.cudakit import find_cutlass, find_nvcc

    source = tmp_path / "unit.cu"
    source.write_text(source_text)
    root = Path(__file__).resolve().parents[1] / "cutlass_splitk"
    return subprocess.run([str(find_nvcc()), "-std=c++17", "-DNDEBUG", "--expt-relaxed-constexpr",
                           f"-I{root / 'templates'}", f"-I{root / 'backends' / 'sm90' / 'templates'}",
                           f"-I{find_cutlass().include}", *flags, str(source)], capture_output=True, text=True)


def compile_ptx(source_text: str, tmp_path: Path) -> str:
    """A generated unit compiled to sm_90a PTX by the real nvcc: the PTX text (CalledProcessError if it
    does not compile)."""
    ptx = tmp_path / "unit.ptx"
    run_nvcc(source_text, tmp_path, "-gencode=arch=compute_90a,code=compute_90a", "-ptx", "-o",
             str(ptx)).check_returncode()
    return ptx.read_text()


def compile_object(source_text: str, tmp_path: Path) -> None:
    """A unit including the sm90 templates compiled for sm_90a by the real nvcc (its static_asserts
    evaluated); fails the test with nvcc's errors."""
    done = run_nvcc(source_text, tmp_path, "-gencode=arch=compute_90a,code=sm_90a", "-c", "-o",
                    str(tmp_path / "unit.o"))
    assert done.returncode == 0, "\n".join(line for line in done.stderr.splitlines() if "error" in line)[:3000]


@pytest.mark.nvcc
def test_in_kernel_modes_without_e_or_permute_store_through_tma(tmp_path):
    """An op without E and without a permuted store gets CUTLASS's TMA epilogue in its in-kernel
    modes (sm90_tma_epilogue.cuh, round 32): its serial / stream-K kernel stores D with TMA bulk
    tensor stores, whose shared memory fits what the stage rule leaves the epilogue (a
    static_assert), and the group names the op's beta. The generated unit of a serial + stream-K
    group with a per-row bias, compiled to PTX by the real nvcc."""
    text = SM90_YAML.replace("{bias: per_col, activation: gelu, e_op: mul, permute: head_split}",
                             "{alpha: true, beta: true, bias: per_row, activation: leaky_relu}").replace(
        "        parallel: [2, 4]\n", "        stream_k: true\n")
    (group,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name == "sm90"]
    assert "cks::Bias::kPerRow, cks::Permute::kNone, /*beta=*/true>;" in group.text
    stores = [line for line in compile_ptx(group.text, tmp_path).splitlines()
              if "cp.async.bulk.tensor" in line and ".global.shared::cta" in line]
    assert stores, "no TMA store in the in-kernel kernels"


def test_explicit_stages_leave_three_staged_buffers_their_budget():
    """An op with beta, E and a permute on a cooperative tile whose budget was 32 columns (128x256: its
    accumulators fill the registers) stages C, E and D in three buffers: the 64-column budget, so an
    explicit stage count that fits beside 32 columns' is pruned with the reason (a smaller one stays),
    and the same grid without beta keeps both."""
    text = SM90_YAML.replace("[[128, 128, 64]]", "[[128, 256, 64]]\n      stages: [3, 4]").replace(
        "        serial: [1, 2]\n        parallel: [2, 4]\n", "        serial: [1]\n")
    assert [v.name for v in parse_config(text, "x.yaml").ops[0].variants] == [
        "h_f16_serial_sm90_t128x256x64_c1x1_coop_s3_a8", "h_f16_serial_sm90_t128x256x64_c1x1_coop_s4_a8"]
    config = parse_config(text.replace("{bias: per_col,", "{beta: true, bias: per_col,"), "x.yaml")
    assert [v.name for v in config.ops[0].variants] == ["h_f16_serial_sm90_t128x256x64_c1x1_coop_s3_a8"]
    assert [p.reason for p in config.pruned] == [
        f"shared memory {4 * 49152 + 8 * 16 * 68 * 4 + rules.SMEM_RESERVED} B (4 stages + epilogue) > "
        f"{rules.SMEM_LIMIT} B limit of sm_90"]


@pytest.mark.nvcc
@pytest.mark.parametrize("permute, rank", [("head_split", 4), ("qkv_split", 5)])
def test_in_kernel_modes_with_e_and_a_permute_store_through_tma(tmp_path, permute, rank):
    """An op with E and a permuted store takes the same TMA epilogue (session 43, round 68): E is a
    TMA-loaded leaf of the visitor tree, and the tree's root (sm90_permuted_store.cuh) stores each
    subtile as one box of the output seen as a rank-4 (head split) or rank-5 (qkv split) tensor, from
    one thread (the 16-byte vector stores of views whose subtiles are not boxes are in the same kernel).
    The serial group of the chain op, compiled to PTX by the real nvcc."""
    text = SM90_YAML.replace("head_split", permute).replace("        parallel: [2, 4]\n", "")
    (group,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name == "sm90"]
    ptx = compile_ptx(group.text, tmp_path)
    stores = [line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line and ".global.shared::cta" in line]
    assert stores and all(f".{rank}d." in line for line in stores), stores
    assert "st.global.v4" in ptx  # the views whose subtiles are not boxes


@pytest.mark.nvcc
def test_every_accepted_in_kernel_epilogue_fits_its_budget(tmp_path):
    """Whatever the validator accepts builds: for tiles of each kind of budget (64 or 32 columns, 128- or
    64-row subtiles, both schedules) and every epilogue's shared-memory shape (beta, E, permute, bias),
    each serial variant rules.prune keeps instantiates its TMA epilogue config, whose static_assert holds
    one buffer of each kind to kEpilogueSmem (the kernel's fallback where two do not fit beside its stages).
    Host code only, compiled by the real nvcc."""
    import itertools

    from cutlass_splitk.spec import BiasMode, DType

    tiles = [(128, 128, 64), (128, 96, 64), (128, 256, 64), (256, 128, 64), (256, 64, 64), (128, 32, 64),
             (64, 128, 64), (64, 96, 64), (64, 256, 64), (128, 160, 64)]
    enum = {EOp.NONE: "kNone", EOp.ADD: "kAdd", Permute.NONE: "kNone", Permute.HEAD_SPLIT: "k0213",
            Permute.QKV_SPLIT: "k20314", BiasMode.NONE: "kNone", BiasMode.PER_COL: "kPerCol", BiasMode.PER_ROW: "kPerRow"}
    lines = []
    for tile, schedule in itertools.product(tiles, Schedule):
        for beta, e_op, permute, bias in itertools.product((False, True), (EOp.NONE, EOp.ADD), tuple(Permute), tuple(BiasMode)):
            epilogue = EpilogueSpec(beta=beta, bias=bias, e_op=e_op, permute=permute)
            kv = KernelVariant("x", SplitMode.SERIAL, tile, 8, Sm90Params((1, 1), schedule, 0, False), (1,))
            if rules.prune(kv, DType.F16, epilogue):
                continue
            kind = "kCooperative" if schedule is Schedule.COOPERATIVE else "kPingpong"
            lines.append(f"static_assert(sizeof(cks::sm90::TmaEpilogueConfig<cks::sm90::VariantConfig<cks::sm90::GemmConfig<"
                         f"cutlass::half_t, true, {tile[0]}, {tile[1]}, 64, 1, 1, cks::sm90::Schedule::{kind}, 0>, "
                         f"cks::Act::kIdentity, cks::EOp::{enum[e_op]}, cks::Bias::{enum[bias]}, "
                         f"cks::Permute::{enum[permute]}, {str(beta).lower()}>>) > 0, \"\");")
    assert len(lines) > 400  # every tile kind has some accepted serial variants
    compile_object('#include "sm90_config.cuh"\n#include "sm90_tma_epilogue.cuh"\n' + "\n".join(lines) + "\n", tmp_path)


@pytest.mark.nvcc
def test_the_most_stages_the_validator_accepts_fit_the_kernel(tmp_path):
    """Whatever the validator accepts builds, explicit stage counts too: for each tile and schedule of
    the test above and four epilogue shapes (none of C, E and a permute; C alone; E with a permute; all
    three), the largest stage count rules.prune keeps for a serial variant instantiates its kernel type,
    whose static_assert holds its whole shared storage (main loop, epilogue, barriers) to sm_90's limit.
    Host code only, compiled by the real nvcc."""
    import itertools

    from cutlass_splitk.spec import DType

    tiles = [(128, 128, 64), (128, 96, 64), (128, 256, 64), (256, 128, 64), (256, 64, 64), (128, 32, 64),
             (64, 128, 64), (64, 96, 64), (64, 256, 64), (128, 160, 64)]
    shapes = [EpilogueSpec(), EpilogueSpec(beta=True), EpilogueSpec(e_op=EOp.ADD, permute=Permute.HEAD_SPLIT),
              EpilogueSpec(beta=True, e_op=EOp.ADD, permute=Permute.HEAD_SPLIT)]
    lines = []
    for tile, schedule, epilogue in itertools.product(tiles, Schedule, shapes):
        accepted = [st for st in range(2, rules.MAX_STAGES + 1) if not rules.prune(
            KernelVariant("x", SplitMode.SERIAL, tile, 8, Sm90Params((1, 1), schedule, st, False), (1,)), DType.F16,
            epilogue)]
        if not accepted:
            continue
        kind = "kCooperative" if schedule is Schedule.COOPERATIVE else "kPingpong"
        e_op, permute = ("kAdd", "k0213") if epilogue.e_op is EOp.ADD else ("kNone", "kNone")
        lines.append(f"static_assert(sizeof(cks::sm90::SplitKGemm<cks::sm90::VariantConfig<cks::sm90::GemmConfig<"
                     f"cutlass::half_t, true, {tile[0]}, {tile[1]}, 64, 1, 1, cks::sm90::Schedule::{kind}, "
                     f"{max(accepted)}>, cks::Act::kIdentity, cks::EOp::{e_op}, cks::Bias::kPerCol, "
                     f"cks::Permute::{permute}, {str(epilogue.beta).lower()}>, false, true>) > 0, \"\");")
    assert len(lines) > 50
    compile_object('#include "cks_sm90.cuh"\n' + "\n".join(lines) + "\n", tmp_path)


@pytest.mark.nvcc
def test_the_most_stages_the_validator_accepts_fit_the_partial_gemm(tmp_path):
    """The same for parallel split-K's partial GEMM (its epilogue CUTLASS's TMA store of f32 partials; the
    kernel has no static_assert of its own): for tiles M 64-256, N every standard wgmma width from 16, K
    32-128, both schedules, swapped or not, the largest stage count rules.prune keeps for a parallel
    variant gives a kernel whose shared storage fits sm_90's limit. Host code only, the real nvcc."""
    import itertools

    from cutlass_splitk.spec import DType

    lines = []
    for m, n, k, schedule, swap in itertools.product((64, 128, 256), (16, 32, 64, 96, 128, 192, 256), (32, 64, 128),
                                                     Schedule, (False, True)):
        accepted = [st for st in range(2, rules.MAX_STAGES + 1) if not rules.prune(
            KernelVariant("x", SplitMode.PARALLEL, (m, n, k), 8, Sm90Params((1, 1), schedule, st, swap), (2,)),
            DType.F16, EpilogueSpec())]
        if accepted:
            kind = "kCooperative" if schedule is Schedule.COOPERATIVE else "kPingpong"
            kernel = (f"cks::sm90::PartialKernel<cks::sm90::GemmConfig<cutlass::half_t, true, {m}, {n}, {k}, 1, 1, "
                      f"cks::sm90::Schedule::{kind}, {max(accepted)}, {str(swap).lower()}>>::Kernel")
            lines.append(f'static_assert({kernel}::SharedStorageSize <= {rules.SMEM_LIMIT}, '
                         f'"{m}x{n}x{k} {kind} swap={swap}: {max(accepted)} stages");')
    assert len(lines) > 150
    compile_object('#include "sm90_partial_impl.cuh"\n' + "\n".join(lines) + "\n", tmp_path)


@pytest.mark.nvcc
def test_in_kernel_modes_with_beta_e_and_a_permute_on_a_32_column_budget_compile(tmp_path):
    """C, E and a permuted D staged in three buffers on a cooperative tile whose budget was 32 columns
    (N not a multiple of 64): one buffer of each outgrew it, and the unit failed its static_assert for a
    config the validator accepted (session 44's fuzzer, seed 20264401). The budget is 64 columns there
    (rules.three_staged_buffers): the serial group compiles, with its TMA stores."""
    text = SM90_YAML.replace("[[128, 128, 64]]", "[[128, 96, 64]]").replace(
        "{bias: per_col,", "{beta: true, bias: per_col,").replace("        parallel: [2, 4]\n", "")
    (group,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name == "sm90"]
    assert "/*beta=*/true>;" in group.text
    stores = [line for line in compile_ptx(group.text, tmp_path).splitlines()
              if "cp.async.bulk.tensor" in line and ".global.shared::cta" in line]
    assert stores and all(".4d." in line for line in stores), stores


@pytest.mark.nvcc
def test_the_kernel_gives_its_epilogue_what_the_stages_leave(tmp_path):
    """The chain op's 128x256 tile (bias, GELU, E, head split): its budget (18 KB) holds one buffer of E and one
    of D, but its four main-loop stages (the count the budget prices) leave ~35 KB, and the kernel takes two of
    each there (round 69: 5-12 % faster on mid-size shapes, the same bits) in both clusters; the ops' other
    in-kernel tiles already had two. A tile whose stages leave too little for two (128x160 with C, E and D: six
    buffers) keeps one of each. Every kernel's whole storage stays within sm_90's limit (SplitKGemm's
    static_assert). Host code only, compiled by the real nvcc."""
    def cfg(m, n, cm, cn, e_op, permute, beta):
        return (f"cks::sm90::VariantConfig<cks::sm90::GemmConfig<cutlass::half_t, true, {m}, {n}, 64, {cm}, {cn}, "
                f"cks::sm90::Schedule::kCooperative, 0>, cks::Act::kGelu, cks::EOp::{e_op}, cks::Bias::kPerCol, "
                f"cks::Permute::{permute}, {beta}>")

    lines = []
    for cluster in ((2, 1), (1, 2)):
        chain = cfg(128, 256, *cluster, "kMul", "k0213", "false")
        lines += [f"static_assert(!cks::sm90::TmaEpilogueConfig<{chain}>::Build<2, 2>::kFits, \"one of each in the budget\");",
                  f"static_assert(cks::sm90::SplitKGemm<{chain}, false, true>::Epilogue::kDouble, \"two of each in the kernel\");",
                  f"static_assert(cks::sm90::SplitKGemm<{chain}, false, false>::Epilogue::kDouble, \"split-K too\");"]
    lines.append(f"static_assert(!cks::sm90::SplitKGemm<{cfg(128, 160, 1, 1, 'kAdd', 'k0213', 'true')}, false, true>"
                 f"::Epilogue::kDouble, \"six buffers do not fit beside five stages\");")
    compile_object('#include "cks_sm90.cuh"\n' + "\n".join(lines) + "\n", tmp_path)


@pytest.mark.nvcc
def test_parallel_groups_of_one_op_share_one_reduction_kernel(tmp_path):
    """The reduction kernel depends only on what the epilogue does (cks::EpilogueKey), not on the GEMM
    config: an op's unit with four parallel-only groups (two tiles, two clusters each) instantiates it
    once, where it used to instantiate one per group. Compiled to PTX by the real nvcc."""
    text = SM90_YAML.replace("      tile: [[128, 128, 64]]\n", "      tile: [[128, 128, 64], [64, 128, 64]]\n      cluster: [[1, 1], [1, 2]]\n").replace(
        "        serial: [1, 2]\n", "")
    (group,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name == "sm90"]
    assert group.text.count("_run(CksArgs const* args") == 4
    entries = re.findall(r"\.entry (\w+)", compile_ptx(group.text, tmp_path))
    assert len(entries) == 1 and "reduce_epilogue_kernel" in entries[0] and "EpilogueOnly" in entries[0], entries


def test_split_one_only_serial_variants_take_the_persistent_scheduler():
    """A serial variant whose only split is 1 has no in-kernel split-K to fix up: its entry points
    instantiate SplitKGemm with kSplitOne (CUTLASS's persistent scheduler, round 33); serial
    variants with more splits, stream-K and parallel keep theirs."""
    text = SM90_YAML.replace("        serial: [1, 2]\n", "        serial: [1]\n        stream_k: true\n")
    (group,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name == "sm90"]
    impls = sorted(set(re.findall(r"cks::(?:replayed_run<)?(cks::sm90::\w+<Config[^>]*>)", group.text)))
    assert impls == ["cks::sm90::ParallelGemm<Config>", "cks::sm90::SplitKGemm<Config, false, /*split 1 only=*/true>",
                     "cks::sm90::SplitKGemm<Config, true>"]
    (two,) = [u for u in codegen.render(parse_config(SM90_YAML, "x.yaml")) if u.name == "sm90"]
    assert "split 1 only" not in two.text and "cks::sm90::SplitKGemm<Config, false>" in two.text


@pytest.mark.parametrize("n, extended", [(16, False), (32, False), (48, True), (64, False), (80, True), (96, False),
                                         (112, True), (128, False), (160, True), (192, False), (224, True),
                                         (240, True), (256, False)])
def test_which_tile_widths_need_a_wgmma_of_their_own(n, extended):
    """CUTLASS's builder picks the widest wgmma of 8, 16, 32, 64, 96, 128, 192, 256 dividing the tile N
    (cute::GMMA::ss_op_selector): every other width needs its unit to carry its own instruction."""
    assert rules.extended_mma((128, n, 64)) is extended


def test_units_of_other_width_tiles_carry_their_wgmma():
    """A 112-wide tile ran seven m64n16k16 per k-step, 50-100x slower (round 64): a wide tile's partial
    unit, and the group unit holding its serial or stream-K variants, define that width's m64nNk16 for the
    op's dtype after their includes (wide_wgmma.cuh.in); the units of standard widths, and a group unit
    whose wide group is parallel only (its kernel is the partial unit's), stay as they were. No unit defines
    CUTLASS's CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED (37 s more parsing per unit)."""
    text = SM90_YAML.replace("      tile: [[128, 128, 64]]\n", "      tile: [[128, 160, 64], [128, 128, 64]]\n")
    units = {u.name: u.text for u in codegen.render(parse_config(text, "x.yaml"))}
    head = ("// generated from x.yaml by cutlass-splitk; do not edit\n"
            "// op h_f16, sm90 groups: sm90_t128x128x64_c1x1_coop_sauto_a8, sm90_t128x160x64_c1x1_coop_sauto_a8\n"
            '#include "cks_sm90.cuh"\n'
            "// wgmma m64n160k16 (sm90_wide_mma.cuh): the tile N 160 in one instruction, 80 f32 accumulators a thread\n"
            "namespace cks {\nnamespace sm90 {\n"
            "template <cute::GMMA::Major kMajorA, cute::GMMA::Major kMajorB>\n"
            "struct WideWgmmaSS<cutlass::half_t, 160, kMajorA, kMajorB> {\n")
    assert units["sm90"].startswith(head)
    fma = units["sm90"][len(head):units["sm90"].index("#else")]
    assert "      float& d072, float& d073, float& d074, float& d075, float& d076, float& d077, float& d078, " \
           "float& d079,\n      cute::GMMA::ScaleOut const scale_d = cute::GMMA::ScaleOut::One) {\n" in fma
    assert ('"wgmma.mma_async.sync.aligned.m64n160k16.f32.f16.f16 {"\n'
            '                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "\n') in fma
    assert fma.count('"%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"\n'
                     '                 "}, %80, %81, p, 1, 1, %83, %84;\\n}\\n"\n') == 1
    assert fma.count('setp.ne.b32 p, %82, 0;') == 1 and fma.count('"+f"(d079)\n') == 1 and "bf16" not in fma
    # both tiles' partial GEMMs in one unit (two shapes a unit), the wide one's instruction after the includes
    partial = units["partial_f16_tn_t128x128x64_t128x160x64"]
    assert '#include "sm90_partial_impl.cuh"\n// wgmma m64n160k16 ' in partial
    assert partial.count("template struct cks::sm90::PartialGemm<") == 2 and partial.count("WideWgmmaSS<") == 1
    standard = codegen.render(parse_config(SM90_YAML, "x.yaml"))[1].text
    assert "wgmma" not in standard
    assert not any("EXTENDED" in t for t in units.values())
    # 112 columns: parallel only (the in-kernel epilogue stages 32-column chunks), so only its partial unit
    wide = SM90_YAML.replace("      tile: [[128, 128, 64]]\n", "      tile: [[128, 112, 64]]\n")
    units = {u.name: u.text for u in codegen.render(parse_config(wide, "x.yaml"))}
    assert "wgmma" not in units["sm90"]
    partial = units["partial_f16_tn_t128x112x64"]
    assert '#include "sm90_partial_impl.cuh"\n// wgmma m64n112k16 (sm90_wide_mma.cuh): the tile N 112 in one ' \
           'instruction, 56 f32 accumulators a thread\n' in partial


@pytest.mark.nvcc
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_other_width_tiles_run_one_wgmma_across_the_tile(tmp_path, dtype):
    """The 112-wide partial unit, compiled to PTX by the real nvcc: its MMAs are m64n112k16 of its dtype.
    Without its generated instruction it does not compile, with a message naming the fix
    (sm90_wide_mma.cuh). The op's unit of the same parallel-only group compiles without one."""
    import subprocess

    text = SM90_YAML.replace("      tile: [[128, 128, 64]]\n", "      tile: [[128, 112, 64]]\n").replace(
        "        serial: [1, 2]\n", "").replace("dtype: f16", f"dtype: {dtype}")
    (partial,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name.startswith("partial_")]
    start, end = partial.text.index("// wgmma m64n112k16"), partial.text.index("\ntemplate struct cks::sm90::Partial")
    with pytest.raises(subprocess.CalledProcessError) as failed:
        compile_ptx(partial.text[:start] + partial.text[end:], tmp_path)
    assert "no m64nNk16 wgmma was generated for this tile N in this unit" in failed.value.stderr
    shapes = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+\.f32\.\w+\.\w+)",
                            compile_ptx(partial.text, tmp_path)))
    assert shapes == {f"m64n112k16.f32.{dtype}.{dtype}"}
    # the op's unit of that parallel-only group does not instantiate the main loop: it compiles without one
    (group,) = [u for u in codegen.render(parse_config(text, "x.yaml")) if u.name == "sm90"]
    assert "wgmma" not in group.text and ".entry" in compile_ptx(group.text, tmp_path)


def test_sm90_templates_include_cutlass_gemm_piece_by_piece():
    """CUTLASS's umbrella headers also parse every sm70-sm120 collective, builder and kernel: ~2.6 s of each sm90
    unit's ~15 s of headers on the 2-core build machine, 14 units in configs/default.yaml (BENCHMARKS.md, session 46).
    The sm90 templates include sm90_cutlass_gemm.cuh, the pieces they instantiate, instead."""
    from cutlass_splitk.backends.sm90 import TEMPLATE_DIR

    umbrellas = ("cutlass/gemm/collective/collective_builder.hpp", "cutlass/gemm/collective/collective_mma.hpp",
                 "cutlass/gemm/kernel/gemm_universal.hpp")
    including = {path.name: [u for u in umbrellas if f'#include "{u}"' in path.read_text()]
                 for path in sorted(TEMPLATE_DIR.iterdir()) if path.is_file()}
    assert {name: found for name, found in including.items() if found} == {}
    assert '#include "sm90_cutlass_gemm.cuh"' in (TEMPLATE_DIR / "sm90_config.cuh").read_text()
