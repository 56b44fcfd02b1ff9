"""The epilogue's activations (cutlass_splitk/templates/cks_activation.cuh) against their float64
definitions over every one of the 2^32 float bit patterns, on the GPU with the device's own
ex2.approx / rcp.approx: tests/data/activation_probe.cu built with -DPROBE_DEVICE. The host
build of the same probe (tests/test_epilogue_ptx.py) checks the formulas with the C library's
exp2 and division; this checks what the kernels run, against the same bounds."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

pytestmark = [pytest.mark.gpu, pytest.mark.nvcc]


def test_activations_over_every_float(tmp_path):
    import torch

    from cutlass_splitk.cudakit import find_nvcc
    from test_epilogue_ptx import check_activations

    try:
        find_nvcc()
    except Exception as exc:  # noqa: BLE001 - whatever stops finding nvcc means: cannot build here
        pytest.skip(f"no nvcc here: {exc}")
    major, minor = torch.cuda.get_device_capability()
    check_activations(tmp_path, 2 ** 32, arch=f"sm_{major}{minor}")
