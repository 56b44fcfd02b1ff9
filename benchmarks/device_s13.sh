#!/usr/bin/env bash
# Session 13's device calls, by phase (logs and JSON to $OUT):
#   r12      round 12 (built here as build/r12 from the config text in benchmarks/session13_h100.json
#            ["r12_2x2_clusters"]["config"], with (2, 2) added to backends/sm90/rules.py CLUSTERS and
#            the grid sized by cudaOccupancyMaxActiveClusters: both lived only while it ran): 2x2 clusters
#            against the shipped 1x2 / 2x1 ones, every (variant, split) on the skinny shapes and the
#            squares, each output checked against float64 (poisoned first), flushed and graph times
#   r13      round 13 (benchmarks/explore_sm90_r13.yaml, built here as build/r13): swapped operands
#            (swap_ab: M on wgmma's N) for small M against the shipped decode picks, every (variant,
#            split) on the decode shapes, each output checked against float64 (poisoned first)
#   ncu12    ncu on 256 x 256 x 65536's partial GEMM, 128x128 split 32 with cluster 1x2 and 2x2:
#            grid, L2 / DRAM throughput, L2 hit rate
# The final GPU check and the sweeps ran as device_s9.sh build ops rest, device_s11.sh sweep sweepx.
source benchmarks/device_lib.sh  # the run's setup
for phase in "$@"; do
  case $phase in
    r12) ab r12p explore90r12_chain_f16 parallel - r12 256,256,65536 512,512,32768 1024,1024,16384 200,264,40008 \
           768,768,24576
         ab r12s explore90r12_chain_f16 'serial|stream_k' - r12 4096,4096,4096 4000,4104,1000 1024,1024,16384
         cat "$out"/r12*_r12.txt ;;
    r13) ab r13 explore90r13_chain_f16 . - r13 16,4096,14336 64,4096,14336 1,4096,4096 16,14336,4096 \
           32,11008,4096 40,2056,8200 8,4096,14336 17,4104,8200
         cat "$out"/r13_r13.txt ;;
    ncu12) for c in 1x2 2x2; do
             CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
               --launch-count 1 --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis \
               python3 benchmarks/profile_shape.py build/r12 256 256 65536 explore90r12_chain_f16 \
               explore90r12_chain_f16_parallel_sm90_t128x128x64_c${c}_coop_sauto_a8 32 > "$out/ncu12_$c.txt" 2>&1
             echo "== $c rc=$?"
             grep -E "Duration|Grid Size|Cluster|L2 Hit|L2 Cache Throughput|DRAM Throughput|Memory Throughput" \
               "$out/ncu12_$c.txt" | cut -c1-120
           done ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
