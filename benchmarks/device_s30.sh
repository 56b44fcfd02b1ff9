#!/usr/bin/env bash
# Session 30's device calls, by phase (logs under /tmp/s30, copied to $OUT after each phase):
#   fresh    every candidate of the chain op swept (f16, the GPC order on) on fourteen skinny shapes no sweep had
#            seen: held-out data for the time model's GPC-order terms
#   flushab  the skinny candidates of the two leading parallel tiles (64x128 ping-pong in 1x2 clusters, 128x128 in
#            1x2 and 2x1) timed L2-flushed (dirty) and as graph replays, every output checked (variant_ab.py)
#   freshlbg every candidate of linear + bias + GELU swept (f16) on the fresh shapes and session 23's diverse ones
#   gpc      the GPC order's and the placement's GPU tests (with the first call's ranking), on whatever GPU this is
#   benchclean  the suite's bench (chain op, f16 and bf16, the dispatcher's picks) under the clean flush (L2 read, not
#            written: nothing dirty to write back), three rounds
#   ncu256   ncu: the chain's partial GEMM and reduction on 256^2 x 65536 (the pick, 64x128 ping-pong split 16, and
#            the 64x64 ping-pong at split 8) and on 512^2 x 32768 (64x128 ping-pong split 4), durations, DRAM and
#            L2 bytes, beside cuBLAS's kernels on the same shapes
#   lrc256   ncu: the L2 request coalescer's sectors (own requests, multicast) of the 256^2 x 65536 and 512^2 x 32768
#            partial GEMMs with the GPC order on and off, and of cuBLAS's kernels
#   multi    the GPU tests that need two GPUs (integration, arrays) and the GPC order's, on a two-GPU machine
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20263001
out=/tmp/s30; mkdir -p "$out"
fresh14=(128,4096,16384 256,1024,16384 768,512,24576 64,2048,32768 448,448,32768 160,2560,12288 1024,384,20480
         576,576,16384 96,3072,24576 2048,128,32768 352,704,28672 832,640,8192 512,1024,16384 256,768,40960)
for phase in "$@"; do
  case $phase in
    fresh) sweep sweep_fresh default 'bias_gelu_mul_permute_f16' "${fresh14[@]}" ;;
    flushab) ab flushab bias_gelu_mul_permute_f16 'parallel_sm90_t(64x128x64_c1x2|128x128x64_c1x2|128x128x64_c2x1)' \
               "a b" default 512,512,32768 256,256,65536 1024,1024,16384 320,1280,16384 256,1024,16384 160,2560,12288 \
               384,768,16384 448,448,32768 ;;
    gpc) gpu_tests gpc tests/gpu/test_gpu_integration.py -k "placement or gpc_order or first_call" -s
         grep -E "GPCs found" "$out/gpc.log" ;;
    freshlbg) sweep sweep_fresh_lbg default 'linear_bias_gelu_f16' "${fresh14[@]}" "${diverse[@]}" ;;
    benchclean) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
                  --no-compile --repeat 3 --flush clean --json "$out/bench_suite_clean.json" > "$out/bench_suite_clean.txt" 2>&1
                tail -20 "$out/bench_suite_clean.txt" ;;
    ncu256) M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed"
            for spec in "256 256 65536 t64x128x64_c1x2_pp_sauto_a8 16" "256 256 65536 t64x64x64_c1x2_pp_sauto_a8 8" \
                        "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 4"; do
              set -- $spec
              ncu --clock-control none --kernel-name regex:"device_kernel|reduce_epilogue" --launch-skip 4 --launch-count 2 \
                --metrics "$M" python3 benchmarks/profile_shape.py build/default $1 $2 $3 bias_gelu_mul_permute_f16 \
                bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 > "$out/ncu256.txt" 2>&1
              echo "== $spec rc=$?"
              grep -E "^  [a-zA-Z_].*\(|dram__|lts__|gpu__|sm__" "$out/ncu256.txt" | cut -c1-120
            done
            for s in "256 256 65536" "512 512 32768"; do
              ncu --clock-control none --metrics "$M" --nvtx --nvtx-include cublas/ python3 benchmarks/profile_shape.py \
                cublas $s > "$out/ncu256_cublas.txt" 2>&1
              echo "== cublas $s"
              grep -E "^  [a-zA-Z_].*\(|dram__|lts__|gpu__|sm__" "$out/ncu256_cublas.txt" | cut -c1-120
            done ;;
    lrc256) coalescer lrc256 \
            "256 256 65536 t64x64x64_c1x2_pp_sauto_a8 8" "256 256 65536 t64x128x64_c1x2_pp_sauto_a8 16" \
            "256 256 65536 t128x128x64_c1x2_coop_sauto_a8 16" "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 4" \
            -- "256 256 65536" "512 512 32768" ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py \
             -k "second_device or two_devices or clusters_of_four or device_properties or gpc or placement" ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "phase $phase done at ${SECONDS}s"
  mkdir -p "${OUT:-device-logs}/s30" && cp -r "$out"/. "${OUT:-device-logs}/s30/"
done
