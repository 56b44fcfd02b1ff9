#!/usr/bin/env bash
# Session 33's device calls, by phase (logs under /tmp/s33, packed into $OUT/s33.tgz after the phases: a call returns at
# most eight files):
#   ctat     round 53: when each CTA of the skinny partial GEMMs starts and ends, by GPC (cta_times.py on build/r53,
#            built with -DCKS_PROBE_CTA_TIMES from benchmarks/r53_cta_times.patch)
#   ncufull  ncu --set full of the partial GEMM (build/r53n: the shipped templates) and of cuBLAS's GEMM, the third
#            back-to-back call each, L2 as the previous call left it; the details, raw and SASS source pages as CSV
#   halves   the GPCs of each L2 partition (l2_halves.py: dependent loads of one GPC's SM over lines another's just
#            loaded)
#   r54      round 54: the partial GEMM's units dealt to the first L2 partition's GPCs first (build/r54, with
#            sm90_gpc_order.h's kSecondHalf), against the shipped order, every (variant, split) in turn, twice,
#            outputs checked and compared bit for bit (halves_ab.py; the library's own replays off)
#   r55      round 55: round 54's order and, where a cluster's own operand tile has no other sharer (one tile row or
#            column: decode and projection shapes), the other operand's sharers grouped (build/r55), against the
#            shipped order, as r54
#   r56      round 56: the partial GEMM's producer ordered as cuBLAS's (build/r56, -DCKS_SM90_PRODUCER_ORDER from
#            benchmarks/r56_producer_order.patch) against the same tree without it (build/r56n), variant_ab.py in
#            turn, twice, every output checked
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
out=/tmp/s33; mkdir -p "$out"
fuzz_seed=20263301
skinny10=(256,256,65536 512,512,32768 1024,1024,16384 320,1280,16384 256,1024,16384 160,2560,12288 384,768,16384
          16,4096,14336 64,4096,14336 128,8192,8192)
ctat_cases=(256,256,65536:t64x64x64_c1x2:8 256,256,65536:t64x128x64_c1x2:16 512,512,32768:t64x128x64_c1x2:4
            1024,1024,16384:t128x128x64_c1x2:2 64,4096,14336:t64x128x64_c1x2:4 256,1024,16384:t64x128x64_c1x2:4)
ncu_full() {  # NAME ARGS...: ncu --set full, then the three pages as CSV
  local name=$1; shift
  ncu --set full --import-source no --cache-control none --clock-control none -f -o "$out/$name" "$@" > "$out/$name.log" 2>&1
  echo "$name rc=$? $(grep -c '==PROF==' "$out/$name.log") prof lines"
  ncu --import "$out/$name.ncu-rep" --csv --page details > "$out/${name}_details.csv" 2>&1
  ncu --import "$out/$name.ncu-rep" --csv --page raw > "$out/${name}_raw.csv" 2>&1
  ncu --import "$out/$name.ncu-rep" --csv --page source --print-source sass > "$out/${name}_sass.csv" 2>&1
}
for phase in "$@"; do
  case $phase in
    ctat) python3 benchmarks/cta_times.py build/r53 explore90r53_chain_f16 "${ctat_cases[@]}" --json "$out/ctat.json" \
            2>&1 | grep -v -i warn | grep -v CKS_T | tee "$out/ctat.txt" ;;
    ncufull)
      for c in "256 256 65536 t64x64x64_c1x2_pp_sauto_a8 8" "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 4"; do
        set -- $c
        ncu_full "ours_$1" --launch-skip 2 --launch-count 1 --kernel-name regex:device_kernel \
          python3 benchmarks/profile_shape.py build/r53n $1 $2 $3 explore90r53_chain_f16 \
          explore90r53_chain_f16_parallel_sm90_$4 $5
        ncu_full "cublas_$1" --nvtx --nvtx-include cublas/ --kernel-name regex:nvjet \
          python3 benchmarks/profile_shape.py cublas $1 $2 $3
      done
      rm -f "$out"/*.ncu-rep ;;
    halves) python3 benchmarks/l2_halves.py --json "$out/halves.json" 2>&1 | grep -v -i warn | tee "$out/halves.txt" ;;
    r54) CUTLASS_SPLITK_GRAPHS=0 python3 benchmarks/halves_ab.py build/r54 explore90r54_chain_f16 \
           $(printf -- "--shape %s " "${skinny10[@]}" 448,448,32768 640,640,20480 192,1024,32768 128,1536,32768) \
           --rounds "${R54ROUNDS:-2}" --json "$out/r54.json" 2>&1 | grep -v -i warn | tee "$out/r54.txt" | grep -v "^WRONG" ;
         echo "r54 wrong lines: $(grep -c WRONG "$out/r54.txt")" ;;
    r55) CUTLASS_SPLITK_GRAPHS=0 python3 benchmarks/halves_ab.py build/r55 explore90r55_chain_f16 \
           $(printf -- "--shape %s " 16,4096,14336 64,4096,14336 128,8192,8192 48,8192,8192 128,2048,28672 \
             32,28672,4096 8,4096,4096 128,1536,32768 160,2560,12288 96,3072,24576 256,256,65536 512,512,32768 \
             1024,1024,16384 320,1280,16384) \
           --rounds "${R55ROUNDS:-2}" --json "$out/r55.json" 2>&1 | grep -v -i warn | tee "$out/r55.txt" | grep -v "^WRONG" ;
         echo "r55 wrong lines: $(grep -c WRONG "$out/r55.txt")" ;;
    r56) ab r56 explore90r56_chain_f16 . "1 2" "r56n r56" "${skinny10[@]}" 448,448,32768 640,640,20480 ;;
    r54ncu) M=lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,gpu__time_duration.sum
            for c in "256,256,65536 t64x64x64_c1x2 8" "512,512,32768 t64x128x64_c1x2 4" "1024,1024,16384 t128x128x64_c1x2 2" \
                     "160,2560,12288 t128x128x64_c2x1 3"; do
              set -- $c
              for mode in off on; do
                CUTLASS_SPLITK_GRAPHS=0 ncu --cache-control none --clock-control none --metrics $M --launch-skip 2 \
                  --launch-count 1 --kernel-name regex:device_kernel python3 benchmarks/halves_ab.py build/r54 \
                  explore90r54_chain_f16 --shape $1 --profile $mode:$2:$3 > "$out/r54ncu_$1_$mode.txt" 2>&1
                echo "== $* $mode: $(grep -E '^\s+(dram|lts|gpu)__' "$out/r54ncu_$1_$mode.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
              done
            done ;;
    *) common_phase "$phase" ;;
  esac
done
tar czf "$OUT/s33.tgz" -C "$out" --exclude=s33.tgz . 2>/dev/null; ls -la "$OUT/s33.tgz"
