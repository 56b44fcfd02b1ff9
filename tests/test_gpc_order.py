"""The sm90 partial GEMM's work order by GPC: the order itself (``sm90_gpc_order.h``, compiled as
host C++ with the system compiler and run), the placement read from probe launches
(``runtime/placement.py``: which SMs share a GPC, the GPC of each launch slot), and how the runtime
hands a device's placement to a library (``Placer``, ``Platform.placement``, ``Library.gpc_order``).
The probe itself and the kernels' bits with the order on and off are GPU tests
(tests/gpu/test_gpu_integration.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from cks_testutil import CONFIGS
from cutlass_splitk.config import load_config
from cutlass_splitk.runtime import placement, platform
from cutlass_splitk.runtime.dispatch import DeviceInfo
from cutlass_splitk.runtime.errors import KernelError
from cutlass_splitk.runtime.placement import Placement, Placer, gpc_sets, slot_groups

CXX = shutil.which("c++") or shutil.which("g++")
SM90_TEMPLATES = Path(__file__).resolve().parents[1] / "cutlass_splitk" / "backends" / "sm90" / "templates"
ROOT = Path(__file__).resolve().parents[1]

HARNESS = textwrap.dedent(r"""
    #include <cstdio>
    #include "sm90_gpc_order.h"

    // stdin: lines of "tiles_m tiles_n batches cluster_m cluster_n clusters slots group..." -> "no" or the order
    int main() {
      int tm, tn, b, cm, cn, clusters, slots;
      while (std::scanf("%d %d %d %d %d %d %d", &tm, &tn, &b, &cm, &cn, &clusters, &slots) == 7) {
        cks::sm90::SlotGroups where;
        where.slots = slots;
        for (int s = 0; s < slots; ++s) { int g; std::scanf("%d", &g); where.group[s] = (unsigned char)g; }
        unsigned short order[cks::sm90::kMaxOrderedUnits];
        if (!cks::sm90::gpc_order(tm, tn, b, cm, cn, clusters, where, order)) { std::printf("no\n"); continue; }
        for (int s = 0; s < tm * tn * b; ++s) std::printf("%d ", order[s]);
        std::printf("\n");
      }
    }
