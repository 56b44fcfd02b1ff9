#!/usr/bin/env bash
# Session 28's device calls, by phase (logs under /tmp/s28, packed into $OUT/s28.tgz after each phase):
#   relold   with benchmarks/s28_release.patch reversed (session 27's release of cuda.core memory), the new test of
#            a DeviceArray of device 1 dropped with device 0 current, and benchmarks/release_two_devices.py
#   reldiag  benchmarks/release_two_devices.py on this tree
#   streamold with the patch reversed, the test of a DeviceArray used on another stream and dropped (one GPU)
#   ncuraw   ncu's raw counters (L2 sectors read by the SMs, and their hits, L2 fabric sectors, DRAM bytes,
#            instructions, cycles) of our partial GEMMs and cuBLAS's GEMM on 512^2 x 32768 and 256^2 x 65536
#   ncucast  the same kernels' bytes into the SMs by kind: TMA loads for the CTA itself and multicast ones,
#            distributed shared memory, plain global loads
#   ncucoal  cuBLAS's launch (cluster size) and the L2 request coalescer's counters (lrc__*) of the same kernels
#   r45check round 45's build (benchmarks/explore_sm90_r45.yaml, build/r45) against float64 under each scheduler order
#   r45      every candidate of round 45 swept on six skinny shapes under each order (CKS_SM90_RASTER, CKS_SM90_SWIZZLE),
#            then ncu's coalescer counters of two candidates on 512^2 x 32768 under each
#   r45p     round 45's build with the TMA L2 promotion forced to 128 bytes and to none (build/r45p128, r45p0) beside
#            build/r45 (the rule: 256 bytes on these tiles): the coalescer's counters, then the six shapes swept
#   (rounds 45-46's switches: benchmarks/r45_r46_explore.patch, applied to build build/r45* and build/r46; round 47's:
#   benchmarks/r47_gpc_order.patch, for build/r47)
#   r46      round 46 (build/r46: explore_sm90_r45.yaml with -DCKS_SM90_EXPLORE_INSTEP): the producers of the CTAs
#            loading the same tile of their own operand meet every CKS_SM90_INSTEP k-tiles; float64 check, then ncu's
#            coalescer counters on 512^2 x 32768, then the six shapes swept
#   lrc      benchmarks/lrc_probe.cu: when the L2 request coalescer merges the TMA loads of CTAs asking for one tile
#   r47      round 47 (build/r47: -DCKS_SM90_EXPLORE_GPC): the partial GEMM's (tile, slice) remapped so that the CTAs
#            sharing their own operand's tile are one l-slice of clusters apart (one GPC): a timing experiment only
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
    ncuraw) ncu --query-metrics --chip gh100 2>/dev/null | grep -E "^(lts__t_sectors_srcunit|lts__t_requests_srcunit|lts__t_sectors_op|dram__bytes|l1tex__m_xbar2l1tex|smsp__inst_executed |sm__cycles_active)" \
              | cut -c1-90 > "$out/ncu_metrics.txt"
            M=$(grep -oE "^(lts__t_sectors_srcunit_tex_op_read|lts__t_sectors_srcunit_tex_op_read_lookup_hit|lts__t_sectors_srcunit_ltcfabric|lts__t_sectors_op_read|lts__t_sectors_op_write|lts__t_requests_srcunit_tex_op_read|dram__bytes_read|dram__bytes_write|l1tex__m_xbar2l1tex_read_bytes|smsp__inst_executed|sm__cycles_active)\b" "$out/ncu_metrics.txt" \
                | sort -u | sed 's/$/.sum/' | tr '\n' , ); M=${M}gpu__time_duration.sum,sm__cycles_active.avg
            echo "metrics: $M"
            for spec in "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "512 512 32768 t64x128x64_c1x2_pp_sauto_a8 8" \
                        "256 256 65536 t64x128x64_c1x2_pp_sauto_a8 16"; do
              set -- $spec
              CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --metrics "$M" --launch-skip 2 --launch-count 1 \
                --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/default $1 $2 $3 \
                bias_gelu_mul_permute_f16 bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 > "$out/ncuraw_ours_$1_$3_$4.txt" 2>&1
              echo "== ours $spec rc=$?"; grep -E "^\s+[a-z].*(sum|avg)" "$out/ncuraw_ours_$1_$3_$4.txt" | cut -c1-110
            done
            for shape in "512 512 32768" "256 256 65536"; do
              set -- $shape
              ncu --clock-control none --metrics "$M" --nvtx --nvtx-include cublas/ python3 benchmarks/profile_shape.py \
                cublas $1 $2 $3 > "$out/ncuraw_cublas_$1_$3.txt" 2>&1
              echo "== cublas $shape rc=$?"; grep -E "^  [a-zA-Z_].*\(|^\s+[a-z].*(sum|avg)" "$out/ncuraw_cublas_$1_$3.txt" | cut -c1-110
            done ;;
    ncucast) B=l1tex__m_xbar2l1tex_read_bytes
             M=${B}_mem_global_op_tma_ld_dest_multicast.sum,${B}_mem_global_op_tma_ld_dest_self.sum,${B}_mem_dshared.sum
             M=$M,${B}_mem_lg_op_ld.sum,${B}_mem_global_op_ldgsts_cache_access.sum,${B}.sum,lts__t_sectors_srcunit_tex_op_read.sum
             M=$M,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum
             for spec in "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "256 256 65536 t64x128x64_c1x2_pp_sauto_a8 16"; do
               set -- $spec
               CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --metrics "$M" --launch-skip 2 --launch-count 1 \
                 --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/default $1 $2 $3 \
                 bias_gelu_mul_permute_f16 bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 > "$out/ncucast_ours_$1_$3.txt" 2>&1
               echo "== ours $spec rc=$?"; grep -E "^\s+[a-z].*(sum|avg)" "$out/ncucast_ours_$1_$3.txt" | cut -c1-110
               ncu --clock-control none --metrics "$M" --nvtx --nvtx-include cublas/ --kernel-name regex:nvjet python3 \
                 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/ncucast_cublas_$1_$3.txt" 2>&1
               echo "== cublas $1 $2 $3 rc=$?"; grep -E "^\s+[a-z].*(sum|avg)" "$out/ncucast_cublas_$1_$3.txt" | cut -c1-110
             done ;;
    ncucoal) ncu --query-metrics --chip gh100 2>/dev/null | grep -E "^lrc__" | cut -c1-100 > "$out/ncu_lrc.txt"
             head -40 "$out/ncu_lrc.txt"
             M=$(grep -oE "^lrc__[a-z_0-9]+" "$out/ncu_lrc.txt" | grep -E "sectors|requests" | head -12 | sed 's/$/.sum/' | tr '\n' ,)
             M=${M}lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum
             echo "metrics: $M"
             for spec in "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "256 256 65536 t64x128x64_c1x2_pp_sauto_a8 16"; do
               set -- $spec
               CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --section LaunchStats --metrics "$M" --launch-skip 2 \
                 --launch-count 1 --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/default $1 $2 $3 \
                 bias_gelu_mul_permute_f16 bias_gelu_mul_permute_f16_parallel_sm90_$4 $5 > "$out/ncucoal_ours_$1_$3.txt" 2>&1
               echo "== ours $spec rc=$?"; grep -E "^\s+[a-z].*(sum|avg)|Cluster" "$out/ncucoal_ours_$1_$3.txt" | cut -c1-110
               ncu --clock-control none --section LaunchStats --metrics "$M" --nvtx --nvtx-include cublas/ \
                 --kernel-name regex:nvjet python3 benchmarks/profile_shape.py cublas $1 $2 $3 > "$out/ncucoal_cublas_$1_$3.txt" 2>&1
               echo "== cublas $1 $2 $3 rc=$?"; grep -E "^\s+[a-z].*(sum|avg)|Cluster" "$out/ncucoal_cublas_$1_$3.txt" | cut -c1-110
             done ;;
    r45check) for knob in "" "CKS_SM90_RASTER=n" "CKS_SM90_RASTER=m CKS_SM90_SWIZZLE=4"; do
                env $knob bash -c "source benchmarks/device_lib.sh >/dev/null; out=$out; ab r45check_\${RANDOM} explore90r45_chain_f16 . - r45 \
                  384,384,24576 300,640,1000 200,1024,5000 512,512,32768"
              done
              grep -h WRONG "$out"/r45check_*.txt | head -5 ;;
    r45) shapes="256,256,65536 512,512,32768 1024,1024,16384 384,384,24576 640,640,20480 128,1536,32768"
         for knob in "" "CKS_SM90_RASTER=m" "CKS_SM90_RASTER=n" "CKS_SM90_SWIZZLE=2" "CKS_SM90_SWIZZLE=4"; do
           name=r45_$(echo "${knob:-default}" | tr -c 'a-zA-Z0-9\n' _)
           env $knob bash -c "source benchmarks/device_lib.sh >/dev/null; out=$out; sweep $name r45 explore90r45_chain_f16 $shapes" \
             | grep -v "^---" | cut -c1-150
         done
         M=lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware.sum
         M=$M,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_programmatic.sum,gpu__time_duration.sum
         for knob in "" "CKS_SM90_RASTER=m" "CKS_SM90_RASTER=n" "CKS_SM90_SWIZZLE=4"; do
           for v in "t128x128x64_c1x2_coop_sauto_a8 8" "t64x128x64_c2x1_pp_sauto_a8 8"; do
             set -- $v
             env $knob CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --metrics "$M" --launch-skip 2 --launch-count 1 \
               --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/r45 512 512 32768 \
               explore90r45_chain_f16 explore90r45_chain_f16_parallel_sm90_$1 $2 > "$out/r45ncu.txt" 2>&1
             echo "== ${knob:-default} $v: $(grep -E "^\s+[a-z].*sum" "$out/r45ncu.txt" | awk '{print $NF}' | tr '\n' ' ')"
           done
         done ;;
    r45p) M=lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware.sum
          M=$M,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_programmatic.sum,lrc__request_sectors_op_read_coalescable.sum
          M=$M,lrc__xbar2lrc_requests_op_read.sum,gpu__time_duration.sum
          for b in r45 r45p128 r45p0; do
            for v in "t128x128x64_c1x2_coop_sauto_a8 8" "t64x128x64_c2x1_pp_sauto_a8 8"; do
              set -- $v
              CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --metrics "$M" --launch-skip 2 --launch-count 1 \
                --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/$b 512 512 32768 \
                explore90r45_chain_f16 explore90r45_chain_f16_parallel_sm90_$1 $2 > "$out/r45pncu.txt" 2>&1
              echo "== $b $v: $(grep -E "^\s+[a-z].*sum" "$out/r45pncu.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
            done
          done
          ncu --clock-control none --metrics "$M" --nvtx --nvtx-include cublas/ --kernel-name regex:nvjet python3 \
            benchmarks/profile_shape.py cublas 512 512 32768 > "$out/r45pncu.txt" 2>&1
          echo "== cublas: $(grep -E "^\s+[a-z].*sum" "$out/r45pncu.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
          for b in r45p128 r45p0 r45; do
            sweep r45p_$b $b explore90r45_chain_f16 256,256,65536 512,512,32768 1024,1024,16384 384,384,24576 640,640,20480 \
              128,1536,32768 | grep -v "^---" | cut -c1-150
          done ;;
    r46) for n in 1 4; do
           CKS_SM90_INSTEP=$n timeout 300 python3 benchmarks/variant_ab.py build/r46 explore90r45_chain_f16 --shape 512,512,32768 \
             --shape 256,256,65536 --shape 1024,1024,16384 --shape 300,640,20000 --label r46check$n --flush dirty \
             > "$out/r46check$n.txt" 2>&1
           echo "r46check$n rc=$? wrong=$(grep -c WRONG "$out/r46check$n.txt")"
         done
         M=lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware.sum,gpu__time_duration.sum
         for n in 0 1 2 4 8; do
           for v in "t128x128x64_c1x2_coop_sauto_a8 8" "t64x128x64_c2x1_pp_sauto_a8 4"; do
             set -- $v
             CKS_SM90_INSTEP=$n CUTLASS_SPLITK_GRAPHS=0 timeout 120 ncu --clock-control none --metrics "$M" --launch-skip 2 \
               --launch-count 1 --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/r46 512 512 32768 \
               explore90r45_chain_f16 explore90r45_chain_f16_parallel_sm90_$1 $2 > "$out/r46ncu.txt" 2>&1
             echo "== instep $n $v: $(grep -E "^\s+[a-z].*sum" "$out/r46ncu.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
           done
         done
         for n in ${INSTEPS:-0 2 8}; do
           CKS_SM90_INSTEP=$n timeout 400 bash -c "source benchmarks/device_lib.sh >/dev/null; out=$out; sweep r46_$n r46 \
             explore90r45_chain_f16 256,256,65536 512,512,32768 1024,1024,16384 384,384,24576 640,640,20480 128,1536,32768" \
             | grep -v "^---" | cut -c1-150
         done ;;
    lrc) nvcc -O2 -arch=sm_90a -o "$out/lrc_probe" benchmarks/lrc_probe.cu || exit 1
         M=lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware.sum
         M=$M,l1tex__m_xbar2l1tex_read_bytes.sum,gpu__time_duration.sum
         for run in "3 0" "0 0" "1 0" "2 0" "0 500" "0 2000" "2 2000"; do
           ncu --clock-control none --metrics "$M" --launch-skip 2 --launch-count 1 "$out/lrc_probe" $run > "$out/lrc.txt" 2>&1
           echo "== mode/stagger $run: $(grep -E "^\s+[a-z].*sum" "$out/lrc.txt" | awk '{print $1"="$NF}' | tr '\n' ' ') $(grep -c error "$out/lrc.txt")"
         done ;;
    place) nvcc -O2 -arch=sm_90a -o "$out/lrc_probe" benchmarks/lrc_probe.cu || exit 1
           for run in "132 1" "128 2" "120 4" "112 16" "112 16" "128 8"; do "$out/lrc_probe" 9 $run; done 2>&1 | tee "$out/place.txt" ;;
    r47) M=lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware.sum,gpu__time_duration.sum
         for g in "" 1; do
           for v in "512 512 32768 t128x128x64_c1x2_coop_sauto_a8 8" "512 512 32768 t64x128x64_c2x1_pp_sauto_a8 4" \
                    "256 256 65536 t64x128x64_c2x1_pp_sauto_a8 8" "1024 1024 16384 t128x128x64_c2x1_coop_sauto_a8 8"; do
             set -- $v
             env ${g:+CKS_SM90_GPC=1} CUTLASS_SPLITK_GRAPHS=0 ncu --clock-control none --metrics "$M" --launch-skip 2 \
               --launch-count 1 --kernel-name regex:device_kernel python3 benchmarks/profile_shape.py build/r47 $1 $2 $3 \
               explore90r45_chain_f16 explore90r45_chain_f16_parallel_sm90_$4 $5 > "$out/r47ncu.txt" 2>&1
             echo "== gpc=${g:-0} $v: $(grep -E "^\s+[a-z].*sum" "$out/r47ncu.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
           done
         done ;;
    multi) gpu_tests multi tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py \
             -k "second_device or two_devices or clusters_of_four or device_properties" ;;
    arrays) gpu_tests arrays tests/gpu/test_gpu_integration.py tests/gpu/test_gpu_arrays.py ;;
    ops|rest|bench|benchx|fuzz) common_phase "$phase" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "== $phase done at ${SECONDS}s"
  tar czf "${OUT:-.}/s28.tgz" -C /tmp s28
done
