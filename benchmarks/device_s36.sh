#!/usr/bin/env bash
# Session 36's device calls, by phase (logs under /tmp/s36, packed into $OUT/s36.tgz after the phases):
#   r62      round 62: FusedWarpEpilogue loads the next chunk's sources before applying the current one
#            (build/r62, -DCKS_SM90_EPI_LOOKAHEAD=1) against the shipped epilogue (build/r62n, =0), the same tree,
#            variant_ab.py in turn, twice, on squares, short-K large M*N and odd shapes; ab_compare.py
#   r62sq    the squares alone (long K), in turn, twice
#   r62rc    compute-sanitizer racecheck and synccheck of build/r62 (sanitize_serial.py, odd sizes, float64-checked)
#   ncu62    ncu --set full of the chain op's 128x256 c1x2 split-1 kernel on 4096 x 4096 x 256 (short K, large M*N: the
#            epilogue's share) from build/r62n and build/r62, and of the shipped kernel on 4096^3
#   r63      round 63: every candidate of build/r63 (the shipped parallel groups and partial tiles 96, 160, 192 and
#            224 columns wide) swept on held-out skinny and medium shapes (bench --sweep, graph replays)
#   cublas63 which kernels cuBLAS runs (names, grids, clusters, times) on the held-out shapes where it leads most
#   r64      round 64: build/r64 (the shipped parallel groups and 80-, 96- and 112-column partial tiles, swapped or
#            not, clusters of 1, 2 and 4) swept on the held-out shapes; variant_ab.py's float64 check of the new groups
#            on an odd shape
#   r64probe each new group of build/r64 in its own process under a 45 s timeout (variant_ab.py, float64 check, every
#            split, 712 x 968 x 10000), logs written to $OUT as they come: which, if any, hangs (r64's sweep did)
#   r64b     round 64b: build/r64b (the 112- and 80-column tiles with CUTLASS's extended wgmma shapes): variant_ab.py
#            (float64 check, every split) on two shapes, then bench --sweep on six, one process per step under a
#            timeout, logs packed into $OUT after each
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
out=/tmp/s36; mkdir -p "$out"
fuzz_seed=20263601
r62shapes=(4096,4096,256 4096,4096,1024 8192,1024,512 2048,2048,2048 4000,4104,1000 1000,3000,5000 777,1112,2224
           2060,2560,200 16384,128,4096)
r63shapes=(832,640,8192 768,768,12288 896,896,16384 512,1024,16384 320,1280,16384 576,576,16384 640,1024,12288
           768,1024,8192 1000,1024,12000 960,960,8192 704,960,10240 480,1536,12288 1152,640,9216 384,768,16384
           160,2560,12288 256,256,65536 512,512,32768 1024,1024,16384)
