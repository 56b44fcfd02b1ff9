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
#   r6       round 6 (benchmarks/explore_sm90_r6.yaml, carried as build/explore_sm90_r6): parallel
#            split-K with small ping-pong tiles and 2-CTA clusters (cuBLAS's choice there) on the
#            skinny and decode shapes, checked against float64 and timed
#   r7       round 7 (benchmarks/explore_sm90_r7.yaml, carried as build/explore_sm90_r7): narrow
#            ping-pong tiles, split 1 in one kernel and parallel split-K, on decode shapes
#   ncu6     ncu, one call each: our partial GEMM + reduction with cuBLAS's own configuration on
#            skinny_256 (64x64 ping-pong, cluster 1x2, split 8: build/explore_sm90_r6) next to
#            cuBLAS's kernels for torch.matmul, the same sections for both
#   sweep    the suite's bench (f16 + bf16, no torch.compile column) with every (variant, split)
#            of build/default swept: the heuristic's pick against the best candidate
#   sweepx   the same on benchmarks/extra_shapes.yaml (f16), shapes the model was not fitted on
#   ops      the GPU op tests (every variant x split x mode against float64) and hostile inputs
#   cublas   ncu: the kernels cuBLAS runs for torch.matmul on the suite's skinny and square shapes
source benchmarks/device_lib.sh  # the run's setup, gpu_tests
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
    r6) python3 benchmarks/variant_ab.py build/explore_sm90_r6 explore90r6_chain_f16 \
          --shape 256,256,65536 --shape 512,512,32768 --shape 1024,1024,16384 --shape 16,4096,14336 \
          --shape 64,4096,14336 --shape 128,8192,8192 --shape 200,264,40008 --label r6 \
          --json "$out/r6.json" > "$out/r6.txt" 2>&1
        echo "r6 rc=$? wrong=$(grep -c WRONG "$out/r6.txt")"; cut -c1-170 "$out/r6.txt" ;;
    r7) python3 benchmarks/variant_ab.py build/explore_sm90_r7 explore90r7_chain_f16 \
          --shape 16,4096,14336 --shape 64,4096,14336 --shape 128,8192,8192 --shape 16,14336,4096 \
          --shape 32,11008,4096 --shape 1,4096,4096 --shape 40,2056,8200 --label r7 \
          --json "$out/r7.json" > "$out/r7.txt" 2>&1
        echo "r7 rc=$? wrong=$(grep -c WRONG "$out/r7.txt")"; grep -c split "$out/r7.txt" ;;
    ncu6) S="--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
          CUTLASS_SPLITK_GRAPHS=0 ncu $S --kernel-name regex:"device_kernel|reduce_epilogue" --launch-skip 2 --launch-count 2 \
            python3 benchmarks/profile_shape.py build/explore_sm90_r6 256 256 65536 explore90r6_chain_f16 \
            explore90r6_chain_f16_parallel_sm90_t64x64x64_c1x2_pp_sauto_a8 8 > "$out/ncu6_ours.txt" 2>&1
          echo "== ours rc=$?"
          ncu $S --nvtx --nvtx-include cublas/ python3 benchmarks/profile_shape.py cublas 256 256 65536 \
            > "$out/ncu6_cublas.txt" 2>&1
          echo "== cublas rc=$?"
          for f in ours cublas; do
            grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)|Achieved Occupancy|Warp Cycles Per Issued|Registers|Stall|Mem Busy|Max Bandwidth" \
              "$out/ncu6_$f.txt" | cut -c1-150
          done ;;
    sweep) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             --no-compile --sweep --repeat 1 --json "$out/sweep_suite.json" > "$out/sweep_suite.txt" 2>&1
           tail -25 "$out/sweep_suite.txt" ;;
    sweepx) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
              --shapes benchmarks/extra_shapes.yaml --no-compile --sweep --repeat 1 --json "$out/sweep_extra.json" \
              > "$out/sweep_extra.txt" 2>&1
            tail -20 "$out/sweep_extra.txt" ;;
    ops) gpu_tests ops tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py ;;
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
