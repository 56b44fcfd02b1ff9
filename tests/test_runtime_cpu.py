"""The runtime on the CPU: loading built directories, argument checking, and dispatch through a
fake library (no GPU anywhere). Tests marked ``nvcc`` use the real library built once per
session by the ``tiny_build`` fixture (conftest.py)."""

from __future__ import annotations

import ctypes
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the runtime needs torch (pip install torch)")
import torch.nn.functional as F  # noqa: E402

import cutlass_splitk
from cks_testutil import CONFIGS, MINIMAL_OP_YAML, MINIMAL_VARIANTS
from fakelib import FAKE_H100, FakePlatform
from cutlass_splitk import artifact
from cutlass_splitk.config import load_config, parse_config
from cutlass_splitk.runtime import KernelError, Library, LibraryError, Op, PaddingWarning
from cutlass_splitk.runtime import abi, dispatch, operands, timemodel, torch_op
from cutlass_splitk.runtime.platform import CudaPlatform

H = torch.float16
BF = torch.bfloat16


def rebuild(directory) -> str:
    return f"rebuild it with: cutlass-splitk build <config.yaml> -o {directory}"


def load_error(directory, **kwargs) -> str:
    with pytest.raises(LibraryError) as info:
        cutlass_splitk.load(directory, **kwargs)
    return str(info.value)


# --- loader errors (no nvcc needed) ------------------------------------------------------------------------

TINY_DESCRIPTION = artifact.describe(parse_config(MINIMAL_OP_YAML, "x.yaml").ops[0])


def write_built_dir(directory: Path, so_bytes=b"\x7fELF not really", sha=None, manifest_extra=None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if so_bytes is not None:
        (directory / "libtiny_f16.so").write_bytes(so_bytes)
    manifest = {
        "abi_version": 1,
        "build_hash": "0123456789abcdef",
        "config": "x.yaml",
        "toolchain": "test",
        "libraries": {"tiny_f16": {"file": "libtiny_f16.so",
                                   "sha256": sha or hashlib.sha256(so_bytes or b"").hexdigest()}},
        "ops": {"tiny_f16": TINY_DESCRIPTION},
    }
    manifest["build_hash"] = artifact.build_hash(manifest["libraries"])  # load() checks it
    manifest.update(manifest_extra or {})
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def test_load_missing_directory(tmp_path):
    d = tmp_path / "nope"
    assert load_error(d) == f"{d}: no such directory; {rebuild(d)}"


def test_load_missing_manifest(tmp_path):
    assert load_error(tmp_path) == f"{tmp_path}/manifest.json: missing; {rebuild(tmp_path)}"


def test_load_corrupt_manifest(tmp_path):
    (tmp_path / "manifest.json").write_text("{not json")
    assert load_error(tmp_path) == (f"{tmp_path}/manifest.json: corrupt (Expecting property name enclosed in "
                                    f"double quotes: line 1 column 2 (char 1)); {rebuild(tmp_path)}")


def test_load_binary_manifest(tmp_path):
    (tmp_path / "manifest.json").write_bytes(b"\xff\xfe\x00")
    assert load_error(tmp_path) == (f"{tmp_path}/manifest.json: corrupt ('utf-8' codec can't decode byte 0xff in "
                                    f"position 0: invalid start byte); {rebuild(tmp_path)}")


@pytest.mark.parametrize("content, found", [({"abi_version": 0}, "0"), ({}, "None"), ([1], "None")])
def test_load_wrong_abi_version(tmp_path, content, found):
    (tmp_path / "manifest.json").write_text(json.dumps(content))
    assert load_error(tmp_path) == (f"{tmp_path}/manifest.json: built for ABI version {found}, this runtime "
                                    f"speaks 1; {rebuild(tmp_path)}")


def test_load_newer_abi_version(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"abi_version": 2}))
    assert load_error(tmp_path) == (f"{tmp_path}/manifest.json: built for a newer cutlass-splitk runtime (ABI version "
                                    "2; this runtime speaks 1); upgrade cutlass-splitk (pip install -U cutlass-splitk), "
                                    f"or {rebuild(tmp_path)}")


def test_load_manifest_without_libraries(tmp_path):
    (tmp_path / "manifest.json").write_text('{"abi_version": 1}')
    assert load_error(tmp_path) == (f"{tmp_path}/manifest.json: malformed (no 'libraries'/'ops'); "
                                    f"{rebuild(tmp_path)}")


def test_load_listed_library_missing(tmp_path):
    write_built_dir(tmp_path, so_bytes=None, sha="0" * 64)
    assert load_error(tmp_path) == (f"{tmp_path}/libtiny_f16.so: missing (listed in {tmp_path}/manifest.json); "
                                    f"{rebuild(tmp_path)}")


def test_load_sha256_mismatch(tmp_path):
    write_built_dir(tmp_path, so_bytes=b"truncated", sha=hashlib.sha256(b"the real thing").hexdigest())
    assert load_error(tmp_path) == (f"{tmp_path}/libtiny_f16.so: contents differ from the build (SHA-256 "
                                    f"mismatch: truncated, corrupted or replaced); {rebuild(tmp_path)}")


def test_load_garbage_library_with_matching_sha256(tmp_path):
    write_built_dir(tmp_path, so_bytes=b"garbage" * 100)  # sha256 of the garbage itself
    message = load_error(tmp_path)
    so = tmp_path / "libtiny_f16.so"
    assert re.fullmatch(rf"{re.escape(str(so))}: cannot be loaded \(.+\); {re.escape(rebuild(tmp_path))}",
                        message), message
    assert "invalid ELF header" in message  # glibc's dlerror for a non-ELF file


def test_inconsistent_description_is_a_library_error(tmp_path):
    # OpSpec.from_json raises ValueError (a variant name that does not match its parameters):
    # load() reports it as a LibraryError naming the manifest and the op.
    description = json.loads(json.dumps(TINY_DESCRIPTION))
    description["variants"][0]["stages"] = 4  # the name still says _s3_
    write_built_dir(tmp_path, manifest_extra={"ops": {"tiny_f16": description}})
    message = load_error(tmp_path)
    assert message.startswith(f"{tmp_path}/manifest.json") and message.endswith(rebuild(tmp_path))
    assert message == (f"{tmp_path}/manifest.json: malformed description of op 'tiny_f16' (ValueError: variant "
                       "name 'tiny_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1' does not match its parameters "
                       f"('tiny_f16_serial_t64x64x64_w32x32x64_i16x8x16_s4_a8_z1')); {rebuild(tmp_path)}")


def test_library_without_description_is_a_library_error(tmp_path):
    # a library the manifest does not describe under "ops" (KeyError) is a LibraryError as well
    write_built_dir(tmp_path, manifest_extra={"ops": {}})
    message = load_error(tmp_path)
    assert message.startswith(f"{tmp_path}/manifest.json") and message.endswith(rebuild(tmp_path))
    assert message == (f"{tmp_path}/manifest.json: malformed description of op 'tiny_f16' (KeyError: "
                       f"'tiny_f16'); {rebuild(tmp_path)}")


# --- loading the real library (nvcc) ----------------------------------------------------------------------