""")


@pytest.fixture(scope="module")
def gpc_order(tmp_path_factory):
    """gpc_order(tiles_m, tiles_n, batches, cluster_m, cluster_n, groups, clusters=units) -> the order or None
    (``groups``: the measured slots' GPC labels; ``clusters``: the launch's, default one round)."""
    if CXX is None:
        pytest.skip("no host C++ compiler (c++ or g++) to compile sm90_gpc_order.h")
    d = tmp_path_factory.mktemp("gpc")
    (d / "harness.cpp").write_text(HARNESS)
    subprocess.run([CXX, "-std=c++17", "-O1", "-Wall", "-Werror", f"-I{SM90_TEMPLATES}", str(d / "harness.cpp"),
                    "-o", str(d / "harness")], check=True)

    def run(tm, tn, b, cm, cn, groups, clusters=None):
        clusters = tm * tn * b if clusters is None else clusters
        line = " ".join(map(str, (tm, tn, b, cm, cn, clusters, len(groups), *groups)))
        out = subprocess.run([str(d / "harness")], input=line + "\n", capture_output=True, text=True,
                             check=True).stdout.strip()
        return None if out == "no" else [int(x) for x in out.split()]
    return run


def h100_runs():
    """Session 28's placement probe on an H100 (benchmarks/session28_h100.json): the SMs of each
    cluster, per cluster size, in launch order."""
    text = json.loads((ROOT / "benchmarks" / "session28_h100.json").read_text())["lrc_probe"]["placement"]
    runs = {}
    for block in text.split("placement of ")[1:]:
        head, body = block.split("\n", 1)
        size = int(head.split("clusters of ")[1].split(" ")[0])
        runs.setdefault(size, []).append([[int(x) for x in c.split()] for c in body.strip().split("|") if c.strip()])
    return runs


def h100_placement():
    runs = h100_runs()
    gpcs = gpc_sets([c for size in (2, 16, 8, 4) for run in runs[size] for c in run])
    return gpcs, {size: slot_groups([c[0] for c in runs[size][0]], gpcs) for size in (1, 2)}


def test_gpcs_and_slot_groups_from_the_h100_probe():
    gpcs, groups = h100_placement()
    # clusters of 16 find seven GPCs of 16 SMs, clusters of 8 an eighth of 8 (SMs 0, 1, 16, 17, ...); the
    # 9th TPCs (SMs 124-131) met no larger cluster in that run and keep a label each
    assert [len(g) for g in gpcs] == [8, 16, 16, 16, 16, 16, 16, 16, 2, 2, 2, 2]
    assert gpcs[0] == (0, 1, 16, 17, 32, 33, 48, 49)
    assert gpcs[1] == (2, 3, 18, 19, 34, 35, 50, 51, 64, 65, 78, 79, 92, 93, 106, 107)
    # clusters of two: TPCs 62-65 first, then TPC 0, 1, 2, ...: consecutive slots in different GPCs
    assert groups[2].hex() == ("08090a0b" + "0001020304050607" * 4 + "01020304050607" * 4)
    assert len(groups[1]) == 132 and groups[1][:8] == bytes([8, 9, 10, 11, 0, 1, 2, 3])


def test_slot_groups_label_unmet_sms_and_stop_at_255_slots():
    assert slot_groups([5, 7, 5, 9], [(7, 8)]) == bytes([1, 0, 1, 2])
    assert len(slot_groups(list(range(300)), [])) == 255
    assert gpc_sets([[1, 2], [3, 4], [2, 3], [9]]) == [(1, 2, 3, 4), (9,)]


def test_order_small_case_by_hand(gpc_order):
    # 2 x 1 clusters of 1x2 (the CTAs load their own B tile, shared along M), 3 slices: units 0-5, sharers (0, 1),
    # (2, 3), (4, 5); slots alternate between two GPCs of three slots: each takes one whole pair, then one unit
    assert gpc_order(2, 1, 3, 1, 2, [0, 1, 0, 1, 0, 1]) == [0, 2, 1, 3, 4, 5]
    # 2x1 clusters: the CTAs load their own A tile, shared along N: unit (m, n, l) = (l * 2 + n) * 1 + m
    assert gpc_order(1, 2, 2, 2, 1, [0, 1, 1, 0]) == [0, 2, 3, 1]


def test_order_over_rounds_by_hand(gpc_order):
    # a persistent launch of 4 clusters over 8 units: slot s runs order[s], then order[4 + s]; each round its own
    # sharer pairs in one GPC each
    assert gpc_order(2, 1, 4, 1, 2, [0, 1, 0, 1], clusters=4) == [0, 2, 1, 3, 4, 6, 5, 7]
    # a last round of two units runs in slots 0 and 1 (one slot of each GPC: no whole pair fits)
    assert gpc_order(2, 1, 3, 1, 2, [0, 1, 0, 1], clusters=4) == [0, 2, 1, 3, 4, 5]


def test_order_refused_where_it_cannot_help_or_apply(gpc_order):
    assert gpc_order(2, 2, 2, 2, 2, [0] * 8) is None  # clusters of four: both operands multicast
    assert gpc_order(1, 4, 2, 1, 2, [0] * 8) is None  # one unit along M: no two CTAs share a B tile
    assert gpc_order(4, 2, 8, 1, 2, [0] * 63) is None  # 64 clusters launched, 63 slots measured
    assert gpc_order(5, 5, 41, 1, 1, [0] * 132, clusters=132) is None  # 1025 units: more than a table holds
    assert gpc_order(0, 2, 8, 1, 2, [0] * 64) is None
    assert gpc_order(4, 2, 8, 1, 2, []) is None  # no placement known


def sharing(order, groups, own_tile):
    """How many distinct (GPC, own tile) pairs the launch's slots load: the tiles the coalescer sees."""
    return len({(groups[s], own_tile(u)) for s, u in enumerate(order)})


def cutlass_order(tiles_m, tiles_n, batches, cm, cn):
    """The unit CUTLASS's persistent scheduler (heuristic raster, no swizzle) runs in each slot of one round:
    along N (n fastest) unless the problem has more CTA tiles along N than along M."""
    along_m = tiles_n * cn > tiles_m * cm
    order = []
    for slot in range(tiles_m * tiles_n * batches):
        l, c = divmod(slot, tiles_m * tiles_n)
        n, m = divmod(c, tiles_m) if along_m else divmod(c, tiles_n)[::-1]
        order.append((l * tiles_n + n) * tiles_m + m)
    return order


