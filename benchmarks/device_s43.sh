#!/usr/bin/env bash
# Session 43's device calls, by phase (logs under $OUT):
#   build68  benchmarks/explore_sm90_r68.yaml built twice on the device: build/r68/tma (the chain and qkv ops'
#            in-kernel epilogue on CUTLASS's TMA collective) and build/r68/warp (-DCKS_SM90_WARP_EPILOGUE: FusedWarpEpilogue,
#            as before round 68; the switch and that epilogue were removed after the round: build that one at 55798ab)
#   r68      round 68: every in-kernel candidate of both ops, both builds in turn ($RUNS, default "a"), flushed and
#            graph, checked against float64 (outputs poisoned), bit digests to compare the builds; shapes whose
#            head split is one TMA box per subtile (S % 128 == 0, Dh % 32 == 0) and shapes where it is not
#   buildchain  build/default's chain op (f16) alone
#   chg      the chain op (build/default) swept on $SHAPES (every candidate, graph replays, cuBLAS and the eager chain
#            beside), one process per shape under $LIMIT s (default 150), packed into $out/chg.tgz (device_lib's
#            persweep): shapes drawn at random, before the run, from those whose pick pricing the chain op's in-kernel
#            epilogue as the TMA epilogue moves (benchmarks/pick_moves.py, seed 20264301)
#   build ops rest bench benchx multi fuzz   device_lib.sh's common phases (build: $CONFIGS_TO_BUILD)
source benchmarks/device_lib.sh  # the run's setup, ab, common_phase
fuzz_seed=20264301
r68_shapes=(4096,4096,4096 8192,8192,512 4096,4096,1024 2048,8192,2048 1536,1536,1536 4000,4104,1000 1000,3000,5000
            1024,1024,16384 4096,4096,14336)
for phase in "$@"; do
  case $phase in
    build68) python3 -m cutlass_splitk.cli build benchmarks/explore_sm90_r68.yaml -o build/r68/tma --slowest 4 \
               > "$out/build68_tma.txt" 2>&1; echo "build68 tma rc=$?"; tail -6 "$out/build68_tma.txt"
             CUTLASS_SPLITK_NVCC_FLAGS=-DCKS_SM90_WARP_EPILOGUE python3 -m cutlass_splitk.cli build \
               benchmarks/explore_sm90_r68.yaml -o build/r68/warp --slowest 4 > "$out/build68_warp.txt" 2>&1
             echo "build68 warp rc=$?"; tail -6 "$out/build68_warp.txt" ;;
    r68) for op in ${OPS68:-chain qkv}; do
           ab "r68_$op" "explore90r68_${op}_f16" . "${RUNS:-a}" "r68/warp r68/tma" ${SHAPES68:-${r68_shapes[*]}}
           python3 benchmarks/r8_table.py "$out"/r68_${op}_*.json > "$out/r68_${op}_table.txt"
           cat "$out/r68_${op}_table.txt"
         done ;;
    buildchain) python3 -m cutlass_splitk.cli build configs/default.yaml --op bias_gelu_mul_permute_f16 -o build/default \
                  --slowest 3 > "$out/build_chain.txt" 2>&1; echo "buildchain rc=$?"; tail -4 "$out/build_chain.txt" ;;
    chg) persweep chg default bias_gelu_mul_permute_f16 ${LIMIT:-150} $SHAPES ;;
    *) common_phase "$phase" ;;
  esac
  echo "$phase done at ${SECONDS}s"
done
