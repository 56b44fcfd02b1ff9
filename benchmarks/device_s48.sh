#!/usr/bin/env bash
# Session 48's device calls, by phase (logs under $OUT): device_lib.sh's common phases, and
#   opsr70   the GPU op tests (every (variant, split) against float64, outputs poisoned) of build/epilogues and of
#            build/r70 (benchmarks/explore_sm90_r70.yaml) in the place of build/default: swapped operands in the
#            in-kernel modes, checked on every epilogue the coverage config has and on every new tile of the chain op
#   r70      bench --sweep (graph replays, every candidate) of round 70's chain op (the shipped sm90 grid plus swapped
#            in-kernel tiles) on session 46's twelve short-K shapes and eight more
# build/r70 is made on the CPU machine and carried; build/epilogues on the device (CONFIGS_TO_BUILD=epilogues, phase
# build). Only the per-variant op tests run on the swapped root: the rest of the suite needs the shipped default library.
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20264901  # the fuzzer now draws swapped in-kernel kernels (SWAP_RATE in benchmarks/fuzz_grammar.py)
# session 46's twelve short-K shapes, and eight where session 47's records have the pick far from cuBLAS
shortk=(32,11008,1024 48,5120,2048 64,13824,1536 80,4096,1024 96,14336,1024 112,6144,2048 128,5120,1536
        160,8192,1024 192,3072,2048 256,11008,1024 24,8192,3072 200,2560,1024)
more=(128,8192,8192 320,2304,1024 128,11008,2048 320,5120,8192 96,13824,8192 128,11008,4096 16,8192,4096 512,3584,24576)
for phase in "$@"; do
  case $phase in
    opsr70)
      rm -rf /tmp/opsroot && mkdir -p /tmp/opsroot && ln -s "$PWD/build/epilogues" /tmp/opsroot/epilogues \
        && ln -s "$PWD/build/r70" /tmp/opsroot/default
      CUTLASS_SPLITK_BUILD_ROOT=/tmp/opsroot gpu_tests opsr70 tests/gpu/test_gpu_ops.py \
        -k "variant_all_splits or bitwise or repeated_call or persistent" ;;
    r70) persweep r70 r70 explore90r70_chain_f16 60 "${shortk[@]}" "${more[@]}" ;;
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