@pytest.mark.nvcc
def test_load_real_library_on_cpu(tiny_build):
    lib = cutlass_splitk.load(tiny_build.out)
    manifest = json.loads(tiny_build.manifest_text)
    assert lib.ops == ["tiny_f16"]
    assert lib.variants("tiny_f16") == list(MINIMAL_VARIANTS)
    assert lib.build_hash == manifest["build_hash"]
    assert "tiny_f16" in dir(lib)
    op = lib.tiny_f16
    assert op is lib.op("tiny_f16")
    assert repr(op) == "<cutlass_splitk op tiny_f16: tiny_f16(a, b, *, out, split_k, mode, variant, alpha)>"
    assert op.bound.abi_version == 1
    assert json.loads(op.bound.description) == manifest["ops"]["tiny_f16"]
    assert sorted(op.bound.query) == sorted(op.bound.run) == sorted(MINIMAL_VARIANTS)
    assert op.bound.last_error() == ""
    with pytest.raises(AttributeError) as info:
        lib.nosuchop
    assert str(info.value) == f"no op 'nosuchop' in {tiny_build.out}; built ops: tiny_f16"


@pytest.mark.nvcc
def test_load_truncated_real_library(tiny_build, tmp_path):
    d = tmp_path / "copy"
    shutil.copytree(tiny_build.out, d)
    so = d / "libtiny_f16.so"
    so.write_bytes(so.read_bytes()[:4096])
    assert load_error(d) == (f"{so}: contents differ from the build (SHA-256 mismatch: truncated, corrupted "
                             f"or replaced); {rebuild(d)}")
    # (verify=False is not tried: dlopen of a truncated ELF can kill the process with SIGBUS)


@pytest.mark.nvcc
def test_load_stale_real_library(tiny_build, tmp_path):
    d = tmp_path / "copy"
    shutil.copytree(tiny_build.out, d)
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["ops"]["tiny_f16"]["epilogue"]["alpha"] = False
    (d / "manifest.json").write_text(json.dumps(manifest))
    assert load_error(d) == (f"{d}/libtiny_f16.so: its self-description does not match {d}/manifest.json "
                             f"(stale library); {rebuild(d)}")


@pytest.mark.nvcc
def test_load_real_library_missing_entry_point(tiny_build, tmp_path):
    d = tmp_path / "copy"
    shutil.copytree(tiny_build.out, d)
    manifest = json.loads((d / "manifest.json").read_text())
    v = manifest["ops"]["tiny_f16"]["variants"][0]
    v["stages"], v["name"] = 4, v["name"].replace("_s3_", "_s4_")
    (d / "manifest.json").write_text(json.dumps(manifest))
    message = load_error(d)
    assert message.startswith(f"{d}/libtiny_f16.so: missing entry point (")
    assert "undefined symbol: cks_tiny_f16_serial_t64x64x64_w32x32x64_i16x8x16_s4_a8_z1_query" in message
    assert message.endswith(rebuild(d))


# --- the real library's query, on the CPU (nvcc) -----------------------------------------------------------


def _query(op, variant, m, n, k, split, **fields):
    args = abi.CksArgs()
    args.abi_version = abi.ABI_VERSION
    args.m, args.n, args.k, args.split_k = m, n, k, split
    # fake, 16-byte aligned pointers: query only inspects them
    args.a, args.lda, args.b, args.ldb, args.d, args.ldd = 0x10000, k, 0x20000, k, 0x30000, n
    args.alpha = 1.0
    for key, value in fields.items():
        setattr(args, key, value)
    q = abi.CksQuery()
    status = op.bound.query[variant](ctypes.byref(args), ctypes.byref(q))
    return status, op.bound.last_error(), q


@pytest.fixture(scope="module")
def real_tiny(tiny_build):
    return cutlass_splitk.load(tiny_build.out).tiny_f16


@pytest.mark.nvcc
def test_real_query_partitions_match_the_dispatch_model(real_tiny):
    serial, parallel = MINIMAL_VARIANTS
    checked = 0
    for k in list(range(8, 1100, 8)) + [4096, 14336, 65536, 100000]:
        for split in (1, 2, 3, 4, 5, 7, 8, 16, 32):
            expected = timemodel.k_partitions(k, split, 64 if k % 64 == 0 else 8)[1]
            for variant in (serial, parallel):
                status, why, q = _query(real_tiny, variant, 100, 136, k, split)
                assert status == 0, why
                assert q.k_partitions == expected, (variant, k, split)
                assert (q.tiles_m, q.tiles_n) == (2, 3)
            checked += 1
    assert checked > 1000


@pytest.mark.nvcc
def test_real_query_workspace_sizes(real_tiny):
    serial, parallel = MINIMAL_VARIANTS
    status, _, q = _query(real_tiny, serial, 100, 136, 1000, 3)
    # semaphores per tile, and the f32 running partial (M rows of N rounded up to 4 floats)
    assert (status, q.k_partitions, q.semaphore_bytes, q.partial_bytes) == (0, 3, 4 * 2 * 3, 4 * 100 * 136)
    status, _, q = _query(real_tiny, serial, 100, 136, 1000, 1)
    assert (status, q.k_partitions, q.semaphore_bytes, q.partial_bytes) == (0, 1, 0, 0)  # no workspace without a split
    status, _, q = _query(real_tiny, parallel, 100, 136, 1000, 3)
    assert (status, q.semaphore_bytes, q.partial_bytes) == (0, 0, 4 * 3 * 100 * 136)
    # an output of 2^31 elements or more is a problem like any other (64-bit sizes and offsets)
    m, n = 65536, 65544
    status, why, q = _query(real_tiny, serial, m, n, 64, 2)
    assert (status, q.k_partitions, q.partial_bytes) == (0, 1, 0), why  # K = 64: one partition
    status, why, q = _query(real_tiny, serial, m, n, 1000, 3)
    assert (status, q.k_partitions, q.partial_bytes) == (0, 3, 4 * m * n), why
    status, why, q = _query(real_tiny, parallel, m, n, 1000, 3)
    assert (status, q.partial_bytes) == (0, 4 * 3 * m * n), why
    for dims in ((2**30 + 1, 64, 64), (64, 2**30 + 8, 64), (64, 64, 2**30 + 8)):
        status, why, _ = _query(real_tiny, serial, *dims, 1)
        assert (status, why) == (abi.STATUS_INVALID_PROBLEM, "M, N and K must each be at most 2^30 (32-bit tile "
                                 "arithmetic; the output may exceed 2^31 elements)"), dims


@pytest.mark.nvcc
@pytest.mark.parametrize("m, n, k, split, fields, why", [
    (0, 64, 64, 1, {}, "M, N, K must be positive (empty problems are handled by the caller)"),
    (64, 64, 64, 0, {}, "split_k must be >= 1"),
    (64, 60, 64, 1, {}, "N = 60 must be a multiple of 8"),
    (64, 64, 100, 1, {}, "A must be 16-byte aligned with lda a multiple of 8 and >= K"),
    (64, 64, 64, 1, {"a": 0x10002}, "A must be 16-byte aligned with lda a multiple of 8 and >= K"),
    (64, 64, 64, 1, {"bias": 0x50000}, "this variant has no bias"),
    (64, 64, 64, 1, {"beta": 1.0}, "beta != 0 needs C"),
    (64, 64, 64, 1, {"d": None}, "D is null"),
])
def test_real_query_rejects_invalid_problems(real_tiny, m, n, k, split, fields, why):
    for variant in MINIMAL_VARIANTS:
        status, message, _ = _query(real_tiny, variant, m, n, k, split, **fields)
        assert (status, message) == (abi.STATUS_INVALID_PROBLEM, why)


