#!/usr/bin/env bash
# Session 24's device calls, by phase (logs and JSON under /tmp/s24, packed into $OUT/s24.tgz after
# each phase):
#   cublass  ncu: the kernels cuBLAS runs for torch.matmul on the skinny shapes we trail it on (tile, grid,
#            cluster, duration)
#   r42      round 42 (benchmarks/explore_sm90_r42.yaml, build/r42): partial GEMMs in 1x1 clusters (no padding
#            CTAs) beside the shipped 1x2 / 2x1 ones on the fifteen skinny shapes (variant_ab.py: float64 check,
#            outputs poisoned, bitwise digests, flushed and graph times)
#   diverse  session 23's twenty further shapes (tall, wide, tiny M*N, medium, short K, odd M): linear_bias_gelu
#            and the chain op of build/default, every candidate swept (f16): the ping-pong tile's GELU epilogue at
#            short K (cks_rank_v10)
#   epimix   configs/epilogues.yaml's silu_rowbias_mul_f16 (sm80 grid built for sm_90 beside sm90 grids: both
#            native on an H100), every candidate swept on twelve shapes: the heuristic with sm90 candidates first
#   ncured   ncu: the chain's partial GEMM and our reduction kernel on the skinny shapes of `cublass` (durations,
#            DRAM and L2 bytes) beside cuBLAS's splitKreduce there
#   sweepx   the chain op of build/default swept (f16) on the fifteen skinny shapes (the 1x1 partial tile's picks)
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20261801
out=/tmp/s24; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    cublass) S="--clock-control none --nvtx --nvtx-include cublas/ --section SpeedOfLight --section LaunchStats"
             for shape in "384 384 24576" "640 640 20480" "896 896 16384" "320 1280 16384" "512 512 32768" "768 768 12288"; do
               set -- $shape
               ncu $S python3 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/ncu_cublas_$1_$2_$3.txt" 2>&1
               echo "== cuBLAS $shape rc=$?"
               grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Cluster Size" "$out/ncu_cublas_$1_$2_$3.txt" | cut -c1-150
             done ;;
    r42) ab r42 explore90r42_chain_f16 . - r42 ${SHAPES:-${skinny15[@]}}
         grep -h WRONG "$out"/r42_*.txt | head -5 ;;
    diverse) sweep diverse_lbg default 'linear_bias_gelu_{dtype}' ${SHAPES:-${diverse[@]}}
             sweep diverse_chain default 'bias_gelu_mul_permute_{dtype}' ${SHAPES:-${diverse[@]}} ;;
    epimix) sweep epimix epilogues 'silu_rowbias_mul_{dtype}' ${SHAPES:-16,4096,14336 64,4096,14336 128,4096,8192 \
              256,256,65536 512,512,32768 1024,1024,16384 384,384,24576 2048,2048,2048 4096,4096,256 777,1112,2224 \
              8,4096,4096 4096,4096,4096} ;;
    ncured) M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum"
            for spec in "384 384 24576 t128x128x64_c2x1_coop_sauto_a8 10" "640 640 20480 t128x128x64_c1x2_coop_sauto_a8 4" \
                        "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "896 896 16384 t128x256x64_c1x1_coop_sauto_a8 4" \
                        "16 4096 14336 t64x128x64_c1x2_pp_sauto_a8 8"; do
              set -- $spec
              ncu --clock-control none --launch-skip 2 --launch-count 4 --metrics "$M" python3 benchmarks/profile_shape.py \
                build/default $1 $2 $3 bias_gelu_mul_permute_f16 bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 \
                > "$out/ncured_$1_$2_$3.txt" 2>&1
              echo "== $spec rc=$?"
              grep -E "^  [a-zA-Z_].*\(|dram__|lts__|gpu__" "$out/ncured_$1_$2_$3.txt" | cut -c1-110
            done ;;
    sweepx) sweep sweepx default 'bias_gelu_mul_permute_{dtype}' ${SHAPES:-${skinny15[@]}} ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s24.tgz" -C /tmp s24
done
