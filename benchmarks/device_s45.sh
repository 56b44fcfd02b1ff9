#!/usr/bin/env bash
# Session 45's device calls, by phase (logs under $OUT): device_lib.sh's common phases and
#   r69build  build/r69/double and build/r69/budget (benchmarks/explore_sm90_r69.yaml; the second with the
#             round's switch -DCKS_ROUND69_BUDGET_ONLY: the epilogue's budget alone picks its buffers; the switch lived
#             only while the round ran)
#   r69       variant_ab.py over both builds, twice in turn, on the squares and mid-size shapes (correctness
#             against float64 with poisoned outputs, bit digests, flushed and graph times)
# The session ran `build` with `r69build` beside it, then `r69 ops`, `bench fuzz` (REPEAT=2, CONFIGS=8) and `rest`;
# round 69b (explore_sm90_r69b.yaml) was built and checked by hand (BENCHMARKS.md, session 45).
source benchmarks/device_lib.sh  # the run's setup, common_phase, ab
fuzz_seed=20264501
for phase in "$@"; do
  case $phase in
    r69build)
      python3 -m cutlass_splitk.cli build benchmarks/explore_sm90_r69.yaml -o build/r69/double -q > "$out/r69_double.txt" 2>&1 &
      CUTLASS_SPLITK_NVCC_FLAGS=-DCKS_ROUND69_BUDGET_ONLY python3 -m cutlass_splitk.cli build \
        benchmarks/explore_sm90_r69.yaml -o build/r69/budget -q > "$out/r69_budget.txt" 2>&1
      wait; echo "r69build: $(tail -1 "$out/r69_double.txt") | $(tail -1 "$out/r69_budget.txt")" ;;
    r69) ab r69 explore90r69_chain_f16 . "a b" "r69/double r69/budget" 4096,4096,4096 4096,4096,14336 \
           4096,4096,1024 8192,8192,512 2048,8192,2048 ;;
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