@pytest.mark.nvcc
def test_real_query_abi_mismatch_is_status_abi(real_tiny):
    # An ABI mismatch is CKS_ERROR_ABI (3) as cks_abi.h documents, never CKS_ERROR_INVALID_PROBLEM
    # (which the dispatcher would read as "this variant cannot run the problem").
    for variant in MINIMAL_VARIANTS:
        status, message, _ = _query(real_tiny, variant, 64, 64, 64, 1, abi_version=2)
        assert message == "ABI version 2 != library's 1: rebuild the library"
        assert status == 3 and abi.STATUS_NAMES[status] == "ABI mismatch"


# --- argument checking with a fake library ------------------------------------------------------------------

SPECS = {o.name: o for c in ("default.yaml", "epilogues.yaml") for o in load_config(CONFIGS / c).ops}
FAKE_DEVICE = FAKE_H100


class FakeBound:
    """Stands in for abi.BoundLibrary: records every query/run call."""

    def __init__(self, spec, query_status=None, run_status=0):
        self.calls = []
        self.error = ""
        self.query_status = query_status or (lambda name, args: 0)
        self.query = {v.name: self._make_query(v.name) for v in spec.variants}
        self.run = {v.name: self._make_run(v.name, run_status) for v in spec.variants}

    @staticmethod
    def _snapshot(args):
        # the launcher passes ctypes.byref(CksArgs); the fast path the bytes of one
        a = abi.CksArgs.from_buffer_copy(args) if isinstance(args, bytes) else args._obj
        return {name: getattr(a, name) for name, _ in abi.CksArgs._fields_}

    def _make_query(self, name):
        def query(args, q):
            self.calls.append(("query", name, self._snapshot(args)))
            status = self.query_status(name, args._obj)
            self.error = "" if status == 0 else f"{name} says no"
            return status
        return query

    def _make_run(self, name, status):
        def run(args, stream):
            self.calls.append(("run", name, self._snapshot(args)))
            self.error = "" if status == 0 else "boom"
            return status
        return run

    def last_error(self):
        return self.error


def make_op(name, launches=None, platform=None, **bound_kwargs):
    """An Op of ``name`` (from configs/) over a fake library, on a FakePlatform by default.
    With ``launches`` (a list), the launcher's launch is replaced by a recorder of its
    requests; otherwise the real launcher runs against the fake library."""
    spec = SPECS[name]
    library = Library(Path("x"), {}, {}, platform=platform or FakePlatform())
    bound = FakeBound(spec, **bound_kwargs)
    op = Op(library, spec, bound)
    library._ops[name] = op
    if launches is not None:
        op.launcher.launch = launches.append
    return op


M, N, K = 16, 32, 64


@pytest.fixture
def launches():
    return []


@pytest.fixture
def linear(launches):
    return make_op("linear_f16", launches)


def a_(m=M, k=K, dtype=H):
    return torch.randn(m, k, dtype=dtype)


def w_(n=N, k=K, dtype=H):
    """b for a tn op: the transpose of a contiguous (N, K) weight."""
    return torch.randn(n, k, dtype=dtype).t()


def raises(exc_type, fn) -> str:
    with pytest.raises(exc_type) as info:
        fn()
    return str(info.value)


def test_valid_call_reaches_launch(linear, launches):
    a, b = a_(), w_()
    out = linear(a, b)
    assert out.shape == (M, N) and out.dtype == H
    (r,) = launches
    o = r.operands
    assert (r.m, o.n, o.k, o.lda, o.ldb, o.ldd) == (M, N, K, K, K, N)
    assert o.a is a and o.d is out and o.c is None and o.bias is None
    assert (r.alpha, r.beta, r.slope, r.view, r.device, r.device_index) == (1.0, 0.0, 0.01, None, torch.device("cpu"), 0)
    assert (r.split_k, r.mode, r.variant, r.scratch) == (None, None, None, False)
    assert list(r.pool) == list(linear.spec.variants)


def test_signature_keywords():
    assert make_op("linear_f16", []).keywords == ("out", "split_k", "mode", "variant", "alpha", "beta", "c", "bias")
    assert make_op("linear_bias_gelu_f16", []).keywords == ("out", "split_k", "mode", "variant", "alpha", "bias")
    op = make_op("leaky_add_permute_f16", [])
    assert op.keywords == ("out", "split_k", "mode", "variant", "alpha", "beta", "c", "bias", "e", "view",
                           "negative_slope")
    assert op.required == ("e", "view")


def test_wrong_dtype(linear):
    assert raises(TypeError, lambda: linear(a_(dtype=torch.float32), w_())) == \
        "linear_f16: a must be torch.float16, got torch.float32"
    assert raises(TypeError, lambda: linear(a_(), w_(dtype=BF))) == \
        "linear_f16: b must be torch.float16, got torch.bfloat16"
    bf = make_op("linear_bf16", [])
    assert raises(TypeError, lambda: bf(a_(), w_())) == "linear_bf16: a must be torch.bfloat16, got torch.float16"


def test_non_tensor_arguments(linear):
    assert raises(TypeError, lambda: linear([[1.0]], w_())) == "linear_f16: a must be a torch.Tensor, got list"
    assert raises(TypeError, lambda: linear(a_(), None)) == "linear_f16: b must be a torch.Tensor, got NoneType"
    assert raises(TypeError, lambda: linear(a_(), w_(), bias=[0.0] * N)) == \
        "linear_f16: bias must be a torch.Tensor, got list"


def test_cuda_required_by_default(launches):
    op = make_op("linear_f16", launches, platform=CudaPlatform())
    assert raises(ValueError, lambda: op(a_(), w_())) == "linear_f16: a must be on a CUDA device, got cpu"
    assert Library(Path("x"), {}, {}).platform.accepts_cpu is False


def test_shape_mismatch(linear):
    assert raises(ValueError, lambda: linear(a_(), w_(k=K + 8))) == \
        f"linear_f16: a is ({M}, {K}) but b is ({K + 8}, {N}): b must be (K={K}, N)"
    assert raises(ValueError, lambda: linear(a_()[None], w_())) == \
        f"linear_f16: a must be 2-D, got shape (1, {M}, {K})"
    assert raises(ValueError, lambda: linear(a_(), torch.randn(K, dtype=H))) == \
        f"linear_f16: b must be 2-D, got shape ({K},)"


def test_dimensions_beyond_2_30(linear):
    # M, N, K travel as int32 (CksArgs) and are rounded up to whole tiles in 32 bits: past 2^30 a call is
    # refused, not wrapped around to another problem; M * N itself may exceed 2^31 (64-bit offsets).
    # Stride-0 views: no memory.
    big = 2**30 + 1
    a_tall = torch.zeros(1, K, dtype=H).expand(big, K)
    assert raises(ValueError, lambda: linear(a_tall, w_())) == \
        f"linear_f16: M={big}: M, N and K must each be at most 2^30 = {2**30} (the kernels' problem sizes " \
        "are 32-bit); split the call along M or N"
    a_wide = torch.zeros(M, 1, dtype=H).expand(M, 2**32 + 8)
    w_wide = torch.zeros(1, N, dtype=H).expand(2**32 + 8, N)
    assert raises(ValueError, lambda: linear(a_wide, w_wide)) == \
        f"linear_f16: K={2**32 + 8}: M, N and K must each be at most 2^30 = {2**30} (the kernels' problem " \
        "sizes are 32-bit); split the call along M or N"
    assert operands.problem("x", (2**30, 8), (8, 2**30), 0.0, False) == (2**30, 2**30, 8)  # the bound itself runs


