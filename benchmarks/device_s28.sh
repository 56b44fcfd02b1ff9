#!/usr/bin/env bash
# Session 28's device calls, by phase (logs under /tmp/s28, packed into $OUT/s28.tgz after each phase):
#   relold   with benchmarks/s28_release.patch reversed (session 27's release of cuda.core memory), the new test of
#            a DeviceArray of device 1 dropped with device 0 current, and benchmarks/release_two_devices.py
#   reldiag  benchmarks/release_two_devices.py on this tree
#   streamold with the patch reversed, the test of a DeviceArray used on another stream and dropped (one GPU)
#   multi    the GPU tests that need two GPUs (integration, arrays), on a two-GPU machine
#   arrays   tests/gpu/test_gpu_arrays.py and test_gpu_integration.py whole
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20262801
out=/tmp/s28; mkdir -p "$out"
python3 -m pip show cuda-core cuda-bindings 2>/dev/null | grep -E "^(Name|Version)" | paste - - > "$out/versions.txt"
for phase in "$@"; do
  case $phase in
    relold) { patch -R -p1 < benchmarks/s28_release.patch || git apply -R benchmarks/s28_release.patch; } && \
              { gpu_tests relold tests/gpu/test_gpu_arrays.py -k freed_behind_its_writes
                python3 benchmarks/release_two_devices.py 50 2>&1 | tail -3 | tee "$out/relold_diag.txt"; }
            { patch -p1 < benchmarks/s28_release.patch || git apply benchmarks/s28_release.patch; } ;;
    streamold) { patch -R -p1 < benchmarks/s28_release.patch || git apply -R benchmarks/s28_release.patch; } && \
                 gpu_tests streamold tests/gpu/test_gpu_arrays.py -k dropped_is_not_reused
               { patch -p1 < benchmarks/s28_release.patch || git apply benchmarks/s28_release.patch; } ;;
    reldiag) python3 benchmarks/release_two_devices.py 50 2>&1 | tail -3 | tee "$out/reldiag.txt" ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py \
             -k "second_device or two_devices or clusters_of_four or device_properties" ;;
    arrays) gpu_tests arrays tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s28.tgz" -C /tmp s28
done
