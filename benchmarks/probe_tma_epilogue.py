"""Round 30's probe: CUTLASS's TMA warp-specialized epilogue (benchmarks/probe_tma_epilogue.cu,
built into build/probe/*.so) against our in-kernel fused epilogue on the same main loop, and
cuBLAS. Checks every probe output against float64 (output poisoned first), then times all
contenders in rotating flushed rounds and as CUDA-graph replays. A script, not a test.

    PYTHONPATH=. python3 benchmarks/probe_tma_epilogue.py build/probe build/default \
        --shape 4096,4096,4096 --json out.json
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import sys

import torch

import cutlass_splitk
from cutlass_splitk.runtime.reference import relative_error
from cutlass_splitk.runtime.timing import flushed_times, graph_time

VARIANT = "{op}_serial_sm90_t128x256x64_c1x2_coop_sauto_a8"


def gelu(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x)


def add_ours(fns, lib, a, b, bias, e, out) -> None:
    """Our ops on the same main-loop tile: the chain (head split, S = D = 128), bias + GELU, the
    plain linear (no bias)."""
    chain, bias_gelu, linear = lib.bias_gelu_mul_permute_f16, lib.linear_bias_gelu_f16, lib.linear_f16
    m, n = out.shape
    view = (m // 128, 128, n // 128, 128)
    fns["ours_chain"] = lambda: chain(a, b, bias=bias, e=e, view=view, split_k=1,
                                      variant=VARIANT.format(op=chain.name))
    fns["ours_bias_gelu"] = lambda: bias_gelu(a, b, bias=bias, out=out, split_k=1,
                                              variant=VARIANT.format(op=bias_gelu.name))
    fns["ours_linear"] = lambda: linear(a, b, out=out, split_k=1, variant=VARIANT.format(op=linear.name))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("probe_dir")
    p.add_argument("lib_dir", help="a build of configs/default.yaml for our contenders, or - for none")
    p.add_argument("--shape", action="append", required=True)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--json")
    p.add_argument("--profile", help="only run this contender three times on the first shape (for ncu)")
    args = p.parse_args(argv)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    probes = {}
    for path in sorted(glob.glob(os.path.join(args.probe_dir, "probe_*.so"))):
        so = ctypes.CDLL(path)
        so.probe_run.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 6 + [ctypes.c_int, ctypes.c_void_p]
        name = os.path.basename(path)[len("probe_"):-3]
        probes[name] = so
        print(f"# probe {name}: {so.probe_stages()} main-loop stages, {so.probe_smem()} B shared memory", flush=True)
    lib = None if args.lib_dir == "-" else cutlass_splitk.load(args.lib_dir)
    workspace = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    rows, bad = [], 0
    for spec in args.shape:
        m, n, k = (int(x) for x in spec.split(","))
        torch.manual_seed(m + n + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w = torch.randn(n, k, device="cuda", dtype=torch.float16)
        bias = torch.randn(n, device="cuda", dtype=torch.float16)
        e = torch.randn(m, n, device="cuda", dtype=torch.float16)
        d = torch.empty(m, n, device="cuda", dtype=torch.float16)
        b = w.t()
        acc = a.double() @ w.double().t() if not args.profile else torch.zeros(1, device="cuda")
        refs = {"0": acc, "1": gelu(acc + bias.double()), "2": gelu(acc + bias.double()) * e.double()}
        refs["3"] = refs["4"] = refs["5"] = refs["1"]  # kind 1 through the library's TMA epilogue (and variants)

        def launcher(so):
            def run():  # the current stream at call time (a graph capture runs on its own stream)
                rc = so.probe_run(m, n, k, a.data_ptr(), w.data_ptr(), bias.data_ptr(), e.data_ptr(),
                                  d.data_ptr(), workspace.data_ptr(), sms, torch.cuda.current_stream().cuda_stream)
                if rc:
                    raise RuntimeError(f"probe_run returned {rc}")
            return run

        fns = {"cublas": lambda: torch.matmul(a, b)}
        for name, so in probes.items():
            if args.profile:
                fns[f"probe_{name}"] = launcher(so)
                continue
            d.fill_(float("nan"))
            launcher(so)()
            torch.cuda.synchronize()
            err = relative_error(d, refs[name[1]])
            ok = err < 1e-2
            bad += not ok
            print(f"{m}x{n}x{k} probe {name}: err {err:.2e}{'' if ok else '  WRONG'}", flush=True)
            fns[f"probe_{name}"] = launcher(so)
        out = torch.empty(m, n, device="cuda", dtype=torch.float16)
        if lib is not None:
            add_ours(fns, lib, a, b, bias, e, out)
        if args.profile:
            for _ in range(3):
                fns[args.profile]()
            torch.cuda.synchronize()
            return 0
        names = list(fns)
        flushed = flushed_times([fns[x] for x in names], repeat=args.repeat)
        for name, t in zip(names, flushed):
            tg = graph_time(fns[name])
            print(f"{m}x{n}x{k} {name:18s} {t:8.1f} us flushed {tg:8.1f} graph", flush=True)
            rows.append(dict(m=m, n=n, k=k, contender=name, flushed_us=t, graph_us=tg))
        del a, w, bias, e, d, b, acc, refs, out
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows), f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
