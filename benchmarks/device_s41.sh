#!/usr/bin/env bash
# Session 41's device calls, by phase (logs under $OUT):
#   build     build/default and build/epilogues from this checkout on the device (cold: its object cache is empty; the
#             2-core CPU machine was 2.6-3.6x slower than usual at the time), the slowest units of each in the log
#   mid       the shipped chain op (build/default, round 67's swapped wide tiles now in it) swept on medium shapes drawn
#             before the run (every candidate, graph replays, cuBLAS and the eager chain beside), packed into $OUT/mid.tgz
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases (build too, since session 43)
source benchmarks/device_lib.sh  # the run's setup, persweep, common_phase
fuzz_seed=20264101
for phase in "$@"; do
  case $phase in
    mid) persweep mid default bias_gelu_mul_permute_f16 ${LIMIT:-60} $SHAPES ;;
    *) common_phase "$phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
