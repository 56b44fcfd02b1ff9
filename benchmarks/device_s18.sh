#!/usr/bin/env bash
# Session 18's device calls, by phase (logs and JSON under /tmp/s18, packed into $OUT/s18.tgz after
# each phase, so a call stopped at its limit still brings back what was done):
#   build    build/default and build/epilogues from this tree, here (16 cores; .cutlass carried)
#   r26      round 26 (benchmarks/explore_sm90_r26.yaml built with an exploration switch at 0 and 1,
#            build/r26/h0 and build/r26/h1): the weight's TMA loads with CUTLASS's EVICT_NORMAL and
#            with EVICT_FIRST, in turn, twice, flushed and graph; every output checked against float64
#   r26b     the shipped rule (build/r26/rule: EVICT_FIRST only where the weight is read once) against
#            build/r26/h0 and two generalisations (build/r26/m1: EVICT_FIRST on either operand
#            where it is read once; m2: m1 plus EVICT_LAST where several clusters read it), in turn, twice
#   r26c     builds m2, final, m1 in turn, three times, on two decode shapes (m2 measured faster than final)
#   r26d     h0 against rule (the shipped policy wherever the weight exceeds the L2) with a clean flush
#   r27      round 27 (explore_sm90_r27.yaml, parallel only) built with and without CUTLASS_ENABLE_GDC_FOR_SM90 (CUTLASS's cooperative
#            kernel releases its PDL dependents as each CTA starts its last tile's epilogue), both flushes
#   ncu26    ncu on two decode picks (the swapped partial GEMM, the 128x64 serial kernel) from round 26's
#            builds: duration, DRAM bytes read, L2 hit rate
#   flush    the clean-flush timer's GPU test, then the suite's bench (f16) with each of bench's L2 flushes
#   ops rest bench benchx   device_lib.sh's common phases
#   fuzz     the config fuzzer (benchmarks/device_fuzz.sh; .cutlass carried)
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20261128
out=/tmp/s18; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    build) for cfg in default epilogues; do
             python3 -m cutlass_splitk.cli build configs/$cfg.yaml -o build/$cfg -j 16 -q > "$out/build_$cfg.txt" 2>&1
             echo "build $cfg rc=$?"; tail -3 "$out/build_$cfg.txt"
           done ;;
    r26) ab r26 explore90r26_chain_f16 . "${RUNS:-a b}" "r26/h0 r26/h1" 256,256,65536 512,512,32768 1024,1024,16384 \
           16,4096,14336 64,4096,14336 128,8192,8192 384,384,24576 128,2048,28672 4096,4096,4096 8192,8192,512
         python3 benchmarks/r8_table.py "$out"/r26_*.json > "$out/r26_table.txt"
         cat "$out/r26_table.txt" ;;
    r26b) ab r26b explore90r26_chain_f16 . "${RUNS:-a b}" "${R26B:-r26/h0 r26/rule r26/m1 r26/m2}" 256,256,65536 512,512,32768 \
            1024,1024,16384 16,4096,14336 64,4096,14336 128,8192,8192 128,2048,28672 32,11008,4096 1,4096,4096 \
            96,3072,16384 4096,4096,4096 8192,8192,512
          python3 benchmarks/r8_table.py "$out"/r26b_*.json > "$out/r26b_table.txt"
          cat "$out/r26b_table.txt" ;;
    r26c) ab r26c explore90r26_chain_f16 . "${RUNS:-a b c}" "${R26B:-r26/m2 r26/final r26/m1}" 16,4096,14336 \
            64,4096,14336
          python3 benchmarks/r8_table.py "$out"/r26c_*.json > "$out/r26c_table.txt"
          cat "$out/r26c_table.txt" ;;
    r26d) FLUSH=clean ab r26d explore90r26_chain_f16 . "${RUNS:-a b}" "r26/h0 r26/rule" 16,4096,14336 64,4096,14336 \
            128,8192,8192 128,2048,28672 96,3072,16384 32,11008,4096 256,256,65536
          python3 benchmarks/r8_table.py "$out"/r26d_*.json > "$out/r26d_table.txt"
          cat "$out/r26d_table.txt" ;;
    r27) for f in dirty clean; do
           FLUSH=$f ab r27$f explore90r27_chain_f16 . "${RUNS:-a b}" "r27/cur r27/gdc" 256,256,65536 512,512,32768 \
             1024,1024,16384 16,4096,14336 128,2048,28672 384,384,24576
         done
         python3 benchmarks/r8_table.py "$out"/r27dirty_*.json > "$out/r27dirty_table.txt"
         python3 benchmarks/r8_table.py "$out"/r27clean_*.json > "$out/r27clean_table.txt"
         cat "$out/r27clean_table.txt" ;;
    ncu26) for b in ${R26B:-r26/m1 r26/m2 r26/final}; do
             for v in "16 4096 14336 parallel_sm90_t64x16x128_c1x1_pp_sauto_a8_swab 2" \
                      "128 8192 8192 serial_sm90_t128x64x64_c1x1_coop_sauto_a8 1"; do
               set -- $v
               CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --kernel-name regex:device_kernel --launch-skip 2 \
                 --launch-count 1 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
                 python3 benchmarks/profile_shape.py build/$b $1 $2 $3 explore90r26_chain_f16 \
                 explore90r26_chain_f16_$4 $5 > "$out/ncu26_${b##*/}_$1.txt" 2>&1
               echo "== $b $1x$2x$3 rc=$?"; grep -E "gpu__time|dram__bytes|hit_rate" "$out/ncu26_${b##*/}_$1.txt"
             done
           done ;;
    flush) gpu_tests flush tests/gpu/test_gpu_integration.py -k flushed_timer
           for f in dirty clean; do
             python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
               --no-compile --repeat 1 --flush $f --json "$out/bench_flush_$f.json" > "$out/bench_flush_$f.txt" 2>&1
             tail -12 "$out/bench_flush_$f.txt"
           done ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s18.tgz" -C /tmp s18
done
