#!/usr/bin/env bash
# Session 39's device calls, by phase (logs under $OUT):
#   chg       the shipped chain op (build/default) swept on $SHAPES (every candidate, graph replays, cuBLAS beside):
#             shapes whose pick the time model's last-round term moves, packed into $OUT/chg.tgz (device_lib's persweep)
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, persweep, common_phase
fuzz_seed=20263901
for phase in "$@"; do
  case $phase in
    chg) persweep chg default bias_gelu_mul_permute_f16 90 $SHAPES ;;
    *) common_phase "$phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
