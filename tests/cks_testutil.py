"""Helpers shared by the CPU tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the package is used from the checkout, installed or not
    sys.path.insert(0, str(ROOT))
if str(ROOT / "benchmarks") not in sys.path:  # fakelib (the fake library and platform), the fuzz modules
    sys.path.append(str(ROOT / "benchmarks"))

CONFIGS = ROOT / "configs"
TEMPLATES = ROOT / "cutlass_splitk" / "templates"  # shared
SM80_TEMPLATES = ROOT / "cutlass_splitk" / "backends" / "sm80" / "templates"

# One op, one tile, one stage count, both split modes, one arch: 1 group -> 2 variants.
MINIMAL_OP_YAML = """\
ops:
  tiny_f16:
    dtype: f16
    arch: [90]
    variants:
      tile: [[64, 64, 64]]
      stages: [3]
      split_k:
        serial: [1, 2]
        parallel: [2, 4]
"""

def fake_nvcc(before: str = "") -> str:
    """A stand-in nvcc script: answers --version, finds -c SRC and -o OUT (``$src``, ``$out``;
    ``$here`` is its directory), runs ``before`` (shell: log, fail, sleep...), then "compiles" by
    copying the source and "links" by concatenating the objects."""
    return ("#!/bin/sh\n"
            'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 12.4, V12.4.131"; exit 0; fi\n'
            'here=$(dirname "$0")\n'
            'out=""; src=""; prev=""\n'
            'for a in "$@"; do\n'
            '  [ "$prev" = "-o" ] && out="$a"\n'
            '  [ "$prev" = "-c" ] && src="$a"\n'
            '  prev="$a"\n'
            "done\n"
            + before +
            'if [ -n "$src" ]; then cp "$src" "$out"; exit 0; fi\n'
            ': > "$out"\n'
            'for a in "$@"; do case "$a" in *.o) cat "$a" >> "$out";; esac; done\n'
            "exit 0\n")


MINIMAL_GROUP = "t64x64x64_w32x32x64_i16x8x16_s3_a8_z1"
MINIMAL_UNIT = "sm80"  # the translation unit holding the op's sm80 groups
MINIMAL_VARIANTS = (
    "tiny_f16_serial_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1",
    "tiny_f16_parallel_t64x64x64_w32x32x64_i16x8x16_s3_a8_z1",
)


def write_yaml(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    """Writes ``text`` to ``tmp_path / name`` and returns the path."""
    path = Path(tmp_path) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
