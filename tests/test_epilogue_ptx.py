"""What the shared fused epilogue compiles to: every output vector is one 16-byte store, for
every output permute. (Written as a plain assignment from the converted array, NVVM split the
store of a permuted epilogue into four 4-byte stores: 4x the memory sectors of every D write,
found with ncu in session 7.) And parallel split-K's reduction kernel loads the epilogue's own
inputs (C, bias, E) before it waits for the GEMM, the partials after. Compiles
tests/data/epilogue_probe.cu to PTX with the real nvcc."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cutlass_splitk.cudakit import find_cutlass, find_nvcc

pytestmark = pytest.mark.nvcc
PROBE = Path(__file__).parent / "data" / "epilogue_probe.cu"
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
