#!/usr/bin/env bash
# One device-machine call for the call path (issue 15): the Python CUDA stack's versions and the
# cuda.core API the runtime uses, the host-time budget (benchmarks/host_overhead.py, twice), the
# call-path GPU tests (CuPy / JAX / cuda.core arrays on their streams, a torch-free process, the
# fast path), then the whole GPU suite. Needs build/default and build/epilogues carried. Logs go
# to $OUT (or ./device-logs). ALL=0 skips the whole-suite run (for a second call).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 - > "$out/versions.txt" 2>&1 <<'EOF'
import importlib
for name in ("torch", "cuda.core", "cuda.bindings", "cupy", "jax", "numba", "ml_dtypes", "numpy"):
    try:
        m = importlib.import_module(name)
        print(f"{name} {getattr(m, '__version__', '?')}")
    except Exception as exc:
        print(f"{name}: not importable ({type(exc).__name__}: {exc})")
from cutlass_splitk.runtime import arrays, cudacore
core = cudacore.core()
smv = arrays._smv_class()
print("cuda.core module:", core.__name__, "| Stream.from_handle:", hasattr(core.Stream, "from_handle"),
      "| SMV.from_any_interface:", hasattr(smv, "from_any_interface"), "| SMV.from_buffer:", hasattr(smv, "from_buffer"))
print("hardware(0):", cudacore.hardware(0), "| driver", cudacore.driver_version(), "| runtime", cudacore.runtime_version())
EOF
cat "$out/versions.txt"
python3 benchmarks/host_overhead.py build/default --json "$out/host1.json" > "$out/host1.txt" 2>&1
cat "$out/host1.txt"; echo "host overhead 1 done at ${SECONDS}s"
python3 benchmarks/host_overhead.py build/default --json "$out/host2.json" > "$out/host2.txt" 2>&1
tail -3 "$out/host2.txt"; echo "host overhead 2 done at ${SECONDS}s"
python3 -m pytest -m gpu tests/gpu/test_gpu_arrays.py -q -rs -p no:cacheprovider > "$out/gpu_arrays.log" 2>&1
tail -15 "$out/gpu_arrays.log"; echo "call-path tests done at ${SECONDS}s"
if [ "${ALL:-1}" != "0" ]; then
  python3 -m pytest -m gpu tests/gpu -q -rs -p no:cacheprovider > "$out/gpu_tests.log" 2>&1
  tail -8 "$out/gpu_tests.log"; echo "whole GPU suite done at ${SECONDS}s"
fi
