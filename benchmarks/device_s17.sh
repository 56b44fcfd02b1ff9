#!/usr/bin/env bash
# Session 17's device calls, by phase (logs and JSON under /tmp/s17, packed into $OUT/s17.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   r18      round 18 (benchmarks/explore_sm90_r18.yaml built without and with the E preload,
#            build/r18/glob and build/r18/pre): in turn, twice; every output checked against float64
#            (poisoned first), bits compared across runs and builds
#   r19      round 19 (benchmarks/explore_sm90_r19.yaml, build/r19): the squares' tile (128x256 against
#            256x128, a 32-deep K tile), chain and main loop alone, twice; outputs checked against float64
#   r20      round 20 (benchmarks/explore_sm90_r20.yaml, build/r20/{s1,s2,s4,s8,rn}): the 128x256 c1x2 tile
#            with the scheduler's swizzle 1, 2, 4, 8 and raster along N, in turn, twice
#   r21      round 21 (benchmarks/explore_sm90_r21.yaml, build/r21): 128x256 and 256x128 partial GEMMs against
#            the shipped 128x128 c1x2 on skinny shapes, twice
#   r22      round 22 (benchmarks/explore_sm90_r22.yaml, build/r22): the tile swap on the linear, GELU (bf16)
#            and QKV epilogues, twice; outputs checked against float64
#   r23      round 23 (benchmarks/explore_sm90_r23.yaml, build/r23/{p1,p0}): the epilogue's L2 prefetch of E on
#            and off on the 128x256 tile, in turn, twice
#   r24      round 24 (benchmarks/explore_sm90_r24.yaml, build/r24): the 128x256 c1x2 tile at serial 1, 2 and
#            stream-K on the squares, twice
#   ncu18    ncu on 4096^3's 256x128 c2x1 kernel from both builds
#   ncu19    ncu on 4096^3's chain: the 256x128 c2x1 and 128x256 c1x2 tiles, with and without the epilogue
#   mat      torch.compile max-autotune column on the suite, f16
#   ops      the GPU op tests (every variant x split x mode against float64) and hostile inputs
#   rest     the rest of the GPU suite
#   bench    the suite's bench, chain op, f16 and bf16 (COMPILE=1: with the torch.compile column)
#   benchx   the same, f16, on benchmarks/extra_shapes.yaml, every candidate swept
#   fuzz     the config fuzzer (benchmarks/device_fuzz.sh; .cutlass carried)
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261127
out=/tmp/s17; mkdir -p "$out"
squares=(4096,4096,4096 4096,4096,14336 4000,4104,1000 8192,8192,512 4096,4096,1024 2060,2560,200
         1024,1024,16384 1000,1032,3000)
for phase in "$@"; do
  case $phase in
    r18) ab r18 explore90r18_chain_f16 . "${RUNS:-a b}" "${R18:-r18/glob r18/pre}" "${squares[@]}"
         python3 benchmarks/r8_table.py "$out"/r18_*.json > "$out/r18_table.txt"
         cat "$out/r18_table.txt" ;;
    r19) ab r19 explore90r19_chain_f16 . "${RUNS:-a b}" r19 4096,4096,4096 4096,4096,14336 4000,4104,1000 \
           4096,4096,1024 8192,8192,512 6144,6144,6144
         ab r19p explore90r19_plain_f16 . "${RUNS:-a b}" r19 4096,4096,4096 4096,4096,14336 4000,4104,1000 6144,6144,6144
         python3 benchmarks/r8_table.py "$out"/r19_*.json "$out"/r19p_*.json > "$out/r19_table.txt"
         cat "$out/r19_table.txt" ;;
    r20) ab r20 explore90r20_chain_f16 . "${RUNS:-a b}" "r20/s1 r20/s2 r20/s4 r20/s8 r20/rn" 4096,4096,14336 \
           4096,4096,4096 6144,6144,6144 8192,8192,4096 8192,8192,512
         python3 benchmarks/r8_table.py "$out"/r20_*.json > "$out/r20_table.txt"
         cat "$out/r20_table.txt" ;;
    r21) ab r21 explore90r21_chain_f16 . "${RUNS:-a b}" r21 512,512,32768 1024,1024,16384 768,1024,8192 \
           1000,1024,12000 640,640,20480 128,8192,8192 2048,2048,8192 1024,4096,4096
         python3 benchmarks/r8_table.py "$out"/r21_*.json > "$out/r21_table.txt"
         cat "$out/r21_table.txt" ;;
    r22) ab r22l explore90r22_linear_f16 . "${RUNS:-a b}" r22 4096,4096,4096 4096,4096,14336 8192,8192,1024
         ab r22g explore90r22_gelu_bf16 . "${RUNS:-a b}" r22 4096,4096,4096 8192,8192,1024
         ab r22q explore90r22_qkv_f16 . "${RUNS:-a b}" r22 4096,12288,4096 2048,6144,2048
         python3 benchmarks/r8_table.py "$out"/r22*_*.json > "$out/r22_table.txt"
         cat "$out/r22_table.txt" ;;
    r23) ab r23 explore90r23_chain_f16 . "${RUNS:-a b}" "r23/p1 r23/p0" 4096,4096,4096 4096,4096,14336 8192,8192,512 \
           4096,4096,1024 2048,8192,2048 4000,4104,1000
         python3 benchmarks/r8_table.py "$out"/r23_*.json > "$out/r23_table.txt"
         cat "$out/r23_table.txt" ;;
    r24) ab r24 explore90r24_chain_f16 . "${RUNS:-a b}" r24 4096,4096,4096 4096,4096,14336 6144,6144,6144 \
           4000,4104,1000 8192,8192,512 2048,8192,2048
         python3 benchmarks/r8_table.py "$out"/r24_*.json > "$out/r24_table.txt"
         cat "$out/r24_table.txt" ;;
    ncu18) for b in ${R18:-r18/glob r18/pre}; do
             CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
               --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats \
               --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_lsu.sum,dram__bytes_read.sum,dram__bytes_write.sum \
               python3 benchmarks/profile_shape.py build/$b 4096 4096 4096 explore90r18_chain_f16 \
               explore90r18_chain_f16_serial_sm90_t256x128x64_c2x1_coop_sauto_a8 1 > "$out/ncu18_${b##*/}.txt" 2>&1
             echo "== $b rc=$?"
             grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|smsp__inst|dram__bytes|Stall Long" "$out/ncu18_${b##*/}.txt" | cut -c1-120
           done ;;
    ncu19) for v in chain:t256x128x64_c2x1 chain:t128x256x64_c1x2 plain:t256x128x64_c2x1 plain:t128x256x64_c1x2; do
             op=${v%%:*} t=${v##*:}
             CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
               --launch-count 1 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
               --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio \
               python3 benchmarks/profile_shape.py build/r19 4096 4096 4096 explore90r19_${op}_f16 \
               explore90r19_${op}_f16_serial_sm90_${t}_coop_sauto_a8 1 > "$out/ncu19_${op}_$t.txt" 2>&1
             echo "== $op $t rc=$?"
             grep -E "Duration|Warp Cycles Per Issued|smsp__inst|dram__bytes|stalled|L2 Hit|DRAM Throughput" "$out/ncu19_${op}_$t.txt" | cut -c1-120
           done ;;
    mat) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
           --max-autotune --repeat 1 --json "$out/bench_mat.json" > "$out/bench_mat.txt" 2>&1
         tail -12 "$out/bench_mat.txt" ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s17.tgz" -C /tmp s17
done