def test_tn_b_must_be_column_major(linear):
    b = torch.randn(K, N, dtype=H)  # row-major (K, N)
    assert raises(ValueError, lambda: linear(a_(), b)) == (
        f"linear_f16: b must be column-major (K, N) for layout tn, got shape ({K}, {N}) with strides ({N}, 1); "
        "pass weight.t() of a contiguous (N, K) weight")


def test_nn_b_must_be_row_major():
    op = make_op("nn_bias_silu_bf16", [])
    b = torch.randn(N, K, dtype=BF).t()
    assert raises(ValueError, lambda: op(a_(dtype=BF), b)) == (
        f"nn_bias_silu_bf16: b must be row-major (K, N) for layout nn, got shape ({K}, {N}) with strides (1, {K}); "
        "pass b.contiguous()")


def test_a_must_be_row_major(linear):
    a = torch.randn(K, M, dtype=H).t()
    assert raises(ValueError, lambda: linear(a, w_())) == (
        f"linear_f16: a must be row-major (stride(1) == 1), got shape ({M}, {K}) with strides (1, {M}); "
        "pass a.contiguous()")


def test_unexpected_keyword(linear):
    assert raises(TypeError, lambda: linear(a_(), w_(), e=a_())) == (
        "linear_f16() got an unexpected keyword argument 'e'; this op accepts: out, split_k, mode, variant, "
        "alpha, beta, c, bias")
    gelu = make_op("linear_bias_gelu_f16", [])
    assert raises(TypeError, lambda: gelu(a_(), w_(), beta=1.0)) == (
        "linear_bias_gelu_f16() got an unexpected keyword argument 'beta'; this op accepts: out, split_k, mode, "
        "variant, alpha, bias")
    assert raises(TypeError, lambda: gelu(a_(), w_(), negative_slope=0.1)).startswith(
        "linear_bias_gelu_f16() got an unexpected keyword argument 'negative_slope'")


def test_missing_required_keywords():
    op = make_op("bias_gelu_mul_permute_f16", [])
    e = torch.randn(M, N, dtype=H)
    assert raises(TypeError, lambda: op(a_(), w_(), view=(2, 8, 4, 8))) == \
        "bias_gelu_mul_permute_f16() missing required keyword argument 'e'"
    assert raises(TypeError, lambda: op(a_(), w_(), e=e)) == \
        "bias_gelu_mul_permute_f16() missing required keyword argument 'view'"
    assert raises(TypeError, lambda: op(a_(), w_(), e=None, view=(2, 8, 4, 8))) == \
        "bias_gelu_mul_permute_f16() missing required keyword argument 'e'"


def test_view_checks():
    op = make_op("bias_gelu_mul_permute_f16", [])
    e = torch.randn(M, N, dtype=H)
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view=(2, 4, 4, 8))) == (
        f"bias_gelu_mul_permute_f16: view (2, 4, 4, 8) does not match the output (M={M}, N={N}): "
        "need B*S == M and H*D == N")
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view=(2, 8, 32))) == \
        "bias_gelu_mul_permute_f16: view must be (B, S, H, D) with non-negative ints, got (2, 8, 32)"
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view=(2, 8, 4.0, 8))) == \
        "bias_gelu_mul_permute_f16: view must be (B, S, H, D) with non-negative ints, got (2, 8, 4.0, 8)"
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view="2,8,4,8")) == \
        "bias_gelu_mul_permute_f16: view must be (B, S, H, D) with non-negative ints, got '2,8,4,8'"
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view=(2, 8, -4, -8))) == \
        "bias_gelu_mul_permute_f16: view must be (B, S, H, D) with non-negative ints, got (2, 8, -4, -8)"
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view=(2, 8, True, 32))) == \
        "bias_gelu_mul_permute_f16: view must be (B, S, H, D) with non-negative ints, got (2, 8, True, 32)"
    # zeros are allowed, but the view must still describe the output
    assert raises(ValueError, lambda: op(a_(), w_(), e=e, view=(0, 8, 4, 8))) == (
        f"bias_gelu_mul_permute_f16: view (0, 8, 4, 8) does not match the output (M={M}, N={N}): "
        "need B*S == M and H*D == N")
    qkv = make_op("qkv_f16", [])
    b = w_(n=3 * N)
    assert raises(ValueError, lambda: qkv(a_(), b, view=(2, 8, 4, 3, 8))) == \
        "qkv_f16: view (2, 8, 4, 3, 8) must have 3 at index 2 (B, S, 3, H, D)"
    assert raises(ValueError, lambda: qkv(a_(), b, view=(2, 8, 3, 4, 4))) == (
        f"qkv_f16: view (2, 8, 3, 4, 4) does not match the output (M={M}, N={3 * N}): "
        "need B*S == M and 3*H*D == N")


def test_permuted_output_shapes(launches):
    op = make_op("bias_gelu_mul_permute_f16", launches)
    out = op(a_(), w_(), e=torch.randn(M, N, dtype=H), view=[2, 8, 4, 8])
    assert out.shape == (2, 4, 8, 8) and out.is_contiguous()  # (B, H, S, D)
    qkv = make_op("qkv_f16", launches)
    out = qkv(a_(), w_(n=3 * N), view=(2, 8, 3, 4, 8))
    assert out.shape == (3, 2, 4, 8, 8)  # (3, B, H, S, D)
    assert len(launches) == 2
    assert launches[0].view == [2, 8, 4, 8]  # the view reaches the launch


def test_bias_c_e_shapes(linear):
    assert raises(ValueError, lambda: linear(a_(), w_(), bias=torch.randn(N + 1, dtype=H))) == \
        f"linear_f16: bias must have shape ({N},), got ({N + 1},)"
    assert raises(ValueError, lambda: linear(a_(), w_(), bias=torch.randn(1, N, dtype=H))) == \
        f"linear_f16: bias must be 1-D, got shape (1, {N})"
    assert raises(ValueError, lambda: linear(a_(), w_(), c=torch.randn(M, N + 1, dtype=H), beta=1.0)) == \
        f"linear_f16: c must have shape ({M}, {N}), got ({M}, {N + 1})"
    row = make_op("relu_rowbias_add_f16", [])
    e = torch.randn(M, N, dtype=H)
    assert raises(ValueError, lambda: row(a_(), w_(), e=e, bias=torch.randn(N, dtype=H))) == \
        f"relu_rowbias_add_f16: bias must have shape ({M},), got ({N},)"
    assert raises(ValueError, lambda: row(a_(), w_(), e=e.t())) == \
        f"relu_rowbias_add_f16: e must have shape ({M}, {N}), got ({N}, {M})"


def test_beta_needs_c(linear):
    assert raises(ValueError, lambda: linear(a_(), w_(), beta=0.5)) == "linear_f16: beta=0.5 needs c"


def test_c_ignored_when_beta_is_zero(linear, launches):
    linear(a_(), w_(), c=torch.randn(M, N, dtype=H))
    assert launches[0].operands.c is None