@pytest.mark.parametrize("tiles_m, tiles_n, cm, cn", [(4, 2, 1, 2), (4, 4, 2, 1)])
def test_order_puts_sharers_in_one_gpc_on_the_h100(gpc_order, tiles_m, tiles_n, cm, cn):
    """512^2 x 32768 at split 8 (128x128 in 1x2 clusters) and at split 4 (64x128 ping-pong in 2x1): 64
    units in 16 groups of four sharers. CUTLASS's order loads each own tile once per unit (64 pairs); ours
    puts 15 whole groups in one GPC each and spreads the 16th over the four single-TPC labels."""
    _, groups = h100_placement()
    batches = 64 // (tiles_m * tiles_n)
    order = gpc_order(tiles_m, tiles_n, batches, cm, cn, list(groups[2][:64]))
    assert sorted(order) == list(range(64))

    def own_tile(u):  # 1x2: B tile (n, l); 2x1: A tile (m, l)
        m, n, l = u % tiles_m, u // tiles_m % tiles_n, u // (tiles_m * tiles_n)
        return (n, l) if cn == 2 else (m, l)
    assert sorted(cutlass_order(tiles_m, tiles_n, batches, cm, cn)) == list(range(64))
    assert sharing(cutlass_order(tiles_m, tiles_n, batches, cm, cn), groups[2], own_tile) == 64
    assert sharing(order, groups[2], own_tile) == 15 + 4


