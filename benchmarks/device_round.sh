#!/usr/bin/env bash
# One device-machine call for kernel work (issue 5): the GPU tests (sanitizers included), PDL
# on/off, the reduction kernel's bandwidth (PDL off, so the kernel time is its own) and, when
# build/explore is carried, a sweep of every explored tile. Needs build/default and
# build/epilogues carried. Everything goes to $OUT.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
bash benchmarks/device_check.sh
echo "tests done at ${SECONDS}s"
python3 benchmarks/pdl_ab.py build/default bias_gelu_mul_permute_f16 > "$out/pdl_ab.txt" 2>&1
cat "$out/pdl_ab.txt"; echo "pdl done at ${SECONDS}s"
CUTLASS_SPLITK_PDL=0 python3 benchmarks/reduction_bw.py build/default bias_gelu_mul_permute_f16 > "$out/reduction.txt" 2>&1
cat "$out/reduction.txt"; echo "reduction done at ${SECONDS}s"
python3 benchmarks/host_overhead.py build/default > "$out/host.txt" 2>&1
cat "$out/host.txt"; echo "host overhead done at ${SECONDS}s"
if [ -d build/explore ]; then
  python3 -m cutlass_splitk.cli bench build/explore --op explore_chain_f16 --dtype f16 --sweep --no-compile \
      --json "$out/explore.json" > "$out/explore.txt" 2> "$out/explore.err"
  tail -12 "$out/explore.txt"; echo "explore done at ${SECONDS}s"
fi
