#!/usr/bin/env bash
# Session 46's device calls, by phase (logs under $OUT): device_lib.sh's common phases and
#   chain     build/chain: the chain op alone (benchmarks/chain_only.yaml: default.yaml's kernels, a shorter build)
#   benchc    its suite bench with the torch.compile column (default mode), f16 then bf16, each under $LIMIT s
#   ncushort  ncu (full set) of two in-kernel tiles and cuBLAS's GEMM on 160 x 8192 x 1024 (short K; not yet run)
#   moves     the same sweep on twenty shapes whose pick the candidate time model (session 46) moves ($moves)
#   shortk    bench --sweep of the chain op (f16, every candidate of the shipped grid, graph replays) on a dozen
#             short- and medium-K shapes of small M no sweep had seen (held out from every fit; $shortk below)
# The session ran `build benchx shortk` and `build moves fuzz` (CONFIGS_TO_BUILD=default), then `chain benchc`.
source benchmarks/device_lib.sh  # the run's setup, common_phase, persweep
fuzz_seed=20264601
# twenty shapes drawn at random (seed 46) among 1500 whose pick the time-model candidate moves (H200 model)
moves=(16,1152,20608 22,4736,20288 25,7552,3392 26,9280,29760 28,4352,2560 29,9664,30400 46,12416,7936 53,1280,4672
       59,1792,30144 73,1472,4672 75,1536,23488 75,6144,2368 78,10496,22400 157,1088,1600 170,584,6336 250,4096,5568
       316,3648,1664 434,3328,16960 599,296,4480 694,2816,8448)
shortk=(32,11008,1024 48,5120,2048 64,13824,1536 80,4096,1024 96,14336,1024 112,6144,2048 128,5120,1536
        160,8192,1024 192,3072,2048 256,11008,1024 24,8192,3072 200,2560,1024)
for phase in "$@"; do
  case $phase in
    chain) python3 -m cutlass_splitk.cli build benchmarks/chain_only.yaml -o build/chain --slowest 3 > "$out/build_chain.txt" 2>&1
           echo "build chain rc=$?"; tail -5 "$out/build_chain.txt" ;;
    benchc) for dt in f16 bf16; do  # the suite with the torch.compile column (default mode), one dtype at a time
              timeout -s INT "${LIMIT:-200}" python3 -m cutlass_splitk.cli bench build/chain --op "bias_gelu_mul_permute_$dt" \
                --dtype "$dt" --repeat 1 --json "$out/benchc_$dt.json" > "$out/benchc_$dt.txt" 2>&1
              echo "benchc $dt rc=$?"; tail -11 "$out/benchc_$dt.txt" | cut -c1-175
            done ;;
    ncushort) # not run in session 46 (no device time left): ncu of the 128x64 split-1 kernel, the 64x32x128 ping-pong one
              # and cuBLAS's GEMM on 160 x 8192 x 1024, where our best candidate took 15.4 us and cuBLAS 6.3 (graphs)
              for v in serial_sm90_t128x64x64_c1x1_coop_sauto_a8 serial_sm90_t64x32x128_c1x1_pp_sauto_a8; do
                CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --launch-skip 2 --launch-count 1 --set full \
                  --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/default 160 8192 1024 \
                  bias_gelu_mul_permute_f16 "bias_gelu_mul_permute_f16_$v" 1 > "$out/ncushort_$v.txt" 2>&1
                echo "ncushort $v rc=$? $(grep -E '^\s+Duration' "$out/ncushort_$v.txt" | head -1)"
              done
              ncu --clock-control none --set full --nvtx --nvtx-include cublas/ --kernel-name regex:nvjet python3 \
                benchmarks/profile_shape.py cublas 160 8192 1024 > "$out/ncushort_cublas.txt" 2>&1
              echo "ncushort cublas rc=$? $(grep -E '^\s+Duration' "$out/ncushort_cublas.txt" | head -1)" ;;
    moves) persweep moves default bias_gelu_mul_permute_f16 60 "${moves[@]}" ;;
    shortk) persweep shortk default bias_gelu_mul_permute_f16 60 "${shortk[@]}" ;;
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
