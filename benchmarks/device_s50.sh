#!/usr/bin/env bash
# Session 50's device calls (issue 12), not run (no device machine started): the GPU check of branch
# sm90-set-operands (the sm90 templates' one operand mapping, sm90_launch.cuh's set_operands, for the in-kernel modes
# and the partial GEMM, and D's one stride alias; run from a checkout of that branch), by phase (logs under $OUT):
# device_lib.sh's common phases (build, ops, rest, bench, fuzz: seed 20265001 unless $SEED), and
#   lean     build/default and build/epilogues with a few ops each, side by side (both layouts, both dtypes, E, both
#            permutes, row and column bias, swapped in-kernel groups): when device time is short
#   held70   bench --sweep of the shipped chain op on twelve short-K shapes no sweep has seen (the heuristic held
#            out: python3 benchmarks/fit_model.py held70.json@act,gpc --keep sm90 --samples 0 --rounds 0)
# Carry .cutlass_slim (CUTLASS_PATH=$PWD/.cutlass_slim): e.g. `bash benchmarks/device_s50.sh build ops`.
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20265001
for phase in "$@"; do
  case $phase in
    lean) python3 -m cutlass_splitk.cli build configs/default.yaml -o build/default --slowest 4 \
            --op bias_gelu_mul_permute_f16 --op linear_f16 --op qkv_bf16 > "$out/build_default.txt" 2>&1 &
          python3 -m cutlass_splitk.cli build configs/epilogues.yaml -o build/epilogues --slowest 4 \
            --op leaky_add_permute_f16 --op sigmoid_qkv_bf16 --op nn_bias_silu_bf16 --op relu_rowbias_add_f16 \
            > "$out/build_epilogues.txt" 2>&1
          echo "build epilogues rc=$?"; wait $!; echo "build default rc=$?"
          tail -n 6 "$out/build_default.txt" "$out/build_epilogues.txt" ;;
    held70) persweep held70 default bias_gelu_mul_permute_f16 60 "${held70[@]}" ;;
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
