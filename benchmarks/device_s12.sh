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
#   ncu8     ncu on round 8's p0 build, 4096^3: the 256x128 kernel with the chain's epilogue and
#            the same kernel with none (instructions executed, issue slots, warp stalls)
#   ncu8s    the same two kernels: warp stall reasons and pipe utilisation (whole-kernel averages)
#   sweep    the suite's bench (f16 + bf16, no torch.compile column) with every candidate swept
#   compile  the suite's bench with the torch.compile columns (default and max-autotune), f16
#   ops      the GPU op tests (every variant x split x mode against float64) and hostile inputs
source benchmarks/device_lib.sh  # the run's setup, gpu_tests
r8_run() {  # r8_run SETTING SHAPE...
  local name=$1; shift
  local shapes=(); for s in "$@"; do shapes+=(--shape "$s"); done
  python3 benchmarks/variant_ab.py "build/r8/$name" explore90r8_chain_f16 "${shapes[@]}" --label "$name" \
    --json "$out/r8_$name.json" > "$out/r8_$name.txt" 2>&1
  echo "r8 $name rc=$? wrong=$(grep -c WRONG "$out/r8_$name.txt")"
}
for phase in "$@"; do
  case $phase in
    build) bash benchmarks/device_build.sh default=configs/default.yaml ;;
    r8) for name in p0 p3 p7 p1 p2 p6; do
          r8_run $name 4096,4096,4096 4096,4096,14336 4000,4104,1000 128,8192,8192 1024,1024,16384 64,4096,14336 136,2056,8200
        done
        for name in p3s2 p3s4 p3s8 p3rn; do
          r8_run $name 4096,4096,4096 4096,4096,14336 4000,4104,1000
        done
        python3 benchmarks/r8_table.py "$out"/r8_*.json ;;
    r8b) for run in a b; do
           for name in p0 p1; do
             python3 benchmarks/variant_ab.py "build/r8/$name" explore90r8_chain_f16 --shape 4000,4104,1000 \
               --shape 4096,4096,1024 --shape 8192,8192,512 --shape 2048,8192,2048 --shape 4096,4096,4096 \
               --label "$name$run" --json "$out/r8b_$name$run.json" > "$out/r8b_$name$run.txt" 2>&1
             echo "r8b $name$run rc=$? wrong=$(grep -c WRONG "$out/r8b_$name$run.txt")"
           done
         done
         python3 benchmarks/r8_table.py "$out"/r8b_*.json ;;
    r8fin) for name in p0 final; do
             python3 benchmarks/variant_ab.py "build/r8/$name" explore90r8_chain_f16 --shape 4000,4104,1000 \
               --shape 4096,4096,1024 --shape 8192,8192,512 --shape 2048,8192,2048 --shape 4096,4096,4096 \
               --shape 4096,4096,14336 --shape 128,8192,8192 --shape 1024,1024,16384 --shape 64,4096,14336 \
               --shape 136,2056,8200 --label "$name" --json "$out/r8fin_$name.json" > "$out/r8fin_$name.txt" 2>&1
             echo "r8fin $name rc=$? wrong=$(grep -c WRONG "$out/r8fin_$name.txt")"
           done
           python3 benchmarks/r8_table.py "$out"/r8fin_*.json ;;
    r9) for run in a b; do
          for dir in r8/final r9/cols64; do
            name=${dir#*/}$run
            python3 benchmarks/variant_ab.py "build/$dir" explore90r8_chain_f16 --shape 4096,4096,4096 \
              --shape 4096,4096,14336 --shape 8192,8192,512 --shape 4096,4096,1024 --shape 4000,4104,1000 \
              --shape 128,8192,8192 --shape 136,2056,8200 --label "$name" --json "$out/r9_$name.json" > "$out/r9_$name.txt" 2>&1
            echo "r9 $name rc=$? wrong=$(grep -c WRONG "$out/r9_$name.txt")"
          done
        done
        python3 benchmarks/r8_table.py "$out"/r9_*.json ;;
    r10) for run in a b; do
           for dir in r8/final r10/stage; do
             name=${dir#*/}$run
             python3 benchmarks/variant_ab.py "build/$dir" explore90r8_chain_f16 --shape 4096,4096,4096 \
               --shape 4096,4096,14336 --shape 8192,8192,512 --shape 4096,4096,1024 --shape 4000,4104,1000 \
               --shape 1024,1024,16384 --shape 136,2056,8200 --label "$name" --json "$out/r10_$name.json" > "$out/r10_$name.txt" 2>&1
             echo "r10 $name rc=$? wrong=$(grep -c WRONG "$out/r10_$name.txt")"
           done
         done
         python3 benchmarks/r8_table.py "$out"/r10_*.json ;;
    ncu8) S="--clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_lsu.sum"
          for op in chain plain; do
            CUTLASS_SPLITK_GRAPHS=0 ncu $S --kernel-name regex:device_kernel --launch-skip 2 --launch-count 1 \
              python3 benchmarks/profile_shape.py build/r8/p0 4096 4096 4096 explore90r8_${op}_f16 \
              explore90r8_${op}_f16_serial_sm90_t256x128x64_c2x1_coop_sauto_a8 1 > "$out/ncu8_$op.txt" 2>&1
            echo "== $op rc=$?"
            grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\)|Issue Slots Busy|Issued Ipc|Executed Ipc|No Eligible|Warp Cycles Per Issued|smsp__inst|Registers|Stall" "$out/ncu8_$op.txt" | cut -c1-150
          done ;;
    ncu8s) S="--clock-control none --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,regex:sm__pipe_.*_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active"
           for op in chain plain; do
             CUTLASS_SPLITK_GRAPHS=0 ncu $S --kernel-name regex:device_kernel --launch-skip 2 --launch-count 1 \
               python3 benchmarks/profile_shape.py build/r8/p0 4096 4096 4096 explore90r8_${op}_f16 \
               explore90r8_${op}_f16_serial_sm90_t256x128x64_c2x1_coop_sauto_a8 1 > "$out/ncu8s_$op.txt" 2>&1
             echo "== $op rc=$?"
           done
           python3 benchmarks/ncu_compare.py "$out/ncu8s_chain.txt" "$out/ncu8s_plain.txt" ;;
    sweep) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             --no-compile --sweep --repeat 1 --json "$out/sweep_suite.json" > "$out/sweep_suite.txt" 2>&1
           tail -25 "$out/sweep_suite.txt" ;;
    compile) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
               --max-autotune --json "$out/bench_compile.json" > "$out/bench_compile.txt" 2>&1
             tail -14 "$out/bench_compile.txt" ;;
    ops) gpu_tests ops tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py ;;
  esac
  echo "== $phase done at ${SECONDS}s"
done
