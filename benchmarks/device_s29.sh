#!/usr/bin/env bash
# Session 29's device calls, by phase (logs under /tmp/s29, copied to $OUT after each phase):
#   gpc      the GPC order's GPU tests (the placement probe on this device; the same bits with the order on and
#            off, every sm90 parallel tile of linear_f16), the probe's placement printed
#   gpcncu   ncu: the L2 request coalescer's sectors and the partial GEMM's time with the order on and off
#            (CUTLASS_SPLITK_GPC_ORDER=0), on the skinny shapes of session 28's counts, and cuBLAS's GEMM
#   gpcsweep every candidate of the chain op swept on the fifteen skinny shapes with the order on, then off
#   diverse  every candidate of the chain op swept on session 23's twenty further shapes (the order on)
#   multi    the GPU tests that need two GPUs (integration, arrays) and the GPC order's, on a two-GPU machine
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20262901
out=/tmp/s29; mkdir -p "$out"
python3 -m pip show cuda-core cuda-bindings 2>/dev/null | grep -E "^(Name|Version)" | paste - - > "$out/versions.txt"
for phase in "$@"; do
  case $phase in
    gpc) gpu_tests gpc tests/gpu/test_gpu_integration.py -k "placement or gpc_order" -s
         grep -E "GPCs found" "$out/gpc.log" ;;
    gpcncu) coalescer gpcncu \
            "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 4" \
            "256 256 65536 t64x128x64_c1x2_pp_sauto_a8 8" "384 384 24576 t128x128x64_c1x2_coop_sauto_a8 8" \
            "128 1536 32768 t128x128x64_c1x1_coop_sauto_a8 8" "1024 1024 16384 t128x128x64_c2x1_coop_sauto_a8 8" \
            "1024 1024 16384 t128x128x64_c1x2_coop_sauto_a8 8" "1024 1024 16384 t128x128x64_c1x2_coop_sauto_a8 2" \
            -- "512 512 32768" "256 256 65536" "384 384 24576" "128 1536 32768" ;;
    gpcsweep) sweep sweep_gpc_on default 'bias_gelu_mul_permute_f16' "${skinny15[@]}"
              CUTLASS_SPLITK_GPC_ORDER=0 sweep sweep_gpc_off default 'bias_gelu_mul_permute_f16' "${skinny15[@]}" ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py \
             -k "second_device or two_devices or clusters_of_four or device_properties or gpc or placement" ;;
    diverse) sweep sweep_diverse default 'bias_gelu_mul_permute_f16' "${diverse[@]}" ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  mkdir -p "${OUT:-device-logs}/s29" && cp -r "$out"/. "${OUT:-device-logs}/s29/"
done
