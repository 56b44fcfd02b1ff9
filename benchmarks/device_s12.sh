#!/usr/bin/env bash
# Session 12's device calls, by phase (logs and JSON to $OUT):
#   build    build/default there (16 jobs; CUTLASS headers carried in .cutlass)
#   r8       round 8 (benchmarks/explore_sm90_r8.yaml, built here once per setting and carried as
#            build/r8/<setting>): the in-kernel epilogue's L2 prefetch of its sources
#            (CKS_SM90_EPI_PREFETCH p0..p3, p6, p7: bit 4 loads the next chunk's sources before
#            the current chunk is applied) on every shape class, then the tile scheduler's swizzle
#            and raster order (p3s2, p3s4, p3s8, p3rn) on the squares; every output checked
#            against float64 (poisoned first), every candidate timed flushed and as graph replays
#   r8b      p0 against p1, twice each in turn, on epilogue-heavy shapes (short K, large M*N)
#   r8fin    the shipped form (build/r8/final: the consumer warps' prefetch on cooperative tiles with
#            256-byte rows) against p0, in turn, on the r8b shapes and the long-K ones
#   r9       round 9: the shipped epilogue (build/r8/final) against the same with 64-column chunks
#            on every tile (build/r9/cols64: a switch CKS_SM90_EPI_COLS=64 in FusedWarpEpilogue, present only
#            while round 9 ran; 256x128's chunks are 32 wide), in turn
#   r10      round 10: E through shared memory (cp.async two chunks ahead into per-warp buffers;
#            build/r10/stage: a switch CKS_SM90_STAGE_E=1 that lived only while round 10 ran)
#            against the shipped epilogue, in turn
#   r11      round 11: the epilogue's code once, looped over the (block, chunk) pairs a warp holds
#            (build/r11/loop: a switch CKS_SM90_EPI_LOOP=1 that lived only while round 11 ran)
#            against the shipped epilogue and the same source with the loop unrolled, in turn
#   r11fin   the shipped form of round 11 (build/r11/ship) against session 12's first shipped
#            epilogue (build/r8/final), in turn
#   ncu8     ncu on round 8's p0 build, 4096^3: the 256x128 kernel with the chain's epilogue and
#            the same kernel with none (instructions executed, issue slots, warp stalls)
#   ncu8s    the same two kernels: warp stall reasons and pipe utilisation (whole-kernel averages)
#   sweep    the suite's bench (f16 + bf16, no torch.compile column) with every candidate swept
#   compile  the suite's bench with the torch.compile column (default mode), f16; then max-autotune
#            on three shapes
#   ops      the GPU op tests (every variant x split x mode against float64) and hostile inputs
source benchmarks/device_lib.sh  # the run's setup, gpu_tests
# ab PREFIX RUNS DIRS SHAPE...: variant_ab.py on round 8's chain op for each build/DIR in turn, once
# per run suffix in RUNS ("-": one run, no suffix), labelled DIR's last part + the suffix.
ab() {
  local prefix=$1 runs=$2 dirs=$3; shift 3
  local shapes=(); for s in "$@"; do shapes+=(--shape "$s"); done
  for run in $runs; do
    [ "$run" = - ] && run=
    for dir in $dirs; do
      local name=${dir##*/}$run
      python3 benchmarks/variant_ab.py "build/$dir" explore90r8_chain_f16 "${shapes[@]}" --label "$name" \
        --json "$out/${prefix}_$name.json" > "$out/${prefix}_$name.txt" 2>&1
      echo "$prefix $name rc=$? wrong=$(grep -c WRONG "$out/${prefix}_$name.txt")"
    done
  done
  python3 benchmarks/r8_table.py "$out"/${prefix}_*.json
}
# ncu_pair PREFIX NCU-ARGS...: ncu on round 8's p0 build, 4096^3, the 256x128 kernel with the
# chain's epilogue and the same kernel with none; reports to $out/PREFIX_{chain,plain}.txt.
ncu_pair() {
  local prefix=$1; shift
  for op in chain plain; do
    CUTLASS_SPLITK_GRAPHS=0 ncu "$@" --kernel-name regex:device_kernel --launch-skip 2 --launch-count 1 \
      python3 benchmarks/profile_shape.py build/r8/p0 4096 4096 4096 explore90r8_${op}_f16 \
      explore90r8_${op}_f16_serial_sm90_t256x128x64_c2x1_coop_sauto_a8 1 > "$out/${prefix}_$op.txt" 2>&1
    echo "== $op rc=$?"
  done
}
for phase in "$@"; do
  case $phase in
    build) bash benchmarks/device_build.sh default=configs/default.yaml ;;
    r8) ab r8 - "r8/p0 r8/p3 r8/p7 r8/p1 r8/p2 r8/p6" 4096,4096,4096 4096,4096,14336 4000,4104,1000 128,8192,8192 \
          1024,1024,16384 64,4096,14336 136,2056,8200
        ab r8 - "r8/p3s2 r8/p3s4 r8/p3s8 r8/p3rn" 4096,4096,4096 4096,4096,14336 4000,4104,1000 ;;
    r8b) ab r8b "a b" "r8/p0 r8/p1" 4000,4104,1000 4096,4096,1024 8192,8192,512 2048,8192,2048 4096,4096,4096 ;;
    r8fin) ab r8fin - "r8/p0 r8/final" 4000,4104,1000 4096,4096,1024 8192,8192,512 2048,8192,2048 4096,4096,4096 \
             4096,4096,14336 128,8192,8192 1024,1024,16384 64,4096,14336 136,2056,8200 ;;
    r9) ab r9 "a b" "r8/final r9/cols64" 4096,4096,4096 4096,4096,14336 8192,8192,512 4096,4096,1024 4000,4104,1000 \
          128,8192,8192 136,2056,8200 ;;
    r10) ab r10 "a b" "r8/final r10/stage" 4096,4096,4096 4096,4096,14336 8192,8192,512 4096,4096,1024 \
           4000,4104,1000 1024,1024,16384 136,2056,8200 ;;
    r11) ab r11 "a b" "r8/final r11/loop r11/unrolled" 4096,4096,4096 4096,4096,14336 8192,8192,512 4096,4096,1024 \
           4000,4104,1000 1024,1024,16384 136,2056,8200 ;;
    r11fin) ab r11fin - "r8/final r11/ship" 4096,4096,4096 8192,8192,512 4096,4096,1024 4000,4104,1000 136,2056,8200 ;;
    ncu8) ncu_pair ncu8 --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
            --section InstructionStats --section ComputeWorkloadAnalysis \
            --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_lsu.sum
          for op in chain plain; do
            grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\)|Issue Slots Busy|Issued Ipc|Executed Ipc|No Eligible|Warp Cycles Per Issued|smsp__inst|Registers|Stall" "$out/ncu8_$op.txt" | cut -c1-150
          done ;;
    ncu8s) ncu_pair ncu8s --clock-control none \
             --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,regex:sm__pipe_.*_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active
           python3 benchmarks/ncu_compare.py "$out/ncu8s_chain.txt" "$out/ncu8s_plain.txt" ;;
    sweep) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             --no-compile --sweep --repeat 1 --json "$out/sweep_suite.json" > "$out/sweep_suite.txt" 2>&1
           tail -25 "$out/sweep_suite.txt" ;;
    compile) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
               --repeat 1 --json "$out/bench_compile.json" > "$out/bench_compile.txt" 2>&1
             python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
               --repeat 1 --max-autotune --shape 4096,4096,4096 --shape 256,256,65536 --shape 16,4096,14336 \
               --json "$out/bench_mat.json" > "$out/bench_mat.txt" 2>&1
             tail -12 "$out/bench_compile.txt"; tail -6 "$out/bench_mat.txt" ;;
    ops) gpu_tests ops tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