def test_split_k_must_be_a_positive_int(linear):
    for bad in (0, -1, True, 2.0, "2"):
        assert raises(ValueError, lambda: linear(a_(), w_(), split_k=bad)) == \
            f"linear_f16: split_k must be a positive int, got {bad!r}"


def test_bogus_mode(linear):
    assert raises(ValueError, lambda: linear(a_(), w_(), mode="bogus")) == \
        "linear_f16: mode='bogus' is not one of 'serial', 'parallel', 'stream_k'"


def test_out_checks(linear, launches):
    assert raises(ValueError, lambda: linear(a_(), w_(), out=torch.empty(M, N + 1, dtype=H))) == \
        f"linear_f16: out must have shape ({M}, {N}), got ({M}, {N + 1})"
    assert raises(TypeError, lambda: linear(a_(), w_(), out=torch.empty(M, N))) == \
        "linear_f16: out must be torch.float16, got torch.float32"
    x = torch.randn(M, N, dtype=H)  # K == N so that a can be passed as out
    assert raises(ValueError, lambda: linear(x, w_(k=N), out=x)) == \
        "linear_f16: out overlaps a; pass a separate output tensor"
    buf = torch.randn(M + 1, N, dtype=H)
    assert raises(ValueError, lambda: linear(buf[1:], w_(k=N), out=buf[:M])) == \
        "linear_f16: out overlaps a; pass a separate output tensor"
    storage = torch.randn(M * N, dtype=H)
    assert raises(ValueError, lambda: linear(a_(), w_(), bias=storage[N:2 * N], out=storage.view(M, N))) == \
        "linear_f16: out overlaps bias; pass a separate output tensor"
    add = make_op("relu_rowbias_add_f16", launches)
    e = torch.randn(M, N, dtype=H)
    assert raises(ValueError, lambda: add(a_(), w_(), e=e, out=e)) == \
        "relu_rowbias_add_f16: out overlaps e; pass a separate output tensor"
    assert raises(ValueError, lambda: linear(a_(), w_(), out=torch.empty(1, N, dtype=H).expand(M, N))) == (
        f"linear_f16: out must be row-major (stride(1) == 1), got shape ({M}, {N}) with strides (0, 1); "
        "pass a contiguous out")
    assert not launches


def test_out_may_alias_c_exactly(linear, launches):
    c = torch.randn(M, N, dtype=H)
    assert linear(a_(), w_(), c=c, beta=1.0, out=c) is c
    assert launches[0].operands.c is c and launches[0].operands.d is c
    big = torch.randn(M + 1, N, dtype=H)
    assert raises(ValueError, lambda: linear(a_(), w_(), c=big[1:], beta=1.0, out=big[:M])) == (
        "linear_f16: out partially overlaps c; out may alias c only exactly (same pointer and strides, "
        "unpermuted output)")


def test_out_is_returned(linear, launches):
    out = torch.empty(M, N, dtype=H)
    assert linear(a_(), w_(), out=out) is out
    assert launches[0].operands.d is out


# --- empty problems ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m, n", [(0, N), (M, 0), (0, 0)])
def test_empty_m_or_n_returns_empty_without_launch(linear, launches, m, n):
    out = linear(a_(m=m), w_(n=n), bias=torch.randn(n, dtype=H))
    assert out.shape == (m, n) and out.dtype == H
    assert not launches


def test_empty_m_with_out(linear, launches):
    out = torch.empty(0, N, dtype=H)
    assert linear(a_(m=0), w_(), out=out) is out
    assert not launches


@pytest.mark.parametrize("name, view, shape", [
    ("bias_gelu_mul_permute_f16", (0, 8, 4, 8), (0, 4, 8, 8)),
    ("qkv_f16", (0, 8, 3, 4, 8), (3, 0, 4, 8, 8)),
])
def test_empty_batch_with_permuted_output(launches, name, view, shape):
    # M == 0 (B == 0 or S == 0) "launches nothing" and returns an empty result for permuted ops
    # too: view entries may be 0.
    op = make_op(name, launches)
    n = 32 if name.startswith("bias") else 96
    kwargs = {"view": view}
    if name.startswith("bias"):
        kwargs["e"] = torch.randn(0, n, dtype=H)
    out = op(a_(m=0), w_(n=n), **kwargs)
    assert out.shape == shape
    assert not launches


@pytest.mark.parametrize("m, n, k", [(0, N, K), (M, 0, K), (M, N, 0), (0, 0, 0)], ids=["m0", "n0", "k0", "all0"])
def test_dispatch_arguments_are_validated_for_empty_problems(linear, launches, m, n, k):
    # split_k / mode / variant are checked even when nothing would be launched
    a, b = a_(m=m, k=k), w_(n=n, k=k)
    names = ", ".join(v.name for v in linear.spec.variants)
    assert raises(ValueError, lambda: linear(a, b, split_k=0)) == "linear_f16: split_k must be a positive int, got 0"
    assert raises(ValueError, lambda: linear(a, b, mode="bogus")) == \
        "linear_f16: mode='bogus' is not one of 'serial', 'parallel', 'stream_k'"
    assert raises(ValueError, lambda: linear(a, b, variant="nope")) == \
        f"linear_f16: variant='nope' was not built; built variants: {names}"
    assert raises(ValueError, lambda: linear(a, b, split_k=9)).startswith(
        "linear_f16: split_k=9 is not available; built split factors: ")
    assert raises(ValueError, lambda: linear(a, b, split_k=3, mode="serial")).startswith(
        "linear_f16: split_k=3 is not available in mode serial; built split factors: ")
    # valid choices still return the (empty / epilogue-only) result without a launch
    assert linear(a, b, split_k=1, mode="serial").shape == (m, n)
    assert not launches


def test_dispatch_arguments_are_validated_before_the_tensors(linear, launches):
    # the first error reported is the split_k / mode / variant one, not the bad tensor
    assert raises(ValueError, lambda: linear([[1.0]], None, split_k=-1)) == \
        "linear_f16: split_k must be a positive int, got -1"
    assert raises(ValueError, lambda: linear(a_(dtype=torch.float32), w_(), mode="bogus")) == \
        "linear_f16: mode='bogus' is not one of 'serial', 'parallel', 'stream_k'"
    assert raises(ValueError, lambda: linear(a_(), w_(k=K + 8), variant="nope")).startswith(
        "linear_f16: variant='nope' was not built; built variants: ")
    assert not launches


def test_k0_linear_bias_and_c(linear, launches):
    c, bias = torch.randn(M, N, dtype=H), torch.randn(N, dtype=H)
    out = linear(a_(k=0), w_(k=0), c=c, beta=0.5, bias=bias, alpha=3.0)
    ref = (0.5 * c.float() + bias.float()[None, :]).half()
    torch.testing.assert_close(out, ref)
    assert not launches


def test_k0_gelu(launches):
    op = make_op("linear_bias_gelu_bf16", launches)
    bias = torch.randn(N, dtype=BF)
    out = op(a_(k=0, dtype=BF), w_(k=0, dtype=BF), bias=bias)
    assert out.dtype == BF and out.shape == (M, N)
    torch.testing.assert_close(out, F.gelu(bias.float()).expand(M, N).to(BF))
    assert not launches
    # without the (optional) bias: gelu(0) == 0
    assert torch.equal(op(a_(k=0, dtype=BF), w_(k=0, dtype=BF)), torch.zeros(M, N, dtype=BF))


