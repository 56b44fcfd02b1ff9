"""Helpers shared by the GPU tests (see conftest.py for how to run them)."""

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_ROOT = Path(os.environ.get("CUTLASS_SPLITK_BUILD_ROOT", ROOT / "build"))
LIBS = ("default", "epilogues")


def manifest(name):
    try:
        return json.loads((BUILD_ROOT / name / "manifest.json").read_text())
    except (OSError, ValueError):
        return None


def gpu_skip_reason():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU found (run the gpu tests on a machine with one)"
    return None


def op_params():
    """(library, op, variant) for every built variant, read from the manifests at collection."""
    params = []
    for lib in LIBS:
        m = manifest(lib)
        if m is None:
            params.append(pytest.param(lib, None, None, marks=pytest.mark.skip(
                reason=f"{BUILD_ROOT / lib} is not built: cutlass-splitk build configs/{lib}.yaml -o {BUILD_ROOT / lib}")))
            continue
        for op, desc in sorted(m["ops"].items()):
            for v in desc["variants"]:
                params.append(pytest.param(lib, op, v["name"], id=v["name"]))
    return params


