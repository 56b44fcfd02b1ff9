"""``cutlass-splitk package``: a built directory → an installable wheel of its kernels.

The wheel holds the libraries and the manifest exactly as built (same bytes, so the same
build hash and tuning-cache entries), an ``__init__.py`` with ``load()``, and
``kernel_package.json`` (name and version, for the loader's messages); its entry point in
the ``cutlass_splitk.kernels`` group lets ``cutlass_splitk.load("<name>")`` find it
(:func:`.artifact.locate`). Installing or loading it needs no nvcc, no CUTLASS and nothing of
the build side. Written with the standard library (zipfile + METADATA/WHEEL/RECORD,
PEP 427/491), reproducibly: the same directory, name and version give the same bytes.

The wheel is tagged ``py3-none-<this platform>`` (``linux_x86_64`` here): the libraries are
native code for this platform. What they need of the C library is read from their ELF
version requirements (:func:`glibc_needed`, e.g. "glibc >= 2.34") and reported; ``--platform-tag``
sets another tag (e.g. ``manylinux_2_34_x86_64`` after checking the libraries against that
policy yourself).
"""

from __future__ import annotations

import base64
import hashlib
import json
import keyword
import os
import re
import struct
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from . import __version__
from .artifact import ABI_VERSION, ENTRY_POINT_GROUP, MANIFEST, PACKAGE_INFO, LibraryError, read_manifest

