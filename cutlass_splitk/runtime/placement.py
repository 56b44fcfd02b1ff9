"""Where a device puts the clusters of a launch, and which of its SMs share a GPC.

The sm90 partial GEMM runs its work units in an order of ours where every unit runs in one
round (``backends/sm90/templates/sm90_gpc_order.h``): the CTAs that load the same tile of their
own operand are put in one GPC, whose L2 request coalescer then merges their loads (an H100
deals consecutive clusters to different GPCs; BENCHMARKS.md, sessions 28-29). That order needs
two facts of the device, measured here once per device with a probe kernel
(``placement_probe.ptx``, JIT-compiled by the driver) at one CTA per SM, as the sm90 kernels run:

* for clusters of one and of two CTAs, the SM of each launch slot (the clusters of one launch
  of the device's full count, checked all resident at once and on distinct SMs);
* which SMs share a GPC: every cluster runs in one GPC, so launches in clusters of 16 (where the
  device allows that size), 8 and 4, several rounds each, join the SMs they met.

Nothing here runs at import. The probe runs on a stream of its own behind the caller's stream,
with this thread's capture mode relaxed, and not while the caller's stream is capturing.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from . import cudacore
from .abi import STATUS_NAMES
from .clusters import launch_config, load_kernel

SLOT_CLUSTERS = (1, 2)  # the cluster sizes whose order the partial GEMM can change
GPC_CLUSTERS = (16, 8, 4)  # launched to find the GPCs (16 where the device allows it)
GPC_ROUNDS = 4
MAX_SLOTS = 255  # the kernel's table holds bytes (SlotGroups::kMaxSlots)
WAIT_CYCLES = 4_000_000  # ~2 ms for all CTAs of a slot launch to arrive
SPIN_CYCLES = 4_000  # x 0..15 per cluster in the GPC launches


@dataclass(frozen=True)
class Placement:
    """One device's: ``groups[c]``, the GPC label of each launch slot of clusters of ``c`` CTAs;
    ``gpcs``, the SMs of each GPC found."""

    groups: Dict[int, bytes]
    gpcs: Tuple[Tuple[int, ...], ...]

    def describe(self) -> str:
        sizes = sorted((len(g) for g in self.gpcs), reverse=True)
        slots = ", ".join(f"{len(v)} slots in clusters of {c}" for c, v in sorted(self.groups.items()))
        return f"{len(self.gpcs)} GPCs found (SMs: {' '.join(map(str, sizes))}); {slots}"


def gpc_sets(clusters: Iterable[Sequence[int]]) -> List[Tuple[int, ...]]:
    """The SMs joined by the clusters they ran in (each a sequence of SM ids), as sorted tuples,
    ordered by their first SM."""
    parent: Dict[int, int] = {}

    def root(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for sms in clusters:
        first = root(sms[0])
        for sm in sms[1:]:
            other = root(sm)
            if other != first:
                parent[max(first, other)] = min(first, other)
                first = min(first, other)
    sets: Dict[int, List[int]] = {}
    for sm in parent:
        sets.setdefault(root(sm), []).append(sm)
    return sorted(tuple(sorted(s)) for s in sets.values())


def slot_groups(slot_sms: Sequence[int], gpcs: Sequence[Sequence[int]]) -> bytes:
    """The GPC label (its index in ``gpcs``; SMs in none get labels of their own) of each slot."""
    label = {sm: i for i, g in enumerate(gpcs) for sm in g}
    extra: Dict[int, int] = {}
    out = bytearray()
    for sm in slot_sms[:MAX_SLOTS]:
        if sm not in label:
            label[sm] = extra.setdefault(sm, len(gpcs) + len(extra))
        out.append(label[sm] % 255)
    return bytes(out)


class _Probe:
    """The probe kernel loaded on the current context, its launches on a stream of its own."""

    def __init__(self, index: int, stream: int):
        d = self.d = cudacore.driver()
        check = cudacore.check
        self.module, self.func, self.smem = load_kernel("placement_probe.ptx", b"cks_place_probe", index)
        self.stream = self.buffer = None
        self.words = 2 + 8 * 1024
        try:
            nonportable = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
            self.nonportable = int(d.cuFuncSetAttribute(self.func, nonportable, 1)[0]) == 0
            self.stream = check(d.cuStreamCreate(int(d.CUstream_flags.CU_STREAM_NON_BLOCKING)), "cuStreamCreate")
            # behind the caller's work (the legacy stream's too: ours does not wait for it by itself)
            event = check(d.cuEventCreate(int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)), "cuEventCreate")
            try:
                check(d.cuEventRecord(event, d.CUstream(stream)), "cuEventRecord")
                check(d.cuStreamWaitEvent(self.stream, event, 0), "cuStreamWaitEvent")
            finally:
                d.cuEventDestroy(event)
            self.buffer = check(d.cuMemAllocAsync(4 * self.words, self.stream), "cuMemAllocAsync")
        except Exception:
            self.close()
            raise

    def config(self, cluster: int, clusters: int) -> object:
        return launch_config(cluster, cluster * clusters, self.smem, self.stream)

    def max_clusters(self, cluster: int) -> int:
        if cluster > 8 and not self.nonportable:
            return 0
        result = self.d.cuOccupancyMaxActiveClusters(self.func, self.config(cluster, 1))
        return int(result[1]) if int(result[0]) == 0 else 0

    def run(self, cluster: int, clusters: int, wait_all: bool) -> Tuple[List[int], bool]:
        """The SM of each CTA of a launch of ``clusters`` clusters, and whether they were all resident at once."""
        d, check = self.d, cudacore.check
        ctas = min(cluster * clusters, self.words - 2)
        check(d.cuMemsetD32Async(self.buffer, 0, 2, self.stream), "cuMemsetD32Async")
        counter = int(self.buffer)
        params = ((counter + 8, counter, ctas if wait_all else 0, WAIT_CYCLES, 0 if wait_all else SPIN_CYCLES),
                  (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64))
        check(d.cuLaunchKernelEx(self.config(cluster, ctas // cluster), self.func, params, 0), "cuLaunchKernelEx")
        host = (ctypes.c_uint32 * (ctas + 2))()
        check(d.cuMemcpyDtoHAsync(ctypes.addressof(host), self.buffer, 4 * (ctas + 2), self.stream), "cuMemcpyDtoHAsync")
        check(d.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        return list(host[2:]), host[1] == 0

    def close(self) -> None:
        d = self.d
        if self.buffer is not None:
            d.cuMemFreeAsync(self.buffer, self.stream)
        if self.stream is not None:
            d.cuStreamSynchronize(self.stream)
            d.cuStreamDestroy(self.stream)
        d.cuModuleUnload(self.module)


def measure(index: int, stream: int = 0) -> Optional[Placement]:
    """Device ``index``'s placement, measured behind the work queued on ``stream`` (a raw handle
    of that device; 0: the legacy stream); None where ``stream`` is capturing (or cannot say) or
    the slot launches did not run all at once on distinct SMs (another process or stream held
    SMs): ask again later. Raises KernelError where the driver refuses a call."""
    d, check = cudacore.driver(), cudacore.check
    devices = cudacore.Devices()
    previous = devices.enter(index)
    relaxed = d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    mode = check(d.cuThreadExchangeStreamCaptureMode(relaxed), "cuThreadExchangeStreamCaptureMode")
    probe = None
    try:
        err, status = d.cuStreamIsCapturing(d.CUstream(stream))
        if int(err) != 0 or int(status) != 0:
            return None
        probe = _Probe(index, stream)
        slots: Dict[int, List[int]] = {}
        met: List[Sequence[int]] = []
        for cluster in SLOT_CLUSTERS:
            count = probe.max_clusters(cluster)
            if count <= 0:
                continue
            sms, together = probe.run(cluster, count, wait_all=True)
            if not together or len(set(sms)) != len(sms):
                return None
            slots[cluster] = sms[::cluster]
            met += [sms[i:i + cluster] for i in range(0, len(sms), cluster)]
        for cluster in GPC_CLUSTERS:
            count = probe.max_clusters(cluster)
            if count > 0:
                sms, _ = probe.run(cluster, count * GPC_ROUNDS, wait_all=False)
                met += [sms[i:i + cluster] for i in range(0, len(sms), cluster)]
        gpcs = gpc_sets(met)
        return Placement({c: slot_groups(s, gpcs) for c, s in slots.items()}, tuple(gpcs))
    finally:
        if probe is not None:
            probe.close()
        d.cuThreadExchangeStreamCaptureMode(mode)
        devices.leave(previous)


class Placer:
    """Gives one op's library (its ``cks_sm90_set_placement``, ``setter``; None where it has no
    sm90 partial GEMM) each device's placement from ``platform.placement`` before the first
    launch there, or takes it back where ``on`` is false. ``placed``: the devices done; ``given``: those
    whose library runs the GPC order (a placement measured and taken)."""

    def __init__(self, op: str, setter: Optional[Callable[..., int]], platform: Any):
        self.op = op
        self.setter = setter
        self.measure = getattr(platform, "placement", None)  # None: a platform without placements
        self.on = True
        self.placed: Set[int] = set()
        self.given: Set[int] = set()
        self.refused: Dict[int, str] = {}  # devices whose placement the library refused (CUTLASS's order there)

    def place(self, device: int, stream: int = 0) -> None:
        """Asked again at later launches while the platform has no placement yet. A placement the
        library refuses (a device index past its 64) leaves CUTLASS's order there: the call goes on."""
        if self.setter is None or device in self.placed:
            return
        found = self.measure(device, stream) if self.on and self.measure is not None else None
        if found is None and self.on and self.measure is not None:
            return
        self.given.discard(device)
        for cluster in SLOT_CLUSTERS:
            groups = found.groups.get(cluster, b"") if found is not None else b""
            status = self.setter(device, cluster, len(groups), groups or None)
            if status != 0:
                self.refused[device] = f"{self.op}: cks_sm90_set_placement refused device {device}, clusters of " \
                                       f"{cluster} ({STATUS_NAMES.get(status, status)})"
                break
        else:
            if found is not None:
                self.given.add(device)
        self.placed.add(device)

    def turn(self, on: bool) -> None:
        """The GPC order on or off, at once for the devices placed so far and at the first launch
        for the others. Plans made before (and graphs replayed) keep the order they were made with."""
        self.on = on
        placed, self.placed = self.placed, set()
        for device in placed:
            self.place(device)


__all__ = ["Placement", "Placer", "gpc_sets", "measure", "slot_groups"]
