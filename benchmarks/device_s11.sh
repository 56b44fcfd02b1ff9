#!/usr/bin/env bash
# Session 11's device calls, by phase (logs and JSON to $OUT):
#   build    build/default there (16 jobs; CUTLASS headers carried in .cutlass)
#   arrays   the GPU array tests (CuPy, JAX, cuda.core; the array fast path among them), the
#            hostile-input tests (the call path's guarantees), and array_profile.py (the CuPy
#            path's host time, repeated calls now on the array fast path)
#   host     host_overhead.py on build/default (the torch fast path, now on prepared.runner)
#   r5       round 5 of the sm90 exploration (benchmarks/explore_sm90_r5.yaml, carried as
#            build/explore_sm90_r5): ping-pong with clusters, the chain and the main loop alone,
#            on the squares, checked against float64 (output poisoned) and timed
#   cublas   ncu: the kernels cuBLAS runs for torch.matmul on the suite's skinny and square shapes
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CUTLASS_PATH=$PWD/.cutlass
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source benchmarks/device_lib.sh  # gpu_tests
for phase in "$@"; do
  case $phase in
    build) bash benchmarks/device_build.sh default=configs/default.yaml ;;
    arrays) gpu_tests arrays tests/gpu/test_gpu_arrays.py tests/gpu/test_gpu_hostile.py
            python3 benchmarks/array_profile.py build/default > "$out/array_profile.txt" 2>&1
            head -45 "$out/array_profile.txt" ;;
    host) python3 benchmarks/host_overhead.py build/default --json "$out/host.json" > "$out/host.txt" 2>&1
          grep -v "^ \{5,\}[0-9]" "$out/host.txt" | grep -v "^ *$" | head -42 ;;
    r5) for op in chain plain; do
          python3 benchmarks/variant_ab.py build/explore_sm90_r5 explore90r5_${op}_f16 \
            --shape 4096,4096,4096 --shape 4096,4096,14336 --shape 4000,4104,1000 --label r5 \
            --json "$out/r5_$op.json" > "$out/r5_$op.txt" 2>&1
          echo "r5 $op rc=$? wrong=$(grep -c WRONG "$out/r5_$op.txt")"; cut -c1-170 "$out/r5_$op.txt"
        done ;;
    cublas) S="--clock-control none --nvtx --nvtx-include cublas/ --section SpeedOfLight --section LaunchStats"
            for shape in "256 256 65536" "512 512 32768" "1024 1024 16384" "16 4096 14336" "4096 4096 4096"; do
              set -- $shape
              ncu $S python3 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/ncu_cublas_$1_$2_$3.txt" 2>&1
              echo "== cuBLAS $shape rc=$?"
              grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\)|Grid Size|Block Size|Cluster Size|Registers" \
                "$out/ncu_cublas_$1_$2_$3.txt" | cut -c1-150
            done ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
