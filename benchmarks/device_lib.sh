# Shared by the device scripts: sourcing it sets up the run (strict mode, the package and the
# carried CUTLASS headers on the paths, $out = $OUT or device-logs, the clock, the GPU's name in
# the log) and defines gpu_tests LOG PYTEST-ARGS..., which runs the GPU tests given, logs to
# $out/LOG.log and prints the summary and the failures.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CUTLASS_PATH=$PWD/.cutlass
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

gpu_tests() {
  local log=$1; shift
  python3 -m pytest -m gpu "$@" -q -p no:cacheprovider --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/$log.log"
  tail -3 "$out/$log.log"; grep -E "^(FAILED|ERROR)" "$out/$log.log" | head -20
}
