"""The config fuzzer on a small budget (issue 13, part 2): random valid configs of both
backends, built here with nvcc (content-hash cache) and run through the public API against a
float64 reference, each problem twice and compared bitwise. The full run is
``benchmarks/fuzz_configs.py`` (README, "GPU tests"); this is the same code with a fixed seed:
6 configs (3 sm80, 3 sm90) x 50 problems.

Needs nvcc and the CUTLASS headers besides the GPU (``CUTLASS_PATH`` where the nvidia-cutlass
wheel is missing); ``CUTLASS_SPLITK_FUZZ_SEED`` / ``_CONFIGS`` / ``_PROBLEMS`` change the budget.
"""

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

pytestmark = [pytest.mark.gpu, pytest.mark.nvcc]

SEED = int(os.environ.get("CUTLASS_SPLITK_FUZZ_SEED", "13"))
CONFIGS = int(os.environ.get("CUTLASS_SPLITK_FUZZ_CONFIGS", "6"))
PROBLEMS = int(os.environ.get("CUTLASS_SPLITK_FUZZ_PROBLEMS", "50"))


def test_fuzz_small_budget(tmp_path, capsys):
    from cutlass_splitk.toolchain import BuildError, default_toolchain

    try:
        default_toolchain()
    except BuildError as exc:
        pytest.skip(f"cannot build here: {exc.what}")
    import torch

    import fuzz_configs

    major, minor = torch.cuda.get_device_capability()
    arch = 10 * major + minor
    if arch not in (80, 86, 89, 90):
        pytest.skip(f"no sm80 arch: for compute capability {major}.{minor}")
    out = tmp_path / "fuzz"
    rc = fuzz_configs.main(["--seed", str(SEED), "--configs", str(CONFIGS), "--problems-per-config", str(PROBLEMS),
                            "--backend", "both", "--out", str(out), "--jobs", str(os.cpu_count() or 1),
                            "--sm80-arch", str(arch)])
    printed = capsys.readouterr().out
    print(printed)
    report = json.loads((out / "report.json").read_text())
    t = report["totals"]
    assert rc == 0, printed[-6000:]
    assert t["built"] == CONFIGS and t["build_failed"] == 0 and t["load_failed"] == 0
    assert t["problems"] + t["skipped"] == CONFIGS * PROBLEMS
    assert t["wrong"] == t["nonrepro"] == t["error"] == 0
    # the sm80 half runs on any of these GPUs (built for its arch); the sm90 half only on compute capability 9.0
    assert t["problems"] >= CONFIGS * PROBLEMS // 2
    if arch == 90:
        assert t["skipped"] == 0
