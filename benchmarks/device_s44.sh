#!/usr/bin/env bash
# Session 44's device calls, by phase (logs under $OUT): device_lib.sh's common phases only
#   build ops rest bench multi fuzz   (build: $CONFIGS_TO_BUILD; fuzz: seed $SEED, default below)
# The session checked the reduction kernel's instantiation per epilogue (cks::EpilogueKey), session 43's
# host-side tidy (bcd1126) and the in-kernel epilogue's budget for C, E and a permuted D staged in three
# buffers (rules.three_staged_buffers; the fuzzer's seed below found it) on the GPU:
# `bash benchmarks/device_s44.sh build ops fuzz`, then `bash benchmarks/device_s44.sh build rest bench`.
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20264401
for phase in "$@"; do
  case $phase in
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
