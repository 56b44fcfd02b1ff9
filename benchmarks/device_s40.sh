#!/usr/bin/env bash
# Session 40's device calls, by phase (logs under $OUT):
#   chg       the shipped chain op (build/default) swept on $SHAPES (every candidate, graph replays, cuBLAS beside):
#             shapes whose pick the serial fix-up per further wave (SM90_FIXUP_WAVE) moves, packed into $OUT/chg.tgz
#   avf       benchmarks/api_vs_forced.py on medium shapes whose pick read 10-33 % slower in bench's graph column
#             than in its sweep (session 40's first sample): the pick through the API and forced, alternating
#   r67check  round 67 (benchmarks/explore_sm90_r67.yaml, build/r67: swapped wide tiles at parallel split 1-3) against
#             float64 on three odd shapes (benchmarks/variant_ab.py, outputs poisoned)
#   r67       every candidate of build/r67 and of the shipped chain op (build/default) swept per medium shape (graph
#             replays, cuBLAS and the eager chain beside), one process per shape and build, packed into $OUT/r67.tgz
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, persweep, common_phase
fuzz_seed=20264001
r67shapes=(288,13824,1024 300,8192,8192 704,6144,4096 960,4608,4096 320,7168,12288 576,7168,4096 544,13824,3072
           264,3584,2560 1536,3072,5120 896,5120,7168 480,2560,4096 384,4096,12288)
for phase in "$@"; do
  case $phase in
    chg) persweep chg default bias_gelu_mul_permute_f16 ${LIMIT:-60} $SHAPES ;;
    avf) python3 benchmarks/api_vs_forced.py build/default bias_gelu_mul_permute_f16 704,6144,4096 960,4608,4096 \
           1152,4608,16384 2560,2048,4096 2>&1 | tee "$out/avf.txt" ;;
    r67check) ab r67check explore90r67_chain_f16 . - r67 384,384,24576 300,640,1000 704,960,10240
              grep -h WRONG "$out"/r67check_*.txt | head -5 ;;
    r67) pairsweep r67 r67 explore90r67_chain_f16 60 ${SHAPES:-${r67shapes[*]}} ;;
    *) common_phase "$phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
