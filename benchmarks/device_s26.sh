#!/usr/bin/env bash
# Session 26's device calls, by phase (logs and JSON under /tmp/s26, packed into $OUT/s26.tgz after
# each phase):
#   clusters  the CTAs each GPU runs at once in clusters of 1, 2 and 4 as runtime/clusters.py asks the driver
#             (the time model's count for clusters of four), beside what explain prints
#   multi     the GPU tests that need two GPUs (tests/gpu/test_gpu_integration.py: one op on the second device,
#             the chain on both devices in turn in every split mode) and the cluster-count test, on a
#             two-GPU machine
#   ctx       the thread's current device after a call on cuda:1 with cuda:0 current, for each build in $CTX_DIRS
#             (the libraries before and after they gave the caller its context back)
#   ops rest bench benchx fuzz   device_lib.sh's common phases
source benchmarks/device_lib.sh  # the run's setup, ab, sweep, common_phase
fuzz_seed=20262601
out=/tmp/s26; mkdir -p "$out"
for phase in "$@"; do
  case $phase in
    clusters) python3 - <<'PY' 2>&1 | tee "$out/clusters.txt"
import torch
import cutlass_splitk
from cutlass_splitk.runtime import clusters, cudacore
for index in range(torch.cuda.device_count()):
    hw = cudacore.hardware(index)
    counts = [clusters.max_active_ctas(index, c) for c in (1, 2, 4)]
    print(f"device {index}: {hw.name}, {hw.sm_count} SMs; CTAs in clusters of 1, 2, 4: {counts}; "
          f"cluster4_ctas {clusters.cluster4_ctas(index, hw.major)}")
lib = cutlass_splitk.load("build/default")
print(lib.explain("bias_gelu_mul_permute_f16", 640, 1280, 16384, top=1))
PY
              ;;
    ctx) python3 - ${CTX_DIRS:-build/default} <<'PY' 2>&1 | tee "$out/ctx.txt"
import sys
import torch
import cutlass_splitk
for path in sys.argv[1:]:
    op = cutlass_splitk.load(path).bias_gelu_mul_permute_f16
    d1 = torch.device("cuda", 1)
    a, w, bias, e = (torch.randn(*s, device=d1, dtype=torch.float16) for s in ((200, 8192), (512, 8192), (512,), (200, 512)))
    with torch.cuda.device(0):
        before = torch.cuda.current_device()
        out = op(a, w.t(), bias=bias, e=e, view=(2, 100, 4, 128))
        print(f"{path}: a call on cuda:1 with cuda:{before} current leaves torch's current device at "
              f"cuda:{torch.cuda.current_device()}, a new tensor on {torch.empty(1, device='cuda').device}")
PY
         ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py \
             -k "second_device or two_devices or clusters_of_four or device_properties" ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s26.tgz" -C /tmp s26
done
