"""Measured autotuning with a persistent JSON cache.

Key: device name, CUDA runtime and driver versions, the library's build hash, the op, and
the problem (M bucketed, N, K, dtype, layout, whether the fast aligned path applies). Value:
the fastest (variant, split) and its time. The file is written atomically (temp file +
``os.replace``) under an ``fcntl`` lock, read-modify-write, so two processes can tune at
once. An unreadable file or an entry naming a variant/split the library does not have is
ignored with a warning, never trusted.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import statistics
import threading
import time
import warnings
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

CACHE_VERSION = 1


class TuneCacheWarning(UserWarning):
    """A tuning cache file or entry was ignored (corrupt, stale or foreign)."""


def default_cache_path() -> Path:
    env = os.environ.get("CUTLASS_SPLITK_TUNE_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cutlass-splitk" / "tune.json"


def m_bucket(m: int) -> int:
    """M up to 16 exactly, then rounded up to a power of two (decode batch sizes vary)."""
    return m if m <= 16 else 1 << (m - 1).bit_length()


def driver_version() -> int:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        return v.value if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else 0
    except OSError:
        return 0


def device_key(index: int) -> str:
    p = torch.cuda.get_device_properties(index)
    return f"{p.name}|sm{p.major}{p.minor}|cuda{torch.version.cuda}|driver{driver_version()}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class TuneCache:
    """In-memory view of one JSON cache file."""

    def __init__(self, path: Optional[Path] = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self._entries: Optional[Dict[str, dict]] = None
        self._lock = threading.Lock()

    def _read(self) -> Dict[str, dict]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            warnings.warn(f"{self.path}: unreadable tuning cache ignored ({exc})", TuneCacheWarning, stacklevel=3)
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or not isinstance(data.get("entries"), dict):
            warnings.warn(f"{self.path}: tuning cache of an unknown format ignored", TuneCacheWarning, stacklevel=3)
            return {}
        return data["entries"]

    def entries(self) -> Dict[str, dict]:
        with self._lock:
            if self._entries is None:
                self._entries = self._read()
            return self._entries

    def get(self, key: str) -> Optional[dict]:
        return self.entries().get(key)

    def put(self, key: str, value: dict) -> None:
        """Adds one entry, merging with what other processes wrote meanwhile."""
        with _locked(self.path), self._lock:
            entries = self._read()
            entries[key] = value
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"version": CACHE_VERSION, "entries": entries}, indent=1, sort_keys=True))
            os.replace(tmp, self.path)
            self._entries = entries


def time_candidates(run: Callable[[str, int], None], candidates: Sequence[Tuple[str, int]],
                    warmup: int = 3, reps: int = 10) -> List[Tuple[float, str, int]]:
    """Median microseconds of ``run(variant, split)`` per candidate, fastest first (``run``
    itself rotates input sets where the caller wants L2 defeated)."""
    results = []
    for variant, split in candidates:
        try:
            for _ in range(warmup):
                run(variant, split)
        except ValueError:
            continue  # this candidate cannot run the problem
        times = []
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            run(variant, split)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
        results.append((statistics.median(times), variant, split))
    results.sort()
    return results


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")
