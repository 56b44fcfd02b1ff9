#!/bin/bash
# build/probe_sq: CUTLASS's own GEMM (D = acc) on the squares, several tiles/clusters/schedulers
CUT=/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/cutlass_library/source/include
OUT=build/probe_sq; mkdir -p $OUT
build() { name=$1; shift
  [ -f $OUT/probe_$name.so ] && return
  /usr/bin/time -f "$name %e s" nvcc -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a \
    -Xcompiler=-fPIC -shared -I$CUT -Icutlass_splitk/templates -Icutlass_splitk/backends/sm90/templates -DPROBE_KIND=0 "$@" \
    benchmarks/probe_tma_epilogue.cu -o $OUT/probe_$name.so 2>&1 | grep -v Warn | tail -3; }
build k0_t128x256_c1x2_dp -DPROBE_TILE_M=128 -DPROBE_TILE_N=256 -DPROBE_CLUSTER_M=1 &
build k0_t128x256_c1x2_sk -DPROBE_TILE_M=128 -DPROBE_TILE_N=256 -DPROBE_CLUSTER_M=1 -DPROBE_STREAMK=2 ; wait
build k0_t256x128_c2x1_sk -DPROBE_TILE_M=256 -DPROBE_TILE_N=128 -DPROBE_CLUSTER_M=2 -DPROBE_STREAMK=2 &
build k0_t256x128_c2x1_dp -DPROBE_TILE_M=256 -DPROBE_TILE_N=128 -DPROBE_CLUSTER_M=2 ; wait
build k0_t128x256_c2x1_sk -DPROBE_TILE_M=128 -DPROBE_TILE_N=256 -DPROBE_CLUSTER_M=2 -DPROBE_STREAMK=2 &
build k0_t128x128_c1x2_sk -DPROBE_TILE_M=128 -DPROBE_TILE_N=128 -DPROBE_CLUSTER_M=1 -DPROBE_STREAMK=2 ; wait
build k0_t128x256_c1x1_sk -DPROBE_TILE_M=128 -DPROBE_TILE_N=256 -DPROBE_CLUSTER_M=1 -DPROBE_CLUSTER_N=1 -DPROBE_STREAMK=2 &
build k0_t128x128_c1x2_pp -DPROBE_TILE_M=128 -DPROBE_TILE_N=128 -DPROBE_CLUSTER_M=1 -DPROBE_PINGPONG ; wait
ls -la $OUT
