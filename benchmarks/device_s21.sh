#!/usr/bin/env bash
# Session 21's device calls, by phase (logs and JSON under /tmp/s21, packed into $OUT/s21.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   sweepA   linear_bias_gelu_f16 (no E, no permute: the in-kernel modes on CUTLASS's TMA epilogue), every
#            candidate swept, on large-M*N shapes outside the suite (the time model's stream-K term)
#   sweepB   the same op on skinny and square shapes (suite-like, and others)
#   r34      round 34 (benchmarks/explore_sm90_r34.yaml, build/r34): ping-pong split-1 tiles against the
#            shipped 128x256 c1x2 cooperative one, bias + GELU and linear (alpha, beta * C, bias), in turn,
#            twice, flushed and graph, checked against float64
#   sweepbf  linear_bf16 (alpha, beta * C, bias) swept on mid and large shapes (the ping-pong tile in bf16)
#   odd      linear_bias_gelu_f16 and the chain op swept on shapes whose M or N leave a partial tile behind
#            several whole ones (the time model's rows past the edge)
#   r34c     its second part (explore_sm90_r34c.yaml, build/r34c): the same for the chain op and qkv (our epilogue)
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261301
out=/tmp/s21; mkdir -p "$out"
sweep() {  # sweep NAME OP SHAPE...: cutlass-splitk bench --sweep of OP ($DT, default f16) on the shapes given
  local name=$1 op=$2; shift 2
  local shapes=(); for s in "$@"; do shapes+=(--shape "$s"); done
  python3 -m cutlass_splitk.cli bench build/default --op "$op" --dtype "${DT:-f16}" --no-compile --repeat 1 --sweep \
    "${shapes[@]}" --json "$out/$name.json" > "$out/$name.txt" 2>&1
  echo "$name rc=$?"; grep -A40 "^shape" "$out/$name.txt" | cut -c1-200
}
for phase in "$@"; do
  case $phase in
    sweepA) sweep sweepA 'linear_bias_gelu_{dtype}' 8192,8192,512 16384,4096,512 8192,4096,1024 6144,6144,768 \
              4096,4096,1024 3000,5000,700 2048,8192,2048 4096,8192,4096 ;;
    sweepB) sweep sweepB 'linear_bias_gelu_{dtype}' 128,8192,8192 64,4096,14336 512,512,32768 1024,1024,16384 \
              256,4096,4096 4096,4096,4096 1024,4096,2048 2048,2048,8192 ;;
    r34) for op in bias_gelu_f16 linear_f16; do
           AB_ARGS=--scalars ab "r34_$op" "explore90r34_$op" . "${RUNS:-a b}" r34 8192,8192,512 16384,4096,512 \
             8192,4096,1024 6144,6144,768 4096,4096,1024 2048,8192,2048 4096,4096,4096 4000,4104,1000
           python3 benchmarks/r8_table.py "$out"/r34_${op}_*.json > "$out/r34_${op}_table.txt"
           cat "$out/r34_${op}_table.txt"
         done ;;
    r34c) ab r34c_chain_f16 explore90r34c_chain_f16 . "${RUNS:-a b}" r34c 8192,8192,512 16384,4096,512 \
            8192,4096,1024 6144,6144,768 4096,4096,1024 2048,8192,2048 4096,4096,4096 4096,4096,14336 4000,4096,1000
          ab r34c_qkv_f16 explore90r34c_qkv_f16 . "${RUNS:-a b}" r34c 8192,6144,512 4096,3072,1024 6144,6144,768 \
            4096,6144,4096 4000,3072,1000
          for op in chain_f16 qkv_f16; do
            python3 benchmarks/r8_table.py "$out"/r34c_${op}_*.json > "$out/r34c_${op}_table.txt"
            cat "$out/r34c_${op}_table.txt"
          done ;;
    sweepbf) DT=bf16 sweep sweepbf 'linear_{dtype}' 8192,4096,1024 4096,4096,1024 6144,6144,768 2048,8192,2048 \
               4000,4104,1000 8192,8192,512 4096,4096,4096 1024,1024,16384 ;;
    odd) sweep odd_lbg 'linear_bias_gelu_{dtype}' 4000,4104,1000 1000,8200,4096 3000,5000,704 2000,3000,2048 \
           5000,5000,2000 4100,4100,4096 777,9000,8192 1500,1500,16384 2100,4200,1024 300,7000,8192
         sweep odd_chain 'bias_gelu_mul_permute_{dtype}' 4000,4096,1000 1000,8192,4096 3000,5120,704 \
           2100,4096,1024 5000,5120,2000 777,8192,8192 1500,1536,16384 300,7168,8192 ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s21.tgz" -C /tmp s21
done
