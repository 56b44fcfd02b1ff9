"""File-system helpers shared by the build, codegen, tuning and the runtime: atomic writes,
write-if-different, an ``fcntl`` file lock, the cache root, and SHA-256 digests.

Imports nothing from the package (the runtime may use it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Iterator, Union


# --- where caches live -------------------------------------------------------------------------


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/cutlass-splitk`` (default ``~/.cache/cutlass-splitk``)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cutlass-splitk"


def cache_root() -> Path:
    """The object cache: ``$CUTLASS_SPLITK_CACHE``, else :func:`user_cache_dir`."""
    env = os.environ.get("CUTLASS_SPLITK_CACHE")
    return Path(env) if env else user_cache_dir()


def staging_root() -> Path:
    """Where nvcc compiles staged copies of the sources: ``$TMPDIR/cutlass-splitk-<uid>/stage``
    (the same path for every output and cache directory of this user)."""
    return Path(tempfile.gettempdir()) / f"cutlass-splitk-{os.getuid()}" / "stage"


# --- writing -----------------------------------------------------------------------------------


def temp_name(path: Path) -> Path:
    """``.<stem>.<pid>.tmp<suffix>`` next to ``path``: hidden, owned by this process, and with
    the final suffix kept (nvcc wants its output to end in ``.o``)."""
    return path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")


@contextlib.contextmanager
def atomic_output(path: Path) -> Iterator[Path]:
    """Yields a temporary path next to ``path``; once the block has written it, it replaces
    ``path`` in one step (``os.replace``). On an exception the temporary file is removed and
    ``path`` is left as it was."""
    tmp = temp_name(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write(path: Path, data: Union[str, bytes]) -> None:
    """Writes ``data`` to ``path`` atomically, creating its directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)


def write_if_different(path: Path, text: str) -> bool:
    """Atomically writes ``text`` unless the file already holds it. Returns True if written."""
    try:
        if path.read_text() == text:
            return False
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    atomic_write(path, text)
    return True


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock_file`` (created with its directory) for the block."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --- digests -----------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_parts(*parts: bytes) -> str:
    """SHA-256 of a sequence of byte strings, each length-prefixed (so no two sequences with
    different boundaries collide)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()
