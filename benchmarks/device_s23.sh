#!/usr/bin/env bash
# Session 23's device calls, by phase (logs and JSON under /tmp/s23, packed into $OUT/s23.tgz after
# each phase):
#   sq       round 37: CUTLASS's own GEMM (D = acc, TMA store; benchmarks/probe_tma_epilogue.cu built by
#            benchmarks/build_probe_sq.sh into build/probe_sq) in several tiles, clusters and schedulers
#            (persistent, stream-K's own heuristic decomposition, ping-pong) against cuBLAS and our square
#            tile (chain, bias + GELU, linear) on the squares; every probe output checked against float64
#   ncu896   ncu: the chain's partial GEMM on 896^2 x 16384 (128x128 c1x2 split 2, 128x256 split 4) and on
#            1024^2 x 16384 (128x128 c1x2 split 2): DRAM bytes, L2 hit rate, clock, tensor-pipe activity
#   r37      round 37 (benchmarks/explore_sm90_r37.yaml): the partial GEMM as shipped (build/r37a) and with
#            CUTLASS's NoSmemWarpSpecialized epilogue, one more main-loop stage (build/r37b), every (variant,
#            split) on $SHAPES (default: eight skinny shapes), in turn, twice (variant_ab.py: float64 check,
#            outputs poisoned, bitwise digests, flushed and graph times)
#   r37check build/r37b's every candidate checked on shapes whose K slices overrun K
#   diverse  the heuristic on shapes no sweep has seen (tall, wide, tiny M*N, medium squares, short K, odd
#            M): the chain op and linear_bias_gelu (CUTLASS's TMA epilogue path) of build/default, every
#            candidate swept (f16; $SHAPES overrides the list)
#   r38      round 38 (benchmarks/explore_sm90_r38.yaml, build/r38): the 128x256 / 256x128 tiles in stream-K and
#            serial split-K on medium shapes (both ops of the config, variant_ab.py: checked and timed)
#   r38check the same on small odd shapes (K slices and partial k-tiles), correctness first
#   r39      round 39 (benchmarks/explore_sm90_r39.yaml, build/r39): longer parallel split lists on tiny M*N with
#            a huge K (both ops, variant_ab.py: checked and timed)
#   cublasm  ncu: the kernels cuBLAS runs for torch.matmul on the medium and short-K shapes (tile, grid, cluster)
#   r40      round 40 (benchmarks/explore_sm90_r40.yaml, build/r40): the 128x192 split-1 tile beside 128x256 on
#            medium, square and short-K shapes (both ops, variant_ab.py: checked and timed)
#   sqab     the 128x256 split-1 tile's two clusters on large shapes, three runs (build/default, the chain and
#            linear_bias_gelu, f16): does the tie-break's 2x1 hold there?
#   r41      round 41 (benchmarks/explore_sm90_r41.yaml, build/r41): a 64x64 partial GEMM on tiny M*N with a huge K
#   sweepx   the chain op of build/default swept (f16) on session 22's fifteen further skinny shapes
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261701
out=/tmp/s23; mkdir -p "$out"
skinny=(256,256,65536 512,512,32768 384,384,24576 192,1024,32768 1024,1024,16384 640,640,20480 48,8192,8192
        256,512,49152)
medium=(1000,3000,5000 1536,1536,1536 2048,2048,2048 3072,3072,3072 2048,2048,8192 4096,4096,256 8192,1024,512
        4096,1024,4096 777,1112,2224 4096,4096,4096 16384,128,4096 4096,4096,14336)
wide=(1536,1536,1536 2048,2048,2048 3072,3072,3072 2048,2048,8192 1000,3000,5000 777,1112,2224 4096,4096,4096
      4096,4096,14336 4096,1024,4096 16384,128,4096 65536,256,1024 4096,4096,256 8192,1024,512 2500,2496,800
      300,7168,8192 4000,4104,1000 6144,6144,6144)
tiny=(64,64,131072 96,96,65536 8,4096,4096 16,256,65536 128,128,65536 32,64,262144 1,1024,65536 64,256,65536
      200,200,40000)
