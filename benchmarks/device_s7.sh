#!/usr/bin/env bash
# Session 7's device calls, by phase (the machine keeps build/ between calls while warm):
#   build  build/default and build/epilogues there (16 jobs; CUTLASS headers carried in .cutlass)
#   ops    the GPU op tests (every variant x split x mode against float64, persistent tiles,
#          hostile inputs)
#   rest   the rest of the GPU suite (sanitizers, integration, arrays, tuning, fuzz)
#   bench  the chain bench (L2 flushed, f16 + bf16, torch.compile column) with the sweep
# Logs to $OUT.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
for phase in "$@"; do
  case $phase in
    build) bash benchmarks/device_build.sh default=configs/default.yaml epilogues=configs/epilogues.yaml ;;
    ops) python3 -m pytest -m gpu tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py -q -p no:cacheprovider \
           --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/ops.log"; tail -4 "$out/ops.log"
         grep -E "^(FAILED|ERROR)" "$out/ops.log" | head -20 ;;
    rest) python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider --confcutdir=tests/gpu -rs \
            --deselect tests/gpu/test_gpu_ops.py --deselect tests/gpu/test_gpu_hostile.py 2>&1 | grep -v DEBUG > "$out/rest.log"
          tail -4 "$out/rest.log"; grep -E "^(FAILED|ERROR)" "$out/rest.log" | head -20 ;;
    bench) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             --sweep --repeat 1 --json "$out/bench.json" > "$out/bench.txt" 2> "$out/bench.err"; cat "$out/bench.txt" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
