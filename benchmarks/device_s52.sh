#!/usr/bin/env bash
# Session 52's device calls (issue 12), by phase (logs under $OUT): device_lib.sh's common phases, and
#   held80w  bench --sweep of the chain op on session 51's twelve window shapes (M <= 96, K <= 4096) from build/default
#            as branch sm80-window builds it (its sm80 grids with sm_90 cubins): the heur/best column is the
#            dispatcher's own pick with the mma.sync window
#   held80b  the same on twelve further shapes in the window that no sweep has seen: the window held out again, on the
#            cubins it ships rather than through the PTX JIT
# Carry build/default (the chain op f16 built here from the branch, ~6 MB) for `ops held80w held80b`; fuzz needs
# .cutlass_slim carried and CUTLASS_PATH=$PWD/.cutlass_slim.
# Not run (session 52: thirteen calls found no device machine, then loans paused). From branch sm80-window: build
# the chain op here (`cutlass-splitk build configs/default.yaml -o build/default --op bias_gelu_mul_permute_f16`),
# then `CUTLASS_PATH=$PWD/.cutlass_slim bash benchmarks/device_s52.sh ops held80w held80b fuzz` carrying build/default
# and .cutlass_slim (~300 s estimated). Merge the branch if the op tests pass and held80b's heur/best holds.
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20265201
held80=(8,4096,2048 16,5120,1024 24,11008,2048 32,8192,1024 40,6144,3072 48,4096,1536 56,14336,1024 64,7168,2048
        72,5120,4096 80,11008,1536 88,8192,2560 96,6144,1024)
held80b=(4,8192,1536 12,4096,3072 20,14336,2048 28,5120,1536 36,11008,1024 44,8192,2048 52,6144,1536 60,4096,1024
         68,13824,2048 76,7168,1024 84,5120,2560 92,11008,2048)
for phase in "$@"; do
  case $phase in
    held80w) persweep held80w default bias_gelu_mul_permute_f16 60 "${held80[@]}" ;;
    held80b) persweep held80b default bias_gelu_mul_permute_f16 60 "${held80b[@]}" ;;
    build|lean|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
