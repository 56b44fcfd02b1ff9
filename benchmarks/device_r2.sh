#!/usr/bin/env bash
# Session 7, one device call: the round-2 sm90 exploration (benchmarks/explore_sm90_r2.yaml,
# carried as build/explore_sm90_r2): every variant on the squares and an odd large shape,
# checked against float64 and timed, once per LABEL=VAR=value argument with that variable set
# (session 7 built its experiment switches, CKS_SM90_PREFETCH and CKS_SM90_SWIZZLE, into the
# templates for these runs; they were removed with the prefetch, see BENCHMARKS.md). Output to
# $OUT (two files for all runs).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
lib=build/explore_sm90_r2
SQ="--shape 4096,4096,4096 --shape 4096,4096,14336"
for run in "base=CKS_X=0" "$@"; do
  label=${run%%=*}; setting=${run#*=}
  env "$setting" python3 benchmarks/variant_ab.py $lib explore90r2_chain_f16 $SQ --shape 4000,4104,1000 \
      --label "$label" >> "$out/chain.txt" 2>&1; echo "rc=$? chain $label at ${SECONDS}s"
  env "$setting" python3 benchmarks/variant_ab.py $lib explore90r2_plain_f16 $SQ --label "$label" \
      >> "$out/plain.txt" 2>&1; echo "rc=$? plain $label at ${SECONDS}s"
done
