#!/usr/bin/env bash
# Session 35's device calls, by phase (logs under /tmp/s35, packed into $OUT/s35.tgz after the phases):
#   r60      round 60: parallel split-K's slices of a tile summed in distributed shared memory (build/r60, built with
#            -DCKS_SM90_CLUSTER_SUM=1 from benchmarks/r60_cluster_sum.patch, on with CUTLASS_SPLITK_TAIL=1) against the
#            shipped partial GEMM + reduction kernel of the same grid (build/r60n), variant_ab.py in turn, twice; then the
#            shipped grid's skinny candidates (build/default) on the same shapes
#   r60mc    compute-sanitizer memcheck, racecheck and synccheck of build/r60 (cluster sum on), sanitize_serial.py
#   r61      round 61: the reduction kernel waits per output tile (counters the partial GEMM's units add to) instead of
#            for the whole GEMM grid (build/r61 from benchmarks/r61_tile_flags.patch; CUTLASS_SPLITK_TAIL=flags against
#            0, the same build in turn, twice), flags_stress.py (back-to-back calls, bits against the setting off), and
#            compute-sanitizer racecheck / synccheck / memcheck with the setting on; R61DIR=r61b: the second build
#   arrays   tests/gpu/test_gpu_arrays.py and test_gpu_integration.py (the array path's workspace and outputs)
#   ops rest bench benchx multi fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
out=/tmp/s35; mkdir -p "$out"
fuzz_seed=20263501
r60shapes=(256,256,65536 512,512,32768 1024,1024,16384 384,768,16384 256,1024,16384 320,1280,16384 128,2048,28672
           300,640,1000 200,1024,5000)
r60ab() {  # LABEL DIR TAIL [variant_ab.py options]
  local label=$1 dir=$2 tail=$3; shift 3
  local shapes=(); for s in "${r60shapes[@]}"; do shapes+=(--shape "$s"); done
  CUTLASS_SPLITK_TAIL=$tail python3 benchmarks/variant_ab.py "build/$dir" "$@" "${shapes[@]}" --label "$label" \
    --json "$out/r60_$label.json" > "$out/r60_$label.txt" 2>&1
  echo "r60 $label rc=$? wrong=$(grep -c WRONG "$out/r60_$label.txt")"
}
for phase in "$@"; do
  case $phase in
    r60) for run in 1 2; do
           r60ab off$run r60n 0 explore90r60_chain_f16
           r60ab on$run r60 1 explore90r60_chain_f16
         done
         python3 benchmarks/ab_compare.py --old "$out"/r60_off[12].json --new "$out"/r60_on[12].json \
           --json "$out/r60_compare.json" | tee "$out/r60_compare.txt"
         r60ab shipped default 0 bias_gelu_mul_permute_f16 --match 'parallel_sm90_t(64x64x64|64x128x64|128x128x64)_c1x[12]' ;;
    r60mc) for tool in memcheck racecheck synccheck; do  # every variant of build/r60 at odd sizes, float64-checked
             CUTLASS_SPLITK_TAIL=1 compute-sanitizer --tool $tool --error-exitcode 3 python3 benchmarks/sanitize_serial.py \
               build/r60 explore90r60_chain_f16 > "$out/r60_$tool.txt" 2>&1
             echo "r60 $tool rc=$?"; grep -m3 -E "SUMMARY|problems" "$out/r60_$tool.txt"
           done ;;
    r61) d61=${R61DIR:-r61}; shapes=(); for x in 256,256,65536 512,512,32768 1024,1024,16384 320,1280,16384 256,1024,16384 160,2560,12288 \
                              384,768,16384 16,4096,14336 64,4096,14336 128,8192,8192 300,640,1000; do shapes+=(--shape $x); done
         for run in 1 2; do
           for t in 0 flags; do
             CUTLASS_SPLITK_TAIL=$t python3 benchmarks/variant_ab.py build/$d61 explore90r61_chain_f16 "${shapes[@]}" \
               --label "$t$run" --json "$out/${d61}_$t$run.json" > "$out/${d61}_$t$run.txt" 2>&1
             echo "$d61 $t$run rc=$? wrong=$(grep -c WRONG "$out/${d61}_$t$run.txt")"
           done
         done
         python3 benchmarks/ab_compare.py --old "$out"/${d61}_0[12].json --new "$out"/${d61}_flags[12].json \
           --json "$out/${d61}_compare.json" | tee "$out/${d61}_compare.txt"
         python3 benchmarks/flags_stress.py build/$d61 explore90r61_chain_f16 2>&1 | tail -5 | tee "$out/${d61}_stress.txt"
         for tool in racecheck synccheck memcheck; do
           CUTLASS_SPLITK_TAIL=flags compute-sanitizer --tool $tool --error-exitcode 3 python3 benchmarks/sanitize_serial.py \
             build/$d61 explore90r61_chain_f16 > "$out/${d61}_$tool.txt" 2>&1
           echo "$d61 $tool rc=$?"; grep -m3 -E "SUMMARY|problems" "$out/${d61}_$tool.txt"
         done ;;
    arrays) gpu_tests arrays tests/gpu/test_gpu_arrays.py tests/gpu/test_gpu_integration.py ;;
    *) common_phase "$phase" ;;
  esac
done
tar czf "$OUT/s35.tgz" -C "$out" --exclude=s35.tgz . 2>/dev/null; ls -la "$OUT/s35.tgz"
