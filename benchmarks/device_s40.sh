#!/usr/bin/env bash
# Session 40's device calls, by phase (logs under $OUT):
#   chg       the shipped chain op (build/default) swept on $SHAPES (every candidate, graph replays, cuBLAS beside):
#             shapes whose pick the serial fix-up per further wave (SM90_FIXUP_WAVE) moves, packed into $OUT/chg.tgz
#   avf       benchmarks/api_vs_forced.py on medium shapes whose pick read 10-33 % slower in bench's graph column
#             than in its sweep (session 40's first sample): the pick through the API and forced, alternating
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, persweep, common_phase
fuzz_seed=20264001
for phase in "$@"; do
  case $phase in
    chg) persweep chg default bias_gelu_mul_permute_f16 ${LIMIT:-60} $SHAPES ;;
    avf) python3 benchmarks/api_vs_forced.py build/default bias_gelu_mul_permute_f16 704,6144,4096 960,4608,4096 \
           1152,4608,16384 2560,2048,4096 2>&1 | tee "$out/avf.txt" ;;
    *) common_phase "$phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