# PEP 508 names and PEP 440 versions (public part, optional local label).
_NAME_RE = re.compile(r"^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$")
_VERSION_RE = re.compile(r"^(\d+!)?\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed: reproducible wheels

INIT_TEMPLATE = '''\
"""{name} {version}: CUDA GEMM kernels prebuilt by cutlass-splitk {builder} from {config}.

Ops: {ops}. Load them with ``{module}.load()`` or ``cutlass_splitk.load("{name}")``; this needs
the cutlass-splitk runtime (pip install cutlass-splitk) and torch, no CUDA toolkit.
"""

from pathlib import Path

NAME = "{name}"
VERSION = "{version}"
DIRECTORY = Path(__file__).resolve().parent  # the built directory: {manifest}, lib<op>.so
OPS = {ops_tuple}


def load(**kwargs):
    """``cutlass_splitk.load`` of this package's kernels (keyword arguments passed on)."""
    try:
        import cutlass_splitk
    except ImportError as exc:
        raise ImportError("{name} needs the cutlass-splitk runtime: pip install cutlass-splitk") from exc
    return cutlass_splitk.load(DIRECTORY, **kwargs)
'''


class PackageError(ValueError):
    """Bad arguments to ``package``; the message says which and what is allowed."""


@dataclass(frozen=True)
class Packaged:
    wheel: Path
    name: str  # the distribution name as given
    module: str
    version: str
    ops: Tuple[str, ...]
    build_hash: str
    glibc: Optional[str] = None  # the newest GLIBC_x.y the libraries need, e.g. "2.34"


def module_name(name: str) -> str:
    """The importable package of distribution ``name``: ``my-kernels`` → ``my_kernels``."""
    return re.sub(r"[-_.]+", "_", name).lower()


def platform_tag() -> str:
    """This platform's wheel tag: ``linux_x86_64``, ``linux_aarch64``, ..."""
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def _check(name: str, version: str, tag: str) -> str:
    if not _NAME_RE.match(name):
        raise PackageError(f"--name {name!r}: not a valid distribution name (letters, digits, '-', '_', '.'; "
                           "starting and ending with a letter or digit)")
    module = module_name(name)
    if not module.isidentifier() or keyword.iskeyword(module) or module == "cutlass_splitk":
        raise PackageError(f"--name {name!r}: its package {module!r} cannot be imported (it must not start with a "
                           "digit or be a Python keyword or cutlass_splitk)")
    if not _VERSION_RE.match(version):
        raise PackageError(f"--version {version!r}: not a PEP 440 version (e.g. 1.2.0, 2.0rc1, 1.0+cu130)")
    if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*", tag):
        raise PackageError(f"--platform-tag {tag!r}: not a wheel platform tag (e.g. linux_x86_64, "
                           "manylinux_2_28_x86_64)")
    return module


SHT_GNU_VERNEED = 0x6FFFFFFE


def elf_version_needs(data: bytes) -> Dict[str, List[str]]:
    """The symbol versions a 64-bit little-endian ELF file needs, per library
    (``.gnu.version_r``): ``{"libc.so.6": ["GLIBC_2.2.5", ..., "GLIBC_2.34"], ...}``. {} for
    anything else."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return {}
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        needs: Dict[str, List[str]] = {}
        for _, kind, _, _, offset, _, link, count, _, _ in sections:
            if kind != SHT_GNU_VERNEED:
                continue
            strtab = sections[link][4]

            def name(at: int) -> str:
                return data[strtab + at:data.index(b"\0", strtab + at)].decode()

            entry = offset
            for _ in range(count):
                _, aux_count, file_name, aux, following = struct.unpack_from("<HHIII", data, entry)
                versions, at = [], entry + aux
                for _ in range(aux_count):
                    _, _, _, version_name, aux_next = struct.unpack_from("<IHHII", data, at)
                    versions.append(name(version_name))
                    at += aux_next
                needs[name(file_name)] = versions
                if not following:
                    break
                entry += following
        return needs
    except (struct.error, ValueError, IndexError, UnicodeDecodeError):
        return {}


def glibc_needed(libraries: Iterable[bytes]) -> Optional[str]:
    """The newest ``GLIBC_x.y`` any of the libraries needs (``"2.34"``), or None."""
    found = [tuple(int(p) for p in v.split("_", 1)[1].split("."))
             for data in libraries for versions in elf_version_needs(data).values() for v in versions
             if re.fullmatch(r"GLIBC_\d+(\.\d+)*", v)]
    return ".".join(map(str, max(found))) if found else None


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def package(directory: Path, name: str, version: str, out_dir: Path, tag: Optional[str] = None) -> Packaged:
    """Writes ``<out_dir>/<module>-<version>-py3-none-<tag>.whl`` from a built directory,
    after checking it as the loader would (manifest, ABI version, build hash, every
    library's SHA-256). Raises PackageError or LibraryError."""
    tag = tag or platform_tag()
    module = _check(name, version, tag)
    manifest = read_manifest(Path(directory))
    entries = list(manifest.libraries(verify=True))
    ops = tuple(e.name for e in entries)
    data = manifest.data
    libraries = sorted((f"{module}/{e.path.name}", e.path.read_bytes()) for e in entries)
    pycall = manifest.pycall(verify=True)  # the C call path, where the build made one
    if pycall is not None:
        libraries.append((f"{module}/{pycall.name}", pycall.read_bytes()))
    glibc = glibc_needed(blob for _, blob in libraries)
    info = {"name": name, "version": version, "abi_version": ABI_VERSION, "build_hash": manifest.build_hash,
            "config": data.get("config", ""), "toolchain": data.get("toolchain", ""), "builder": __version__,
            "glibc": glibc}
    init = INIT_TEMPLATE.format(name=name, version=version, builder=__version__, config=data.get("config", "?"),
                                ops=", ".join(ops), module=module, manifest=MANIFEST, ops_tuple=repr(ops))
    dist_info = f"{module}-{version}.dist-info"
    files: List[Tuple[str, bytes]] = [
        (f"{module}/__init__.py", init.encode()),
        (f"{module}/{MANIFEST}", manifest.path.read_bytes()),
        (f"{module}/{PACKAGE_INFO}", (json.dumps(info, indent=1, sort_keys=True) + "\n").encode()),
        *libraries,
    ]
    metadata = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                f"Summary: CUDA GEMM kernels ({', '.join(ops)}) prebuilt by cutlass-splitk from "
                f"{data.get('config', '?')}\n"
                "Requires-Python: >=3.9\n\n"
                f"Built with {data.get('toolchain', '?')}; ABI version {ABI_VERSION}; build hash "
                f"{manifest.build_hash}." + (f" The libraries need glibc >= {glibc}." if glibc else "") +
                f"\nLoad with: cutlass_splitk.load({name!r}) (needs cutlass-splitk and torch).\n")
    wheel_meta = (f"Wheel-Version: 1.0\nGenerator: cutlass-splitk {__version__}\nRoot-Is-Purelib: false\n"
                  f"Tag: py3-none-{tag}\n")
    entry_points = f"[{ENTRY_POINT_GROUP}]\n{name} = {module}\n"
    files += [(f"{dist_info}/METADATA", metadata.encode()), (f"{dist_info}/WHEEL", wheel_meta.encode()),
              (f"{dist_info}/entry_points.txt", entry_points.encode())]
    record = "".join(f"{path},{_record_hash(blob)},{len(blob)}\n" for path, blob in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{module}-{version.replace('-', '_')}-py3-none-{tag}.whl"
    tmp = wheel.with_name(f".{wheel.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, blob in files:
                item = zipfile.ZipInfo(path, ZIP_DATE)
                item.external_attr = 0o644 << 16
                item.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(item, blob)
        os.replace(tmp, wheel)
    finally:
        tmp.unlink(missing_ok=True)
    return Packaged(wheel, name, module, version, ops, manifest.build_hash, glibc)


__all__ = ["PackageError", "Packaged", "LibraryError", "elf_version_needs", "glibc_needed", "module_name", "package",
           "platform_tag"]
