#!/usr/bin/env bash
# Session 32's device calls, by phase (logs under /tmp/s32, packed into $OUT/s32.tgz after each phase: a call returns
# at most eight files):
#   r48      round 48: the partial GEMM's K slices contiguous (build/r48a) against interleaved by k-tile (build/r48b),
#            variant_ab.py on the skinny and decode shapes, every output checked, in turn ($R48RUNS, default "1 2")
#   r49      round 49: the sm90 partial GEMM PDL-launched after the stream's previous kernel (CUTLASS_SPLITK_PDL=1)
#            against session 31's launches (=reduction) and no PDL (=0), pdl_ab.py on build/r49, the suite's and the
#            extra shapes' skinny rows, the model's two best parallel candidates each, every output checked (the
#            setting and pdl_ab.py's --flags lived in the round's tree only: apply benchmarks/r49_gemm_pdl.patch first)
#   r50      round 50: the ping-pong partial tiles in 2x1 clusters beside 1x2 (build/r50), variant_ab.py on the skinny
#            shapes, every output checked, twice
#   tl       where a call's time goes, kernel by kernel (kernel_timeline.py: CUDA-graph replays traced with
#            torch.profiler), cuBLAS's GEMM and reduction against ours, on the skinny shapes' best candidates (build/r50)
#   l2warm   ncu of the third back-to-back call's GEMM, L2 left as the previous call left it (--cache-control none):
#            DRAM bytes and L2 hit rate of cuBLAS's GEMM and of ours (build/r50), where the timeline found ours slower
#   r51      round 51: the TMA L2 promotion under the GPC order, as shipped (build/r51), 128 bytes (r51p128), none
#            (r51p0): ncu of the third back-to-back call's partial GEMM on three skinny picks, then variant_ab.py
#   r52      round 52: the reduction's blocks spread evenly over the SMs (CKS_REDUCE_SPREAD=1, a setting of the round's
#            tree) against as shipped (=0), build/r52: kernel_timeline.py, then variant_ab.py in turn, twice
#   integ    the integration tests of the launches the reduction's spread touches (CUDA-graph capture and replay,
#            replayed against direct launches, PDL back to back, streams, the GPC order's bits)
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20263201
out=/tmp/s32; mkdir -p "$out"
skinny10=(256,256,65536 512,512,32768 1024,1024,16384 320,1280,16384 256,1024,16384 160,2560,12288 384,768,16384
          16,4096,14336 64,4096,14336 128,8192,8192)
