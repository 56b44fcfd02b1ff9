#!/usr/bin/env bash
# Session 9's device calls, by phase (the machine keeps build/ between calls while warm):
#   quick   linear_f16 only, built here and carried as build/linear: the replay probe (with the
#           per-piece host times of a replayed call), host_overhead.py twice, and the GPU op,
#           hostile-input and integration tests of that one op (build root q/)
#   build   build/default and build/epilogues there (16 jobs; CUTLASS headers carried in .cutlass)
#   ops     the GPU op tests (every variant x split x mode against float64) and hostile inputs
#   rest    the rest of the GPU suite
#   host    host_overhead.py on build/default
# Logs to $OUT.
source benchmarks/device_lib.sh  # the run's setup, gpu_tests
for phase in "$@"; do
  case $phase in
    quick) ./build/replay_probe
           for run in 1 2; do
             python3 benchmarks/host_overhead.py build/linear --json "$out/host_linear$run.json" > "$out/host_linear$run.txt" 2>&1
             grep -v "^ \{5,\}[0-9]" "$out/host_linear$run.txt" | grep -v "^ *$" | head -42
           done
           mkdir -p q && ln -sfn ../build/linear q/default
           CUTLASS_SPLITK_BUILD_ROOT=$PWD/q gpu_tests quick tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py \
             tests/gpu/test_gpu_integration.py ;;
    build) bash benchmarks/device_build.sh default=configs/default.yaml epilogues=configs/epilogues.yaml ;;
    ops) gpu_tests ops tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py ;;
    rest) gpu_tests rest tests/gpu --deselect tests/gpu/test_gpu_ops.py --deselect tests/gpu/test_gpu_hostile.py ;;
    host) python3 benchmarks/host_overhead.py build/default --json "$out/host.json" > "$out/host.txt" 2>&1
          grep -v "^ \{5,\}[0-9]" "$out/host.txt" | grep -v "^ *$" | head -42 ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
