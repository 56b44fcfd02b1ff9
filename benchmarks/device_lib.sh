# Shared by the device scripts: sourcing it sets up the run (strict mode, the package and the
# carried CUTLASS headers on the paths, $out = $OUT or device-logs, the clock, the GPU's name in
# the log), sets the shared shape lists (skinny15, diverse, held70) and defines gpu_tests LOG PYTEST-ARGS...,
# which runs the GPU tests given, logs to
# $out/LOG.log and prints the summary and the failures, ab (below), variant_ab.py over several
# builds in turn, sweep (below), a bench sweep of one op, persweep (below), the same one process per shape, pairsweep (below), persweep beside the shipped grid, coalescer (below), the GPC order's ncu counts,
# and common_phase (at the end), the phases
# every session's script shares.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CUTLASS_PATH=${CUTLASS_PATH:-$PWD/.cutlass}  # a caller may carry a slimmer copy
out=${OUT:-device-logs}; mkdir -p "$out"
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

# Shape lists the session scripts share: session 22's fifteen skinny shapes and session 23's twenty further ones
# (tall, wide, tiny M*N, medium squares, short K, odd M).
skinny15=(192,1024,32768 256,512,49152 384,384,24576 640,640,20480 256,256,65536 512,512,32768 48,8192,8192
          512,256,131072 1024,1024,16384 384,768,16384 640,1024,12288 896,896,16384 320,1280,16384 768,768,12288
          128,1536,32768)
# Session 49's twelve short-K shapes no sweep had seen (held70: the swapped in-kernel tiles' M and K, held out)
held70=(144,4096,1024 176,6144,1024 224,5120,2048 112,8192,1024 240,3584,1024 96,5120,2048 136,11008,1024
        208,4096,1536 184,2560,2048 72,8192,1024 288,4096,1024 152,14336,2048)
diverse=(16384,128,4096 65536,256,1024 8,4096,4096 1,8192,28672 32,28672,4096 2048,2048,2048 2048,2048,8192
         3072,3072,3072 1536,1536,1536 4096,4096,256 8192,1024,512 1000,3000,5000 777,1112,2224 2500,2500,800
         100,10000,3000 64,64,131072 96,96,65536 2048,256,32768 256,2048,32768 4096,1024,4096)

