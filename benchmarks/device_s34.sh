#!/usr/bin/env bash
# Session 34's device calls, by phase (logs under /tmp/s34, packed into $OUT/s34.tgz after the phases):
#   large    tests/gpu/test_gpu_large.py alone, with its per-op lines: outputs of 2.15 * 10^9 elements (M * N past
#            2^31), every variant of build/epilogues and two ops of build/default at splits of at most 3
#   r57      round 57: within each CTA of the skinny partial GEMMs, when the producer issues its first and last loads
#            against the prologue and the unit's end (probe_times.py on build/r57, built with -DCKS_PROBE_TIMES from
#            benchmarks/r57_probe_times.patch)
#   r58      round 58: the consumer frees a stage as soon as its MMAs are done where the next stage has not arrived
#            (build/r58, -DCKS_SM90_EARLY_RELEASE=1) against CUTLASS's consumer (build/r58n, =0), the same tree,
#            variant_ab.py in turn, twice: every candidate of the chain op's grid on ten skinny, decode and projection
#            shapes, the in-kernel (serial) ones on two large shapes
#   r59      round 59: the producer's loop slowed on purpose (__nanosleep of 100 and 300 ns after each stage's copies,
#            build/r59d100, build/r59d300) against the shipped loop (build/r59d0), variant_ab.py in turn, twice
#   rest2    the rest of the GPU suite without test_gpu_large.py (ran in `large`)
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
out=/tmp/s34; mkdir -p "$out"
fuzz_seed=20263401
for phase in "$@"; do
  case $phase in
    large) python3 -m pytest -m gpu tests/gpu/test_gpu_large.py -q -s -p no:cacheprovider --confcutdir=tests/gpu -rs \
             2>&1 | grep -v DEBUG > "$out/large.log"
           grep -E "pairs|passed|failed|FAILED|ERROR|Error|split=" "$out/large.log" | head -60 ;;
    r57) for c in "r57_t64x64 256,256,65536:8" "r57_t64x128 256,256,65536:16 512,512,32768:4 256,1024,16384:4" \
                  "r57_t128x128 1024,1024,16384:2"; do
           set -- $c
           CUTLASS_SPLITK_GRAPHS=0 python3 benchmarks/probe_times.py build/r57 "$@" --json "$out/r57_$1.json" 2>&1 \
             | grep -v -i warn | tee -a "$out/r57.txt"
         done ;;
    r58) ab r58 explore90r58_chain_f16 . "1 2" "r58n r58" 256,256,65536 512,512,32768 1024,1024,16384 320,1280,16384 \
           256,1024,16384 160,2560,12288 384,768,16384 16,4096,14336 64,4096,14336 128,8192,8192
         ab r58sq explore90r58_chain_f16 serial "1 2" "r58n r58" 4096,4096,4096 2048,2048,8192
         for g in r58 r58sq; do
           python3 benchmarks/ab_compare.py --old "$out/${g}_r58n1.json" "$out/${g}_r58n2.json" \
             --new "$out/${g}_r581.json" "$out/${g}_r582.json" --json "$out/${g}_compare.json" | tee "$out/${g}_compare.txt"
         done ;;
    r59) ab r59 explore90r59_chain_f16 . "1 2" "r59d0 r59d100 r59d300" 256,256,65536 512,512,32768 1024,1024,16384 \
           256,1024,16384
         for d in 100 300; do
           python3 benchmarks/ab_compare.py --old "$out/r59_r59d01.json" "$out/r59_r59d02.json" \
             --new "$out/r59_r59d${d}1.json" "$out/r59_r59d${d}2.json" --json "$out/r59_compare_$d.json" \
             | tee "$out/r59_compare_$d.txt"
         done ;;
    rest2) gpu_tests rest tests/gpu --deselect tests/gpu/test_gpu_ops.py --deselect tests/gpu/test_gpu_hostile.py \
             --deselect tests/gpu/test_gpu_large.py ;;
    *) common_phase "$phase" ;;
  esac
done
tar czf "$OUT/s34.tgz" -C "$out" --exclude=s34.tgz . 2>/dev/null; ls -la "$OUT/s34.tgz"
