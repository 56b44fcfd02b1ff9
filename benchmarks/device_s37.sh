#!/usr/bin/env bash
# Session 37's device calls, by phase (logs under $OUT):
#   sw      the shipped chain op (build/default, bias_gelu_mul_permute_f16, with the 128x112 and 128x80-swapped parallel
#           groups) swept on the suite's skinny shapes, the held-out skinny shapes of rounds 63-64 and medium / square
#           shapes: bench --sweep, one process per shape under a timeout, packed into $OUT/sw.tgz after each
#   swb     the same for bias_gelu_mul_permute_bf16 on a few of them
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20263701
swshapes=(16,4096,14336 64,4096,14336 128,8192,8192 256,256,65536 512,512,32768 1024,1024,16384
          832,640,8192 768,768,12288 896,896,16384 512,1024,16384 320,1280,16384 576,576,16384 640,1024,12288
          768,1024,8192 1000,1024,12000 960,960,8192 704,960,10240 480,1536,12288 1152,640,9216 384,768,16384
          160,2560,12288 384,384,24576 640,640,20480 192,1024,32768 128,1536,32768 48,8192,8192 256,2048,32768
          2048,256,32768 2048,2048,2048 1000,3000,5000 777,1112,2224 1536,1536,1536 4096,1024,4096 4096,4096,4096)
for phase in "$@"; do
  case $phase in
    sw) persweep sw default bias_gelu_mul_permute_f16 90 ${SWSHAPES:-${swshapes[*]}} ;;
    swb) DT=bf16 persweep swb default bias_gelu_mul_permute_bf16 90 832,640,8192 160,2560,12288 768,768,12288 896,896,16384 \
           1024,1024,16384 512,512,32768 ;;
    *) common_phase "$phase" ;;
  esac
done
echo "phases done in ${SECONDS}s"
