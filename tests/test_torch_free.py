"""The runtime without torch (issue 15): a subprocess in which importing torch fails (a
meta-path finder raises ImportError for 'torch' and its submodules) loads the package, runs an
op on CUDA-array-interface arrays (fake device memory: tests/cks_fakedevices.py) through a real
ctypes boundary, reads the result back through DLPack, and loads a real built library."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from cks_testutil import ROOT

BLOCK_TORCH = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(name + " is hidden from this process")
sys.meta_path.insert(0, NoTorch())
sys.path[:0] = [TESTS, BENCHMARKS]
"""


def run_without_torch(body: str) -> str:
    code = (BLOCK_TORCH.replace("TESTS", repr(str(ROOT / "tests"))).replace("BENCHMARKS", repr(str(ROOT / "benchmarks")))
            + textwrap.dedent(body))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_torch_is_really_hidden():
    out = run_without_torch("""
        try:
            import torch
        except ImportError as exc:
            print("hidden:", exc)
    """)
    assert out.strip() == "hidden: torch is hidden from this process"


def test_runtime_runs_an_op_without_torch():
    pytest.importorskip("numpy")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import fakelib

    if not fakelib.have_compiler():
        pytest.skip("no host C compiler")

    out = run_without_torch("""
        import tempfile
        from pathlib import Path
        import numpy as np
        import cutlass_splitk
        from cutlass_splitk.config import load_config
        from cutlass_splitk.runtime import dlpack
        from cks_fakedevices import FakeArray, FakeDevices, f16
        import fakelib

        def Platform():
            return fakelib.FakePlatform(accepts_cpu=False, devices=FakeDevices())

        spec = next(o for o in load_config(Path("configs/default.yaml")).ops if o.name == "linear_bias_gelu_f16")
        op = fakelib.fake_op(spec, fakelib.build_fake(spec, Path(tempfile.mkdtemp())), Platform())
        dev = op.platform.devices
        a, w, bias = FakeArray(f16(16, 64), dev), FakeArray(f16(32, 64, seed=1).T, dev), FakeArray(f16(32), dev)
        y = op(a, w, bias=bias, stream=7)
        args = fakelib.last_args(op)
        assert (args.m, args.n, args.k, args.a, args.b, args.bias, args.d) == (
            16, 32, 64, a.data.ctypes.data, w.data.ctypes.data, bias.data.ctypes.data, y.ptr)
        assert isinstance(y, dlpack.DeviceArray) and np.from_dlpack(y).shape == (16, 32)
        assert op.torch_op is None and op.dtype == "float16"
        assert not [m for m in sys.modules if m == "torch" or m.startswith("torch.")]
        print("ran", fakelib.calls(op))
    """)
    assert out.strip() == "ran 1"


@pytest.mark.nvcc
def test_load_a_built_library_without_torch(tiny_build):
    """cutlass_splitk.load() of a real library: no custom ops, array calls reach the C launch
    (which, without a GPU, fails with the CUDA error the library reports)."""
    out = run_without_torch(f"""
        import numpy as np
        import cutlass_splitk
        from cutlass_splitk.runtime import KernelError
        from cks_fakedevices import FakeArray, FakeDevices, f16
        import fakelib

        def Platform():
            return fakelib.FakePlatform(accepts_cpu=False, devices=FakeDevices())

        lib = cutlass_splitk.load({str(tiny_build.out)!r}, platform=Platform())
        op = lib.tiny_f16
        assert lib.ops == ["tiny_f16"] and op.torch_op is None
        dev = lib.platform.devices
        try:
            op(FakeArray(f16(16, 64), dev), FakeArray(f16(32, 64).T, dev), split_k=1)
        except KernelError as exc:
            print("launch reached:", "CUDA error" in str(exc))
        assert "torch" not in sys.modules
    """)
    assert out.strip() == "launch reached: True"


def test_the_platform_stream_without_torch_is_the_default_stream():
    """Without torch there is no current torch stream: the platform answers the legacy default stream (the array
    path's default), which explain and tune hand the placement probe (Op.device_info), with no CUDA call."""
    out = run_without_torch("""
        from cutlass_splitk.runtime.platform import CudaPlatform
        print(CudaPlatform().stream(0), CudaPlatform().stream_function()(3))
    """)
    assert out.strip() == "0 0"
