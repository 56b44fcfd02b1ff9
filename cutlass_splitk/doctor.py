"""``cutlass-splitk doctor``: what a build here would use, and where each piece came from.

Every row is found the way ``cutlass-splitk build`` finds it (:mod:`.cudakit`,
:mod:`.buildenv`); a piece that is missing is reported with the fix instead of a traceback.
"""

from __future__ import annotations

import os
from typing import List, Mapping, Tuple

from . import buildenv, cudakit
from .buildenv import BuildError
from .fsutil import cache_root


def _first_line(exc: BuildError) -> str:
    detail = exc.log.strip().splitlines()[0] if exc.log.strip() else ""
    return f"{exc.what}" + (f" ({detail})" if detail else "") + (f". {exc.hint}" if exc.hint else "")


def report(env: Mapping[str, str] = os.environ) -> Tuple[List[Tuple[str, str]], List[str]]:
    """(rows of (what, found), problems). No problems: a build can start."""
    rows: List[Tuple[str, str]] = []
    problems: List[str] = []
    try:
        nvcc = cudakit.locate_nvcc(env)
    except BuildError as exc:
        rows.append(("nvcc", "not found"))
        problems.append(_first_line(exc))
        nvcc = None
    if nvcc is not None:
        path = str(nvcc.path)
        rows.append(("nvcc", f"{path} (CUDA {cudakit.nvcc_version(path)}; from {nvcc.via})"))
        versions = cudakit.wheel_versions(nvcc.path)
        if versions:
            rows.append(("CUDA wheels", ", ".join(f"{w} {versions.get(w, 'MISSING')}" for w in cudakit.CUDA_WHEELS)))
            try:
                cudakit.check_wheels(nvcc.path)
            except BuildError as exc:
                problems.append(f"{exc.what}. {exc.hint}")
        includes, _ = cudakit.nvcc_search_dirs(path)
        rows.append(("CUDA headers", ", ".join(includes) or "(nvcc --dryrun named none)"))
        runtime = cudakit.static_runtime(nvcc.path)
        extra = cudakit.link_dirs(nvcc.path)
        if runtime is None:
            rows.append(("CUDA runtime", "libcudart_static.a not found"))
            problems.append("libcudart_static.a is not in the directories nvcc links from: install the CUDA "
                            "runtime (pip install 'cutlass-splitk[cuda]', or the toolkit's cudart)")
        else:
            note = f"; -L{extra[0]} added, nvcc.profile does not search it" if extra else ""
            rows.append(("CUDA runtime", f"{runtime} (linked statically{note})"))
    host = buildenv.host_compiler_name(buildenv.split_flags(env, buildenv.NVCC_FLAGS_ENV), env)
    host_path, host_version = cudakit.host_compiler(host)
    if host_version:
        rows.append(("host compiler", f"{host_path} ({host_version})"))
    else:
        rows.append(("host compiler", f"{host} not found"))
        problems.append(f"host compiler {host!r} not found: install gcc/g++ or point NVCC_CCBIN at one")
    try:
        cutlass = cudakit.find_cutlass(env)
        rows.append(("CUTLASS", f"{cutlass.include} ({cutlass.version}; from {cutlass.via})"))
    except BuildError as exc:
        rows.append(("CUTLASS", "not found"))
        problems.append(_first_line(exc))
    try:
        settings = buildenv.Settings.from_env(env)
        jobs = buildenv.default_jobs(env)
    except BuildError as exc:
        problems.append(exc.what + (f". {exc.hint}" if exc.hint else ""))
    else:
        rows.append(("launcher", " ".join(settings.launcher) if settings.launcher else
                     f"none ({buildenv.LAUNCHER_ENV} unset)"))
        rows.append(("targets", f"{buildenv.ARCH_LIST_ENV}: " + ";".join(settings.arch_list) if settings.arch_list
                     else "each op's arch: list, PTX for the newest forward-compatible target"))
        rows.append(("jobs", f"{jobs.count} ({jobs.why})"))
        rows.append(("extra flags", f"nvcc: {' '.join(settings.nvcc_flags) or 'none'}; "
                                    f"link: {' '.join(settings.link_flags) or 'none'}"))
    rows.append(("nvcc's own env", ", ".join(f"{k}={v}" for k, v in buildenv.nvcc_environment(env)) or "none set"))
    rows.append(("object cache", str(cache_root())))
    return rows, problems


def render(rows: List[Tuple[str, str]], problems: List[str]) -> str:
    width = max(len(what) for what, _ in rows) + 1
    lines = [f"{what + ':':<{width}} {found}" for what, found in rows]
    lines += [f"problem: {p}" for p in problems]
    return "\n".join(lines) + "\n"


__all__ = ["render", "report"]
