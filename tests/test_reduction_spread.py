"""Parallel split-K's reduction blocks spread over the SMs (cks_reduction.cuh's reduce_spread_smem):
where a one-round GEMM fills nearly every SM, each PDL-launched block asks for unused shared memory
so that an SM holds at most its even share of the blocks (else the few SMs the GEMM leaves idle take
as many as their threads allow and read a quarter of the partials alone: 0.5-1.7 us a call on the
H100's skinny picks, BENCHMARKS.md session 32). Built for the host from tests/data/reduce_spread.cu
with the real nvcc; the arithmetic only (the GPU tests run the kernels)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cutlass_splitk.cudakit import find_cutlass, find_nvcc

pytestmark = pytest.mark.nvcc
PROBE = Path(__file__).parent / "data" / "reduce_spread.cu"
TEMPLATES = Path(__file__).resolve().parents[1] / "cutlass_splitk" / "templates"


@pytest.fixture(scope="module")
def spread(tmp_path_factory):
    exe = tmp_path_factory.mktemp("spread") / "reduce_spread"
    subprocess.run([str(find_nvcc()), "-std=c++17", "-O2", "--expt-relaxed-constexpr", f"-I{TEMPLATES}",
                    f"-I{find_cutlass().include}", str(PROBE), "-o", str(exe)], check=True, capture_output=True,
                   text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {(int(c), int(b), int(t)): (int(n), int(f)) for c, b, t, n, f in (line.split() for line in out.splitlines())}


def test_one_block_an_sm_where_the_gemm_leaves_four_sms_idle(spread):
    # 256^2 x 65536 at split 8 or 16: 128 GEMM CTAs, 128 reduction blocks of 256 threads.
    assert spread[(128, 128, 256)] == (233472 - 1024 - 6144, 1)


@pytest.mark.parametrize("blocks,share", [(512, 4), (2048, 16)])
def test_the_even_share_of_many_blocks(spread, blocks, share):
    nbytes, fit = spread[(128, blocks, 64)]
    assert fit == share and nbytes % 256 == 0 and nbytes == (233472 // share - 1024 - 6144) // 256 * 256


def test_no_cap_where_the_threads_cap_the_blocks_already(spread):
    assert spread[(128, 8192, 64)] == (0, 0)  # 63 blocks of 64 threads an SM: over 2048 threads


def test_no_cap_where_the_gemm_leaves_many_sms_idle_or_runs_several_rounds(spread):
    # 64 CTAs: 68 idle SMs take every block before the GEMM ends (1.7 us faster than capped, round 52).
    assert spread[(64, 512, 64)] == (0, 0)
    assert spread[(0, 128, 256)] == (0, 0)  # more than one round (or not known)
    assert spread[(116, 128, 256)][1] == 1  # 16 idle SMs: an eighth of 132, still capped
    assert spread[(115, 128, 256)] == (0, 0)  # 17 idle


def test_a_gemm_on_every_sm(spread):
    assert spread[(132, 132, 256)][1] == 1
    assert spread[(132, 264, 256)][1] == 2
