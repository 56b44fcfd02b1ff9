#!/usr/bin/env bash
# Session 22's device calls, by phase (logs and JSON under /tmp/s22, packed into $OUT/s22.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   r35      round 35 (benchmarks/explore_sm90_r35.yaml, build/r35): parallel split-K tiles without a
#            cluster and with finer split lists, every candidate swept (graph replays) beside cuBLAS, on
#            skinny shapes (M*N <= 1024^2, K >= 8192); SHAPES overrides the list
#   r35check the same build's every (variant, split) checked against float64 (outputs poisoned) and timed on
#            shapes whose K slices overrun K (K = 1000, 5000: the last slice cut at K, some k-tiles past it)
#   r36 r36check  round 36 (round36_sm90_widened_clusters.yaml, build/r36) as r35 / r35check: cuBLAS's skinny tiles
#            (N = 80, 96, 112) and clusters of four
#   sweepx   the chain op of build/default swept (f16) on the same shapes ($DT: dtype)
#   cublas   ncu: the kernels cuBLAS runs for torch.matmul on the odd skinny shapes (tile, grid, cluster)
#   ncu35    ncu: round 35's best candidate on two of them (partial GEMM and reduction separately)
#   fuzz90   the config fuzzer, sm90 only, on each seed of $SEEDS (8 configs x 100 problems; .cutlass carried)
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261401
out=/tmp/s22; mkdir -p "$out"
skinny=(192,1024,32768 256,512,49152 384,384,24576 640,640,20480 256,256,65536 512,512,32768 48,8192,8192
        512,256,131072 1024,1024,16384 384,768,16384 640,1024,12288 896,896,16384 320,1280,16384 768,768,12288
        128,1536,32768)
for phase in "$@"; do
  case $phase in
    r35) sweep r35 r35 explore90r35_chain_f16 ${SHAPES:-${skinny[@]}} ;;
    r35check) ab r35check explore90r35_chain_f16 . - r35 384,384,24576 300,640,1000 200,1024,5000 ;;
    r36check) ab r36check explore90r36_chain_f16 . - r36 384,384,24576 300,640,1000 200,1024,5000 ;;
    r36) sweep r36 r36 explore90r36_chain_f16 ${SHAPES:-${skinny[@]}} ;;
    sweepx) sweep sweepx default 'bias_gelu_mul_permute_{dtype}' ${SHAPES:-${skinny[@]}} ;;
    cublas) S="--clock-control none --nvtx --nvtx-include cublas/ --section SpeedOfLight --section LaunchStats"
            for shape in "384 384 24576" "640 640 20480" "320 1280 16384" "896 896 16384" "768 768 12288" "192 1024 32768"; do
              set -- $shape
              ncu $S python3 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/ncu_cublas_$1_$2_$3.txt" 2>&1
              echo "== cuBLAS $shape rc=$?"
              grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\)|Grid Size|Cluster Size|Registers" \
                "$out/ncu_cublas_$1_$2_$3.txt" | cut -c1-150
            done ;;
    ncu35) S="--clock-control none --launch-count 14 --section SpeedOfLight --section LaunchStats"
           for spec in "384 384 24576 t128x128x64_c1x1_coop_sauto_a8 8" "640 640 20480 t128x128x64_c1x1_coop_sauto_a8 5"; do
             set -- $spec
             ncu $S python3 benchmarks/profile_shape.py build/r35 $1 $2 $3 explore90r35_chain_f16 \
               explore90r35_chain_f16_parallel_sm90_$4 $5 > "$out/ncu35_$1_$2_$3.txt" 2>&1
             echo "== ours $spec rc=$?"
             grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\)|Grid Size|Cluster Size" \
               "$out/ncu35_$1_$2_$3.txt" | cut -c1-150
           done ;;
    fuzz90) for seed in ${SEEDS:-20261539 20261534}; do
              SEED=$seed CONFIGS=8 PROBLEMS=100 OUT=$out/fz$seed bash benchmarks/device_fuzz.sh --backend sm90 | tail -12
            done ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s22.tgz" -C /tmp s22
done
