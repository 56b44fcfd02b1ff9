#!/usr/bin/env bash
# Session 50's device calls (issue 12), not run (no device machine started): the GPU check of branch
# sm90-set-operands (the sm90 templates' one operand mapping, sm90_launch.cuh's set_operands, for the in-kernel modes
# and the partial GEMM, and D's one stride alias; run from a checkout of that branch), by phase (logs under $OUT):
# device_lib.sh's common phases (build, lean, ops, rest, bench, fuzz: seed 20265001 unless $SEED), and
#   held70   bench --sweep of the shipped chain op on twelve short-K shapes no sweep has seen (the heuristic held
#            out: python3 benchmarks/fit_model.py held70.json@act,gpc --keep sm90 --samples 0 --rounds 0)
# Carry .cutlass_slim (CUTLASS_PATH=$PWD/.cutlass_slim): e.g. `bash benchmarks/device_s50.sh build ops`.
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20265001
for phase in "$@"; do
  case $phase in
    held70) persweep held70 default bias_gelu_mul_permute_f16 60 "${held70[@]}" ;;
    build|lean|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
