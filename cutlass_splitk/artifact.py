"""The build → runtime contract, in one place: the ABI version, the manifest (file name,
schema, writing it, reading and checking it) and the self-description every library embeds.

``cutlass-splitk build`` writes ``<out>/manifest.json`` last, atomically::

    {"abi_version": 1,                        # ABI_VERSION (= CKS_ABI_VERSION in cks_abi.h)
     "config": "configs/default.yaml",        # as written into the generated sources
     "toolchain": "nvcc 13.0.48; cutlass 4.2.1",
     "build_hash": "<16 hex digits>",         # of the libraries' SHA-256s (tuning cache key)
     "libraries": {"<op>": {"file": "lib<op>.so", "sha256": "<hex>"}},
     "pycall": {"file": "libcks_pycall.so", "sha256": "<hex>"},   # optional (runtime/native.py)
     "ops": {"<op>": describe(op)}}

``pycall`` is the torch call path in C, absent where the build found no Python headers; it is
not part of ``build_hash`` (it does not change what the kernels compute or how fast they run).

``cutlass_splitk.load`` reads it back with :func:`read_manifest`, which checks it (ABI version,
build hash) and each library it names; every problem is a :class:`LibraryError` that says how
to fix it.

An installed kernel package (``cutlass-splitk package``, a wheel) holds a built directory as an
importable package: ``<module>/{manifest.json, lib<op>.so, __init__.py, kernel_package.json}``,
registered under the entry-point group ``cutlass_splitk.kernels`` by its distribution name.
:func:`locate` turns ``load("my-kernels")`` into that directory.

Imports neither torch nor the build side: both sides use it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, Mapping, Optional, Sequence, Tuple, Union

from .fsutil import file_sha256, sha256_parts, write_if_different
from .spec import OpSpec

ABI_VERSION = 1  # must match CKS_ABI_VERSION in templates/cks_abi.h (checked by the tests)
MANIFEST = "manifest.json"
ENTRY_POINT_GROUP = "cutlass_splitk.kernels"  # distribution name -> the package holding a built directory
PACKAGE_INFO = "kernel_package.json"  # {"name": ..., "version": ...} beside an installed package's manifest


class LibraryError(RuntimeError):
    """A built directory cannot be loaded; the message says how to fix it."""


def describe(op: OpSpec) -> dict:
    """The self-description each library embeds (``cks_describe()``) and the manifest repeats."""
    return {"abi_version": ABI_VERSION, **op.to_json()}


def build_hash(libraries: Mapping[str, Mapping[str, str]]) -> str:
    """The manifest's ``build_hash``: of its libraries' SHA-256s, by op name (the manifest is
    written with sorted keys, so the reader sees them in that order, not the config's)."""
    return sha256_parts(*(libraries[name]["sha256"].encode() for name in sorted(libraries)))[:16]


# --- writing (the build) ---------------------------------------------------------------------


def write_manifest(out_dir: Path, config: str, toolchain: str, libraries: Mapping[str, Tuple[str, str]],
                   ops: Sequence[OpSpec], pycall: Optional[Tuple[str, str]] = None) -> dict:
    """Writes ``out_dir/manifest.json`` (only if its content changes) and returns it.
    ``libraries``: op name → (library file name in ``out_dir``, its SHA-256), in op order;
    ``pycall``: the same of the C call path's library, where it was built."""
    entries = {name: {"file": file, "sha256": digest} for name, (file, digest) in libraries.items()}
    manifest = {
        "abi_version": ABI_VERSION,
        "config": config,
        "toolchain": toolchain,
        "build_hash": build_hash(entries),
        "libraries": entries,
        "ops": {op.name: describe(op) for op in ops},
    }
    if pycall is not None:
        manifest["pycall"] = {"file": pycall[0], "sha256": pycall[1]}
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
    package: str = ""  # "<name> <version>" for an installed kernel package, else ""

    @property
    def path(self) -> Path:
        return self.directory / MANIFEST

    @property
    def build_hash(self) -> str:
        return str(self.data.get("build_hash", ""))

    def error(self, what: str, newer: bool = False) -> LibraryError:
        """``what`` and the fix: rebuilding the directory, or reinstalling the package;
        ``newer``: built for a newer runtime, so upgrading the runtime comes first."""
        if self.package:
            name = self.package.split()[0]
            fix = (f"install a build of {name} made for ABI version {ABI_VERSION}" if newer else
                   f"reinstall the kernel package {self.package} (pip install --force-reinstall <its wheel>)")
        else:
            fix = f"rebuild it with: cutlass-splitk build <config.yaml> -o {self.directory}"
        return LibraryError(f"{what}; " + ("upgrade cutlass-splitk (pip install -U cutlass-splitk), or " if newer
                                           else "") + fix)

    def libraries(self, verify: bool = True) -> Iterator[LibraryEntry]:
        """Each library the manifest names: present, the same bytes as built (SHA-256, unless
        ``verify`` is False) and described. Raises LibraryError."""
        try:
            entries = self.data["libraries"].items()
            descriptions = self.data["ops"]
            expected = build_hash(self.data["libraries"])
        except (KeyError, AttributeError, TypeError):
            raise self.error(f"{self.path}: malformed (no 'libraries'/'ops')") from None
        if self.build_hash != expected:
            raise self.error(f"{self.path}: build_hash {self.build_hash!r} is not that of the libraries it lists "
                             f"({expected}): the manifest was edited")
        for name, entry in entries:
            so = self._checked(self.directory / entry["file"], entry["sha256"], verify)
            try:
                spec = OpSpec.from_json(descriptions[name])
            except (KeyError, TypeError, ValueError) as exc:
                raise self.error(f"{self.path}: malformed description of op {name!r} ({type(exc).__name__}: "
                                 f"{exc})") from None
            yield LibraryEntry(name, so, spec, descriptions[name])

    def pycall(self, verify: bool = True) -> Optional[Path]:
        """The C call path's library (runtime/native.py) where the manifest lists one: present
        and the same bytes as built, else LibraryError. None where it lists none."""
        entry = self.data.get("pycall")
        if entry is None:
            return None
        try:
            path, digest = self.directory / entry["file"], entry["sha256"]
        except (KeyError, TypeError):
            raise self.error(f"{self.path}: malformed 'pycall' entry") from None
        return self._checked(path, digest, verify)

    def _checked(self, path: Path, digest: str, verify: bool) -> Path:
        """``path``, a file the manifest lists: present and (``verify``) the same bytes as built."""
        if not path.is_file():
            raise self.error(f"{path}: missing (listed in {self.path})")
        if verify and file_sha256(path) != digest:
            raise self.error(f"{path}: contents differ from the build (SHA-256 mismatch: truncated, corrupted or "
                             "replaced)")
        return path

    def check_loaded(self, entry: LibraryEntry, abi_version: int, description: str) -> None:
        """What a loaded library reports about itself must match: its ABI and its embedded
        description (``cks_abi_version()``, ``cks_describe()``)."""
        if abi_version != ABI_VERSION:
            raise self.error(f"{entry.path}: built for ABI version {abi_version}, this runtime speaks {ABI_VERSION}")
        if json.loads(description) != entry.description:
            raise self.error(f"{entry.path}: its self-description does not match {self.path} (stale library)")


def _package_label(directory: Path) -> str:
    try:
        info = json.loads((directory / PACKAGE_INFO).read_text())
        return f"{info['name']} {info['version']}"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def read_manifest(directory: Path) -> Manifest:
    """The manifest of a built directory (or an installed kernel package's), of this ABI.
    Raises LibraryError."""
    directory = Path(directory)
    manifest = Manifest(directory, {}, _package_label(directory))
    if not directory.is_dir():
        raise manifest.error(f"{directory}: no such directory")
    try:
        data = json.loads(manifest.path.read_text())
    except FileNotFoundError:
        raise manifest.error(f"{manifest.path}: missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise manifest.error(f"{manifest.path}: corrupt ({exc})") from None
    found = data.get("abi_version") if isinstance(data, dict) else None
    if isinstance(found, int) and not isinstance(found, bool) and found > ABI_VERSION:
        raise manifest.error(f"{manifest.path}: built for a newer cutlass-splitk runtime (ABI version {found}; this "
                             f"runtime speaks {ABI_VERSION})", newer=True)
    if found != ABI_VERSION:
        raise manifest.error(f"{manifest.path}: built for ABI version {found}, this runtime speaks {ABI_VERSION}")
    return Manifest(directory, data, manifest.package)


# --- installed kernel packages ----------------------------------------------------------------


def normalize_name(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``My_Kernels`` -> ``my-kernels``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_packages() -> Dict[str, str]:
    """Installed kernel packages: normalized distribution name -> module name."""
    points = importlib.metadata.entry_points()
    group = points.select(group=ENTRY_POINT_GROUP) if hasattr(points, "select") else points.get(ENTRY_POINT_GROUP, [])
    return {normalize_name(ep.name): ep.value.split(":")[0].strip() for ep in group}


def package_directory(name: str) -> Optional[Path]:
    """The directory of the installed kernel package ``name`` (without importing it), or None."""
    module = installed_packages().get(normalize_name(name))
    if module is None:
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def locate(where: Union[str, os.PathLike]) -> Path:
    """What ``load(where)`` loads: a path as given; a bare name (a ``str`` without ``/``) that
    is not a directory here is looked up among the installed kernel packages. Raises
    LibraryError for a bare name that is neither."""
    path = Path(where)
    if not isinstance(where, str) or os.sep in where or where in (".", "..") or path.is_dir():
        return path
    found = package_directory(where)
    if found is not None:
        return found
    installed = ", ".join(sorted(installed_packages())) or "none"
    raise LibraryError(f"{where}: no such directory, and no installed kernel package is named {where!r} "
                       f"(installed: {installed}); build it with: cutlass-splitk build <config.yaml> -o {where}, "
                       "or pip install the kernel package's wheel")


__all__ = ["ABI_VERSION", "ENTRY_POINT_GROUP", "MANIFEST", "PACKAGE_INFO", "LibraryEntry", "LibraryError", "Manifest",
           "build_hash", "describe", "installed_packages", "locate", "normalize_name", "package_directory",
           "read_manifest", "write_manifest"]