def test_order_over_rounds_on_the_h100(gpc_order):
    """1024^2 x 16384 at split 8 in 128x128 tiles, 2x1 clusters: 256 units over four rounds of a 64-cluster
    launch (the probe's 64 slots), each own A tile (m, l) shared by the 8 units along N. CUTLASS's order runs
    the sharers in consecutive slots (different GPCs); ours gives each GPC whole groups, round by round."""
    _, groups = h100_placement()
    order = gpc_order(4, 8, 8, 2, 1, list(groups[2][:64]), clusters=64)
    assert sorted(order) == list(range(256))

    def pairs(units):  # (round, GPC, own tile) over the launch
        return len({(i // 64, groups[2][i % 64], (u % 4, u // 32)) for i, u in enumerate(units)})
    assert pairs(cutlass_order(4, 8, 8, 2, 1)) == 240
    assert pairs(order) == 4 * (7 + 1 + 4)  # per round: 7 groups whole, the 8th over 5 GPCs


def test_order_without_clusters_groups_along_the_longer_dimension(gpc_order):
    """128 x 1536 x 32768 at split 8 in 128x128 tiles without a cluster: 96 units, each (A tile (0, l))
    shared by the 12 units along N."""
    _, groups = h100_placement()
    order = gpc_order(1, 12, 8, 1, 1, list(groups[1][:96]))
    assert sorted(order) == list(range(96))
    a_tile = lambda u: u // 12  # noqa: E731 (its slice)
    assert sharing(cutlass_order(1, 12, 8, 1, 1), groups[1][:96], a_tile) == 70
    assert sharing(order, groups[1][:96], a_tile) == 16  # 8 groups of 12 over GPCs of 8-16 slots


# --- the runtime's side -----------------------------------------------------------------------------------

H100 = Placement({1: bytes([0, 1, 0]), 2: bytes([1, 0])}, ((0, 1), (2, 3)))


class FakeSetter:
    def __init__(self, status=0):
        self.calls, self.status = [], status

    def __call__(self, device, cluster, slots, groups):
        self.calls.append((device, cluster, slots, groups))
        return self.status


class Measured:
    def __init__(self, answers):
        self.answers, self.asked = list(answers), []

    def placement(self, index, stream=0):
        self.asked.append((index, stream))
        return self.answers.pop(0) if self.answers else H100


def test_placer_gives_each_device_its_placement_once_and_takes_it_back():
    setter, platform_ = FakeSetter(), Measured([None])
    placer = Placer("op", setter, platform_)
    placer.place(1, stream=77)  # not measured yet (say, a capture): asked again at the next launch
    assert setter.calls == [] and placer.placed == set()
    placer.place(1, stream=78)
    placer.place(1, stream=79)
    assert platform_.asked == [(1, 77), (1, 78)]
    assert setter.calls == [(1, 1, 3, bytes([0, 1, 0])), (1, 2, 2, bytes([1, 0]))]
    assert placer.placed == {1} and placer.given == {1}
    setter.calls.clear()
    placer.turn(False)  # at once for the devices placed: the library forgets the placement
    assert setter.calls == [(1, 1, 0, None), (1, 2, 0, None)] and placer.placed == {1} and placer.given == set()
    placer.place(0)  # off: nothing measured
    assert platform_.asked[-1] == (1, 78) and (0, 1, 0, None) in setter.calls
    setter.calls.clear()
    placer.turn(True)
    assert sorted(setter.calls) == [(0, 1, 3, bytes([0, 1, 0])), (0, 2, 2, bytes([1, 0])),
                                    (1, 1, 3, bytes([0, 1, 0])), (1, 2, 2, bytes([1, 0]))]
    assert placer.given == {0, 1}


def test_placer_without_a_setter_or_a_measuring_platform():
    Placer("op", None, Measured([])).place(0)  # a library without sm90 partial GEMMs: nothing to give
    setter = FakeSetter()
    placer = Placer("op", setter, object())  # a platform that measures nothing: the library keeps CUTLASS's order
    placer.place(0)
    assert setter.calls == [(0, 1, 0, None), (0, 2, 0, None)] and placer.placed == {0} and placer.given == set()


def test_placer_goes_on_where_the_library_refuses_a_placement():
    setter = FakeSetter(status=1)
    placer = Placer("linear_f16", setter, Measured([]))
    placer.place(70)  # the call goes on in CUTLASS's order; not asked again
    placer.place(70)
    assert setter.calls == [(70, 1, 3, bytes([0, 1, 0]))] and placer.placed == {70} and placer.given == set()
    assert placer.refused == {70: "linear_f16: cks_sm90_set_placement refused device 70, clusters of 1 (invalid problem)"}


class Devices(Measured):
    H100 = DeviceInfo.from_properties("NVIDIA H100 80GB HBM3", 132, 9, 0, 120)

    def device_info(self, index):  # one object per device, as Platform.device_info
        return self.H100


def test_the_time_model_knows_the_order_where_the_library_runs_it():
    """Launcher.device_info: the GPC order in the model's device where the library took a placement there (asked
    for first, behind the stream given); not before, not where it is turned off, refused or has no sm90 partial GEMM."""
    from cutlass_splitk.runtime.launcher import Launcher

    spec = next(o for o in load_config(CONFIGS / "default.yaml").ops if o.name == "linear_f16")
    setter, devices = FakeSetter(), Devices([None])
    launcher = Launcher(spec, type("Bound", (), {"set_placement": setter})(), None, devices, None)
    assert not launcher.device_info(0).gpc_order  # nothing asked: not placed yet
    assert not launcher.device_info(0, stream=5).gpc_order and devices.asked == [(0, 5)]  # a capture, say
    assert launcher.device_info(0, stream=6).gpc_order and devices.asked == [(0, 5), (0, 6)]
    assert launcher.device_info(0).gpc_order and len(devices.asked) == 2
    assert launcher.device_info(0) is launcher.device_info(0)  # one object: the rankings' cache compares by identity first
    launcher.placer.turn(False)
    assert not launcher.device_info(0, stream=7).gpc_order
    launcher.placer.turn(True)
    assert launcher.device_info(0).gpc_order
    refusing = Launcher(spec, type("Bound", (), {"set_placement": FakeSetter(status=1)})(), None, Devices([]), None)
    assert not refusing.device_info(3, stream=0).gpc_order
    assert not Launcher(spec, type("Bound", (), {})(), None, Devices([]), None).device_info(0, stream=0).gpc_order


def test_platform_measures_once_and_gives_up_on_unsteady_or_refused_probes(monkeypatch):
    answers = [None] * (platform.PLACEMENT_TRIES - 1) + [H100]
    seen = []
    monkeypatch.setattr(platform, "measure_placement", lambda index, stream: seen.append(stream) or answers.pop(0))
    p = platform.CudaPlatform(devices=object())
    for stream in range(platform.PLACEMENT_TRIES + 2):
        found = p.placement(0, stream)
    assert found is H100 and seen == list(range(platform.PLACEMENT_TRIES))
    monkeypatch.setattr(platform, "measure_placement", lambda index, stream: seen.append(stream))
    for stream in range(platform.PLACEMENT_TRIES + 2):
        assert p.placement(1, stream) is None
    assert len(seen) == 2 * platform.PLACEMENT_TRIES  # given up: not asked again

    def refuse(index, stream):
        raise KernelError("cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU")
    monkeypatch.setattr(platform, "measure_placement", refuse)
    assert p.placement(2) is None and p.placement(2) is None
    assert p.placement_error == {2: "KernelError: cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU"}


def test_placement_describes_itself():
    assert H100.describe() == "2 GPCs found (SMs: 2 2); 3 slots in clusters of 1, 2 slots in clusters of 2"
    assert placement.SLOT_CLUSTERS == (1, 2)
