"""How many CTAs a GPU runs at once in thread-block clusters of four, one CTA per SM.

Every sm90 kernel of ours takes one SM per CTA (116 KB of shared memory and more). An SM of a
cluster must sit in the cluster's GPC, and a GPC's SM count need not be a multiple of the
cluster size: an H100 (132 SMs) runs 132 CTAs in clusters of one or two but 120 in clusters of
four (BENCHMARKS.md, session 25), and the count depends on which SMs a chip has enabled, so it
is asked of the device, not assumed. The sm90 kernels ask the same thing for themselves at
launch (``sm90_launch.cuh``); this is the time model's copy (``timemodel.cluster_slots``).

The driver answers for an empty kernel (``cluster_probe.ptx``, JIT-compiled by the driver; never
launched) with the device's largest opt-in shared memory per block, through cuda.bindings.
Nothing here runs at import.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Tuple

from . import cudacore

PROBE_THREADS = 128


def load_kernel(ptx_file: str, name: bytes, index: int) -> Tuple[Any, Any, int]:
    """(module, function, shared memory): kernel ``name`` of this package's ``ptx_file`` JIT-loaded on the current
    context, its dynamic shared memory raised to device ``index``'s opt-in maximum, which a launch asks for to run one
    CTA per SM."""
    d, check = cudacore.driver(), cudacore.check
    ptx = resources.files(__package__).joinpath(ptx_file).read_bytes() + b"\0"
    attr = d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    smem = int(check(d.cuDeviceGetAttribute(attr, d.CUdevice(index)), "cuDeviceGetAttribute"))
    module = check(d.cuModuleLoadData(ptx), "cuModuleLoadData")
    try:
        func = check(d.cuModuleGetFunction(module, name), "cuModuleGetFunction")
        dynamic = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(d.cuFuncSetAttribute(func, dynamic, smem), "cuFuncSetAttribute")
    except Exception:
        d.cuModuleUnload(module)
        raise
    return module, func, smem


def launch_config(cluster: int, ctas: int, smem: int, stream: Any = None) -> Any:
    """A CUlaunchConfig of ``ctas`` CTAs of PROBE_THREADS threads in clusters of ``cluster`` (x) with ``smem`` bytes of
    dynamic shared memory, on ``stream``."""
    d = cudacore.driver()
    launch = d.CUlaunchAttribute()
    launch.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    launch.value.clusterDim.x, launch.value.clusterDim.y, launch.value.clusterDim.z = cluster, 1, 1
    config = d.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = ctas, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = PROBE_THREADS, 1, 1
    config.sharedMemBytes = smem
    if stream is not None:
        config.hStream = stream
    config.attrs, config.numAttrs = [launch], 1
    return config


def max_active_ctas(index: int, cluster: int) -> int:
    """CTAs of device ``index`` resident at once in clusters of ``cluster`` CTAs at one CTA per SM
    (cuOccupancyMaxActiveClusters x ``cluster``). Raises where the driver cannot say (KernelError naming the
    call; cuda.bindings' own error where no driver is found)."""
    d = cudacore.driver()
    devices = cudacore.Devices()
    previous = devices.enter(index)  # the thread's context given back as it was, none included
    module = None
    try:
        module, func, smem = load_kernel("cluster_probe.ptx", b"cks_cluster_probe", index)
        config = launch_config(cluster, cluster, smem)
        return int(cudacore.check(d.cuOccupancyMaxActiveClusters(func, config), "cuOccupancyMaxActiveClusters")) * cluster
    finally:
        if module is not None:
            d.cuModuleUnload(module)
        devices.leave(previous)


def cluster4_ctas(index: int, major: int) -> int:
    """CTAs resident at once in clusters of four on device ``index`` (compute capability ``major``.x),
    or 0 where the device has no clusters (before 9.0) or the driver cannot say: the time model
    then estimates (timemodel.cluster_slots)."""
    if major < 9:
        return 0
    try:
        return max_active_ctas(index, 4)
    except Exception:  # no JIT for this PTX, an old cuda.bindings: the model's estimate serves
        return 0


__all__ = ["cluster4_ctas", "launch_config", "load_kernel", "max_active_ctas"]
