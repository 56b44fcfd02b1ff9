"""compute-sanitizer memcheck / racecheck / synccheck over serial and parallel split-K
variants at odd sizes (benchmarks/sanitize_serial.py: two launches per problem, so the
second reuses the semaphores the first left), results checked against float64."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_util import BUILD_ROOT, manifest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
SUMMARY = {
    "memcheck": "ERROR SUMMARY: 0 errors",
    "racecheck": "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
    "synccheck": "ERROR SUMMARY: 0 errors",
}


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="compute-sanitizer is not on PATH")
@pytest.mark.parametrize("tool", sorted(SUMMARY))
def test_sanitizer_clean(tool):
    built = manifest("default")
    if built is None:
        pytest.skip("build/default is not built")
    # sanitize_serial.py: every variant of two ops that this GPU runs, two problems each
    import cutlass_splitk

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from sanitize_serial import OPS, runnable

    lib = cutlass_splitk.load(BUILD_ROOT / "default")
    problems = 2 * sum(len(runnable(lib, getattr(lib, op))) for op in OPS)
    assert problems > 0
    proc = subprocess.run(
        ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", sys.executable,
         str(ROOT / "benchmarks" / "sanitize_serial.py"), str(BUILD_ROOT / "default")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = proc.stdout + proc.stderr
    assert f"{problems} problems, 0 failures" in out, out[-2000:]
    probes = bindings_probes(out)
    if tool == "memcheck" and probes:
        # memcheck also reports failed CUDA API calls: cuda.bindings (cuda.core's device
        # properties) probes the driver's entry points with cuGetProcAddress and some of them
        # fail by design. Those, and nothing else, are allowed.
        total = int(re.search(r"ERROR SUMMARY: (\d+) errors?", out).group(1))
        assert total == probes and proc.returncode == 99, out[-4000:]
    else:
        assert proc.returncode == 0, out[-4000:]
        assert SUMMARY[tool] in out, out[-2000:]


def bindings_probes(out: str) -> int:
    """The reported errors that are failed cuGetProcAddress calls made from cuda.bindings'
    driver module (cydriver), with no frame in one of our libraries (lib<op>.so)."""
    ours = re.compile(r"Host Frame:.* in lib(?!c\.so)[\w+-]+\.so")
    return sum(1 for block in out.split("\n========= \n")
               if "on CUDA API call to cuGetProcAddress" in block and "cydriver" in block
               and not ours.search(block))
