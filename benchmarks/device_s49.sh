#!/usr/bin/env bash
# The next device session's calls for round 70's candidate grid (benchmarks/default_r70_candidate.yaml: configs/default.yaml
# plus swapped in-kernel 128x48 / 128x80 tiles at split 1), by phase (logs under $OUT): device_lib.sh's common phases, and
#   cand     build the candidate into build/default (the GPU tests' library), so that `ops`, `rest` and `bench` check it
#   held70   bench --sweep of the candidate's chain op on twelve short-K shapes no sweep has seen, one process per
#            shape; score both grids on it offline:
#              python3 benchmarks/fit_model.py held70.json@act,gpc --keep sm90 --samples 0 --rounds 0
#              ... --splits-from configs/default.yaml  (the shipped grid's pairs only)
# Carry .cutlass_slim (CUTLASS_PATH=$PWD/.cutlass_slim): e.g. `bash benchmarks/device_s49.sh cand ops held70 bench`.
source benchmarks/device_lib.sh  # the run's setup, common_phase
for phase in "$@"; do
  case $phase in
    cand) python3 -m cutlass_splitk.cli build benchmarks/default_r70_candidate.yaml -o build/default --slowest 8 \
            > "$out/build_cand.txt" 2>&1
          echo "build cand rc=$?"; tail -10 "$out/build_cand.txt" ;;
    held70) persweep held70 default bias_gelu_mul_permute_f16 60 "${held70[@]}" ;;
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
