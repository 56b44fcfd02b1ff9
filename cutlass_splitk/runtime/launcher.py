"""Running one launch request: the plan cache, the candidate order (tuned choice first, then
the heuristic's ranking), the library's query and run entry points, and the workspace.

A :class:`Launcher` belongs to one op and is given what it needs as objects (the op's spec,
its bound library, the workspace, the platform, the tuner); it never calls back into the op.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, Generic, Hashable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from ..spec import KernelVariant, OpSpec, Permute
from . import abi, dispatch, placement, tuning
from .errors import KernelError
from .operands import Operands
from .workspace import SCRATCH, Workspace

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

PLAN_CACHE_SIZE = 4096
RANKINGS_SIZE = 64  # (variant pool, device) pairs with a NativeRanking, per op


class BoundedCache(Generic[K, V]):
    """A memo that empties itself when full: the one eviction rule of the runtime's hot-path
    memos (plans, candidate pools, call signatures), where a miss costs only a recomputation.
    ``get`` (and ``lookup``, the bare ``dict.get`` for the hot path) raises TypeError for an
    unhashable key, like a dict. ``generation`` counts the times it was emptied, so that
    whoever keeps one of its values can tell the value is still current, and ``on_clear`` are
    called when it is (runtime/native.py mirrors the signature cache in C)."""

    def __init__(self, size: int):
        self.size = size
        self._items: Dict[K, V] = {}
        self.lookup = self._items.get
        self.generation = 0
        self.on_clear: List[Callable[[], None]] = []

    def get(self, key: K) -> Optional[V]:
        return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        if len(self._items) >= self.size and key not in self._items:
            self.clear()
        self._items[key] = value

    def clear(self) -> None:
        self.generation += 1
        self._items.clear()
        for hook in self.on_clear:
            hook()

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> Iterator[Tuple[K, V]]:
        return iter(list(self._items.items()))

    def values(self) -> Iterator[V]:
        return iter(list(self._items.values()))


class PlanKey(NamedTuple):
    device: int
    m: int
    n: int
    k: int
    split_k: Optional[int]
    mode: Optional[str]
    variant: Optional[str]


@dataclass(frozen=True)
class Plan:
    """A dispatch decision and the workspace it needs."""

    variant: str
    split: int
    semaphore_bytes: int
    partial_bytes: int


@dataclass
class Request:
    """One launch, as the call asked for it."""

    operands: Operands
    m: int
    alpha: float
    beta: float
    slope: float  # leaky_relu's negative slope
    view: Any  # the permuted output's view, or None
    device: Hashable  # what the workspace allocates on: a torch.device, or a device index
    device_index: int
    pool: Sequence[KernelVariant]  # the variants the call allows (split_k / mode / variant)
    split_k: Optional[int] = None
    mode: Optional[str] = None
    variant: Optional[str] = None
    scratch: bool = False  # workspace per call (under torch.compile) instead of the cached one
    stream: Optional[int] = None  # None: the platform's current stream (torch's)
    workspace: Any = None  # None: the library's (torch) workspace, or SCRATCH with ``scratch``
    tunable: bool = True  # autotuning may time candidates on this call's inputs (torch only)

    @property
    def plan_key(self) -> PlanKey:
        o = self.operands
        return PlanKey(self.device_index, self.m, o.n, o.k, self.split_k, self.mode, self.variant)


@dataclass(frozen=True)
class Launched:
    """What a launch established, for the op's fast path: the plan and the arguments."""

    plan_key: PlanKey
    plan: Plan
    args: abi.CksArgs


