#!/usr/bin/env bash
# Session 51's device calls (issue 12), by phase (logs under $OUT): device_lib.sh's common phases (lean among them), and
#   jit      the first call of each sm80 serial variant of the chain op on this (sm_90) GPU with a cold JIT cache
#            (benchmarks/jit_probe.py): what the driver's PTX JIT costs a pick of an sm80 variant
#   held80   bench --sweep of the chain op (both backends' candidates) on twelve shapes of M <= 96 and K <= 4096 that
#            no sweep has seen: the held-out check of ranking sm80 candidates beside the sm90 ones there
#   wbuild   build/default with three ops (the chain op f16, linear_f16, qkv_bf16)
#   held80w  held80 again on build/default: on branch sm80-window the heur/best column is the dispatcher's own pick
#            with the mma.sync window
# Ran (H100, from branch sm90-set-operands, .cutlass_slim carried): `lean ops jit held80`, 252.8 s.
# Not run (no device time left): branch sm80-window's check. Build the chain op here from that branch
# (`cutlass-splitk build configs/default.yaml -o build/default --op bias_gelu_mul_permute_f16`, ~6 min on 2 cores,
# 5.9 MB), then `bash benchmarks/device_s51.sh ops held80w` carrying build/default (no headers needed), or
# `wbuild ops held80w` carrying .cutlass_slim with CUTLASS_PATH=$PWD/.cutlass_slim.
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20265101
held80=(8,4096,2048 16,5120,1024 24,11008,2048 32,8192,1024 40,6144,3072 48,4096,1536 56,14336,1024 64,7168,2048
        72,5120,4096 80,11008,1536 88,8192,2560 96,6144,1024)
for phase in "$@"; do
  case $phase in
    jit) CUDA_CACHE_DISABLE=1 python3 benchmarks/jit_probe.py build/default bias_gelu_mul_permute_f16 32 11008 1024 \
           2>&1 | tee "$out/jit.txt" ;;
    held80) persweep held80 default bias_gelu_mul_permute_f16 60 "${held80[@]}" ;;
    wbuild) python3 -m cutlass_splitk.cli build configs/default.yaml -o build/default --slowest 6 \
              --op bias_gelu_mul_permute_f16 --op linear_f16 --op qkv_bf16 > "$out/build_default.txt" 2>&1
            echo "build default rc=$?"; tail -n 8 "$out/build_default.txt" ;;
    held80w) persweep held80w default bias_gelu_mul_permute_f16 60 "${held80[@]}" ;;
    build|lean|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