for phase in "$@"; do
  case $phase in
    r48) ab r48 explore90r48_chain_f16 . "${R48RUNS:-1 2}" "${R48DIRS:-r48a r48b}" "${skinny10[@]}" ;;
    r49) python3 benchmarks/pdl_ab.py build/r49 explore90r49_chain_f16 --shapes benchmarks/bench_shapes.yaml \
           --shapes benchmarks/extra_shapes.yaml --top "${R49TOP:-2}" --json "$out/r49.json" > "$out/r49.txt" 2>&1
         echo "r49 rc=$?"; cat "$out/r49.txt" | cut -c1-220 ;;
    r50) ab r50 explore90r50_chain_f16 . "1 2" r50 "${skinny10[@]::7}" 448,448,32768 640,640,20480 192,1024,32768 ;;
    tl) python3 benchmarks/kernel_timeline.py build/r50 explore90r50_chain_f16 256,256,65536:t64x64x64_c1x2:8 \
          256,256,65536:t64x128x64_c1x2:16 512,512,32768:t64x128x64_c1x2:4 512,512,32768:t128x128x64_c1x2:8 \
          256,1024,16384:t64x128x64_c1x2:4 384,768,16384:t64x128x64_c1x2:3 1024,1024,16384:t128x128x64_c1x2:2 \
          --json "$out/tl.json" 2>&1 | grep -v Warning | tee "$out/tl.txt" ;;
    l2warm) M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,gpu__time_duration.sum
            for c in "256 256 65536 t64x64x64_c1x2_pp_sauto_a8 8" "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 4" \
                     "1024 1024 16384 t128x128x64_c1x2_coop_sauto_a8 2" "384 768 16384 t64x128x64_c1x2_pp_sauto_a8 3"; do
              set -- $c
              for cc in none all; do
                ncu --cache-control $cc --clock-control none --metrics $M --launch-skip 2 --launch-count 1 \
                  --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/r50 $1 $2 $3 \
                  explore90r50_chain_f16 explore90r50_chain_f16_parallel_sm90_$4 $5 > "$out/l2warm_$1_$cc.txt" 2>&1
                echo "== ours $* cache=$cc: $(grep -E '^\s+(dram|lts|gpu)__' "$out/l2warm_$1_$cc.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
                [ -n "${L2WARM_OURS_ONLY:-}" ] && continue
                ncu --cache-control $cc --clock-control none --metrics $M --nvtx --nvtx-include cublas/ \
                  --kernel-name regex:nvjet python3 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/l2warm_cublas_$1_$cc.txt" 2>&1
                echo "== cublas $1 $2 $3 cache=$cc: $(grep -E '^\s+(dram|lts|gpu)__' "$out/l2warm_cublas_$1_$cc.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
              done
            done ;;
    r51) M=dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,gpu__time_duration.sum
         for dir in r51 r51p128 r51p0; do
           for c in "256 256 65536 t64x64x64_c1x2_pp_sauto_a8 8" "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 4" \
                    "1024 1024 16384 t128x128x64_c1x2_coop_sauto_a8 2"; do
             set -- $c
             ncu --cache-control none --clock-control none --metrics $M --launch-skip 2 --launch-count 1 \
               --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/$dir $1 $2 $3 \
               explore90r51_chain_f16 explore90r51_chain_f16_parallel_sm90_$4 $5 > "$out/r51ncu_${dir}_$1.txt" 2>&1
             echo "== $dir $*: $(grep -E '^\s+(dram|lts|gpu)__' "$out/r51ncu_${dir}_$1.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
           done
         done
         ab r51 explore90r51_chain_f16 . "1 2" "r51 r51p128 r51p0" "${skinny10[@]::7}" 448,448,32768 ;;
    r52) for sp in 0 1; do
           CKS_REDUCE_SPREAD=$sp python3 benchmarks/kernel_timeline.py build/r52 explore90r52_chain_f16 \
             256,256,65536:t64x64x64_c1x2:8 256,256,65536:t64x128x64_c1x2:16 512,512,32768:t64x128x64_c1x2:4 \
             512,512,32768:t128x128x64_c1x2:8 1024,1024,16384:t128x128x64_c1x2:2 384,768,16384:t64x128x64_c1x2:3 \
             16,4096,14336:t64x16x128:4 64,4096,14336:t64x128x64_c1x2:4 128,8192,8192:t128x128x64_c1x2:2 \
             --json "$out/r52tl$sp.json" 2>&1 | grep -v -i warn | tee "$out/r52tl$sp.txt" | grep ours
         done
         for run in 1 2; do
           for sp in 0 1; do
             CKS_REDUCE_SPREAD=$sp python3 benchmarks/variant_ab.py build/r52 explore90r52_chain_f16 \
               $(printf -- "--shape %s " "${skinny10[@]}") --label "sp$sp$run" --json "$out/r52_sp$sp$run.json" \
               > "$out/r52_sp$sp$run.txt" 2>&1
             echo "r52 sp$sp$run rc=$? wrong=$(grep -c WRONG "$out/r52_sp$sp$run.txt")"
           done
         done ;;
    integ) gpu_tests integ tests/gpu/test_gpu_integration.py -k \
             "graph_replay or replayed_launches or programmatic or streams_stress or gpc_order_keeps or fast_path" ;;
    ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "phase $phase done at ${SECONDS}s"
  mkdir -p "${OUT:-device-logs}" && tar czf "${OUT:-device-logs}/s32.tgz" -C "$out" .
done
