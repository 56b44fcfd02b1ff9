# Shared by the device scripts: sourcing it sets up the run (strict mode, the package and the
# carried CUTLASS headers on the paths, $out = $OUT or device-logs, the clock, the GPU's name in
# the log) and defines gpu_tests LOG PYTEST-ARGS..., which runs the GPU tests given, logs to
# $out/LOG.log and prints the summary and the failures, and ab (below), variant_ab.py over
# several builds in turn.
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
# ab PREFIX OP MATCH RUNS DIRS SHAPE...: variant_ab.py on OP's variants matching MATCH for each
# build/DIR in turn, once per run suffix in RUNS ("-": one run, no suffix), labelled PREFIX + DIR's
# last part + the suffix.
ab() {
  local prefix=$1 op=$2 match=$3 runs=$4 dirs=$5; shift 5
  local shapes=(); for s in "$@"; do shapes+=(--shape "$s"); done
  for run in $runs; do
    [ "$run" = - ] && run=
    for dir in $dirs; do
      local name=${dir##*/}$run
      python3 benchmarks/variant_ab.py "build/$dir" "$op" --match "$match" "${shapes[@]}" --label "$name" \
        --json "$out/${prefix}_$name.json" > "$out/${prefix}_$name.txt" 2>&1
      echo "$prefix $name rc=$? wrong=$(grep -c WRONG "$out/${prefix}_$name.txt")"
    done
  done
}
