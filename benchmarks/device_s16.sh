#!/usr/bin/env bash
# Session 16's device calls, by phase (logs and JSON under /tmp/s16, packed into $OUT/s16.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   act      the activations over every float on the GPU (tests/gpu/test_gpu_activation.py)
#   r16      round 16 (benchmarks/explore_sm90_r16.yaml built from the tree before, build/r16_old, from
#            commit 7309772, build/r16_v1: GELU by Numerical Recipes' degree-9 erfc, and from this
#            one, build/r16_v2: a degree-5 erfc, alpha folded into the bias's add; R16 names the
#            builds): the activations around one ex2 and one reciprocal against erff / tanhf / expf
#            and IEEE division, in turn, twice; every output checked against float64 (poisoned
#            first), bits compared across runs of a build
#   ops      the GPU op tests (every variant x split x mode against float64) and hostile inputs
#            (build/default and build/epilogues carried)
#   rest     the rest of the GPU suite
#   bench    the suite's bench, chain op, f16 and bf16 (SWEEP=1: every candidate swept too; COMPILE=1:
#            with the torch.compile column, default mode)
#   benchx   the same, f16, on benchmarks/extra_shapes.yaml, every candidate swept
#   mat      torch.compile max-autotune column on the suite, f16 (MAT_SHAPES to restrict)
#   r17      round 17 (benchmarks/explore_sm90_r17.yaml, build/r17): the 128x64 tile in a 1x2 cluster on the
#            projection and decode shapes, twice; outputs checked against float64
#   ncu16    ncu on 4096^3's 256x128 c2x1 kernel: the chain before (build/r16_old) and after (build/r16_v2),
#            and with no epilogue (explore90r16_plain_f16): duration, instructions by pipe, stalls
#   fuzz     the config fuzzer (benchmarks/device_fuzz.sh; .cutlass carried), seed 20261126: 8 configs
#            of both backends whose epilogues draw GELU, GELU-tanh, SiLU and sigmoid, 100 problems each
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
out=/tmp/s16; mkdir -p "$out"
squares=(4096,4096,4096 4096,4096,14336 4000,4104,1000 8192,8192,512 4096,4096,1024)
for phase in "$@"; do
  case $phase in
    act) gpu_tests act tests/gpu/test_gpu_activation.py -s
         grep -E "^(gelu|gelu_tanh|silu|sigmoid|values) " "$out/act.log" ;;
    r16) ab r16q explore90r16_chain_f16 'serial|stream_k' "a b" "${R16:-r16_old r16_v1 r16_v2}" "${squares[@]}"
         ab r16s explore90r16_silu_f16 . "a b" "${R16:-r16_old r16_v1 r16_v2}" 4096,4096,4096 4000,4104,1000 8192,8192,512
         ab r16k explore90r16_chain_f16 'parallel|t128x64' "a b" "${R16:-r16_old r16_v1 r16_v2}" 256,256,65536 128,8192,8192
         python3 benchmarks/r8_table.py "$out"/r16q_*.json "$out"/r16s_*.json "$out"/r16k_*.json > "$out/r16_table.txt"
         cat "$out/r16_table.txt" ;;
    ops|rest|bench|benchx) common_phase "$phase" ;;
    mat) shapes=(); for s in ${MAT_SHAPES:-}; do shapes+=(--shape "$s"); done
         python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
           --max-autotune --repeat 1 "${shapes[@]}" --json "$out/bench_mat.json" > "$out/bench_mat.txt" 2>&1
         tail -12 "$out/bench_mat.txt" ;;
    r17) ab r17 explore90r17_chain_f16 . "a b" r17 128,8192,8192 96,3072,16384 128,2048,28672 64,4096,14336 \
           48,8192,8192 192,1024,32768 32,5120,13824
         python3 benchmarks/r8_table.py "$out"/r17_*.json > "$out/r17_table.txt"
         cat "$out/r17_table.txt" ;;
    ncu16) for run in r16_old:chain r16_v2:chain r16_v2:plain; do
             b=${run%%:*} op=${run##*:}
             CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
               --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats \
               --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_lsu.sum \
               python3 benchmarks/profile_shape.py build/$b 4096 4096 4096 explore90r16_${op}_f16 \
               explore90r16_${op}_f16_serial_sm90_t256x128x64_c2x1_coop_sauto_a8 1 > "$out/ncu16_${b}_$op.txt" 2>&1
             echo "== $b $op rc=$?"
             grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|smsp__inst|Stall Long|No Eligible" "$out/ncu16_${b}_$op.txt" | cut -c1-120
           done ;;
    fuzz) SEED=20261126 CONFIGS=8 PROBLEMS=100 OUT=$out/f1 bash benchmarks/device_fuzz.sh | tail -30 ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s16.tgz" -C /tmp s16
done
