#!/usr/bin/env bash
# Session 47's device calls, by phase (logs under $OUT): device_lib.sh's common phases (the session ran
# `build ops` with CONFIGS_TO_BUILD="default epilogues", then `rest fuzz`: the GPU check of 0fe5d58's includes) and
#   ncushort  short K, small M (160 x 8192 x 1024: our best 15.4 us in graphs, cuBLAS's GEMM 6.3): ncu (full set, one
#             launch, L2 not flushed by us; ncu's own cache control flushes) of the chain op's pick (128x128 c2x1 serial,
#             split 1), the same tile of linear_f16 (bias only: the main loop without the chain's epilogue), the 128x64
#             split-1 tile, and cuBLAS's GEMM; then a one-line digest per kernel (ncu_digest below)
#   split1    bench --sweep (graph replays, every candidate) of the chain op, f16, with split 1 on the parallel groups
#             (configs/default.yaml as it was for this run), on session 46's twelve short-K shapes and sixteen more
#   held      the same sweep with the shipped split lists, on fourteen further shapes whose pick they move ($held)
#   dropcheck, dropcheck100 (not yet run) the same sweep where the model picks serial 128x128 c2x1 or 128x256 c1x2,
#             on an H200 or an H100: whether the cold build can drop them (see $drop200 below)
source benchmarks/device_lib.sh  # the run's setup, common_phase
fuzz_seed=20264601
# ncu_digest FILE: the launch and the throughput lines of an ncu --set full report, one kernel
ncu_digest() {
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Memory Throughput|Grid Size|Block Size|Cluster Size|Registers Per Thread|Dynamic Shared Memory Per Block|Achieved Occupancy|Elapsed Cycles|Executed Ipc Active|L1/TEX Hit Rate|L2 Hit Rate|Mem Busy|Max Bandwidth|Waves Per SM)\b" "$1" \
    | awk '{$1=$1; print}' | tr '\n' ';'
  echo; grep -E "^\s+[a-z_]+.*\(|^  [a-zA-Z_0-9]+.*Context" "$1" | head -3
}
shape=(160 8192 1024)
# session 46's twelve short-K shapes, and sixteen drawn (seed 20264701) among the 240 of pick_moves.py's 2285 H200 grid
# shapes whose pick moves when every sm90 parallel group but the 64x64 one also offers split 1 (one K slice, the
# reduction applying the epilogue)
shortk=(32,11008,1024 48,5120,2048 64,13824,1536 80,4096,1024 96,14336,1024 112,6144,2048 128,5120,1536
        160,8192,1024 192,3072,2048 256,11008,1024 24,8192,3072 200,2560,1024)
split1=(64,13824,8192 8,6144,1024 320,2304,1024 256,4096,4096 128,7168,2048 16,8192,12288 512,3584,24576
        128,11008,1024 16,13824,24576 2048,960,24576 320,5120,8192 128,11008,2048 32,2304,1024 2048,5120,32768
        16,7168,1024 8,8192,1024)
# held out: fourteen drawn (seed 20264702; not swept above, under 6e10 flops) among the 178 H200 grid shapes whose pick
# moves with split 1 on the shipped groups (every sm90 parallel group but the 64x128 ping-pong and 64x64 ones)
held=(16,11008,1024 1,8192,16384 1,7168,32768 1,7168,2048 16,13824,16384 96,13824,16384 16,8192,16384 8,8192,16384
      1,8192,32768 16,8192,4096 8,13824,2048 128,11008,4096 8,7168,1024 96,13824,8192)
# not run in session 47 (no device time left): shapes where the shipped model picks the two in-kernel groups the swept
# records say are nearly redundant (serial 128x128 c2x1: best on 2 of 130 swept rows; serial 128x256 c1x2: 1 of 130),
# eight of each drawn (seed 20264703, under 8e10 flops) from pick_moves.py's grid on the H200 (drop200) and the H100
# (drop100): sweeping them decides whether dropping the groups (~65 s of the cold 2-core build) costs any pick
drop200=(2560,4096,1024 256,8192,2048 320,3584,1024 400,3584,2048 400,4096,1024 512,2304,1024 512,3584,4096 832,1536,2048
         320,8192,1024 640,5120,1024 640,6144,1024 640,6144,12288 640,6144,4096 640,6144,8192 832,13824,1024 832,13824,4096)
drop100=(1280,1536,8192 176,5120,1024 2048,11008,2048 2560,5120,1024 256,8192,24576 256,8192,8192 3584,512,12288
         400,2304,1024 320,11008,2048 320,7168,2048 640,5120,16384 640,6144,4096 832,13824,1024 832,13824,4096 832,3584,1024
         96,13824,1024)
for phase in "$@"; do
  case $phase in
    ncushort)
      for spec in "bias_gelu_mul_permute_f16 serial_sm90_t128x128x64_c2x1_coop_sauto_a8" \
                  "linear_f16 serial_sm90_t128x128x64_c2x1_coop_sauto_a8" \
                  "bias_gelu_mul_permute_f16 serial_sm90_t128x64x64_c1x1_coop_sauto_a8"; do
        set -- $spec
        CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --launch-skip 2 --launch-count 1 --set full \
          --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/default "${shape[@]}" \
          "$1" "$1_$2" 1 > "$out/ncushort_$1_$2.txt" 2>&1
        echo "== ncushort $1 $2 rc=$?"; ncu_digest "$out/ncushort_$1_$2.txt"
      done
      ncu --clock-control none --set full --nvtx --nvtx-include cublas/ python3 \
        benchmarks/profile_shape.py cublas "${shape[@]}" > "$out/ncushort_cublas.txt" 2>&1
      echo "== ncushort cublas rc=$?"; grep -E "^  [a-zA-Z_0-9]+.*\(" "$out/ncushort_cublas.txt" | head -4
      ncu_digest "$out/ncushort_cublas.txt" ;;
    split1) persweep split1 default bias_gelu_mul_permute_f16 60 "${shortk[@]}" "${split1[@]}" ;;
    dropcheck) persweep dropcheck default bias_gelu_mul_permute_f16 60 "${drop200[@]}" ;;
    dropcheck100) persweep dropcheck100 default bias_gelu_mul_permute_f16 60 "${drop100[@]}" ;;
    held) persweep held default bias_gelu_mul_permute_f16 60 "${held[@]}" ;;
    build|ops|rest|bench|benchx|multi|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
