#!/usr/bin/env bash
# Session 10's device calls, by phase (logs and JSON to $OUT):
#   r3      round 3 of the sm90 exploration (benchmarks/explore_sm90_r3.yaml, built here and
#           carried as build/explore_sm90_r3): every (variant, split) on the skinny shapes,
#           checked against float64 (output poisoned) and timed flushed and as graph replays
#   ab      benchmarks/explore_sm90_r4.yaml built before and after a change (build/r4_base,
#           build/r4_new): variant_ab.py on both, alternately, twice
#   build, ops, rest   as in benchmarks/device_s9.sh: build/default and build/epilogues there, the
#           GPU op tests (every variant x split x mode against float64) and hostile inputs, the rest
#           of the GPU suite
#   bench   build/default there, then the suite's bench (f16, bf16; no torch.compile column)
#   arrays  benchmarks/array_profile.py on build/linear (carried): the CuPy array path's pieces
#   ncu     the kernels of one call (partial GEMM, reduction) of the skinny shapes' best picks
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CUTLASS_PATH=$PWD/.cutlass
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for phase in "$@"; do
  case $phase in
    r3) python3 benchmarks/variant_ab.py build/explore_sm90_r3 explore90r3_chain_f16 \
          --shape 256,256,65536 --shape 512,512,32768 --shape 1024,1024,16384 --shape 384,384,24576 \
          --shape 200,264,40008 --label r3 --json "$out/r3_ab.json" > "$out/r3_ab.txt" 2>&1
        echo "variant_ab rc=$?"; grep -c WRONG "$out/r3_ab.txt"; cat "$out/r3_ab.txt" | cut -c1-170 ;;
    ncu) # each kernel of one call (partial GEMM, reduction), L2 flushed by ncu, real clocks (the c1x4
         # entry needs the build of the run, made with the validator widened: explore_sm90_r3.yaml)
        S="--clock-control none --kernel-name regex:device_kernel|reduce_epilogue --launch-skip 2 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats"
        for cfg in "256 256 65536 t128x128x64_c1x2 16" "256 256 65536 t128x128x64_c1x2 32" \
                   "512 512 32768 t128x128x64_c1x2 8" "384 384 24576 t128x128x64_c1x4 8"; do
          set -- $cfg
          CUTLASS_SPLITK_GRAPHS=0 ncu $S python3 benchmarks/profile_shape.py build/explore_sm90_r3 $1 $2 $3 \
            explore90r3_chain_f16 explore90r3_chain_f16_parallel_sm90_$4_coop_sauto_a8 $5 > "$out/ncu_$1_$4_s$5.txt" 2>&1
          echo "== $cfg rc=$?"
          grep -E "^  [a-zA-Z].*Device 0|Duration|DRAM Throughput|L2 Cache Throughput|Compute \\(SM\\)|Grid Size|Cluster Size|L2 Hit|Registers|Shared Memory Config" "$out/ncu_$1_$4_s$5.txt" | cut -c1-140
        done ;;
    ab) # the r4 set built before (build/r4_base) and after (build/r4_new) a change, alternately
        shapes="--shape 256,256,65536 --shape 512,512,32768 --shape 16,4096,14336 --shape 128,8192,8192
                --shape 4096,4096,4096 --shape 4096,4096,14336 --shape 200,264,40008 --shape 1000,1024,12000"
        for round in 1 2; do
          for b in base new; do
            python3 benchmarks/variant_ab.py build/r4_$b explore90r4_chain_f16 $shapes --label $b \
              --json "$out/ab_${b}_$round.json" > "$out/ab_${b}_$round.txt" 2>&1
            echo "$b round $round rc=$? wrong=$(grep -c WRONG "$out/ab_${b}_$round.txt")"
          done
        done ;;
    build|ops|rest) bash benchmarks/device_s9.sh "$phase" ;;  # the same phases as session 9's
    bench) bash benchmarks/device_build.sh default=configs/default.yaml
           python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             --no-compile --repeat 1 --json "$out/bench.json" 2>&1 | tail -30 ;;
    arrays) python3 benchmarks/array_profile.py build/linear 2>&1 | head -60 ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