def test_k0_rowbias_relu_add_with_c(launches):
    op = make_op("relu_rowbias_add_f16", launches)
    c, bias, e = torch.randn(M, N, dtype=H), torch.randn(M, dtype=H), torch.randn(M, N, dtype=H)
    out = op(a_(k=0), w_(k=0), c=c, beta=-2.0, bias=bias, e=e)
    ref = (F.relu(-2.0 * c.float() + bias.float()[:, None]) + e.float()).half()
    torch.testing.assert_close(out, ref)
    assert not launches


def test_k0_silu_mul(launches):
    op = make_op("silu_rowbias_mul_f16", launches)
    bias, e = torch.randn(M, dtype=H), torch.randn(M, N, dtype=H)
    out = op(a_(k=0), w_(k=0), bias=bias, e=e)
    torch.testing.assert_close(out, (F.silu(bias.float()[:, None]) * e.float()).half())


def test_k0_leaky_relu_head_split(launches):
    op = make_op("leaky_add_permute_f16", launches)
    bias, e = torch.randn(M, dtype=H), torch.randn(M, N, dtype=H)
    b_, s_, h_, d_ = 2, 8, 4, 8
    for kwargs, slope in (({}, 0.1), ({"negative_slope": 0.3}, 0.3)):
        out = op(a_(k=0), w_(k=0), bias=bias, e=e, view=(b_, s_, h_, d_), **kwargs)
        v = F.leaky_relu(bias.float()[:, None].expand(M, N), slope) + e.float()
        ref = v.reshape(b_, s_, h_, d_).permute(0, 2, 1, 3).half()
        assert out.shape == (b_, h_, s_, d_)
        torch.testing.assert_close(out, ref)
        # spot check the layout by hand: out[b, h, s, d] = v[b*S + s, h*D + d]
        assert out[1, 2, 3, 4].item() == pytest.approx(v[1 * s_ + 3, 2 * d_ + 4].half().item())
    assert not launches


def test_k0_sigmoid_qkv_split(launches):
    op = make_op("sigmoid_qkv_bf16", launches)
    b_, s_, h_, d_ = 2, 8, 2, 8
    n = 3 * h_ * d_
    bias = torch.randn(n, dtype=BF)
    out = op(a_(k=0, dtype=BF), w_(n=n, k=0, dtype=BF), bias=bias, view=(b_, s_, 3, h_, d_))
    assert out.shape == (3, b_, h_, s_, d_)
    v = torch.sigmoid(bias.float())
    for t in range(3):
        for h in range(h_):
            expected = v[t * h_ * d_ + h * d_: t * h_ * d_ + (h + 1) * d_].to(BF)
            assert torch.equal(out[t, 1, h, 5], expected)
    assert not launches


# --- dispatch through the fake library (the real launcher, fake cuda:0) ------------------------------------


def test_dispatch_runs_the_best_candidate():
    op = make_op("linear_f16")
    a, b = a_(), w_()
    bias = torch.randn(N, dtype=H)
    out = op(a, b, bias=bias, alpha=2.0, split_k=2)
    best = dispatch.rank(op.spec.variants, M, N, K, FAKE_DEVICE, 2, tma_epilogue=op.spec.epilogue.tma_in_kernel)[0]
    assert [(kind, name) for kind, name, _ in op.bound.calls] == [
        ("query", best.variant.name), ("run", best.variant.name)]
    args = op.bound.calls[-1][2]
    assert args["abi_version"] == 1 and args["device"] == 0
    assert (args["m"], args["n"], args["k"], args["split_k"]) == (M, N, K, 2)
    assert (args["a"], args["lda"]) == (a.data_ptr(), K)
    assert (args["b"], args["ldb"]) == (b.data_ptr(), K)
    assert (args["d"], args["ldd"]) == (out.data_ptr(), N)
    assert args["bias"] == bias.data_ptr() and args["c"] is None and args["e"] is None
    assert (args["alpha"], args["beta"]) == (2.0, 0.0)
    # the plan is cached: the same problem runs without a new query
    op(a, b, bias=bias, alpha=2.0, split_k=2)
    assert [kind for kind, _, _ in op.bound.calls] == ["query", "run", "run"]


def test_a_signature_is_prepared_on_its_second_sighting(monkeypatch):
    """The first call of a signature only notes it (fastpath.SEEN: no output template, no argument
    bytes), the second takes the full path again and prepares it, the third is a fast call."""
    from cutlass_splitk.runtime import fastpath, torch_path

    op = make_op("linear_f16")
    full = []
    real = torch_path.call
    monkeypatch.setattr(torch_path, "call", lambda *args, **kw: full.append(1) or real(*args, **kw))
    a, b = a_(), w_()
    op(a, b, split_k=2)
    assert list(op.prepared.values()) == [fastpath.SEEN] and len(full) == 1
    op(a, b, split_k=2)
    (prepared,) = op.prepared.values()
    assert isinstance(prepared, fastpath.Prepared) and prepared.split == 2 and len(full) == 2
    out = op(a, b, split_k=2)
    assert len(full) == 2 and out.shape == (M, N)
    assert [kind for kind, _, _ in op.bound.calls] == ["query", "run", "run", "run"]


def test_output_is_a_plain_tensor_whatever_the_inputs_class():
    """The full path allocates with a.new_empty only for a plain tensor: a subclass's would keep
    the subclass (a Parameter's would not)."""

    class Tagged(torch.Tensor):
        pass

    op = make_op("linear_f16")
    for a in (a_().as_subclass(Tagged), torch.nn.Parameter(a_(), requires_grad=False), a_()):
        for _ in range(3):  # full path, second sighting, fast path
            out = op(a, w_(), split_k=1)
            assert type(out) is torch.Tensor and out.shape == (M, N) and out.dtype == H, type(a)


def test_repeated_signature_takes_the_fast_path():
    """A call repeating a signature runs the cached plan with the same arguments, only the
    pointers updated: no query, no new plan, and the C structure equals the full path's."""
    op = make_op("bias_gelu_mul_permute_f16")
    view = (2, 8, 2, 16)
    inputs = [(a_(), w_(), torch.randn(N, dtype=H), torch.randn(M, N, dtype=H)) for _ in range(2)]
    a, b, bias, e = inputs[0]
    first = op(a, b, bias=bias, e=e, view=view, split_k=4, mode="parallel")
    a, b, bias, e = inputs[1]
    out = torch.empty(2, 2, 8, 16, dtype=H)
    op(a, b, bias=bias, e=e, view=view, split_k=4, mode="parallel", out=out)  # new signature: out=
    second = op(a, b, bias=bias, e=e, view=view, split_k=4, mode="parallel")
    assert second.shape == first.shape == (2, 2, 8, 16) and second.data_ptr() != first.data_ptr()
    kinds = [kind for kind, _, _ in op.bound.calls]
    assert kinds == ["query", "run", "run", "run"]
    assert len(op.prepared) == 2
    full, fast = op.bound.calls[2][2], op.bound.calls[3][2]
    pointers = {"a": a.data_ptr(), "b": b.data_ptr(), "bias": bias.data_ptr(), "e": e.data_ptr(),
                "d": second.data_ptr()}
    assert {name: fast[name] for name in pointers} == pointers
    assert {k: v for k, v in fast.items() if k not in pointers} == \
        {k: v for k, v in full.items() if k not in pointers}
    assert (fast["m"], fast["n"], fast["k"], fast["split_k"], fast["permute_s"], fast["permute_h"]) == \
        (M, N, K, 4, 8, 2)


