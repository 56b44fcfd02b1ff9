"""Measured autotuning with a persistent JSON cache.

Key: device name, CUDA runtime and driver versions, the library's build hash, the op, and
the problem (M bucketed, N, K, dtype, layout). Value: the fastest (variant, split) and its
time. The file is written atomically (temp file + ``os.replace``) under an ``fcntl`` lock,
read-modify-write, so two processes can tune at once. An unreadable file or an entry naming a
variant/split the library does not have is ignored with a warning, never trusted.
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..fsutil import atomic_write, locked, user_cache_dir
from ..spec import OpSpec

CACHE_VERSION = 1


class TuneCacheWarning(UserWarning):
    """A tuning cache file or entry was ignored (corrupt, stale or foreign)."""


def default_cache_path() -> Path:
    env = os.environ.get("CUTLASS_SPLITK_TUNE_CACHE")
    return Path(env) if env else user_cache_dir() / "tune.json"


def m_bucket(m: int) -> int:
    """M up to 16 exactly, then rounded up to a power of two (decode batch sizes vary)."""
    return m if m <= 16 else 1 << (m - 1).bit_length()


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
        with locked(self.path.with_name(self.path.name + ".lock")), self._lock:
            entries = self._read()
            entries[key] = value
            atomic_write(self.path, json.dumps({"version": CACHE_VERSION, "entries": entries}, indent=1, sort_keys=True))
            self._entries = entries


class Tuner:
    """The tuning cache as the ops of one library use it: keys name the device (from
    ``device_key``) and the library's build, and an entry is used only if it names a
    (variant, split) the op has. ``autotune``: tune each new problem on its first call."""

    def __init__(self, cache: TuneCache, build_hash: str, device_key: Callable[[int], str], autotune: bool = False):
        self.cache = cache
        self.build_hash = build_hash
        self.device_key = device_key
        self.autotune = autotune

    def key(self, spec: OpSpec, device: int, m: int, n: int, k: int) -> str:
        return "|".join([self.device_key(device), self.build_hash, spec.name, f"m{m_bucket(m)}", f"n{n}", f"k{k}",
                         spec.dtype.value, spec.layout.value])

    def entry(self, spec: OpSpec, device: int, m: int, n: int, k: int) -> Optional[dict]:
        return self.cache.get(self.key(spec, device, m, n, k))

    def choice(self, spec: OpSpec, device: int, m: int, n: int, k: int) -> Optional[Tuple[str, int]]:
        """The cached (variant, split) for the problem, if any and if ``spec`` has it."""
        entry = self.entry(spec, device, m, n, k)
        if entry is None:
            return None
        v = next((v for v in spec.variants if v.name == entry.get("variant")), None)
        if v is None or entry.get("split") not in v.splits:
            warnings.warn(f"tuning cache {self.cache.path}: entry for {spec.name} M={m} N={n} K={k} "
                          f"names {entry.get('variant')!r} split {entry.get('split')!r}, which this library does "
                          "not have; ignored", TuneCacheWarning, stacklevel=6)
            return None
        return v.name, int(entry["split"])

    def record(self, spec: OpSpec, device: int, m: int, n: int, k: int, results: List[Tuple[float, str, int]],
               inputs: str) -> dict:
        """Stores the fastest of ``results`` (from :func:`time_candidates`) and returns its entry."""
        us, name, split = results[0]
        entry = {"variant": name, "split": split, "us": us, "candidates": len(results), "when": now(),
                 "inputs": inputs}
        self.cache.put(self.key(spec, device, m, n, k), entry)
        return entry


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is an allocator's out-of-memory error: Python's MemoryError or torch's
    OutOfMemoryError (a RuntimeError), told by name so that this module needs no torch."""
    return isinstance(error, MemoryError) or any(c.__name__ == "OutOfMemoryError" for c in type(error).__mro__)


def time_candidates(run: Callable[[str, int], None], candidates: Sequence[Tuple[str, int]],
                    warmup: int = 3, reps: int = 10) -> List[Tuple[float, str, int]]:
    """Median microseconds of ``run(variant, split)`` per candidate, fastest first (``run``
    itself rotates input sets where the caller wants L2 defeated). A candidate whose warm-up
    raises ValueError cannot run the problem, and one whose workspace does not fit in memory
    (out_of_memory: a large parallel split of a large output) cannot run it here: both are left
    out (times with torch's CUDA events)."""
    from . import timing

    results = []
    for variant, split in candidates:
        try:
            for _ in range(warmup):
                run(variant, split)
        except ValueError:
            continue
        except (MemoryError, RuntimeError) as error:
            if not out_of_memory(error):
                raise
            continue
        results.append((timing.median_time(lambda: run(variant, split), reps), variant, split))
    results.sort()
    return results


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")
