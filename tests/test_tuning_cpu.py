"""The tuning cache without a GPU: atomic merge across writers, corrupt files ignored."""

import json
import multiprocessing
import warnings

import pytest

pytest.importorskip("torch", reason="the runtime needs torch (pip install torch)")

from cutlass_splitk.runtime import timing, tuning
from cutlass_splitk.runtime.tuning import TuneCache, TuneCacheWarning, m_bucket


def test_m_bucket():
    assert [m_bucket(m) for m in (1, 7, 16, 17, 33, 64, 65, 1000)] == [1, 7, 16, 32, 64, 64, 128, 1024]


def test_time_candidates_leaves_out_what_cannot_run_here(monkeypatch):
    """A candidate the library refuses (ValueError) and one whose workspace does not fit (torch's
    OutOfMemoryError, a RuntimeError; or MemoryError) are left out of the timing; any other error stops it."""
    class OutOfMemoryError(RuntimeError):  # torch's, by name
        pass

    failures = {"refused": ValueError("no"), "big": OutOfMemoryError("CUDA out of memory. Tried to allocate 137 GiB"),
                "host": MemoryError()}
    ran = []

    def run(variant, split):
        ran.append((variant, split))
        if variant in failures:
            raise failures[variant]

    times = {"fast": 5.0, "slow": 9.0}
    monkeypatch.setattr(timing, "median_time", lambda fn, reps: (fn(), times[ran[-1][0]])[1])
    cands = [("slow", 2), ("refused", 1), ("big", 16), ("host", 8), ("fast", 4)]
    assert tuning.time_candidates(run, cands, warmup=1, reps=1) == [(5.0, "fast", 4), (9.0, "slow", 2)]
    assert tuning.out_of_memory(OutOfMemoryError()) and not tuning.out_of_memory(RuntimeError("CUDA error"))
    import torch
    assert tuning.out_of_memory(torch.OutOfMemoryError("CUDA out of memory"))  # what torch's allocator raises
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    failures["slow"] = RuntimeError("an illegal memory access was encountered")
    with pytest.raises(RuntimeError, match="illegal memory access"):
        tuning.time_candidates(run, cands, warmup=1, reps=1)


def test_put_get_roundtrip(tmp_path):
    path = tmp_path / "sub" / "tune.json"
    cache = TuneCache(path)
    assert cache.get("k") is None
    cache.put("k", {"variant": "v", "split": 4})
    assert TuneCache(path).get("k") == {"variant": "v", "split": 4}
    assert json.loads(path.read_text())["version"] == 1


def test_corrupt_file_is_ignored_with_warning(tmp_path):
    path = tmp_path / "tune.json"
    path.write_text("{not json")
    with pytest.warns(TuneCacheWarning, match="unreadable tuning cache ignored"):
        assert TuneCache(path).get("k") is None
    path.write_text(json.dumps({"version": 99, "entries": {}}))
    with pytest.warns(TuneCacheWarning, match="unknown format"):
        assert TuneCache(path).entries() == {}
    # A corrupt file is replaced, not appended to, by the next put.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TuneCacheWarning)
        TuneCache(path).put("k", {"split": 2})
    assert json.loads(path.read_text())["entries"] == {"k": {"split": 2}}


def _writer(path, start):
    cache = TuneCache(path)
    for i in range(start, start + 25):
        cache.put(f"key{i}", {"split": i})


def test_two_processes_merge(tmp_path):
    path = tmp_path / "tune.json"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, s)) for s in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    entries = json.loads(path.read_text())["entries"]
    assert sorted(entries) == sorted([f"key{i}" for i in range(25)] + [f"key{i}" for i in range(100, 125)])
    assert not list(tmp_path.glob(".*.tmp"))
