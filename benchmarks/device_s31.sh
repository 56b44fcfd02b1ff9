#!/usr/bin/env bash
# Session 31's device calls, by phase (logs under /tmp/s31, packed into $OUT/s31.tgz after each phase: a call returns
# at most eight files):
#   tail     the tail's GPU tests (sm90 parallel split-K reduced inside the partial GEMM, tests/gpu/test_gpu_tail.py)
#   tailab   the skinny candidates of the three leading parallel tiles timed L2-flushed (dirty) and as graph replays,
#            every output checked (variant_ab.py), with the tail on and off (CUTLASS_SPLITK_TAIL=1 / 0) in turn
#            ($TAILS, default "1 0 1 0")
#   bench1   the suite's bench with the tail on (CUTLASS_SPLITK_TAIL=1), to pair with `bench` (off: the default)
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20263101
out=/tmp/s31; mkdir -p "$out"
skinny8=(512,512,32768 256,256,65536 1024,1024,16384 320,1280,16384 256,1024,16384 160,2560,12288 384,768,16384
         448,448,32768)
for phase in "$@"; do
  case $phase in
    tail) gpu_tests tail tests/gpu/test_gpu_tail.py ;;
    tailab) for t in ${TAILS:-1 0 1 0}; do
              CUTLASS_SPLITK_TAIL=$t ab tailab$t bias_gelu_mul_permute_f16 \
                'parallel_sm90_t(64x128x64_c1x2|128x128x64_c1x2|128x128x64_c2x1)' - default "${skinny8[@]}"
              [ -f "$out/tailab${t}_default.json" ] && mv "$out/tailab${t}_default.json" "$out/tailab${t}_$SECONDS.json"
              [ -f "$out/tailab${t}_default.txt" ] && mv "$out/tailab${t}_default.txt" "$out/tailab${t}_$SECONDS.txt"
            done ;;
    bench1) CUTLASS_SPLITK_TAIL=1 python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' \
              --dtype f16 bf16 --no-compile --repeat 2 --json "$out/bench_suite_tail1.json" > "$out/bench_suite_tail1.txt" 2>&1
            tail -22 "$out/bench_suite_tail1.txt" ;;
    ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "phase $phase done at ${SECONDS}s"
  mkdir -p "${OUT:-device-logs}" && tar czf "${OUT:-device-logs}/s31.tgz" -C "$out" .
done