for phase in "$@"; do
  case $phase in
    r62) ab r62 explore90r62_chain_f16 . "1 2" "r62n r62" "${r62shapes[@]}"
         ab r62q explore90r62_qkv_f16 . "1" "r62n r62" 4096,4096,1024 2048,6144,2048
         python3 benchmarks/ab_compare.py --old "$out"/r62_r62n[12].json --new "$out"/r62_r62[12].json \
           --json "$out/r62_compare.json" | tee "$out/r62_compare.txt" ;;
    r62sq) ab r62sq explore90r62_chain_f16 't128x256|t128x192' "1 2" "r62n r62" 4096,4096,4096 4096,4096,14336
           python3 benchmarks/ab_compare.py --old "$out"/r62sq_r62n[12].json --new "$out"/r62sq_r62[12].json \
             --json "$out/r62sq_compare.json" | tee "$out/r62sq_compare.txt" ;;
    r62rc) for tool in racecheck synccheck; do
             compute-sanitizer --tool $tool --error-exitcode 3 python3 benchmarks/sanitize_serial.py \
               build/r62 explore90r62_chain_f16 > "$out/r62_$tool.txt" 2>&1
             echo "r62 $tool rc=$?"; grep -m3 -E "SUMMARY|problems" "$out/r62_$tool.txt"
           done ;;
    ncu62) v=explore90r62_chain_f16_serial_sm90_t128x256x64_c1x2_coop_sauto_a8
           for b in r62n r62; do
             CUTLASS_SPLITK_GRAPHS=0 ncu --set full --launch-skip 2 --launch-count 1 --kernel-name regex:device_kernel \
               python3 benchmarks/profile_shape.py build/$b 4096 4096 256 explore90r62_chain_f16 $v 1 > "$out/ncu62_$b.txt" 2>&1
             echo "ncu62 $b rc=$?"
           done
           CUTLASS_SPLITK_GRAPHS=0 ncu --set full --launch-skip 2 --launch-count 1 --kernel-name regex:device_kernel \
             python3 benchmarks/profile_shape.py build/r62n 4096 4096 4096 explore90r62_chain_f16 $v 1 > "$out/ncu62_sq.txt" 2>&1
           echo "ncu62 sq rc=$?" ;;
    r63) sweep r63a r63 explore90r63_chain_f16 "${r63shapes[@]:0:10}"
         sweep r63b r63 explore90r63_chain_f16 "${r63shapes[@]:10}" ;;
    cublas63) for x in 704,960,10240 480,1536,12288 896,896,16384 320,1280,16384 768,768,12288 160,2560,12288; do
                ncu --clock-control none --section LaunchStats --metrics gpu__time_duration.sum --nvtx --nvtx-include cublas/ \
                  python3 benchmarks/profile_shape.py cublas ${x//,/ } > "$out/cublas63_$x.txt" 2>&1
                echo "== $x"; grep -E "^  [a-z_]+.*\(|Grid Size|Cluster Size|Block Size|gpu__time_duration|Registers Per|Dynamic Shared" "$out/cublas63_$x.txt" | cut -c1-140
              done ;;
    r64) sweep r64a r64 explore90r64_chain_f16 "${r63shapes[@]:0:9}"
         sweep r64b r64 explore90r64_chain_f16 "${r63shapes[@]:9}" 640,640,20480 448,448,32768 1024,384,20480 128,4096,16384
         ab r64chk explore90r64_chain_f16 't128x(112|80|96)x64|c4x1|c1x4' - r64 712,968,10000 ;;
    r64probe) mkdir -p "$OUT/r64probe"
              for v in t128x112x64_c1x1_coop t128x112x64_c1x2_coop t128x112x64_c2x1_coop t128x112x64_c4x1_coop_sauto_a8\$ \
                       t128x80x64_c1x1 t128x80x64_c1x2 t128x80x64_c2x1 t128x80x64_c4x1 t128x112x64_c1x2_coop_sauto_a8_swab \
                       t128x112x64_c4x1_coop_sauto_a8_swab t128x96x64_c4x1 t128x128x64_c4x1 t128x128x64_c1x4; do
                timeout -s KILL 45 python3 benchmarks/variant_ab.py build/r64 explore90r64_chain_f16 --match "$v" \
                  --shape ${R64SHAPE:-712,968,10000} > "$OUT/r64probe/$v.txt" 2>&1
                echo "$v rc=$? lines=$(grep -c split "$OUT/r64probe/$v.txt") wrong=$(grep -c WRONG "$OUT/r64probe/$v.txt")" \
                  | tee -a "$OUT/r64probe/summary.txt"
              done ;;
    r64s) mkdir -p /tmp/r64s  # the sweep one shape per process, 70 s each at most; packed into $OUT after each shape
          for x in ${R64SHAPES:-${r63shapes[@]}}; do
            timeout -s KILL 70 python3 -m cutlass_splitk.cli bench build/r64 --op explore90r64_chain_f16 --dtype f16 \
              --no-compile --repeat 1 --sweep --shape $x --json "/tmp/r64s/$x.json" > "/tmp/r64s/$x.txt" 2>&1
            echo "$x rc=$? $(grep -E "^$(echo $x | tr , x) " "/tmp/r64s/$x.txt" | cut -c1-160)" | tee -a /tmp/r64s/summary.txt
            tar czf "$OUT/r64s.tgz" -C /tmp/r64s .
          done ;;
    ncu64) mkdir -p "$OUT/ncu64"  # why the 112-column partial tiles run 50-100x slower (r64s): ncu of one launch
           for v in t128x112x64_c1x1_coop_sauto_a8 t128x96x64_c4x1_coop_sauto_a8_swab; do
             CUTLASS_SPLITK_GRAPHS=0 timeout -s KILL 150 ncu --set full --launch-skip 2 --launch-count 1 \
               --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/r64 896 896 16384 \
               explore90r64_chain_f16 explore90r64_chain_f16_parallel_sm90_$v 2 > "$OUT/ncu64/$v.txt" 2>&1
             echo "ncu64 $v rc=$?"
           done ;;
    r64b) mkdir -p /tmp/r64b
          for x in 712,968,10000 896,896,16384; do
            timeout -s KILL 120 python3 benchmarks/variant_ab.py build/r64b explore90r64b_chain_f16 --shape $x --label r64b \
              --json /tmp/r64b/ab_$x.json > /tmp/r64b/ab_$x.txt 2>&1
            echo "ab $x rc=$? lines=$(grep -c split /tmp/r64b/ab_$x.txt) wrong=$(grep -c WRONG /tmp/r64b/ab_$x.txt)" | tee -a /tmp/r64b/summary.txt
            tar czf "$OUT/r64b.tgz" -C /tmp/r64b .
          done
          for x in 832,640,8192 320,1280,16384 160,2560,12288 768,768,12288 704,960,10240 1024,1024,16384; do
            timeout -s KILL 60 python3 -m cutlass_splitk.cli bench build/r64b --op explore90r64b_chain_f16 --dtype f16 \
              --no-compile --repeat 1 --sweep --shape $x --json "/tmp/r64b/$x.json" > "/tmp/r64b/$x.txt" 2>&1
            echo "$x rc=$? $(grep -E "^$(echo $x | tr , x) " "/tmp/r64b/$x.txt" | cut -c1-160)" | tee -a /tmp/r64b/summary.txt
            tar czf "$OUT/r64b.tgz" -C /tmp/r64b .
          done ;;
    *) common_phase "$phase" ;;
  esac
done
tar czf "$OUT/s36.tgz" -C "$out" --exclude=s36.tgz . 2>/dev/null; ls -la "$OUT/s36.tgz"
