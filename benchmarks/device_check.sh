#!/usr/bin/env bash
# One device-machine call: the GPU tests (compute-sanitizer runs included). Needs build/default and build/epilogues
# carried. Logs go to $OUT (or ./device-logs).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/gpu_tests.log"
tail -5 "$out/gpu_tests.log"
