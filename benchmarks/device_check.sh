#!/usr/bin/env bash
# One device-machine call: GPU tests, then sanitizers. Needs build/default and build/epilogues
# carried. Logs go to $OUT (or ./device-logs).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/gpu_tests.log"
tail -5 "$out/gpu_tests.log"
for tool in memcheck racecheck synccheck; do
  timeout 240 compute-sanitizer --tool $tool --error-exitcode 99 python3 benchmarks/sanitize_serial.py build/default > "$out/sanitize_$tool.log" 2>&1
  echo "compute-sanitizer $tool: exit $? ($(grep -E 'ERROR SUMMARY|problems' "$out/sanitize_$tool.log" | tr '\n' ' '))"
done
