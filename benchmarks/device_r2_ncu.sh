#!/usr/bin/env bash
# Session 7: ncu of one in-kernel sm90 variant of the chain op against the same tile with no
# epilogue (benchmarks/explore_sm90_r2.yaml carried as build/explore_sm90_r2). Output to $OUT.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; lib=build/explore_sm90_r2; mkdir -p "$out"
T=${TILE:-t256x128x64_c1x2_coop}
S="--clock-control none --kernel-name regex:device_kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight
   --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters
   --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
for op in chain plain; do
  ncu $S python3 benchmarks/profile_shape.py $lib ${SHAPE:-4096 4096 1024} explore90r2_${op}_f16 \
      explore90r2_${op}_f16_serial_sm90_${T}_sauto_a8 > "$out/ncu_$op.txt" 2>&1; echo "rc=$? $op"
done
