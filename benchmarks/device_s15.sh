#!/usr/bin/env bash
# Session 15's device calls, by phase (logs and JSON under /tmp/s15, packed into $OUT/s15.tgz after
# each phase, so a call stopped at its limit still brings back what was done; a call brings back at
# most 8 files):
#   r14      round 14 (benchmarks/explore_sm90_r14.yaml, built here as build/r14_128 and
#            build/r14_256: the TMA descriptors' L2 promotion, CUTLASS's 128 bytes against 256), in
#            turn, twice: every (variant, split) on the decode, projection and skinny shapes, the
#            in-kernel modes on the squares; each output checked against float64 (poisoned first)
#            and its bits compared across builds
#   ncu14    ncu on 256 x 256 x 65536's partial GEMM (128x128 c1x2 split 16) in both builds: DRAM
#            and L2 throughput, L2 hit rate
#   r14b     the shipped rule (sm90_tma_promotion.cuh: 256 bytes for the boxes of 64-deep K tiles
#            whose rows start on 256-byte boundaries; build/r14_auto) against CUTLASS's 128 bytes
#            (build/r14_128), in turn, twice, on the shapes where round 14 moved
#   r15      round 15 (benchmarks/explore_sm90_r15.yaml, built here as build/r15): 64-deep K tiles
#            (ping-pong 64x128 / 64x64, swapped 64x16 / 64x32) beside the shipped 128-deep picks on
#            the decode and skinny shapes, parallel split-K, twice; outputs checked against float64
#   ops      the GPU op tests (every variant x split x mode against float64) and hostile inputs
#            (build/default and build/epilogues carried)
#   rest     the rest of the GPU suite
#   fuzz     the config fuzzer (benchmarks/device_fuzz.sh; .cutlass carried), seed 20261125 (10
#            configs of both backends, among them an unswapped parallel tile N 48) and config 7 of
#            seed 20261160 (an unswapped parallel tile N 16): 100 problems each
#   bench    the suite's bench, chain op, f16 and bf16, the heuristic's picks (no torch.compile
#            column); with SWEEP=1 every (variant, split) swept too (heuristic / best)
#   benchx   the same, f16, on benchmarks/extra_shapes.yaml (shapes the model was not fitted on),
#            every candidate swept
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
out=/tmp/s15; mkdir -p "$out"
skinny=(16,4096,14336 64,4096,14336 128,8192,8192 256,256,65536 512,512,32768 1024,1024,16384 1,4096,4096
        96,3072,16384)
squares=(4096,4096,4096 4096,4096,14336 4000,4104,1000)
for phase in "$@"; do
  case $phase in
    r14) ab r14k explore90r14_chain_f16 'parallel|t128x64x64|t64x32x128' "a b" "r14_128 r14_256" "${skinny[@]}"
         ab r14q explore90r14_chain_f16 'serial|stream_k' "a b" "r14_128 r14_256" "${squares[@]}"
         python3 benchmarks/r8_table.py "$out"/r14k_*.json > "$out/r14k_table.txt"
         python3 benchmarks/r8_table.py "$out"/r14q_*.json > "$out/r14q_table.txt"
         cat "$out/r14k_table.txt" "$out/r14q_table.txt" ;;
    ncu14) for b in r14_128 r14_256; do
             CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
               --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
               python3 benchmarks/profile_shape.py build/$b 256 256 65536 explore90r14_chain_f16 \
               explore90r14_chain_f16_parallel_sm90_t128x128x64_c1x2_coop_sauto_a8 16 > "$out/ncu14_$b.txt" 2>&1
             echo "== $b rc=$?"
             grep -E "Duration|L2 Hit|L2 Cache Throughput|DRAM Throughput|Memory Throughput" "$out/ncu14_$b.txt" | cut -c1-120
           done ;;
    r14b) ab r14b explore90r14_chain_f16 'parallel|serial_sm90_t128x64|serial_sm90_t64x32' "a b" "r14_128 r14_auto" \
            16,4096,14336 128,8192,8192 256,256,65536 512,512,32768 1024,1024,16384 96,3072,16384
          ab r14c explore90r14_chain_f16 'serial_sm90_t128x128|serial_sm90_t256' "a b" "r14_128 r14_auto" \
            4000,4104,1000 4096,4096,4096
          python3 benchmarks/r8_table.py "$out"/r14b_*.json "$out"/r14c_*.json > "$out/r14b_table.txt"
          cat "$out/r14b_table.txt" ;;
    r15) ab r15 explore90r15_chain_f16 . "a b" r15 16,4096,14336 64,4096,14336 1,4096,4096 256,256,65536 \
           512,512,32768 1024,1024,16384 96,3072,16384 128,8192,8192 384,384,24576
         python3 benchmarks/r8_table.py "$out"/r15_*.json > "$out/r15_table.txt"
         cat "$out/r15_table.txt" ;;
    fuzz) SEED=20261125 CONFIGS=10 PROBLEMS=100 OUT=$out/f1 bash benchmarks/device_fuzz.sh | tail -30
          SEED=20261160 CONFIGS=10 PROBLEMS=100 OUT=$out/f2 bash benchmarks/device_fuzz.sh --only-config 7 | tail -12 ;;
    ops|rest|bench|benchx) common_phase "$phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s15.tgz" -C /tmp s15
done
