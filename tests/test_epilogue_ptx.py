"""What the shared fused epilogue compiles to: every output vector is one 16-byte store, for
every output permute. (Written as a plain assignment from the converted array, NVVM split the
store of a permuted epilogue into four 4-byte stores: 4x the memory sectors of every D write,
found with ncu in session 7.) Compiles tests/data/store_probe.cu to PTX with the real nvcc."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cutlass_splitk.cudakit import find_cutlass, find_nvcc

pytestmark = pytest.mark.nvcc
PROBE = Path(__file__).parent / "data" / "store_probe.cu"
TEMPLATES = Path(__file__).resolve().parents[1] / "cutlass_splitk" / "templates"


def global_stores(permute: str, tmp_path: Path) -> list:
    ptx = tmp_path / f"probe_{permute}.ptx"
    cmd = [str(find_nvcc()), "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-arch=compute_90a",
           f"-DPROBE_PERMUTE={permute}", f"-I{TEMPLATES}", f"-I{find_cutlass().include}", "-ptx", str(PROBE),
           "-o", str(ptx)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return re.findall(r"\bst\.global[.\w]*", ptx.read_text())


@pytest.mark.parametrize("permute", ["kNone", "k0213", "k20314"])
def test_each_output_vector_is_one_16_byte_store(permute, tmp_path):
    assert global_stores(permute, tmp_path) == ["st.global.wb.v4.u32"]
