"""The build → runtime contract, in one place: the ABI version, the manifest (file name,
schema, writing it, reading and checking it) and the self-description every library embeds.

``cutlass-splitk build`` writes ``<out>/manifest.json`` last, atomically::

    {"abi_version": 1,                        # ABI_VERSION (= CKS_ABI_VERSION in cks_abi.h)
     "config": "configs/default.yaml",        # as written into the generated sources
     "toolchain": "nvcc 13.0.48; cutlass 4.2.1",
     "build_hash": "<16 hex digits>",         # of the libraries' SHA-256s (tuning cache key)
     "libraries": {"<op>": {"file": "lib<op>.so", "sha256": "<hex>"}},
     "ops": {"<op>": describe(op)}}

``cutlass_splitk.load`` reads it back with :func:`read_manifest`, which checks it and each
library it names; every problem is a :class:`LibraryError` that says how to fix it.

Imports neither torch nor the build side: both sides use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence, Tuple

from .fsutil import file_sha256, sha256_parts, write_if_different
from .spec import OpSpec

ABI_VERSION = 1  # must match CKS_ABI_VERSION in templates/cks_abi.h (checked by the tests)
MANIFEST = "manifest.json"


class LibraryError(RuntimeError):
    """A built directory cannot be loaded; the message says how to fix it."""


def describe(op: OpSpec) -> dict:
    """The self-description each library embeds (``cks_describe()``) and the manifest repeats."""
    return {"abi_version": ABI_VERSION, **op.to_json()}


# --- writing (the build) ---------------------------------------------------------------------


def write_manifest(out_dir: Path, config: str, toolchain: str, libraries: Mapping[str, Tuple[str, str]],
                   ops: Sequence[OpSpec]) -> dict:
    """Writes ``out_dir/manifest.json`` (only if its content changes) and returns it.
    ``libraries``: op name → (library file name in ``out_dir``, its SHA-256), in op order."""
    entries = {name: {"file": file, "sha256": digest} for name, (file, digest) in libraries.items()}
    manifest = {
        "abi_version": ABI_VERSION,
        "config": config,
        "toolchain": toolchain,
        "build_hash": sha256_parts(*(e["sha256"].encode() for e in entries.values()))[:16],
        "libraries": entries,
        "ops": {op.name: describe(op) for op in ops},
    }
    write_if_different(out_dir / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


# --- reading (the runtime) -------------------------------------------------------------------


@dataclass(frozen=True)
class LibraryEntry:
    """One library the manifest names, checked against the manifest's record of it."""

    name: str
    path: Path
    spec: OpSpec
    description: dict  # the manifest's describe(op), which the library must repeat


@dataclass(frozen=True)
class Manifest:
    directory: Path
    data: dict

    @property
    def path(self) -> Path:
        return self.directory / MANIFEST

    @property
    def build_hash(self) -> str:
        return str(self.data.get("build_hash", ""))

    def error(self, what: str) -> LibraryError:
        """``what`` and the fix: rebuilding the directory."""
        return LibraryError(f"{what}; rebuild it with: cutlass-splitk build <config.yaml> -o {self.directory}")

    def libraries(self, verify: bool = True) -> Iterator[LibraryEntry]:
        """Each library the manifest names: present, the same bytes as built (SHA-256, unless
        ``verify`` is False) and described. Raises LibraryError."""
        try:
            entries = self.data["libraries"].items()
            descriptions = self.data["ops"]
        except (KeyError, AttributeError):
            raise self.error(f"{self.path}: malformed (no 'libraries'/'ops')") from None
        for name, entry in entries:
            so = self.directory / entry["file"]
            if not so.is_file():
                raise self.error(f"{so}: missing (listed in {self.path})")
            if verify and file_sha256(so) != entry["sha256"]:
                raise self.error(f"{so}: contents differ from the build (SHA-256 mismatch: truncated, "
                                 "corrupted or replaced)")
            try:
                spec = OpSpec.from_json(descriptions[name])
            except (KeyError, TypeError, ValueError) as exc:
                raise self.error(f"{self.path}: malformed description of op {name!r} ({type(exc).__name__}: "
                                 f"{exc})") from None
            yield LibraryEntry(name, so, spec, descriptions[name])

    def check_loaded(self, entry: LibraryEntry, abi_version: int, description: str) -> None:
        """What a loaded library reports about itself must match: its ABI and its embedded
        description (``cks_abi_version()``, ``cks_describe()``)."""
        if abi_version != ABI_VERSION:
            raise self.error(f"{entry.path}: built for ABI version {abi_version}, this runtime speaks {ABI_VERSION}")
        if json.loads(description) != entry.description:
            raise self.error(f"{entry.path}: its self-description does not match {self.path} (stale library)")


def read_manifest(directory: Path) -> Manifest:
    """The manifest of a built directory, of this ABI. Raises LibraryError."""
    directory = Path(directory)
    manifest = Manifest(directory, {})
    if not directory.is_dir():
        raise manifest.error(f"{directory}: no such directory")
    try:
        data = json.loads(manifest.path.read_text())
    except FileNotFoundError:
        raise manifest.error(f"{manifest.path}: missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise manifest.error(f"{manifest.path}: corrupt ({exc})") from None
    if not isinstance(data, dict) or data.get("abi_version") != ABI_VERSION:
        found = data.get("abi_version") if isinstance(data, dict) else None
        raise manifest.error(f"{manifest.path}: built for ABI version {found}, this runtime speaks {ABI_VERSION}")
    return Manifest(directory, data)


__all__ = ["ABI_VERSION", "MANIFEST", "LibraryEntry", "LibraryError", "Manifest", "describe", "read_manifest",
           "write_manifest"]

