# Shared by the device scripts (source it after setting $out): gpu_tests LOG PYTEST-ARGS... runs
# the GPU tests given, logs to $out/LOG.log and prints the summary and the failures.
gpu_tests() {
  local log=$1; shift
  python3 -m pytest -m gpu "$@" -q -p no:cacheprovider --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/$log.log"
  tail -3 "$out/$log.log"; grep -E "^(FAILED|ERROR)" "$out/$log.log" | head -20
}
