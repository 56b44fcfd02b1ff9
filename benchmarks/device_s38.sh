#!/usr/bin/env bash
# Session 38's device calls, by phase (logs under $OUT):
#   r65check  round 65 (benchmarks/explore_sm90_r65.yaml, build/r65: partial GEMMs in clusters of eight):
#             variant_ab.py (float64, outputs poisoned) on three shapes
#   r65       every candidate of build/r65 and of the shipped chain op (build/default) swept per shape (graph
#             replays, cuBLAS beside), one process per shape and build under a timeout, packed into $OUT/r65.tgz
#   chg       the shipped chain op (build/default) swept on $SHAPES (every candidate, graph replays, cuBLAS beside):
#             shapes whose pick a time-model change moves, packed into $OUT/chg.tgz
#   avf       benchmarks/api_vs_forced.py on the chain op: the pick through the API and forced, alternating (graph
#             replays), with the GPC order on and off
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20263801
r65shapes=(320,1280,16384 160,2560,12288 704,960,10240 480,1536,12288 384,384,24576 832,640,8192 576,576,16384
           256,256,65536 384,768,16384 768,768,12288 896,896,16384 512,512,32768 640,640,20480 1024,1024,16384
           128,1536,32768 192,1024,32768)
for phase in "$@"; do
  case $phase in
    r65check) ab r65check explore90r65_chain_f16 . - r65 384,384,24576 300,640,1000 704,960,10240
              grep -h WRONG "$out"/r65check_*.txt | head -5 ;;
    r65) pairsweep r65 r65 explore90r65_chain_f16 90 ${SHAPES:-${r65shapes[*]}} ;;
    chg) for x in $SHAPES; do persweep chg default bias_gelu_mul_permute_f16 90 "$x"; done ;;
    avf) avfshapes="160,2560,12288 128,1536,16384 320,1280,16384 256,256,65536 512,512,32768 832,640,8192 4096,4096,4096"
         python3 benchmarks/api_vs_forced.py build/default bias_gelu_mul_permute_f16 $avfshapes 2>&1 | tee "$out/avf.txt"
         CUTLASS_SPLITK_GPC_ORDER=0 python3 benchmarks/api_vs_forced.py build/default bias_gelu_mul_permute_f16 \
           $avfshapes 2>&1 | tee "$out/avf_nogpc.txt" ;;
    *) common_phase "$phase" ;;
  esac
done
echo "phases done in ${SECONDS}s"
