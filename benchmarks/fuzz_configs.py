"""The config fuzzer (issue 13, part 2): random valid configs from the YAML grammar, built and
run through the public API against a float64 reference.

    python3 benchmarks/fuzz_configs.py --seed S --configs N --problems-per-config P --out DIR \
        [--jobs J] [--backend sm80|sm90|both] [--cache DIR] [--build-dir DIR]

1. draws N valid configs (``fuzz_grammar``: one op, one variant group, both backends
   alternating with ``both``), prints the seed, the knob coverage and the validator's refusals,
   and writes them to ``DIR/configs/``;
2. builds each with ``cutlass_splitk.build.build`` (content-hashed object cache: ``--cache``,
   default ``$CUTLASS_SPLITK_CACHE`` or ``~/.cache/cutlass-splitk``), J configs at a time
   (one nvcc each), the most expensive first. A config the validator accepted that fails to
   build is a finding, reported with its YAML and the nvcc output;
3. as each build finishes, loads it (``cutlass_splitk.load``) and runs P random problems
   through the op (``fuzz_problems``): every split factor of every variant forced in turn, a
   fifth left to the dispatcher; each problem twice, checked against the float64 reference
   and bitwise against the other call. Variants the GPU has no code for are skipped and
   counted. Without a CUDA device only steps 1-2 run;
4. writes ``DIR/report.json`` (seed, configs, their YAML, builds, problem counts, coverage,
   refusals, failures with what reproduces them) after every config, and prints a summary.
   Exit code 1 if any config failed to build or load, or any problem was wrong, not
   reproducible or raised; 3 if a problem hung (``--hang-timeout``).

Replay: ``--seed S --configs N --only-config I [--only-problem J]`` redraws the same configs
(same N and backend) and reruns just those.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_grammar  # noqa: E402
from cutlass_splitk.fsutil import atomic_write  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
UNIT_SECONDS = {"sm80": 25, "sm90": 50}  # one core, the H100 machine: for ordering the builds


def build_cost(d: fuzz_grammar.Draw) -> int:
    """Estimated compile seconds: heavy units (the group; sm90 parallel adds its partial GEMM)."""
    units = 1 + (d.backend == "sm90" and any(v.mode.value == "parallel" for v in d.config.ops[0].variants))
    return units * UNIT_SECONDS[d.backend]


def build_one(d: fuzz_grammar.Draw, path: Path, out_dir: Path, cache: Optional[Path]) -> Dict[str, Any]:
    from cutlass_splitk.build import build

    start = time.monotonic()
    try:
        res = build(path, out_dir=out_dir, jobs=1, cache_dir=cache, progress=False)
    except Exception as exc:  # noqa: BLE001 - BuildError (nvcc's output), or anything else: a finding
        return {"ok": False, "seconds": round(time.monotonic() - start, 1),
                "error": f"{type(exc).__name__}: {exc}"[-12000:]}
    return {"ok": True, "seconds": round(time.monotonic() - start, 1), "compiled": res.compiled}


def environment() -> Dict[str, Any]:
    env: Dict[str, Any] = {"python": platform.python_version(), "host": platform.node()}
    try:
        env["commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                       check=False).stdout.strip()
    except OSError:
        pass
    try:
        from cutlass_splitk.toolchain import default_toolchain

        env["toolchain"] = default_toolchain().fingerprint
    except Exception as exc:  # noqa: BLE001
        env["toolchain"] = f"unavailable: {exc}"
    try:
        import torch

        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            env["device"] = f"{p.name} (compute capability {p.major}.{p.minor}, {p.multi_processor_count} SMs)"
    except ImportError:
        env["torch"] = None
    return env


class Run:
    """The state of one fuzz run and its report."""

    def __init__(self, args: argparse.Namespace, draws: List[fuzz_grammar.Draw], coverage: fuzz_grammar.Coverage):
        self.args = args
        self.draws = draws
        self.coverage = coverage
        self.out = Path(args.out)
        self.lock = threading.Lock()
        self.configs: Dict[int, Dict[str, Any]] = {}
        self.fatal: Optional[str] = None
        self.current: Optional[tuple] = None  # (config, problem, start) being run, for the watchdog
        self.start = time.monotonic()
        self.env = environment()

    def totals(self) -> Dict[str, int]:
        t = {k: 0 for k in ("configs", "built", "build_failed", "load_failed", "ran", "problems", "skipped",
                            "wrong", "nonrepro", "error", "pairs_forced", "pairs_total", "refused_draws")}
        t["configs"] = len(self.configs)
        for c in self.configs.values():
            b = c.get("build") or {}
            t["built"] += bool(b.get("ok"))
            t["build_failed"] += b.get("ok") is False
            t["load_failed"] += "load_error" in c
            r = c.get("run")
            if r:
                t["ran"] += 1
                for k in ("problems", "skipped", "wrong", "nonrepro", "error"):
                    t[k] += r[k]
                t["pairs_forced"] += len([p for p in c["pairs"] if p in r["pairs"]])
            t["pairs_total"] += len(c["pairs"])
            t["refused_draws"] += c["attempts"] - 1
        return t

    def failed(self) -> bool:
        t = self.totals()
        return bool(self.fatal or t["build_failed"] or t["load_failed"] or t["wrong"] or t["nonrepro"] or t["error"])

    def report(self) -> Dict[str, Any]:
        a = self.args
        return {
            "seed": a.seed, "configs_requested": a.configs, "problems_per_config": a.problems_per_config,
            "backend": a.backend, "command": " ".join(sys.argv), "environment": self.env,
            "seconds": round(time.monotonic() - self.start, 1), "totals": self.totals(), "fatal": self.fatal,
            "coverage": self.coverage.to_json(),
            "refusals": dict(fuzz_grammar.rejection_summary(self.draws).most_common()),
            "configs": [self.configs[i] for i in sorted(self.configs)],
            "failures": [dict(f, config=i, yaml=c["yaml"]) for i, c in sorted(self.configs.items())
                         for f in (c.get("run") or {}).get("failures", [])],
        }

    def write(self) -> None:
        with self.lock:
            atomic_write(self.out / "report.json", json.dumps(self.report(), indent=1, default=str) + "\n")

    def watchdog(self, limit: float) -> None:
        while True:
            time.sleep(5)
            cur = self.current
            if cur is not None and time.monotonic() - cur[2] > limit:
                self.fatal = f"hang: config {cur[0]} problem {cur[1]} ran over {limit:.0f} s"
                c = self.configs.get(cur[0])
                if c is not None:
                    c["hung_problem"] = cur[1]
                print(f"\nFATAL: {self.fatal}", flush=True)
                self.write()
                os._exit(3)


def gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def load_op(build_dir: Path, name: str) -> Tuple[Any, Any, Any]:
    """(op, device, its DeviceInfo) of a built config, on the current CUDA device."""
    import torch

    import cutlass_splitk

    lib = cutlass_splitk.load(build_dir)
    device = torch.device("cuda", torch.cuda.current_device())
    return getattr(lib, name), device, lib.device_info(device.index)


def run_problems(run: Run, i: int, d: fuzz_grammar.Draw, build_dir: Path) -> None:
    import fuzz_problems

    c = run.configs[i]
    try:
        op, device, dev = load_op(build_dir, d.op)
    except Exception as exc:  # noqa: BLE001
        c["load_error"] = f"{type(exc).__name__}: {exc}"
        return

    def on_problem(p: Any) -> None:
        run.current = (i, p.index, time.monotonic())

    start = time.monotonic()
    try:
        stats = fuzz_problems.run_config(op, op.spec, i, run.args.seed, run.args.problems_per_config, device, dev,
                                         only=run.args.only_problem, on_problem=on_problem)
    except fuzz_problems.FatalError as exc:
        cur = run.current
        run.fatal = f"config {i} problem {cur[1] if cur else '?'}: {exc}"
        c["fatal_problem"] = cur[1] if cur else None
        return
    finally:
        run.current = None
        try:  # the op stays registered with torch (and so alive): let go of its workspace at least
            op.library.workspace.clear()
        except AttributeError:
            pass
    stats["seconds"] = round(time.monotonic() - start, 1)
    stats["runnable_variants"] = [v.name for v in fuzz_problems.runnable(op.spec, dev)]
    c["run"] = stats


def summary(run: Run) -> str:
    """The per-config table, coverage, refusals and failures, then the totals (last, so that
    they are in any tail of the output)."""
    t = run.totals()
    a = run.args
    lines = [f"{'cfg':>4} {'backend':7} {'variants':>8} {'build':>9} {'problems':>8} {'skip':>5} {'wrong':>5} "
             f"{'nonrep':>6} {'error':>5} {'err/tol':>7}  group"]
    for i, c in sorted(run.configs.items()):
        b = c.get("build") or {}
        r = c.get("run") or {}
        build = "-" if not b else f"{b['seconds']:.0f}s" if b["ok"] else "FAILED"
        if "load_error" in c:
            build = "LOADFAIL"
        lines.append(f"{i:>4} {c['backend']:7} {len(c['variants']):>8} {build:>9} {r.get('problems', 0):>8} "
                     f"{r.get('skipped', 0):>5} {r.get('wrong', 0):>5} {r.get('nonrepro', 0):>6} {r.get('error', 0):>5} "
                     f"{r.get('max_rel_err', 0):>7.2f}  {c['group']}")
    lines += ["", "knob coverage (configs using each value; '!' = accepted outside the drawn domain):"]
    lines += run.coverage.table(("op",) + tuple(b for b in fuzz_grammar.BACKENDS
                                                if any(d.backend == b for d in run.draws)))
    lines += ["", "validator refusals while drawing (normalised reason: count):"]
    lines += [f"  {n:6d}  {r}" for r, n in fuzz_grammar.rejection_summary(run.draws).most_common(12)]
    for i, c in sorted(run.configs.items()):
        if (c.get("build") or {}).get("ok") is False:
            lines += ["", f"BUILD FAILED: config {i} ({c['path']}):", c["yaml"].rstrip(), c["build"]["error"][-2500:]]
        if "load_error" in c:
            lines += ["", f"LOAD FAILED: config {i}: {c['load_error'][-1000:]}"]
    fails = run.report()["failures"]
    if fails:
        lines.append("")
    for f in fails[:15]:
        p = f["problem"]
        lines.append(f"FAILED config {f['config']} problem {p['index']} ({f['kind']}): M={p['m']} N={p['n']} "
                     f"K={p['k']} view={p['view']} force={p['force']} ran={f.get('plan')}: {f['error'][:400]}")
    if len(fails) > 15:
        lines.append(f"... {len(fails) - 15} more failures in {run.out / 'report.json'}")
    lines += ["", f"fuzz seed {a.seed}: {t['configs']} configs ({a.backend}), {t['refused_draws']} draws refused by "
                  f"the validator on the way; {run.env.get('device', 'no CUDA device')}; {run.report()['seconds']} s",
              f"builds: {t['built']} ok, {t['build_failed']} FAILED; loads failed: {t['load_failed']}",
              f"problems: {t['problems']} run in {t['ran']} configs, {t['skipped']} skipped (variant has no code for "
              f"this GPU); wrong {t['wrong']}, non-reproducible {t['nonrepro']}, errors {t['error']}",
              f"forced (variant, split) pairs that ran: {t['pairs_forced']} of {t['pairs_total']}; "
              f"knob values never drawn: {len(run.coverage.missing(('op',) + tuple(sorted({d.backend for d in run.draws}))))}"]
    if run.fatal:
        lines.append(f"FATAL: {run.fatal}")
    lines.append("RESULT: " + ("FAIL" if run.failed() else "PASS"))
    return "\n".join(lines)


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: random, printed)")
    ap.add_argument("--configs", type=int, default=48, help="configs to draw (default 48)")
    ap.add_argument("--problems-per-config", type=int, default=300, help="random problems per config (default 300)")
    ap.add_argument("--out", required=True, help="report and configs go here")
    ap.add_argument("--build-dir", default=None, help="built libraries (default OUT/build)")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="configs built at once")
    ap.add_argument("--backend", choices=("sm80", "sm90", "both"), default="both")
    ap.add_argument("--sm80-arch", type=int, default=90, choices=(80, 86, 89, 90),
                    help="arch: of the sm80 ops (default 90: they run on the H100; other values draw other configs)")
    ap.add_argument("--cache", default=None, help="object cache (default $CUTLASS_SPLITK_CACHE or ~/.cache/...)")
    ap.add_argument("--only-config", type=int, action="append", default=None, help="replay: only this config")
    ap.add_argument("--only-problem", type=int, action="append", default=None, help="replay: only this problem")
    ap.add_argument("--no-run", action="store_true", help="draw and build only")
    ap.add_argument("--hang-timeout", type=float, default=300.0, help="seconds before a problem counts as hung")
    args = ap.parse_args(argv)
    if args.seed is None:
        args.seed = secrets.randbelow(1 << 31)
    return args


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    print(f"fuzz seed {args.seed} ({args.configs} configs, {args.backend}, {args.problems_per_config} problems "
          "per config)", flush=True)
    draws, coverage = fuzz_grammar.draw_run(args.seed, args.configs, args.backend, args.sm80_arch)
    run = Run(args, draws, coverage)
    out = Path(args.out)
    build_root = Path(args.build_dir) if args.build_dir else out / "build"
    selected = [d for d in draws if args.only_config is None or d.index in args.only_config]
    for d in selected:
        path = out / "configs" / f"{d.op}.yaml"
        atomic_write(path, d.yaml)
        op = d.config.ops[0]
        run.configs[d.index] = {
            "index": d.index, "backend": d.backend, "op": d.op, "path": str(path), "yaml": d.yaml,
            "knobs": {k: list(v) if isinstance(v, tuple) else v for k, v in d.knobs.items()},
            "attempts": d.attempts, "pruned": d.pruned, "variants": d.variants, "group": op.variants[0].group,
            "pairs": [f"{v.name}@{s}" for v in op.variants for s in v.splits]}
    missing = coverage.missing(("op",) + tuple(sorted({d.backend for d in draws})))
    shown = ", ".join(f"{s}.{k}={v}" for s, k, v in missing[:8]) + (" ..." if len(missing) > 8 else "")
    print(f"drew {len(draws)} valid configs ({sum(d.attempts - 1 for d in draws)} draws refused); "
          f"knob values never drawn: {len(missing)}{' (' + shown + ')' if missing else ''}", flush=True)
    run.write()

    have_gpu = not args.no_run and gpu_available()
    if not args.no_run and not have_gpu:
        print("no CUDA device: building only (problems are not run)", flush=True)
    threading.Thread(target=run.watchdog, args=(args.hang_timeout,), daemon=True).start()

    cache = Path(args.cache) if args.cache else None
    order = sorted(selected, key=lambda d: (-build_cost(d), d.index))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(build_one, d, Path(run.configs[d.index]["path"]), build_root / d.op, cache): d
                   for d in order}
        for fut in concurrent.futures.as_completed(futures):
            d = futures[fut]
            run.configs[d.index]["build"] = result = fut.result()
            status = f"built in {result['seconds']:.0f} s" if result["ok"] else "BUILD FAILED"
            print(f"[{time.monotonic() - run.start:6.0f}s] config {d.index} {d.op}: {status}", flush=True)
            if result["ok"] and have_gpu and not run.fatal:
                run_problems(run, d.index, d, build_root / d.op)
                r = run.configs[d.index].get("run")
                if r:
                    print(f"[{time.monotonic() - run.start:6.0f}s]   {r['problems']} problems in {r['seconds']} s: "
                          f"wrong {r['wrong']}, non-reproducible {r['nonrepro']}, errors {r['error']}, "
                          f"skipped {r['skipped']}", flush=True)
            run.write()
    run.write()
    text = summary(run)
    atomic_write(out / "summary.txt", text + "\n")
    print("\n" + text, flush=True)
    return 1 if run.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