for phase in "$@"; do
  case $phase in
    sq) python3 benchmarks/probe_tma_epilogue.py build/probe_sq build/default --shape 4096,4096,4096 \
          --shape 4096,4096,14336 --repeat "${REPEAT:-2}" --json "$out/sq.json" > "$out/sq.txt" 2>&1
        echo "sq rc=$?"; cat "$out/sq.txt" ;;
    ncu896) M="dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpc__cycles_elapsed.avg.per_second,gpu__time_duration.sum"
            M="$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum"
            for spec in "896 896 16384 t128x128x64_c1x2_coop_sauto_a8 2" "896 896 16384 t128x256x64_c1x1_coop_sauto_a8 4" \
                        "1024 1024 16384 t128x128x64_c1x2_coop_sauto_a8 2" "896 896 16384 t128x128x64_c2x1_coop_sauto_a8 2"; do
              set -- $spec
              ncu --clock-control none --launch-count 14 --metrics "$M" python3 benchmarks/profile_shape.py \
                build/default $1 $2 $3 bias_gelu_mul_permute_f16 bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 \
                > "$out/ncu896_$1_$4_$5.txt" 2>&1
              echo "== $spec rc=$?"
              grep -E "^  [a-zA-Z_].*\(|dram__|lts__|gpc__|gpu__|sm__" "$out/ncu896_$1_$4_$5.txt" | cut -c1-150
            done ;;
    r37) ab r37 explore90r37_chain_f16 . "1 2" "r37a r37b" ${SHAPES:-${skinny[@]}}
         for f in "$out"/r37_*.txt; do echo "== $f"; grep -E "WRONG|^shape|error" "$f" | head -5; done ;;
    r37check) ab r37check explore90r37_chain_f16 . - "r37b" 384,384,24576 300,640,1000 200,1024,5000 ;;
    diverse) sweep diverse_chain default 'bias_gelu_mul_permute_{dtype}' ${SHAPES:-${diverse[@]}}
             sweep diverse_lbg default 'linear_bias_gelu_{dtype}' ${SHAPES:-${diverse[@]}} ;;
    r38) for op in chain lbg; do ab "r38$op" "explore90r38_${op}_f16" . - r38 ${SHAPES:-${medium[@]}}; done ;;
    r38check) for op in chain lbg; do ab "r38check$op" "explore90r38_${op}_f16" . - r38 300,640,1000 200,1024,5000 \
                257,384,77; done ;;
    r39) for op in chain lbg; do ab "r39$op" "explore90r39_${op}_f16" . - r39 ${SHAPES:-${tiny[@]}}; done ;;
    cublasm) S="--clock-control none --nvtx --nvtx-include cublas/ --section SpeedOfLight --section LaunchStats"
             for shape in "1536 1536 1536" "3072 3072 3072" "1000 3000 5000" "4096 4096 256" "8192 1024 512" "777 1112 2224" "2048 2048 2048"; do
               set -- $shape
               ncu $S python3 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/ncu_cublas_$1_$2_$3.txt" 2>&1
               echo "== cuBLAS $shape rc=$?"
               grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Cluster Size" "$out/ncu_cublas_$1_$2_$3.txt" | cut -c1-150
             done ;;
    r40) for op in chain lbg; do ab "r40$op" "explore90r40_${op}_f16" . - r40 ${SHAPES:-${wide[@]}}; done ;;
    sqab) for op in bias_gelu_mul_permute_f16 linear_bias_gelu_f16; do
            ab "sqab_$op" "$op" "serial_sm90_t128x256x64_c" "1 2 3" default 4096,4096,4096 4096,4096,14336 6144,6144,6144 \
              8192,8192,1024 4000,4104,1000
          done ;;
    r41) for op in chain lbg; do ab "r41$op" "explore90r41_${op}_f16" . - r41 ${SHAPES:-${tiny[@]}}; done ;;
    sweepx) sweep sweepx default 'bias_gelu_mul_permute_{dtype}' ${SHAPES:-${skinny15[@]}} ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s23.tgz" -C /tmp s23
done
