#!/usr/bin/env bash
# Session 20's device calls, by phase (logs and JSON under /tmp/s20, packed into $OUT/s20.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   r30      round 30: CUTLASS's TMA warp-specialized epilogue (benchmarks/probe_tma_epilogue.cu, built
#            into build/probe) against our in-kernel epilogue on the same main loop, and cuBLAS
#   r31      round 31 (benchmarks/explore_sm90_r31.yaml built with the stream-K scheduler,
#            build/r31/streamk, and with the persistent one, -DCKS_SM90_PERSISTENT, build/r31/persistent):
#            the split-1 in-kernel tiles, in turn, twice, flushed and graph, checked against float64
#   r32      round 32 (benchmarks/explore_sm90_r32.yaml built with FusedWarpEpilogue, build/r32/direct, and
#            with CUTLASS's TMA epilogue for ops without E or permute, build/r32/tma): every in-kernel
#            candidate with alpha, beta and C, in turn, twice, flushed and graph, checked against float64
#   r33      round 33 (benchmarks/explore_sm90_r33.yaml built four ways, build/r33/{tma,prom128,plain,pers}):
#            bias + GELU on the split-1 tiles, in turn, twice; then round 30's probe (build/probe2)
#   ncu30    ncu on 8192 x 8192 x 512: CUTLASS's TMA epilogue (probe k0, k1) against ours (linear, bias + GELU)
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261203
out=/tmp/s20; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    r30) python3 benchmarks/probe_tma_epilogue.py build/probe build/default --shape 4096,4096,4096 \
           --shape 4096,4096,1024 --shape 8192,8192,512 --shape 4000,4104,1000 --shape 4096,4096,14336 \
           --json "$out/r30.json" > "$out/r30.txt" 2>&1; echo "r30 rc=$?"; cat "$out/r30.txt" ;;
    r31) for op in explore90r31_linear_f16 explore90r31_chain_f16; do
           ab "r31_${op#explore90r31_}" "$op" . "${RUNS:-a b}" "r31/streamk r31/persistent" 4096,4096,4096 \
             4096,4096,14336 8192,8192,512 4096,4096,1024 4000,4104,1000 2060,2560,200
         done
         python3 benchmarks/r8_table.py "$out"/r31_*.json > "$out/r31_table.txt"
         cat "$out/r31_table.txt" ;;
    r32) for op in linear_f16 bias_gelu_f16 rowbias_leaky_bf16; do
           AB_ARGS=--scalars ab "r32_$op" "explore90r32_$op" . "${RUNS:-a b}" "${R32:-r32/direct r32/tma}" 8192,8192,512 \
             4096,4096,1024 4096,4096,4096 1024,1024,16384 77,200,1000
           python3 benchmarks/r8_table.py "$out"/r32_${op}_*.json > "$out/r32_${op}_table.txt"
           cat "$out/r32_${op}_table.txt"
         done ;;
    r33) ab r33 explore90r33_bias_gelu_f16 . "${RUNS:-a b}" "${R33:-r33/tma r33/prom128 r33/plain r33/pers}" 8192,8192,512 \
           4096,4096,1024 4096,4096,4096
         python3 benchmarks/r8_table.py "$out"/r33_*.json > "$out/r33_table.txt"
         cat "$out/r33_table.txt"
         python3 benchmarks/probe_tma_epilogue.py build/probe2 - --shape 8192,8192,512 --shape 4096,4096,1024 \
           --shape 4096,4096,4096 2>&1 | grep -v -e Warning -e capture_end ;;
    ncu30) for c in probe_k0_c1 ours_linear probe_k1_c1 ours_bias_gelu; do
             CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
               --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
               --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
               python3 benchmarks/probe_tma_epilogue.py build/probe build/default --shape 8192,8192,512 \
               --profile $c > "$out/ncu30_$c.txt" 2>&1
             echo "== $c rc=$?"
             grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|smsp__inst|dram__bytes|gmma|Stall|No Eligible" "$out/ncu30_$c.txt" | cut -c1-120
           done ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s20.tgz" -C /tmp s20
done
