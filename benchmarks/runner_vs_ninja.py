"""Is the build's thread-pool runner at least as fast as ninja? (README "Building at scale".)

Runs the same compile commands of a config two ways, with a stand-in nvcc that sleeps a fixed
time per unit (so the scheduler's overhead is what differs, not the compiler): the build's own
runner (``cutlass_splitk.build.build``, cold object cache), and ninja on a generated
``build.ninja`` (one edge per unit, ``-j`` the same). Then the no-op rebuild both ways: ours
(parse the YAML, render, hash, check the libraries) against ninja's (stat the files; plus the
render that would still have to run before it, since the sources are generated).

    python3 benchmarks/runner_vs_ninja.py [--config configs/default.yaml] [-j 2] [--sleep 0.5]
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cutlass_splitk import codegen  # noqa: E402
from cutlass_splitk.build import build  # noqa: E402
from cutlass_splitk.config import load_config  # noqa: E402
from cutlass_splitk.cudakit import Cutlass  # noqa: E402
from cutlass_splitk.toolchain import Toolchain  # noqa: E402

NVCC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 12.4, V12.4.131"; exit 0; fi
out=""; src=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; [ "$prev" = "-c" ] && src="$a"; prev="$a"; done
if [ -n "$src" ]; then sleep {sleep}; cp "$src" "$out"; exit 0; fi
: > "$out"; for a in "$@"; do case "$a" in *.o) cat "$a" >> "$out";; esac; done
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="configs/default.yaml")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--sleep", type=float, default=0.5, help="seconds the stand-in nvcc takes per unit")
    p.add_argument("--ninja", default=shutil.which("ninja"))
    args = p.parse_args()
    if not args.ninja:
        sys.exit("ninja not found (pip install ninja)")
    work = Path(tempfile.mkdtemp(prefix="runner-vs-ninja-"))
    nvcc = work / "bin" / "nvcc"
    nvcc.parent.mkdir()
    nvcc.write_text(NVCC.format(sleep=args.sleep))
    nvcc.chmod(0o755)
    tc = Toolchain(nvcc, Cutlass(Path("/opt/cutlass/include"), Path("/opt/cutlass/util"), "0.0.0"))
    units = codegen.render(load_config(args.config))

    start = time.monotonic()
    result = build(Path(args.config), out_dir=work / "ours", cache_dir=work / "cache", jobs=args.jobs, progress=False,
                   toolchain=tc)
    ours = time.monotonic() - start
    start = time.monotonic()
    build(Path(args.config), out_dir=work / "ours", cache_dir=work / "cache", jobs=args.jobs, progress=False,
          toolchain=tc)
    ours_noop = time.monotonic() - start

    src = (work / "ours" / "src").resolve()
    lines = ["rule cc", "  command = cd $dir && $cmd", "  description = $out", ""]
    objects = {}
    for u in units:
        obj = work / "ninja" / (u.relpath + ".o")
        objects.setdefault(u.op, []).append(obj)
        cmd = shlex.join(tc.compile_command(Path(u.relpath), obj, u.targets, u.backend))
        lines += [f"build {obj}: cc {src / u.relpath}", f"  dir = {src}", f"  cmd = {cmd.replace('$', '$$')}", ""]
    for op, objs in objects.items():  # and one link per op, as the build does
        so = work / "ninja" / f"lib{op}.so"
        cmd = shlex.join(tc.link_command(sorted(objs), so))
        lines += [f"build {so}: cc {' '.join(map(str, sorted(objs)))}", f"  dir = {work}",
                  f"  cmd = {cmd.replace('$', '$$')}", ""]
    for d in {(work / "ninja" / u.relpath).parent for u in units}:
        d.mkdir(parents=True, exist_ok=True)
    (work / "build.ninja").write_text("\n".join(lines))
    start = time.monotonic()
    subprocess.run([args.ninja, "-j", str(args.jobs), "--quiet"], cwd=work, check=True, capture_output=True)
    ninja = time.monotonic() - start
    start = time.monotonic()
    subprocess.run([args.ninja, "-j", str(args.jobs)], cwd=work, check=True, capture_output=True)
    ninja_noop = time.monotonic() - start
    start = time.monotonic()
    codegen.write_sources(load_config(args.config), work / "ours" / "src")
    render = time.monotonic() - start

    ideal = len(units) * args.sleep / args.jobs
    print(f"{len(units)} units of {args.config}, -j {args.jobs}, stand-in nvcc {args.sleep:g} s/unit "
          f"(ideal {ideal:.2f} s); {result.compiled} compiled by ours")
    print(f"cold:  ours {ours:6.2f} s   ninja {ninja:6.2f} s   (both compile {len(units)} units and link "
          f"{len(result.libraries)} libraries; ours also parses the YAML and writes the sources)")
    print(f"no-op: ours {ours_noop:6.3f} s   ninja {ninja_noop:6.3f} s + render/write-if-different {render:.3f} s")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
