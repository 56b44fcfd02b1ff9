#!/usr/bin/env bash
# .cutlass_slim: the CUTLASS headers the generated sources include (nvcc -M of every unit under generated/, for sm_90a),
# plus cutlass/version.h (the build reads CUTLASS's version from it), ~13 MB where the whole tree is ~38 MB: the device
# tool carries at most 64 MiB with the working tree. Device calls carry it and set CUTLASS_PATH=$PWD/.cutlass_slim.
# A config whose kernels need a header outside it (a CUTLASS feature no generated unit uses) fails to compile with
# nvcc's "cannot open source file": rerun this script after adding such a unit to generated/, or carry .cutlass.
#   CUTLASS_PATH=$PWD/.cutlass bash benchmarks/slim_cutlass.sh   (a full tree: a checkout, or the wheel's source/)
set -euo pipefail
cd "$(dirname "$0")/.."
src=${CUTLASS_PATH:?set CUTLASS_PATH to a full CUTLASS tree}
src=$(cd "$src" && pwd)
deps=$(mktemp -d)
T=cutlass_splitk/templates
find generated -name "*.cu" | sort | while read -r f; do
  echo "nvcc -std=c++17 --expt-relaxed-constexpr -arch=sm_90a -I$T -I$T/../backends/sm90/templates \
    -I$T/../backends/sm80/templates -I$src/include -I$src/tools/util/include -M $f > $deps/$(echo "$f" | tr / _).d"
done | xargs -P "$(nproc)" -I{} sh -c "{}"
{ cat "$deps"/*.d | tr ' \\' '\n\n' | grep "^$src/" | sed "s|^$src/||"; echo include/cutlass/version.h; } | sort -u \
  > "$deps/list"
rm -rf .cutlass_slim && mkdir .cutlass_slim
(cd "$src" && xargs -a "$deps/list" cp --parents -t "$OLDPWD/.cutlass_slim")
echo ".cutlass_slim: $(wc -l < "$deps/list") headers, $(du -sh .cutlass_slim | cut -f1)"
rm -rf "$deps"
