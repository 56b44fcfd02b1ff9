#!/usr/bin/env bash
# Session 25's device calls, by phase (logs and JSON under /tmp/s25, packed into $OUT/s25.tgz after
# each phase):
#   occ      benchmarks/cluster_probe.cu (built here with nvcc): how many clusters of 1-16 CTAs the GPU runs
#            at once (cudaOccupancyMaxActiveClusters, and the waves a 200 us spin kernel takes at 96-136 CTAs)
#   ncumem   ncu SpeedOfLight + MemoryWorkloadAnalysis of our partial GEMM (the chain's pick) and of cuBLAS's GEMM
#            on 512^2 x 32768 and 640^2 x 20480: where each kernel's time goes (L2, DRAM, SM throughput)
#   r43check r43   round 43 (benchmarks/explore_sm90_r43.yaml, build/r43): partial GEMMs in clusters of four with
#            the persistent grid sized by the device's own cluster count; r43check: variant_ab.py (float64, outputs
#            poisoned) on three shapes, r43: every candidate swept on the fifteen skinny shapes
#   r44check r44   round 44 (benchmarks/explore_sm90_r44.yaml built three times: build/r44_0, r44_1, r44_2 with
#            CKS_SM90_L2_PREFETCH 0, 1, 2): TMA L2 prefetches of the k-tile that many pipelines ahead of each main-loop
#            load (the switch lived only in the round's worktree: the producer loop of sm90_mainloop.cuh calling
#            cute::prefetch on its A and B boxes; BENCHMARKS.md, session 25); r44check: variant_ab.py with the float64
#            check; r44: every candidate swept, builds in turn
#   san43    compute-sanitizer memcheck of round 43's variants in clusters of four (odd sizes, every split's largest)
#   benchc   the suite's bench of the chain op ($DTS, default f16) with the torch.compile column (MAXAT=1:
#            max-autotune-no-cudagraphs instead of the default mode)
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20261901
out=/tmp/s25; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    occ) nvcc -O2 -arch=sm_90a -o "$out/cluster_probe" benchmarks/cluster_probe.cu && "$out/cluster_probe" \
           > "$out/occ.txt" 2>&1
         echo "occ rc=$?"; cat "$out/occ.txt" ;;
    ncumem) S="--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
            for spec in "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "640 640 20480 t128x128x64_c1x1_coop_sauto_a8 5"; do
              set -- $spec
              CUTLASS_SPLITK_GRAPHS=0 ncu $S --launch-skip 2 --launch-count 1 --kernel-name regex:device_kernel python3 \
                benchmarks/profile_shape.py build/default $1 $2 $3 bias_gelu_mul_permute_f16 \
                bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 > "$out/ncumem_ours_$1_$2_$3.txt" 2>&1
              echo "== ours $spec rc=$?"
              ncu $S --nvtx --nvtx-include cublas/ python3 benchmarks/profile_shape.py cublas $1 $2 $3 \
                > "$out/ncumem_cublas_$1_$2_$3.txt" 2>&1
              echo "== cublas $1 $2 $3 rc=$?"
              for f in "$out/ncumem_ours_$1_$2_$3.txt" "$out/ncumem_cublas_$1_$2_$3.txt"; do
                grep -E "^  [a-zA-Z_].*\(|Duration|Throughput|Hit Rate|Bandwidth|Busy|Cycles Per Issue" "$f" | cut -c1-120
              done
            done ;;
    r43check) ab r43check explore90r43_chain_f16 . - r43 384,384,24576 300,640,1000 200,1024,5000
              grep -h WRONG "$out"/r43check_*.txt | head -5 ;;
    r43) sweep r43 r43 explore90r43_chain_f16 ${SHAPES:-${skinny15[@]}} ;;
    r44check) ab r44check explore90r44_chain_f16 . - "r44_1 r44_2" 300,640,1000 200,1024,5000 384,384,24576
              grep -h WRONG "$out"/r44check_*.txt | head -5 ;;
    r44) for b in r44_0 r44_1 r44_2 r44_0; do
           sweep r44_$b$SECONDS $b explore90r44_chain_f16 ${SHAPES:-256,256,65536 512,512,32768 640,640,20480 \
             1024,1024,16384 384,384,24576 16,4096,14336 192,1024,32768 896,896,16384} | grep -v "^shape\|^---"
         done ;;
    san43) compute-sanitizer --tool memcheck python3 benchmarks/sanitize_serial.py build/r43 explore90r43_chain_f16 \
             --match "${MATCH:-c2x2|c1x4|c4x1}" > "$out/san43.txt" 2>&1
           echo "san43 rc=$?"; tail -4 "$out/san43.txt" ;;
    benchc) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype ${DTS:-f16} \
              --repeat 1 ${MAXAT:+--max-autotune} --json "$out/benchc.json" > "$out/benchc.txt" 2>&1
            echo "benchc rc=$?"; tail -14 "$out/benchc.txt" ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s25.tgz" -C /tmp s25
done
