#!/usr/bin/env bash
# Session 8's device calls, by phase (the machine keeps build/ between calls while warm):
#   quick   linear_f16 only, built here and carried as build/linear: the host-time probe, the
#           replay probe, host_overhead.py, and the op tests of that one op (build root q/)
#   build   build/default and build/epilogues there (16 jobs; CUTLASS headers carried in .cutlass)
#   ops     the GPU op tests (every variant x split x mode against float64, hostile inputs)
#   rest    the rest of the GPU suite (integration incl. replays vs direct launches, sanitizers,
#           arrays, tuning, fuzz)
#   host    host_overhead.py on build/default
#   bench   the chain bench (L2 flushed, f16 + bf16, torch.compile column), no sweep
# Logs to $OUT.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CUTLASS_PATH=$PWD/.cutlass
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
for phase in "$@"; do
  case $phase in
    quick) ./build/launch_probe --isolated > "$out/probe.txt"; tail -40 "$out/probe.txt" | grep -A12 "^plans"
           ./build/replay_probe
           python3 benchmarks/host_overhead.py build/linear --json "$out/host_linear.json" > "$out/host_linear.txt" 2>&1
           grep -v "^ \{5,\}[0-9]" "$out/host_linear.txt" | head -40
           mkdir -p q && ln -sfn ../build/linear q/default
           CUTLASS_SPLITK_BUILD_ROOT=$PWD/q python3 -m pytest -m gpu tests/gpu/test_gpu_ops.py -q -p no:cacheprovider \
             --confcutdir=tests/gpu -rs -x 2>&1 | grep -v DEBUG > "$out/quick_ops.log"; tail -3 "$out/quick_ops.log"
           grep -E "^(FAILED|ERROR)" "$out/quick_ops.log" | head -20 ;;
    build) bash benchmarks/device_build.sh default=configs/default.yaml epilogues=configs/epilogues.yaml ;;
    ops) python3 -m pytest -m gpu tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py -q -p no:cacheprovider \
           --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/ops.log"; tail -4 "$out/ops.log"
         grep -E "^(FAILED|ERROR)" "$out/ops.log" | head -20 ;;
    rest) python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider --confcutdir=tests/gpu -rs \
            --deselect tests/gpu/test_gpu_ops.py --deselect tests/gpu/test_gpu_hostile.py 2>&1 | grep -v DEBUG > "$out/rest.log"
          tail -4 "$out/rest.log"; grep -E "^(FAILED|ERROR)" "$out/rest.log" | head -20 ;;
    host) python3 benchmarks/host_overhead.py build/default --json "$out/host.json" > "$out/host.txt" 2>&1
          grep -v "^ \{5,\}[0-9]" "$out/host.txt" | head -45 ;;
    bench) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             --repeat 1 --json "$out/bench.json" > "$out/bench.txt" 2> "$out/bench.err"; cat "$out/bench.txt" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
