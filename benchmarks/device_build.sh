#!/usr/bin/env bash
# Builds configs on the device machine (16 cores; CUTLASS headers carried in .cutlass, since the
# nvidia-cutlass wheel is not installed there). Usage: bash benchmarks/device_build.sh NAME=CONFIG ...
# e.g. default=configs/default.yaml epilogues=configs/epilogues.yaml. Output: build/NAME.
set -euo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
export CUTLASS_PATH=${CUTLASS_PATH:-$PWD/.cutlass}
for spec in "$@"; do
  name=${spec%%=*}; config=${spec#*=}
  SECONDS=0
  python3 -m cutlass_splitk.cli build "$config" -o "build/$name" -j "${JOBS:-16}" -q
  echo "built $name from $config in ${SECONDS}s"
done
