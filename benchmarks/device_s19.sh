#!/usr/bin/env bash
# Session 19's device calls, by phase (logs and JSON under /tmp/s19, packed into $OUT/s19.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   r28      round 28 (benchmarks/explore_sm90_r28.yaml built with CUTLASS's turnstile, -DCKS_SM90_TURNSTILE,
#            build/r28/turnstile, and with the ordered reduction, build/r28/ordered): every serial and
#            parallel candidate, in turn, twice, flushed and graph; every output checked against float64
#   r29      round 29 (benchmarks/explore_sm90_r29.yaml built six ways, build/r29/{off,last8,normal8,start}, then
#            R29="r29/off r29/lsul r29/lsun"):
#            the in-kernel epilogue's sources prefetched into L2 by the producer ahead of each tile's
#            epilogue, in turn, twice, flushed and graph; every output checked against float64
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261130
out=/tmp/s19; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    r28) ab r28 explore90r28_chain_f16 . "${RUNS:-a b}" "r28/turnstile r28/ordered" 256,256,65536 512,512,32768 \
           1024,1024,16384 96,3072,16384 128,8192,8192 768,1024,8192 1000,1024,12000 192,1024,32768 384,384,24576
         python3 benchmarks/r8_table.py "$out"/r28_*.json > "$out/r28_table.txt"
         cat "$out/r28_table.txt" ;;
    r29) ab r29 explore90r29_chain_f16 . "${RUNS:-a b}" "${R29:-r29/off r29/last8 r29/normal8 r29/start}" 4096,4096,4096 \
           4096,4096,14336 8192,8192,512 4096,4096,1024 4000,4104,1000 2060,2560,200
         python3 benchmarks/r8_table.py "$out"/r29_*.json > "$out/r29_table.txt"
         cat "$out/r29_table.txt" ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s19.tgz" -C /tmp s19
done
