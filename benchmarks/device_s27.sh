#!/usr/bin/env bash
# Session 27's device calls, by phase (logs under /tmp/s27, packed into $OUT/s27.tgz after each phase):
#   cupyold  with benchmarks/s27_cupy.patch reversed (session 26's array path), the session's three new CuPy tests
#            (the patch is commit c92003c's runtime change: it reverses on that commit's tree)
#   nohint   the same test of a's handshake with a read under the caller's current device, as before
#   multi    the GPU tests that need two GPUs (integration, arrays), on a two-GPU machine
#   cupydiag  benchmarks/cupy_two_devices.py's cases (see there): drain (also with graphs off), profile, entry and
#   cupydiag2 first-fix (cupydiag4); one script each during the session, merged after its runs
#   cupydiag3
#   cupydiag4
#   caiold   with benchmarks/s27_cai.patch reversed (c92003c's array path; the patch is commit 1bfd5e0's runtime
#            change), the pointer, CUDA-array-interface and Numba tests
#   numba    the Numba array tests (one and two GPUs)
#   numbadiag benchmarks/numba_two_devices.py: the context of Numba's stream of device 1, and calls on it
#   arrays   tests/gpu/test_gpu_arrays.py and test_gpu_integration.py whole
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20262701
out=/tmp/s27; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    cupyold) { patch -R -p1 < benchmarks/s27_cupy.patch || git apply -R benchmarks/s27_cupy.patch; } && \
               gpu_tests cupyold tests/gpu/test_gpu_arrays.py -k "called_from_the_first or use_is_kept or read_after_its_writes"; \
             { patch -p1 < benchmarks/s27_cupy.patch || git apply benchmarks/s27_cupy.patch; } ;;
    nohint) cp cutlass_splitk/runtime/array_path.py /tmp/array_path.py.keep
            sed -i 's/saved: List\[Any\] = \[_enter_device_of(a, devices)\]/saved: List[Any] = [devices.enter(devices.current_device())]/' \
              cutlass_splitk/runtime/array_path.py
            grep -n 'saved: List' cutlass_splitk/runtime/array_path.py
            gpu_tests nohint tests/gpu/test_gpu_arrays.py -k read_after_its_writes
            cp /tmp/array_path.py.keep cutlass_splitk/runtime/array_path.py ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py \
             -k "second_device or two_devices or clusters_of_four or device_properties" ;;
    cupydiag) python3 benchmarks/cupy_two_devices.py drain current,explicit,drain,nobusy verbose 2>&1 | tee "$out/cupydiag.txt"
              CUTLASS_SPLITK_GRAPHS=0 python3 benchmarks/cupy_two_devices.py drain drain,current verbose 2>&1 \
                | tee "$out/cupydiag_nographs.txt" ;;
    cupydiag2) python3 benchmarks/cupy_two_devices.py profile 2>&1 | tee "$out/cupydiag2.txt" ;;
    cupydiag3) python3 benchmarks/cupy_two_devices.py entry 2>&1 | tee "$out/cupydiag3.txt" ;;
    cupydiag4) python3 benchmarks/cupy_two_devices.py first-fix 2>&1 | grep -v Warn | tee "$out/cupydiag4.txt" ;;
    caiold) { patch -R -p1 < benchmarks/s27_cai.patch || git apply -R benchmarks/s27_cai.patch; } && \
              gpu_tests caiold tests/gpu/test_gpu_arrays.py -k "pointer_device or cai_arrays or numba"; \
            { patch -p1 < benchmarks/s27_cai.patch || git apply benchmarks/s27_cai.patch; } ;;
    numba) gpu_tests numba tests/gpu/test_gpu_arrays.py -k numba ;;
    numbadiag) python3 benchmarks/numba_two_devices.py 2>&1 | tee "$out/numbadiag.txt" ;;
    arrays) gpu_tests arrays tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s27.tgz" -C /tmp s27
done