class Launcher:
    def __init__(self, spec: OpSpec, bound: abi.BoundLibrary, workspace: Workspace, platform: Any,
                 tuner: tuning.Tuner):
        self.spec = spec
        self.bound = bound
        self.workspace = workspace
        self.platform = platform
        self.tuner = tuner
        self.plans: BoundedCache[PlanKey, Plan] = BoundedCache(PLAN_CACHE_SIZE)
        self._native_rank = getattr(bound, "rank", None)  # cks_rank_v16, where the library has it
        # gives the library each device's placement (the sm90 partial GEMMs' GPC order) before its first launch there
        self.placer = placement.Placer(spec.name, getattr(bound, "set_placement", None), platform)
        self._ordered: Dict[int, Tuple[dispatch.DeviceInfo, dispatch.DeviceInfo]] = {}  # device_info's, per device
        # (id(pool), device index) -> (pool, DeviceInfo, their NativeRanking): the pool is kept so
        # that its id stays its own
        self._rankings: BoundedCache[Tuple[int, int], Tuple[Any, dispatch.DeviceInfo, dispatch.NativeRanking]] = \
            BoundedCache(RANKINGS_SIZE)

    def arguments(self, r: Request) -> abi.CksArgs:
        o = r.operands
        args = abi.CksArgs()
        args.abi_version = abi.ABI_VERSION
        args.m, args.n, args.k = r.m, o.n, o.k
        args.device = r.device_index
        if self.spec.epilogue.permute is not Permute.NONE:
            args.permute_s, args.permute_h = r.view[1], r.view[-2]
        args.a, args.lda = o.a.data_ptr(), o.lda
        args.b, args.ldb = o.b.data_ptr(), o.ldb
        args.c, args.ldc = (o.c.data_ptr(), o.ldc) if o.c is not None else (None, 0)
        args.bias = o.bias.data_ptr() if o.bias is not None else None
        args.e, args.lde = (o.e.data_ptr(), o.lde) if o.e is not None else (None, 0)
        args.d, args.ldd = o.d.data_ptr(), o.ldd
        args.alpha, args.beta, args.act_arg = r.alpha, r.beta, r.slope
        return args

    def launch(self, r: Request) -> Launched:
        """Runs ``r`` on the device's current stream: the cached plan of the problem, else the
        first candidate the library accepts. (The library selects the device itself from
        ``CksArgs.device``; no device guard is needed.)"""
        args = self.arguments(r)
        stream = self.platform.stream(r.device_index) if r.stream is None else r.stream
        ws = r.workspace or (SCRATCH if r.scratch else self.workspace)
        key = r.plan_key
        plan = self.plans.get(key)
        if plan is not None:
            status = self.run(plan, args, r.device, stream, ws)
            if status == 0:
                return Launched(key, plan, args)
            if status != abi.STATUS_INVALID_PROBLEM:
                raise self.run_error(plan.variant, plan.split, args, status)
        # First call for this problem (or the cached plan's variant rejected these
        # pointers): the tuned choice if the cache has one (or autotuning is on), then the
        # heuristic's ranking; the first candidate the library accepts runs.
        rejected: List[str] = []
        for name, split in self._order(r, args, stream):
            plan = self.query(name, split, args, rejected)
            if plan is None:
                continue
            status = self.run(plan, args, r.device, stream, ws)
            if status != 0:
                raise self.run_error(name, split, args, status)
            self.plans.put(key, plan)
            return Launched(key, plan, args)
        o = r.operands
        raise ValueError(f"{self.spec.name}: no built variant can run M={r.m} N={o.n} K={o.k} "
                         f"({self.spec.dtype.value}):\n  " + "\n  ".join(sorted(set(rejected))))

    def device_info(self, index: int, stream: Optional[int] = None) -> dispatch.DeviceInfo:
        """The device as the time model sees it for this op's library: with the GPC order where the
        library runs it there (placed first, behind ``stream``, where one is given)."""
        if stream is not None:
            self.placer.place(index, stream)  # returns at once where placed
        dev = self.platform.device_info(index)
        if index not in self.placer.given:
            return dev
        ordered = self._ordered.get(index)  # (the platform's figures, with the order): one object per device
        if ordered is None or ordered[0] is not dev:
            ordered = self._ordered[index] = (dev, replace(dev, gpc_order=True))
        return ordered[1]

    def _order(self, r: Request, args: abi.CksArgs, stream: int) -> List[Tuple[str, int]]:
        o = r.operands
        dev = self.device_info(r.device_index, stream)
        order = self.ranked(r.pool, r.m, o.n, o.k, dev, r.split_k, r.device_index)
        if not order:
            raise ValueError(f"{self.spec.name}: no built variant runs on {dev.name} (compute capability "
                             f"{dev.capability}): {dispatch.why_not(r.pool, self.spec.archs, dev)}; build a "
                             "grid for this GPU (sm80 grids with its arch, or sm90 grids for Hopper)")
        if r.split_k is None and r.mode is None and r.variant is None:
            tuned = self.tuner.choice(self.spec, r.device_index, r.m, o.n, o.k)
            if tuned is None and self.tuner.autotune and r.tunable:
                tuned = self._tune_in_place(r, args, stream, order)
            if tuned is not None:
                order.insert(0, tuned)
        return order

    def ranked(self, pool: Sequence[KernelVariant], m: int, n: int, k: int, dev: dispatch.DeviceInfo,
               split: Optional[int], device_index: int) -> List[Tuple[str, int]]:
        """dispatch.rank's order of (variant, split): from the library's cks_rank_v16 where it has
        one (the first call of a new problem: ~30x less host time), else in Python."""
        epi = self.spec.epilogue
        if self._native_rank is None:
            return [(c.variant.name, c.split)
                    for c in dispatch.rank(pool, m, n, k, dev, split, self.spec.archs, epi.tma_in_kernel,
                                           epi.transcendental)]
        key = (id(pool), device_index)
        entry = self._rankings.get(key)
        if entry is None or entry[0] is not pool or not (entry[1] is dev or entry[1] == dev):
            entry = (pool, dev, dispatch.NativeRanking(self._native_rank, pool, self.spec.archs, dev,
                                                       epi.tma_in_kernel, epi.transcendental))
            self._rankings.put(key, entry)
        return entry[2].order(m, n, k, split)

    def query(self, name: str, split: int, args: abi.CksArgs, rejected: List[str]) -> Optional[Plan]:
        """Asks the library whether ``name`` can run ``args`` at ``split``; None if not (the
        reason appended to ``rejected``)."""
        args.split_k = split
        query = abi.CksQuery()
        status = self.bound.query[name](ctypes.byref(args), ctypes.byref(query))
        if status == abi.STATUS_INVALID_PROBLEM:
            rejected.append(f"{name}: {self.bound.last_error()}")
            return None
        if status != 0:
            raise KernelError(f"{self.spec.name}: {name} query failed "
                              f"({abi.STATUS_NAMES.get(status, status)}): {self.bound.last_error()}")
        return Plan(name, split, query.semaphore_bytes, query.partial_bytes)

    def run(self, plan: Plan, args: abi.CksArgs, device: Hashable, stream: int, ws: Any = None) -> int:
        """Runs ``plan`` with workspace from ``ws`` (default: the library's); returns the
        library's status. The blocks are held until the launch is queued."""
        if args.device not in self.placer.placed:
            self.placer.place(args.device, stream)
        args.split_k = plan.split
        ws = ws or self.workspace
        sem = part = None
        if plan.semaphore_bytes:
            sem = ws.semaphores(device, stream, plan.semaphore_bytes)
            args.semaphores, args.semaphore_bytes = sem.ptr, sem.nbytes
        if plan.partial_bytes:
            part = ws.partials(device, stream, plan.partial_bytes)
            args.partials, args.partial_bytes = part.ptr, part.nbytes
        status = self.bound.run[plan.variant](ctypes.byref(args), stream)
        del sem, part
        return status

    def run_error(self, variant: str, split: int, args: abi.CksArgs, status: int) -> KernelError:
        return KernelError(f"{self.spec.name}: {variant} (split {split}) failed for M={args.m} N={args.n} "
                           f"K={args.k}: {abi.STATUS_NAMES.get(status, status)}: {self.bound.last_error()}")

    def _tune_in_place(self, r: Request, args: abi.CksArgs, stream: int,
                       order: List[Tuple[str, int]]) -> Optional[Tuple[str, int]]:
        """Times every candidate on the caller's inputs (into a scratch output) and stores
        the fastest. Used on the first call of a new problem when autotuning is on (torch)."""
        import torch

        scratch = torch.empty_like(r.operands.d)
        saved_d = args.d
        args.d = scratch.data_ptr()
        plans: Dict[Tuple[str, int], Plan] = {}
        for name, split in order:
            plan = self.query(name, split, args, [])
            if plan is not None:
                plans[(name, split)] = plan

        def run(name: str, split: int) -> None:
            if self.run(plans[(name, split)], args, r.device, stream) != 0:
                raise ValueError(self.bound.last_error())

        with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=r.device)):
            results = tuning.time_candidates(run, list(plans))
        args.d = saved_d
        if not results:
            return None
        o = r.operands
        entry = self.tuner.record(self.spec, r.device_index, r.m, o.n, o.k, results, "caller's")
        return entry["variant"], entry["split"]