def test_fast_path_rechecks_what_pointers_decide():
    """Same signature, different pointers: an overlapping out= still raises, a misaligned
    operand is still padded, a bool split_k is not mistaken for 1, and a cleared plan cache
    re-plans."""
    op = make_op("linear_f16")
    a, b = a_(), w_()
    out = torch.empty(M, N, dtype=H)
    op(a, b, out=out, split_k=1)
    op(a, b, out=out, split_k=1)
    assert [kind for kind, _, _ in op.bound.calls] == ["query", "run", "run"]
    inside = torch.randn(M * K, dtype=H)
    a_in = inside.view(M, K)
    out_in = inside[: M * N].view(M, N)
    assert raises(ValueError, lambda: op(a_in, b, out=out_in, split_k=1)) == \
        "linear_f16: out overlaps a; pass a separate output tensor"
    big = torch.randn(M, K + 8, dtype=H)
    op(big[:, :K], b, split_k=1)
    with pytest.warns(PaddingWarning, match="copied into padded buffers"):
        op(big[:, 1:K + 1], b, split_k=1)
    assert raises(ValueError, lambda: op(a, b, out=out, split_k=True)) == \
        "linear_f16: split_k must be a positive int, got True"
    calls = len(op.bound.calls)
    op.launcher.plans.clear()
    op(a, b, out=out, split_k=1)
    assert [kind for kind, _, _ in op.bound.calls[calls:]] == ["query", "run"]


def test_fast_path_run_failure_is_a_kernel_error():
    op = make_op("linear_f16")
    a, b = a_(), w_()
    op(a, b, split_k=1)
    op.bound.run = {name: (lambda args, stream: 4) for name in op.bound.run}
    op.bound.error = "an illegal memory access was encountered"
    message = raises(KernelError, lambda: op(a, b, split_k=1))
    assert message.startswith("linear_f16: ") and message.endswith(
        f"(split 1) failed for M={M} N={N} K={K}: CUDA error: an illegal memory access was encountered")


def test_dispatch_split_k_not_built():
    op = make_op("linear_f16")
    assert raises(ValueError, lambda: op(a_(), w_(), split_k=9)) == (
        "linear_f16: split_k=9 is not available; built split factors: "
        "[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 24, 32, 48, 64]")
    # (parallel split 1 is built since session 41: round 67's swapped wide tiles run one K slice)
    assert raises(ValueError, lambda: op(a_(), w_(), split_k=3, mode="serial")) == (
        "linear_f16: split_k=3 is not available in mode serial; built split factors: [1, 2, 4, 8, 16]")
    assert op.bound.calls == []


def test_dispatch_unknown_variant():
    op = make_op("linear_f16")
    names = ", ".join(v.name for v in op.spec.variants)
    assert raises(ValueError, lambda: op(a_(), w_(), variant="nope")) == \
        f"linear_f16: variant='nope' was not built; built variants: {names}"
    assert op.bound.calls == []


def test_dispatch_explicit_variant_and_mode():
    op = make_op("linear_f16")
    # a parallel variant accepting split 8 that the heuristic would not pick by itself
    preferred = dispatch.rank(op.spec.variants, M, N, K, FAKE_DEVICE, 8,
                              tma_epilogue=op.spec.epilogue.tma_in_kernel)[0].variant.name
    name = next(v.name for v in op.spec.variants
                if v.mode.value == "parallel" and 8 in v.splits and v.name != preferred)
    op(a_(), w_(), variant=name, split_k=8)
    assert [(k, n, c["split_k"]) for k, n, c in op.bound.calls] == [("query", name, 8), ("run", name, 8)]
    op2 = make_op("linear_f16")
    op2(a_(), w_(), mode="serial")
    assert all("_serial_" in n for _, n, _ in op2.bound.calls)


def test_dispatch_falls_back_when_the_library_rejects_a_candidate():
    first = []

    def status(name, args):
        if not first:
            first.append(name)
            return abi.STATUS_INVALID_PROBLEM
        return 0

    op = make_op("linear_f16", query_status=status)
    op(a_(), w_(), split_k=4)
    ranked = [c.variant.name for c in dispatch.rank(op.spec.variants, M, N, K, FAKE_DEVICE, 4,
                                                    tma_epilogue=op.spec.epilogue.tma_in_kernel)]
    assert [(k, n) for k, n, _ in op.bound.calls] == [("query", ranked[0]), ("query", ranked[1]),
                                                       ("run", ranked[1])]


def test_sm80_variants_built_for_sm90_follow_the_sm90_ones_as_fallbacks():
    # configs/epilogues.yaml builds its sm80 grids for sm_90: on an H100 both backends run natively. The
    # heuristic asks the sm90 candidates first (dispatch.hopper_first) and the sm80 ones after them, so a
    # problem no sm90 variant takes still runs; explain says so.
    spec = SPECS["silu_rowbias_mul_f16"]
    assert spec.archs == (90,) and {v.backend.value for v in spec.variants} == {"sm80", "sm90"}
    op = make_op(spec.name)
    e, bias = torch.randn(M, N, dtype=H), torch.randn(M, dtype=H)
    op(a_(), w_(), bias=bias, e=e)
    assert "_sm90_" in op.bound.calls[0][1] and op.bound.calls[-1][0] == "run"
    op = make_op(spec.name, query_status=lambda name, args: abi.STATUS_INVALID_PROBLEM if "_sm90_" in name else 0)
    op(a_(), w_(), bias=bias, e=e)
    asked = [n for k, n, _ in op.bound.calls if k == "query"]
    first80 = next(i for i, n in enumerate(asked) if "_sm90_" not in n)
    assert first80 > 0 and all("_sm90_" in n for n in asked[:first80])
    assert op.bound.calls[-1][0] == "run" and "_sm90_" not in op.bound.calls[-1][1]
    # what tune times (Op.candidates): every runnable candidate, the sm80 ones included, after the sm90 ones
    cands = op.candidates(4096, 4096, 256, FAKE_DEVICE)
    assert {c.variant.backend.value for c in cands} == {"sm80", "sm90"}
    assert len(cands) == sum(len(v.splits) for v in spec.variants)  # all of them run on an H100
    text = op.library.explain(spec.name, 4096, 4096, 256, device=FAKE_DEVICE, top=1)
    assert text.splitlines()[1].startswith("  -> silu_rowbias_mul_f16_") and "_sm90_" in text.splitlines()[1]
    assert text.splitlines()[-1] == ("   (its sm80 variants run here too and rank after the sm90 ones, as fallbacks; "
                                     "tune times them all)")


def test_dispatch_nothing_can_run():
    op = make_op("linear_f16", query_status=lambda name, args: abi.STATUS_INVALID_PROBLEM)
    message = raises(ValueError, lambda: op(a_(), w_(), mode="serial", split_k=2))
    # only the variants this (modelled H100) device runs at split 2 are asked: the sm90 ones
    serial = sorted(v.name for v in op.spec.variants
                    if v.mode.value == "serial" and 2 in v.splits and dispatch.runs_on(v, op.spec.archs, FAKE_DEVICE))
    assert serial and all("_sm90_" in n for n in serial)
    assert message == (f"linear_f16: no built variant can run M={M} N={N} K={K} (f16):\n  "
                       + "\n  ".join(f"{n}: {n} says no" for n in serial))


