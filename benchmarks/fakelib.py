"""A stand-in for a built ``lib<op>.so`` on a machine without a GPU: the same C entry points
(``cks_<variant>_query`` / ``_run`` for every variant of an op, plus the library-level ones),
compiled by the host C compiler, doing no CUDA. ``run`` copies the CksArgs it was given and
counts calls (``cks_fake_last_args``, ``cks_fake_calls``); ``query`` reports the workspace a
real variant would ask for (serial: 4 KiB of semaphores and 1 MiB of partials when split > 1;
parallel: 1 MiB of partials). ``FakePlatform`` stands in for the GPU the runtime would ask about. Used by
``benchmarks/host_overhead.py --fake`` (the call path's CPU cost with the ctypes boundary
included) and by the CPU tests.

    from fakelib import FakePlatform, build_fake, fake_op
    op = fake_op("linear_f16", build_fake(spec, tmpdir), FakePlatform())
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Any, Optional

from cutlass_splitk.runtime.dispatch import DeviceInfo
from cutlass_splitk.runtime.platform import CudaPlatform

FAKE_H100 = DeviceInfo("fake H100", sm_count=132, bandwidth=3.0e12, mma_flops_per_sm=2.95e12)  # capability 9.0


class FakePlatform(CudaPlatform):
    """The GPU as the runtime sees it, without one: every launch on stream 0 of device 0, a
    modelled ``device`` (an H100 by default, so the sm90 variants are the ones that run) whose
    tuning-cache key is ``key``. ``accepts_cpu``: torch CPU tensors stand in for device tensors;
    ``devices``: the array path's memory (cuda.core's by default)."""

    def __init__(self, device: DeviceInfo = FAKE_H100, key: str = "fake", accepts_cpu: bool = True,
                 devices: Optional[Any] = None):
        super().__init__(devices)
        self.device, self.key, self.accepts_cpu = device, key, accepts_cpu

    def current_device(self) -> int:
        return 0

    def device_index(self, device: Any) -> int:
        return 0

    def stream(self, index: int) -> int:
        return 0

    def device_info(self, index: int) -> DeviceInfo:
        return self.device

    def device_key(self, index: int) -> str:
        return self.key

HEADER = r"""
#include <stdint.h>
#include <string.h>
static unsigned char last_args[168];
static void* last_stream;
static long calls;
int cks_abi_version(void) { return 1; }
const char* cks_describe(void) { return "fake"; }
const char* cks_last_error(void) { return ""; }
const void* cks_fake_last_args(void) { return last_args; }
void* cks_fake_last_stream(void) { return last_stream; }
long cks_fake_calls(void) { return calls; }
static int query(const void* args, void* q, int serial) {
  int32_t split = ((const int32_t*)args)[4];
  memset(q, 0, 32);
  ((int32_t*)q)[0] = split;
  ((int32_t*)q)[1] = ((int32_t*)q)[2] = 1;
  ((int64_t*)q)[2] = serial && split > 1 ? 4096 : 0;
  ((int64_t*)q)[3] = !serial || split > 1 ? (1 << 20) : 0;
  return 0;
}
static int status;  /* what run() returns (cks_fake_set_status) */
void cks_fake_set_status(int s) { status = s; }
static int run(const void* args, void* stream) {
  memcpy(last_args, args, sizeof last_args);
  last_stream = stream;
  ++calls;
  return status;
}
"""

ENTRY = r"""
int cks_{name}_query(const void* a, void* q) {{ return query(a, q, {serial}); }}
int cks_{name}_run(const void* a, void* s) {{ return run(a, s); }}
"""


def have_compiler() -> bool:
    return shutil.which("cc") is not None or shutil.which("gcc") is not None


RANK = r"""
}  // extern "C"
#define CKS_TIMEMODEL_EXPORT
#include "cks_timemodel.h"
"""
TEMPLATES = Path(__file__).resolve().parents[1] / "cutlass_splitk" / "templates"


def build_fake(spec: Any, directory: Path, rank: bool = True) -> Path:
    """Compiles the fake library of ``spec`` (an OpSpec) into ``directory``; returns its path.
    ``rank``: with the real ``cks_rank_v8`` (the time model in C, as every built library has it),
    where a C++ compiler is found."""
    directory.mkdir(parents=True, exist_ok=True)
    cxx = shutil.which("c++") or shutil.which("g++") if rank else None
    source = directory / f"fake_{spec.name}.{'cpp' if cxx else 'c'}"
    text = HEADER + "".join(ENTRY.format(name=v.name, serial=int(v.mode.value == "serial")) for v in spec.variants)
    source.write_text('extern "C" {' + text + RANK if cxx else text)
    so = directory / f"libfake_{spec.name}.so"
    compiler = cxx or shutil.which("cc") or shutil.which("gcc")
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", f"-I{TEMPLATES}", "-o", str(so), str(source)], check=True)
    return so


def build_pycall(directory: Path) -> Path:
    """The C call path's library (cutlass_splitk/native/cks_pycall.c, as ``cutlass-splitk build``
    makes it) compiled by the host C compiler into ``directory``."""
    from cutlass_splitk.build import python_include
    from cutlass_splitk.toolchain import NATIVE_DIR, PYCALL_LIBRARY, PYCALL_SOURCE

    include = python_include()
    if include is None:
        raise FileNotFoundError("no Python.h for this interpreter")
    directory.mkdir(parents=True, exist_ok=True)
    so = directory / PYCALL_LIBRARY
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-fvisibility=hidden", f"-I{NATIVE_DIR}", f"-I{TEMPLATES}",
                    f"-I{include}", str(NATIVE_DIR / PYCALL_SOURCE), "-o", str(so)], check=True)
    return so


def with_native(op: Any, pycall: Path) -> Any:
    """``op`` with its C call path bound to the library at ``pycall`` (as load() binds it)."""
    from cutlass_splitk.runtime import native

    op.native = native.NativeOp(op, native.load(pycall))
    return op


def set_status(op: Any, status: int) -> None:
    """Makes the fake library's run() return ``status`` from now on."""
    op.bound.handle.cks_fake_set_status(ctypes.c_int(status))


def fake_op(spec: Any, so: Path, platform: Any) -> Any:
    """An Op of ``spec`` bound (ctypes, as load() binds) to the fake library at ``so``."""
    from cutlass_splitk.runtime import Library, Op, abi

    library = Library(Path(so).parent, {}, {}, platform=platform)
    bound = abi.bind(Path(so), [v.name for v in spec.variants])
    op = Op(library, spec, bound)
    library._ops[spec.name] = op
    return op


def last_args(op: Any) -> Any:
    """The CksArgs the fake library's run() last received."""
    from cutlass_splitk.runtime import abi

    handle = op.bound.handle
    handle.cks_fake_last_args.restype = ctypes.c_void_p
    return abi.CksArgs.from_buffer_copy(abi.CksArgs.from_address(handle.cks_fake_last_args()))


def calls(op: Any) -> int:
    handle = op.bound.handle
    handle.cks_fake_calls.restype = ctypes.c_long
    return int(handle.cks_fake_calls())