gpu_tests() {
  local log=$1; shift
  python3 -m pytest -m gpu "$@" -q -p no:cacheprovider --confcutdir=tests/gpu -rs 2>&1 | grep -v DEBUG > "$out/$log.log"
  tail -3 "$out/$log.log"; grep -E "^(FAILED|ERROR)" "$out/$log.log" | head -20
}
# ab PREFIX OP MATCH RUNS DIRS SHAPE...: variant_ab.py on OP's variants matching MATCH for each
# build/DIR in turn, once per run suffix in RUNS ("-": one run, no suffix), labelled PREFIX + DIR's
# last part + the suffix; FLUSH=clean: the flushed column from a clean L2 (variant_ab.py --flush);
# AB_ARGS: more variant_ab.py options (e.g. --scalars).
ab() {
  local prefix=$1 op=$2 match=$3 runs=$4 dirs=$5; shift 5
  local shapes=(); for s in "$@"; do shapes+=(--shape "$s"); done
  for run in $runs; do
    [ "$run" = - ] && run=
    for dir in $dirs; do
      local name=${dir##*/}$run
      python3 benchmarks/variant_ab.py "build/$dir" "$op" --match "$match" "${shapes[@]}" --label "$name" \
        --flush "${FLUSH:-dirty}" ${AB_ARGS:-} \
        --json "$out/${prefix}_$name.json" > "$out/${prefix}_$name.txt" 2>&1
      echo "$prefix $name rc=$? wrong=$(grep -c WRONG "$out/${prefix}_$name.txt")"
    done
  done
}
# sweep NAME DIR OP SHAPE...: cutlass-splitk bench --sweep of OP in build/DIR ($DT, default f16)
sweep() {
  local name=$1 dir=$2 op=$3; shift 3
  local shapes=(); for s in "$@"; do shapes+=(--shape "$s"); done
  python3 -m cutlass_splitk.cli bench "build/$dir" --op "$op" --dtype "${DT:-f16}" --no-compile --repeat 1 --sweep \
    "${shapes[@]}" --json "$out/$name.json" > "$out/$name.txt" 2>&1
  echo "$name rc=$?"; grep -A40 "^shape" "$out/$name.txt" | cut -c1-200
}
# persweep NAME BUILD OP SECONDS SHAPE...: bench --sweep of OP in build/BUILD ($DT, default f16), one process per shape
# under a timeout; every shape's JSON and table packed into $out/NAME.tgz as it finishes, a line each in summary.txt.
persweep() {
  local name=$1 build=$2 op=$3 limit=$4; shift 4
  mkdir -p "/tmp/$name"
  for x in "$@"; do
    timeout -s KILL "$limit" python3 -m cutlass_splitk.cli bench "build/$build" --op "$op" --dtype "${DT:-f16}" \
      --no-compile --repeat 1 --sweep --shape "$x" --json "/tmp/$name/${build}_$x.json" > "/tmp/$name/${build}_$x.txt" 2>&1
    echo "$build $x rc=$? $(grep -E "^$(echo $x | tr , x) " "/tmp/$name/${build}_$x.txt" | cut -c1-200)" \
      | tee -a "/tmp/$name/summary.txt"
    tar czf "$out/$name.tgz" -C "/tmp/$name" .
  done
}
# pairsweep NAME BUILD OP SECONDS SHAPE...: per shape, persweep of OP in build/BUILD and then of the shipped chain op
# (bias_gelu_mul_permute_f16) in build/default, into the same $out/NAME.tgz: an exploration beside the shipped grid
pairsweep() {
  local name=$1 build=$2 op=$3 limit=$4; shift 4
  for x in "$@"; do
    persweep "$name" "$build" "$op" "$limit" "$x"
    persweep "$name" default bias_gelu_mul_permute_f16 "$limit" "$x"
  done
}
# coalescer NAME "M N K VARIANT SPLIT"... -- "M N K"...: ncu of the chain op's partial GEMM (VARIANT of
# bias_gelu_mul_permute_f16's sm90 parallel group, at SPLIT) with the GPC order on and off, then of cuBLAS's GEMM on the
# shapes after --: the L2 request coalescer's sectors (all, and the CTAs' own, non-multicast requests: "hardware"),
# L2 bytes and the duration, one line each; ncu's output in $out/NAME.txt and $out/NAME_cublas.txt.
coalescer() {
  local name=$1; shift
  local M=lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware.sum,lts__t_bytes.sum,gpu__time_duration.sum
  sums() { grep -E "^\s+[a-z].*sum" "$1" | awk '{print $1"="$NF}' | tr '\n' ' '; }
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    set -- $1 "${@:2}"
    for g in 1 0; do
      CUTLASS_SPLITK_GPC_ORDER=$g CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --metrics "$M" --launch-skip 2 \
        --launch-count 1 --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/default $1 $2 $3 \
        bias_gelu_mul_permute_f16 bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 > "$out/$name.txt" 2>&1
      echo "== gpc=$g $1 $2 $3 $4 $5: $(sums "$out/$name.txt")"
    done
    shift 5
  done
  shift
  for s in "$@"; do
    ncu --clock-control none --metrics "$M" --nvtx --nvtx-include cublas/ --kernel-name regex:nvjet python3 \
      benchmarks/profile_shape.py cublas $s > "$out/${name}_cublas.txt" 2>&1
    echo "== cublas $s: $(sums "$out/${name}_cublas.txt")"
  done
}
# common_phase PHASE: the phases the session scripts share, logs and JSON under $out: build (build/default and
# build/epilogues, or the configs in $CONFIGS_TO_BUILD, from this checkout, the slowest units in the log), lean
# (build/default and build/epilogues with a few ops each, side by side: both layouts, both dtypes, E, both permutes,
# row and column bias, swapped in-kernel groups; for when device time is short), ops (the GPU op
# tests and hostile inputs), rest (the rest of the GPU suite), bench (the suite's bench, chain op, f16
# and bf16; SWEEP=1: every candidate swept; COMPILE=1: with the torch.compile column; REPEAT: rounds, default 2), benchx (f16 on
# benchmarks/extra_shapes.yaml, every candidate swept), multi (the GPU tests that need two GPUs, and the GPC order's,
# placement's and tail's, on a two-GPU machine), fuzz (the config fuzzer, benchmarks/device_fuzz.sh, seed $SEED or the
# script's $fuzz_seed; .cutlass carried). Returns 1 for any other phase.
common_phase() {
  case $1 in
    lean) python3 -m cutlass_splitk.cli build configs/default.yaml -o build/default --slowest 4 \
            --op bias_gelu_mul_permute_f16 --op linear_f16 --op qkv_bf16 > "$out/build_default.txt" 2>&1 &
          python3 -m cutlass_splitk.cli build configs/epilogues.yaml -o build/epilogues --slowest 4 \
            --op leaky_add_permute_f16 --op sigmoid_qkv_bf16 --op nn_bias_silu_bf16 --op relu_rowbias_add_f16 \
            > "$out/build_epilogues.txt" 2>&1
          echo "build epilogues rc=$?"; wait $!; echo "build default rc=$?"
          tail -n 6 "$out/build_default.txt" "$out/build_epilogues.txt" ;;
    build) for c in ${CONFIGS_TO_BUILD:-default epilogues}; do
             python3 -m cutlass_splitk.cli build configs/$c.yaml -o build/$c --slowest 8 > "$out/build_$c.txt" 2>&1
             echo "build $c rc=$?"; tail -10 "$out/build_$c.txt"
           done ;;
    ops) gpu_tests ops tests/gpu/test_gpu_ops.py tests/gpu/test_gpu_hostile.py ;;
    rest) gpu_tests rest tests/gpu --deselect tests/gpu/test_gpu_ops.py --deselect tests/gpu/test_gpu_hostile.py ;;
    bench) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 bf16 \
             $([ -n "${COMPILE:-}" ] || echo --no-compile) --repeat "${REPEAT:-2}" ${SWEEP:+--sweep} --json "$out/bench_suite.json" \
             --plot "$out/bench_suite.png" > "$out/bench_suite.txt" 2>&1
           tail -22 "$out/bench_suite.txt" ;;
    benchx) python3 -m cutlass_splitk.cli bench build/default --op 'bias_gelu_mul_permute_{dtype}' --dtype f16 \
              --shapes benchmarks/extra_shapes.yaml --no-compile --repeat 1 --sweep --json "$out/bench_extra.json" \
              > "$out/bench_extra.txt" 2>&1
            tail -16 "$out/bench_extra.txt" ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py tests/gpu/test_gpu_tail.py \
             -k "second_device or two_devices or clusters_of_four or device_properties or gpc or placement or tail" ;;
    fuzz) SEED=${SEED:-$fuzz_seed} CONFIGS=${CONFIGS:-8} PROBLEMS=${PROBLEMS:-100} OUT=$out/f1 \
            bash benchmarks/device_fuzz.sh | tail -30 ;;
    *) return 1 ;;
  esac
}