def test_dispatch_kernel_error():
    op = make_op("linear_f16", run_status=abi.STATUS_CUDA)
    message = raises(KernelError, lambda: op(a_(), w_(), split_k=1))
    best = dispatch.rank(op.spec.variants, M, N, K, FAKE_DEVICE, 1, tma_epilogue=op.spec.epilogue.tma_in_kernel)[0].variant.name
    assert message == f"linear_f16: {best} (split 1) failed for M={M} N={N} K={K}: CUDA error: boom"


def test_dispatch_pads_unaligned_problems():
    op = make_op("linear_f16")
    a, b = a_(k=60), w_(n=30, k=60)
    with pytest.warns(PaddingWarning, match=r"linear_f16: M=16 N=30 K=60 is not 8-element aligned"):
        out = op(a, b, split_k=1)
    assert out.shape == (M, 30)
    args = op.bound.calls[-1][2]
    assert (args["n"], args["k"], args["lda"], args["ldb"], args["ldd"]) == (32, 64, 64, 64, 32)
    assert args["a"] != a.data_ptr()  # a padded copy


def test_col_major_ld_equals_row_major_ld_of_the_transpose():
    """The tn fast path reads B's leading dimension without building b.t(); it must agree with
    the row-major rule on the transpose for every stride pattern (broadcast, padded, size 1)."""
    base = torch.randn(64, 64)
    cases = [base[:r, :c] for r in (1, 2, 5) for c in (1, 3, 8)]
    cases += [t.t() for t in cases]
    cases += [torch.empty_strided((3, 4), (s0, s1)) for s0 in (0, 1, 3, 4, 8) for s1 in (0, 1, 3, 4, 8)]
    for t in cases:
        assert operands.col_major_ld(t) == operands.row_major_ld(t.t()), (t.shape, t.stride())
    assert operands.col_major_ld(torch.randn(16, 8).t()) == 8
    assert operands.col_major_ld(torch.randn(16, 8)) is None


def test_scratch_workspace_is_fresh_and_zeroed():
    """The torch.compile path's workspace: a new buffer per launch, semaphores zeroed, sizes
    rounded up to whole words (CPU tensors stand in for device memory)."""
    from cutlass_splitk.runtime.workspace import SCRATCH
    cpu = torch.device("cpu")
    first = SCRATCH.semaphores(cpu, 0, 10)
    t = first.owner
    assert t.dtype == torch.int32 and t.shape == (3,) and not t.any()
    assert (first.ptr, first.nbytes) == (t.data_ptr(), 12)
    t.fill_(7)
    second = SCRATCH.semaphores(cpu, 0, 10)
    assert not second.owner.any() and second.ptr != first.ptr
    partials = SCRATCH.partials(cpu, 0, 4 * 1000 + 1)
    assert partials.owner.dtype == torch.float32 and partials.owner.shape == (1001,) and partials.nbytes == 4004


def test_workspace_growth_and_release_order():
    """Cached partials grow to powers of two up to 256 MB and by eighths of one beyond (a 17.2 GB
    parallel split-K workspace gets 17.2 GB, not 34.4); a buffer that must grow is dropped before its
    successor is allocated, and the fast paths hear of the change even when that allocation fails."""
    from cutlass_splitk.runtime.workspace import EXACT_GROWTH_WORDS, Workspace, _words
    assert [_words(n, 1 << 16) for n in (1, 4 << 16, (4 << 16) + 4, 4 * 100_000)] == \
        [1 << 16, 1 << 16, 1 << 17, 1 << 17]
    assert _words(4 * EXACT_GROWTH_WORDS, 1) == EXACT_GROWTH_WORDS
    assert _words(4 * EXACT_GROWTH_WORDS + 4, 1) == EXACT_GROWTH_WORDS + (1 << 23)  # 12.5 % steps past 2^26
    big = 4 * 2 * 8200 * 262152  # parallel split 2 of an 8200 x 262152 output
    assert big // 4 <= _words(big, 1 << 16) <= big // 4 * 1.125
    assert _words(big, 1 << 16) == 9 << 29  # 4.30e9 words: the next multiple of 2^32 / 8

    from cutlass_splitk.runtime.workspace import Block
    events = []

    class Memory:
        fail = False

        def empty(self, device, stream, words):
            held = work.get(device, stream)
            events.append(("alloc", words, held.partials if held else "no set"))  # what the workspace still holds
            if self.fail:
                raise MemoryError("out of memory")
            return Block(1000 + len(events), words * 4, object())

    work = Workspace(Memory())
    work.on_change.append(lambda: events.append(("changed",)))
    first = work.partials(0, 5, 1000)
    assert work.partials(0, 5, 4 << 16) is first  # fits: kept
    buf = work.get(0, 5)
    events.clear()
    second = work.partials(0, 5, (4 << 16) + 4)
    assert buf.partials is second and second.nbytes == 4 << 17
    assert events == [("alloc", 1 << 17, None), ("changed",)]  # the first block was let go before
    work.memory.fail = True
    with pytest.raises(MemoryError):
        work.partials(0, 5, 4 << 20)
    assert buf.partials is None and events[-2:] == [("alloc", 1 << 20, None), ("changed",)]
    work.memory.fail = False
    assert work.partials(0, 5, 4).nbytes == 4 << 16  # the next call allocates again


def test_custom_op_takes_scratch_workspace():
    """The registered custom op's implementation runs the op with per-call workspace."""
    op = make_op("linear_f16")
    seen = []
    op._call = lambda a, b, kwargs, sig, scratch=False: seen.append((kwargs, sig, scratch)) or a
    impl = torch_op.register(op)
    a, b = a_(), w_()
    impl._init_fn(a, b, None, None, None, 1.0, 0.0, None, 0.01, 2, "serial", None)
    (kwargs, sig, scratch), = seen
    assert scratch is True and sig is None
    assert kwargs == {"split_k": 2, "mode": "serial", "variant": None, "alpha": 1.0, "beta": 0.0, "c": None,
                      "bias": None}


def test_flushed_times_rotates_the_contenders_and_keeps_each_fastest_median():
    """bench's flushed columns (runtime.timing.flushed_times): every round times each contender once,
    round r starting with contender r, and each keeps its smallest median, so a GPU left hot (lower
    clocks) by a previous sweep does not weigh on one column only."""
    from cutlass_splitk.runtime.timing import flushed_times

    order = []
    medians = {"ours": iter([90.0, 70.0, 80.0]), "matmul": iter([60.0, 65.0, 50.0]), "eager": iter([85.0, 95.0, 75.0])}

    def single(fn):
        order.append(fn.__name__)
        return next(medians[fn.__name__])

    def ours(): pass  # noqa: E704
    def matmul(): pass  # noqa: E704
    def eager(): pass  # noqa: E704

    assert flushed_times([ours, matmul, eager], repeat=3, single=single) == [70.0, 50.0, 75.0]
    assert order == ["ours", "matmul", "eager", "matmul", "eager", "ours", "eager", "ours", "matmul"]
    order.clear()
    medians["ours"] = iter([40.0])
    assert flushed_times([ours], repeat=0, single=single) == [40.0]  # at least one round
    assert order == ["ours"]
