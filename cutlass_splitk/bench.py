"""``cutlass-splitk bench``: our op against torch.matmul, the eager chain and torch.compile,
with the bandwidth/compute floor of each shape. A script, not a test.

Timing: ``runtime.timing`` (flushed: ``triton.testing.do_bench`` with L2 flushed before every
run, median, when Triton is installed, else CUDA events around each run after writing a
256 MiB buffer to flush L2; graph: CUDA-graph replays; host: Python time per call). The eager
chain is ``runtime.reference.epilogue`` on torch's product. Both ceilings (device-to-device
copy bandwidth, f16 8192^3 matmul rate) are measured at start. Imports torch only when run.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


@dataclass
class Shape:
    name: str
    m: int
    n: int
    k: int
    view: Optional[List[int]] = None  # (B, S, H, D): M = B * S, N = H * D

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """``--shape M,N,K``: one batch of M rows; heads of D = 128 columns where N allows, else
        the largest multiple of 8 (else the largest number) up to 128 that divides N."""
        try:
            m, n, k = (int(x) for x in text.split(","))
        except ValueError:
            raise ValueError(f"--shape {text!r}: expected M,N,K (three integers, e.g. 256,4096,14336)") from None
        d = max((d for d in range(1, 129) if n % d == 0), key=lambda d: (d % 8 == 0, d))
        return cls(f"{m}x{n}x{k}", m, n, k, view=[1, m, n // d, d])

    def view_for(self, permute: Any) -> Optional[Tuple[int, ...]]:
        """The ``view=`` of an op with output permute ``permute`` (a spec.Permute) for this
        shape: (B, S, H, D) for head_split, (B, S, 3, H / 3, D) for qkv_split (None when the
        heads do not split into q, k and v), the view as given (or None) otherwise."""
        if not self.view:
            return None
        if permute.value == "qkv_split":
            bsz, seq, h, d = self.view
            return (bsz, seq, 3, h // 3, d) if h % 3 == 0 else None
        return tuple(self.view)


@dataclass
class Row:
    shape: str
    dtype: str
    m: int
    n: int
    k: int
    floor_us: float
    ours_us: float
    choice: str
    matmul_us: float
    eager_us: float
    compile_us: Optional[float]
    best_us: Optional[float] = None
    best_choice: str = ""
    extra: Dict[str, float] = field(default_factory=dict)


def load_shapes(path: Path) -> List[Shape]:
    import yaml

    doc = yaml.safe_load(Path(path).read_text())
    return [Shape(s["name"], int(s["m"]), int(s["n"]), int(s["k"]), s.get("view")) for s in doc["shapes"]]


def ceilings(bench) -> Dict[str, float]:
    import torch

    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    us = bench(lambda: dst.copy_(src))
    bw = 2 * src.numel() / (us * 1e-6)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    us = bench(lambda: a @ a)
    flops = 2 * 8192 ** 3 / (us * 1e-6)
    del src, dst, a
    return {"copy_bytes_per_s": bw, "matmul_flops_per_s": flops}


def chain_fn(op, a, b, kw) -> Tuple[Callable[..., object], Dict[str, object]]:
    """The same chain in eager torch (addmm where the bias folds into it, else matmul and the
    reference epilogue), and its keyword arguments."""
    import torch

    from .runtime import reference
    from .spec import BiasMode

    ep = op.spec.epilogue
    view = kw.get("view")

    def chain(a, b, bias=None, c=None, e=None, alpha=1.0, beta=0.0):
        if bias is not None and ep.bias is BiasMode.PER_COL and alpha == 1.0 and beta == 0.0:
            return reference.epilogue(ep, torch.addmm(bias, a, b), e=e, view=view)
        return reference.epilogue(ep, torch.matmul(a, b), alpha=alpha, beta=beta, c=c, bias=bias, e=e, view=view)

    args = {k: v for k, v in kw.items() if k != "view"}
    return chain, args


def bench_op(lib, op_name: str, shapes: Sequence[Shape], dtype: str, use_compile: bool,
             max_autotune: bool, sweep: bool, ceil: Dict[str, float], out=sys.stderr,
             repeat: int = 1, clean_flush: bool = False) -> List[Row]:
    """Times one op on every shape; ``ceil`` holds the measured ceilings (see ceilings());
    ``clean_flush``: see runtime.timing.flushed_timer (rounds: flushed_times)."""
    import torch

    from .runtime.timing import flushed_single, flushed_times, graph_time, host_time, rounds_times

    single = flushed_single(clean_flush)  # one flush buffer for every shape
    op = getattr(lib, op_name)
    rows = []
    for i, s in enumerate(shapes):
        print(f"[{i + 1}/{len(shapes)}] {op_name} {s.name} ({s.m}x{s.n}x{s.k})", file=out, flush=True)
        ep = op.spec.epilogue
        view = s.view_for(ep.permute)
        if ep.permute.value == "qkv_split" and view is None:
            print(f"  skipped: {s.view[2]} heads do not split into q, k, v", file=out)
            continue
        a, b, kw = op.random_inputs(s.m, s.n, s.k, view=view)
        try:
            out_t = op(a, b, **kw)
        except ValueError as exc:  # a shape the op refuses (e.g. a head size that is not a multiple of 8)
            print(f"  skipped: {exc}", file=out)
            continue
        choice = op.candidates(s.m, s.n, s.k, op.device_info(torch.cuda.current_device()))[0].describe()
        chain, args = chain_fn(op, a, b, kw)
        compared = [lambda: op(a, b, out=out_t, **kw), lambda: torch.matmul(a, b), lambda: chain(a, b, **args)]
        if use_compile:
            mode = "max-autotune-no-cudagraphs" if max_autotune else None
            torch._dynamo.reset()  # one shape per compilation, no recompile limit
            compiled = torch.compile(chain, mode=mode, dynamic=False)
            compiled(a, b, **args)
            compared.append(lambda: compiled(a, b, **args))
        # in rounds, each starting with the next contender (runtime.timing.flushed_times)
        ours, mm, eager, *comp = flushed_times(compared, repeat, single=single)
        comp = comp[0] if comp else None
        # cuBLAS and ours as graph replays in the same rounds (timed one after the other, the order alone moved
        # the graph column by up to 14 %: BENCHMARKS.md, session 38)
        ours_graph, mm_graph = rounds_times([compared[0], compared[1]], repeat, graph_time)
        host = host_time(lambda: op(a, b, out=out_t, **kw))
        flops = 2.0 * s.m * s.n * s.k
        nbytes = 2.0 * (s.m * s.k + s.k * s.n + s.m * s.n * (2 if "e" in kw else 1)
                        + (kw["bias"].numel() if "bias" in kw else 0))
        floor = max(flops / ceil["matmul_flops_per_s"], nbytes / ceil["copy_bytes_per_s"]) * 1e6
        row = Row(s.name, dtype, s.m, s.n, s.k, floor, ours, choice, mm, eager, comp)
        row.extra["ours_graph_us"] = ours_graph
        row.extra["host_us"] = host
        row.extra["matmul_graph_us"] = mm_graph
        if sweep:
            # Every candidate, timed as CUDA-graph replays (device time only), compared with
            # the dispatcher's pick timed the same way.
            best = None
            for v in op.spec.variants:
                for split in v.splits:
                    try:
                        t = graph_time(lambda: op(a, b, out=out_t, split_k=split, variant=v.name, **kw))
                    except ValueError:
                        continue
                    row.extra[f"{v.name}/split{split}"] = t
                    if best is None or t < best[0]:
                        best = (t, f"{v.name} split={split}")
            if best:
                row.best_us, row.best_choice = best
        rows.append(row)
    return rows


def pick_time(r: Row) -> float:
    """The dispatcher's pick as the sweep timed it (the same pass as every other candidate; the "graph" column
    is timed in rounds beside cuBLAS), else the graph column."""
    name, _, split = r.choice.split(" (")[0].partition(" split=")
    return r.extra.get(f"{name}/split{split}", r.extra["ours_graph_us"])


def format_table(rows: Sequence[Row]) -> str:
    head = (f"{'shape':<20} {'dt':<4} {'floor':>7} {'ours':>7} {'TFLOP/s':>7} {'GB/s':>6} "
            f"{'matmul':>7} {'eager':>7} {'compile':>7} {'x floor':>7} {'vs mm':>6} {'vs eager':>8} "
            f"{'vs comp':>7} {'graph':>7} {'mm grph':>7} {'vs mm g':>7} {'host':>5} {'best':>7} {'heur/best':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        tflops = 2.0 * r.m * r.n * r.k / (r.ours_us * 1e-6) / 1e12
        gbs = 2.0 * (r.m * r.k + r.k * r.n + r.m * r.n) / (r.ours_us * 1e-6) / 1e9
        comp = f"{r.compile_us:7.1f}" if r.compile_us else "      -"
        vs_comp = f"{r.compile_us / r.ours_us:7.2f}" if r.compile_us else "      -"
        best = f"{r.best_us:7.1f}" if r.best_us else "      -"
        hb = f"{pick_time(r) / r.best_us:9.2f}" if r.best_us else "        -"
        graph, mm_graph = r.extra["ours_graph_us"], r.extra["matmul_graph_us"]
        lines.append(f"{r.shape:<20} {r.dtype:<4} {r.floor_us:7.1f} {r.ours_us:7.1f} {tflops:7.1f} {gbs:6.0f} "
                     f"{r.matmul_us:7.1f} {r.eager_us:7.1f} {comp} {r.ours_us / r.floor_us:7.2f} "
                     f"{r.matmul_us / r.ours_us:6.2f} {r.eager_us / r.ours_us:8.2f} {vs_comp} "
                     f"{graph:7.1f} {mm_graph:7.1f} {mm_graph / graph:7.2f} {r.extra['host_us']:5.0f} {best} {hb}")
    lines.append("times in us, L2 flushed, median; ratios: 'vs X' = X time / ours (>1: we are faster); "
                 "'x floor' = ours / floor; graph / mm grph = ours / torch.matmul as CUDA-graph replays (device time, "
                 "no flush), 'vs mm g' their ratio; host = Python dispatch us/call; heur/best = dispatcher's pick / best "
                 "candidate (both graph-timed, in the same sweep)")
    return "\n".join(lines)


def plot(rows: Sequence[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.shape}\n{r.dtype}" for r in rows]
    series = {
        "torch.matmul / ours": [r.matmul_us / r.ours_us for r in rows],
        "eager chain / ours": [r.eager_us / r.ours_us for r in rows],
        "torch.compile chain / ours": [(r.compile_us or 0) / r.ours_us for r in rows],
        "floor / ours": [r.floor_us / r.ours_us for r in rows],
    }
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 4.5))
    width = 0.8 / len(series)
    for i, (name, vals) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(rows))], vals, width, label=name)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))])
    ax.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylabel("speed-up of cutlass-splitk (>1 = faster)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _cmd_bench(args: argparse.Namespace) -> int:
    import torch

    from .runtime import load
    from .runtime.timing import flushed_timer

    try:
        shapes = [Shape.parse(text) for text in args.shape] if args.shape else load_shapes(Path(args.shapes))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: bench needs a CUDA GPU", file=sys.stderr)
        return 1
    lib = load(args.dir)
    ceil = ceilings(flushed_timer())
    rows: List[Row] = []
    for dtype in args.dtype:
        rows += bench_op(lib, args.op.format(dtype=dtype), shapes, dtype, not args.no_compile,
                         args.max_autotune, args.sweep, ceil, repeat=args.repeat,
                         clean_flush=args.flush == "clean")
    p = torch.cuda.get_device_properties(0)
    header = (f"device: {p.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
              f"ceilings: copy {ceil['copy_bytes_per_s'] / 1e12:.2f} TB/s, "
              f"f16 matmul {ceil['matmul_flops_per_s'] / 1e12:.0f} TFLOP/s, L2 flush: {args.flush}")
    print(header)
    print(format_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"header": header, "ceilings": ceil,
                                               "rows": [asdict(r) for r in rows]}, indent=1))
    if args.plot:
        plot(rows, Path(args.plot))
    return 0


def add_parser(sub) -> None:
    b = sub.add_parser("bench", help="time an op against torch.matmul, the eager chain and torch.compile")
    b.add_argument("dir", help="a built directory")
    b.add_argument("--op", required=True, help="op name; '{dtype}' is replaced by each --dtype")
    b.add_argument("--shapes", default="benchmarks/bench_shapes.yaml", help="shape file (YAML with 'shapes:')")
    b.add_argument("--shape", action="append", help="M,N,K (repeatable; overrides --shapes)")
    b.add_argument("--dtype", nargs="+", default=["f16"])
    b.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    b.add_argument("--max-autotune", action="store_true", help="torch.compile mode max-autotune-no-cudagraphs")
    b.add_argument("--repeat", type=int, default=3,
                   help="time each flushed column this many times and keep the fastest median (default 3)")
    b.add_argument("--sweep", action="store_true", help="also time every (variant, split) and report the best")
    b.add_argument("--flush", choices=["dirty", "clean"], default="dirty",
                   help="how the flushed columns empty L2 before each call: 'dirty' writes 256 MiB (as "
                        "triton's do_bench; the call then writes those lines back unless it evicts its own "
                        "first), 'clean' reads 256 MiB (default: dirty)")
    b.add_argument("--json", help="write the results as JSON")
    b.add_argument("--plot", help="save a plot (needs matplotlib)")
    b.set_defaults(fn=_cmd_bench)
