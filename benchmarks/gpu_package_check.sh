#!/usr/bin/env bash
# On a GPU machine with torch and no network: install the wheels benchmarks/make_gpu_check_wheels.sh
# built (no nvcc, no CUTLASS, no build side), load each kernel package by name and run it
# against torch. Expected on an H100: tiny-kernels and tiny-kernels-ptx80 (PTX JIT) match torch
# in every mode and split; tiny-kernels-sm80 fails with "no kernel image". Prints "GPU PACKAGE
# CHECK OK" last.
# When the wheel directory also holds default-kernels (build/default packaged: DEFAULT_BUILD in
# make_gpu_check_wheels.sh), the GPU op tests (tests/gpu/test_gpu_ops.py, test_gpu_hostile.py)
# then run against that installed package and the installed runtime, from outside the checkout.
# Usage: bash benchmarks/gpu_package_check.sh [WHEEL_DIR (default: gpu-check)]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEELS=$(cd "${1:-gpu-check}" && pwd)
T=$(mktemp -d)
if python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --disable-pip-version-check --target "$T/site" "$WHEELS"/*.whl
else  # no pip: a wheel is a zip; unpacked into a path entry it is installed (dist-info and entry points included)
  python3 -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' "$T/site" "$WHEELS"/*.whl
fi
cd "$T"  # not a checkout: the installed cutlass_splitk is the one imported
export PYTHONPATH="$T/site" CUDA_CACHE_DISABLE=1  # no JIT cache: the PTX case really compiles
cat > check.py <<'PY'
import os
import sys

import torch

import cutlass_splitk

name = sys.argv[1]
cap = torch.cuda.get_device_capability()
expect_fail = name.endswith("-sm80") and cap[0] != 8
assert cutlass_splitk.__file__.startswith(os.environ["PYTHONPATH"]), cutlass_splitk.__file__  # the installed one
lib = cutlass_splitk.load(name)
print(f"{name}: loaded {lib.directory} ops={lib.ops} build={lib.build_hash} on {torch.cuda.get_device_name()} "
      f"sm_{cap[0]}{cap[1]} (cutlass_splitk from {cutlass_splitk.__file__})")
torch.manual_seed(0)
failures = []
for m, n, k in [(16, 256, 1024), (48, 512, 4096), (130, 136, 520)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.half)
    w = torch.randn(n, k, device="cuda", dtype=torch.half)
    ref = a.double() @ w.double().t()
    for mode, splits in (("serial", (1, 2)), ("parallel", (2, 4))):
        for split in splits:
            try:
                y = lib.tiny_f16(a, w.t(), mode=mode, split_k=split)
                torch.cuda.synchronize()
            except Exception as exc:  # noqa: BLE001 - reported below
                failures.append(f"M={m} N={n} K={k} {mode} split={split}: {type(exc).__name__}: {exc}")
                continue
            err = ((y.double() - ref).abs().max() / ref.abs().max()).item()
            status = "ok" if err < 2e-3 else "WRONG"
            print(f"  M={m} N={n} K={k} {mode:8s} split={split}: max rel err {err:.2e} {status}")
            if status != "ok":
                failures.append(f"M={m} N={n} K={k} {mode} split={split}: error {err:.2e}")
if expect_fail:
    assert failures and all("kernel image" in f.lower() for f in failures), failures
    print(f"  expected failure (sm_80 cubins only, no PTX): {failures[0][:240]}")
else:
    assert not failures, "\n".join(failures)
if name == "tiny-kernels":
    import tiny_kernels
    assert tiny_kernels.load().build_hash == lib.build_hash
    print("  import tiny_kernels; tiny_kernels.load(): same library")
PY
for name in tiny-kernels tiny-kernels-ptx80 tiny-kernels-sm80; do
  python3 check.py "$name"
done
if [ -d "$T/site/default_kernels" ]; then
  # The op tests read <build root>/default: point it at the installed package's directory.
  mkdir -p "$T/root" && ln -s "$T/site/default_kernels" "$T/root/default"
  cp -r "$ROOT/tests/gpu" "$T/gpu_tests"
  python3 -c 'import os, cutlass_splitk; assert cutlass_splitk.__file__.startswith(os.environ["PYTHONPATH"]); print("op tests use", cutlass_splitk.__file__)'
  status=0
  CUTLASS_SPLITK_BUILD_ROOT="$T/root" python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore::pytest.PytestUnknownMarkWarning \
      "$T/gpu_tests/test_gpu_ops.py" "$T/gpu_tests/test_gpu_hostile.py" > "$T/op_tests.log" 2>&1 || status=$?
  tail -3 "$T/op_tests.log"
  [ "$status" = 0 ] || { echo "op tests against the installed default-kernels FAILED"; exit 1; }
fi
echo "GPU PACKAGE CHECK OK"
