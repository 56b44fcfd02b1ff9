"""What the shared fused epilogue compiles to: every output vector is one 16-byte store, for
every output permute; each GELU is one ex2 and one reciprocal of the SFU (cks_activation.cuh),
and the activations are as accurate as that header says. (Written as a plain assignment from the converted array, NVVM split the
store of a permuted epilogue into four 4-byte stores: 4x the memory sectors of every D write,
found with ncu in session 7.) And parallel split-K's reduction kernel loads the epilogue's own
inputs (C, bias, E) before it waits for the GEMM, the partials after. Compiles
tests/data/epilogue_probe.cu to PTX, and tests/data/activation_probe.cu for the host, with the
real nvcc."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cutlass_splitk.cudakit import find_cutlass, find_nvcc

pytestmark = pytest.mark.nvcc
PROBE = Path(__file__).parent / "data" / "epilogue_probe.cu"
ACTIVATION_PROBE = Path(__file__).parent / "data" / "activation_probe.cu"
ACTIVATION_DISPATCH = Path(__file__).parent / "data" / "activation_dispatch.cu"
TEMPLATES = Path(__file__).resolve().parents[1] / "cutlass_splitk" / "templates"


def ptx_of(tmp_path: Path, *defines: str) -> str:
    ptx = tmp_path / ("probe_" + "_".join(defines).replace("=", "_") + ".ptx")
    cmd = [str(find_nvcc()), "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-arch=compute_90a",
           *(f"-D{d}" for d in defines), f"-I{TEMPLATES}", f"-I{find_cutlass().include}", "-ptx", str(PROBE),
           "-o", str(ptx)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return ptx.read_text()


def global_accesses(kind: str, ptx: str) -> list:
    """The global loads (kind "ld") or stores ("st") in ``ptx``, in order, with their qualifiers."""
    return re.findall(rf"\b{kind}\.global[.\w]*", ptx)


@pytest.mark.parametrize("permute", ["kNone", "k0213", "k20314"])
def test_each_output_vector_is_one_16_byte_store(permute, tmp_path):
    assert global_accesses("st", ptx_of(tmp_path, f"PROBE_PERMUTE={permute}")) == ["st.global.wb.v4.u32"]


def test_an_epilogue_of_any_kind_stores_16_byte_vectors(tmp_path):
    # RuntimeKind (sm90's partial GEMM reducing its own slices: one unit per dtype serves every op) reads the kind
    # from its parameters; each of its permutes' stores is still one 16-byte access.
    stores = global_accesses("st", ptx_of(tmp_path, "PROBE_PERMUTE=kNone", "PROBE_RUNTIME"))
    assert stores and set(stores) == {"st.global.wb.v4.u32"}


def test_the_activation_chosen_at_run_time_is_the_compiled_in_one(tmp_path):
    """activate_all(act, ...) gives the bits of activate<act> for all seven activations (tests/data/
    activation_dispatch.cu, built for the host)."""
    exe = tmp_path / "activation_dispatch"
    subprocess.run([str(find_nvcc()), "-std=c++17", "-O2", "-x", "cu", f"-I{TEMPLATES}", str(ACTIVATION_DISPATCH),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    rows = [line.split() for line in subprocess.run([str(exe)], check=True, capture_output=True,
                                                     text=True).stdout.splitlines()]
    assert [int(r[0]) for r in rows] == list(range(7))
    assert all(int(r[1]) == 0 and int(r[2]) > 10**6 for r in rows), rows


def test_reduction_loads_its_epilogue_inputs_before_waiting_for_the_gemm(tmp_path):
    # C, bias and E are not written by the GEMM (launched after everything before it on the
    # stream), so their latency need not follow the partials': 1-2 % of the skinny shapes'
    # whole call on the H100 (BENCHMARKS.md, session 10).
    ptx = ptx_of(tmp_path, "PROBE_PERMUTE=kNone", "PROBE_REDUCTION")
    before, wait, after = ptx.partition("griddepcontrol.wait;")
    assert wait, "the reduction waits for the GEMM"
    assert global_accesses("ld", before) == ["ld.global.v4.u32"] * 3  # C, bias, E: 8 halves each
    partials = global_accesses("ld", after)
    assert set(partials) == {"ld.global.cg.v4.u32"} and len(partials) >= 2  # the f32 partials only


def test_gelu_is_one_ex2_and_one_reciprocal_per_output(tmp_path):
    # The probe's epilogue applies GELU to 8 outputs. erff's polynomial (~27 SASS instructions a
    # GELU, BENCHMARKS.md session 12) had no reciprocal; IEEE division would show as div.rn.
    ptx = ptx_of(tmp_path, "PROBE_PERMUTE=kNone")
    assert len(re.findall(r"\bex2\.approx\.ftz\.f32\b", ptx)) == 8
    assert len(re.findall(r"\brcp\.approx\.ftz\.f32\b", ptx)) == 8
    assert not re.search(r"\bdiv\.(rn|full)\.f32\b", ptx)


def run_activation_probe(tmp_path: Path, floor: str = "", arch: str = "") -> dict:
    """{name: (max relative error, its input, max absolute error below the floor, class mismatches,
    inputs)} from tests/data/activation_probe.cu, built for the host, or for the GPU of ``arch``."""
    exe = tmp_path / "activation_probe"
    cmd = [str(find_nvcc()), "-std=c++17", "-O2", "-x", "cu", f"-I{TEMPLATES}", str(ACTIVATION_PROBE), "-o", str(exe)]
    cmd += [f"-DPROBE_MIN_VALUE={floor}"] if floor else []
    cmd += [f"-arch={arch}", "-DPROBE_DEVICE"] if arch else []
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    print(f"values >= {floor or '1e-30'}:\n{out}")
    rows = {}
    for line in out.splitlines():
        name, rel, arg, abs_small, bad, count = line.split()
        rows[name] = (float(rel), float(arg), float(abs_small), int(bad), int(count))
    return rows


# Relative error bounds on values of magnitude >= 1e-30 and >= 1e-3 (cks_activation.cuh); f16 and
# bf16 round to 2^-11 and 2^-8 relative. The former GELU, 0.5 x (1 + erff(x / sqrt 2)), scores 1.0
# at >= 1e-30 (it returns 0 for x < -5.9) and 5e-5 at >= 1e-3.
BOUNDS = {"gelu": (2.5e-5, 1.2e-5), "gelu_tanh": (1.5e-5, 2e-6), "silu": (5e-6, 1e-6), "sigmoid": (5e-6, 1e-6)}


def check_activations(tmp_path: Path, min_inputs: int, arch: str = "") -> None:
    for floor, column in (("", 0), ("1e-3", 1)):
        rows = run_activation_probe(tmp_path, floor, arch)
        assert sorted(rows) == sorted(BOUNDS)
        for name, (rel, arg, abs_small, bad, count) in rows.items():
            assert count >= min_inputs
            assert bad == 0, f"{name}: {bad} inputs with a NaN / infinity where float64 has none, or the reverse"
            assert 0 < rel <= BOUNDS[name][column], f"{name}: relative error {rel} at x = {arg}"
            assert floor or abs_small < 1e-29, name  # below 1e-30: absolute


def test_activations_match_their_float64_definitions_on_the_host(tmp_path):
    check_activations(tmp_path, 3_000_000)
