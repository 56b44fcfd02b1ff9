#!/usr/bin/env bash
# Session 42's device calls, by phase (logs under $OUT):
#   build     build/default and build/epilogues from this checkout on the device (cold: its object cache is empty),
#             the slowest units of each in the log
#   chg       the shipped chain op (build/default) swept on $SHAPES (every candidate, graph replays, cuBLAS and the
#             eager chain beside): shapes drawn at random, before the run, from those whose pick the swapped
#             weight's GPC-order term (cks_rank_v16) moves, packed into $OUT/chg.tgz (device_lib's persweep)
#             (a second call: shapes whose pick a refit of the constants on top of v16 moves, seed 20264202)
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases (build too, since session 43)
source benchmarks/device_lib.sh  # the run's setup, persweep, common_phase
fuzz_seed=20264201
for phase in "$@"; do
  case $phase in
    chg) persweep chg default bias_gelu_mul_permute_f16 ${LIMIT:-60} $SHAPES ;;
    *) common_phase "$phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
