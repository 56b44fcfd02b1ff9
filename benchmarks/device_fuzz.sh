#!/usr/bin/env bash
# One device-machine call: the config fuzzer (issue 13, part 2). Draws $CONFIGS random valid configs
# of both backends (seed $SEED), builds them here (16 cores; CUTLASS headers carried in .cutlass, the
# objects cached in build/fuzz-cache) and runs $PROBLEMS random problems through each on the GPU.
# Report, summary and the drawn configs go to $OUT/fuzz (or ./device-logs/fuzz). If the call runs
# out of time, make the same call again: what compiled is cached, and the run starts over from it.
# Extra arguments go to fuzz_configs.py (e.g. --only-config 7 to replay one config).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
export CUTLASS_PATH=${CUTLASS_PATH:-$PWD/.cutlass}
out=${OUT:-device-logs}/fuzz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 benchmarks/fuzz_configs.py --seed "${SEED:-20260613}" --configs "${CONFIGS:-48}" \
    --problems-per-config "${PROBLEMS:-300}" --backend both --jobs "${JOBS:-16}" \
    --out "$out" --build-dir build/fuzz --cache build/fuzz-cache "$@"
