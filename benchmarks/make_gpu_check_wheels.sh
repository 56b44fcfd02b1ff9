#!/usr/bin/env bash
# Builds, here (CPU, nvcc), the wheels benchmarks/gpu_package_check.sh installs on a GPU machine
# that has no network: the cutlass-splitk runtime (pure Python) and three kernel packages of a
# one-op config (tiny_f16: f16, tn, 64x64x64 tile, serial [1, 2], parallel [2, 4]):
#   tiny-kernels        the op's own targets (sm_90 cubin + compute_90 PTX)
#   tiny-kernels-ptx80  CUTLASS_SPLITK_CUDA_ARCH_LIST=8.0+PTX (sm_80 cubin + compute_80 PTX: an
#                       H100 runs it through the driver's PTX JIT, as sm_100/sm_120 would)
#   tiny-kernels-sm80   CUTLASS_SPLITK_CUDA_ARCH_LIST=8.0 (sm_80 cubin only: must fail on an
#                       H100 with "no kernel image", which is why PTX is embedded by default)
# With DEFAULT_BUILD set (e.g. DEFAULT_BUILD=build/default, already built), that directory is
# packaged too, as default-kernels, for the GPU op tests against an installed package.
# Usage: bash benchmarks/make_gpu_check_wheels.sh [OUT_DIR (default: gpu-check)]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/gpu-check}" && cd "${1:-$ROOT/gpu-check}" && pwd)
WORK=$(mktemp -d)
rm -f "$OUT"/*.whl
# The runtime wheel, from a copy of the committed tree (setuptools writes build/ beside the sources).
mkdir "$WORK/src"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src"
else
  cp -r "$ROOT"/. "$WORK/src"
fi
python3 -m pip wheel -q --no-deps --disable-pip-version-check -w "$OUT" "$WORK/src"
cat > "$WORK/tiny.yaml" <<'YAML'
ops:
  tiny_f16:
    dtype: f16
    arch: [90]
    variants:
      tile: [[64, 64, 64]]
      stages: [3]
      split_k:
        serial: [1, 2]
        parallel: [2, 4]
YAML
cks() { PYTHONPATH="$ROOT" python3 -m cutlass_splitk "$@"; }
for spec in "tiny-kernels:" "tiny-kernels-ptx80:8.0+PTX" "tiny-kernels-sm80:8.0"; do
  name=${spec%%:*}; arch=${spec#*:}
  CUTLASS_SPLITK_CUDA_ARCH_LIST="$arch" cks build "$WORK/tiny.yaml" -o "$WORK/$name" -q
  grep -o -- '-gencode=[^"]*' "$WORK/$name/compile_commands.json" | sort -u | sed "s/^/  $name: /"
  cks package "$WORK/$name" --name "$name" --version 0.1.0 -o "$OUT"
done
if [ -n "${DEFAULT_BUILD:-}" ]; then
  cks package "$DEFAULT_BUILD" --name default-kernels --version 0.1.0 -o "$OUT"
fi
rm -rf "$WORK"
ls -l "$OUT"
