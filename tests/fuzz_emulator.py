"""A CPU stand-in for a built library's C entry points, for testing the config fuzzer's
problem runner without a GPU: ``query``/``run`` read the CksArgs pointers (CPU tensors), check
what the kernels check (alignment of pointers, leading dimensions and K), compute the op's
chain in float32 with runtime.reference and store it (permuted) through ``d``, like a kernel.

``bug`` injects a kernel fault the fuzzer must catch: ``garbage`` (one element far off),
``unwritten`` (the last row of the output left alone), ``nondeterministic`` (one element's
last bit flipped on every other call), ``overflow`` (one element written past the end of the
output's first row, where a strided ``out`` has slack: the only place the emulation can
write outside ``out`` without corrupting the heap).
"""

from __future__ import annotations

import ctypes
import itertools
from pathlib import Path
from typing import Optional, Sequence

import torch
from fakelib import FakePlatform

from cutlass_splitk.runtime import Library, Op, abi
from cutlass_splitk.runtime import dispatch
from cutlass_splitk.runtime.reference import activation, permute
from cutlass_splitk.spec import BiasMode, DType, EOp, Layout, OpSpec, Permute

DTYPES = {DType.F16: torch.float16, DType.BF16: torch.bfloat16}
EMU_DEVICE = dispatch.DeviceInfo("emulated H100", sm_count=132, bandwidth=3.0e12, mma_flops_per_sm=2.95e12,
                                 major=9, minor=0)


def _view(ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """A tensor over raw host memory (shares it: writes go through)."""
    if any(s == 0 for s in shape):
        return torch.empty(tuple(shape), dtype=dtype)
    count = sum((n - 1) * st for n, st in zip(shape, strides)) + 1
    buf = (ctypes.c_char * (count * 2)).from_address(ptr)
    return torch.frombuffer(buf, dtype=dtype).as_strided(tuple(shape), tuple(strides))


class EmuBound:
    """Stands in for abi.BoundLibrary."""

    def __init__(self, spec: OpSpec, bug: Optional[str] = None):
        self.spec = spec
        self.bug = bug
        self.error = ""
        self.calls = itertools.count()
        self.query = {v.name: self._query(v) for v in spec.variants}
        self.run = {v.name: self._run(v) for v in spec.variants}

    def last_error(self) -> str:
        return self.error

    def _check(self, v, a) -> str:
        al, nbytes = v.alignment, v.alignment * 2
        b_contig = a.k if self.spec.layout is Layout.TN else a.n
        if a.a % nbytes or a.lda % al or a.lda < a.k:
            return "A misaligned"
        if a.b % nbytes or a.ldb % al or a.ldb < b_contig:
            return "B misaligned"
        if a.k % al:
            return "K misaligned"
        if a.split_k not in v.splits:
            return f"split {a.split_k} not built"
        return ""

    def _query(self, v):
        def query(args, q):
            why = self._check(v, args._obj)
            self.error = why
            if why:
                return abi.STATUS_INVALID_PROBLEM
            q._obj.semaphore_bytes = q._obj.partial_bytes = 0
            return 0
        return query

    def _run(self, v):
        def run(args, stream):
            # the launcher passes ctypes.byref(CksArgs); the repeated-signature fast path packed bytes
            a = abi.CksArgs.from_buffer_copy(args) if isinstance(args, bytes) else args._obj
            why = self._check(v, a)
            if why:
                self.error = why
                return abi.STATUS_INVALID_PROBLEM
            self._compute(a)
            return 0
        return run

    def _compute(self, a) -> None:
        spec, ep = self.spec, self.spec.epilogue
        dt = DTYPES[spec.dtype]
        m, n, k = a.m, a.n, a.k
        A = _view(a.a, (m, k), (a.lda, 1), dt)
        B = _view(a.b, (k, n), (1, a.ldb) if spec.layout is Layout.TN else (a.ldb, 1), dt)
        v = a.alpha * (A.float() @ B.float())
        if a.c:
            v = v + a.beta * _view(a.c, (m, n), (a.ldc, 1), dt).float()
        if a.bias:
            length = n if ep.bias is BiasMode.PER_COL else m
            bias = _view(a.bias, (length,), (1,), dt).float()
            v = v + (bias[None, :] if ep.bias is BiasMode.PER_COL else bias[:, None])
        v = activation(v, ep.activation, a.act_arg)
        if ep.e_op is not EOp.NONE:
            e = _view(a.e, (m, n), (a.lde, 1), dt).float()
            v = v + e if ep.e_op is EOp.ADD else v * e
        call = next(self.calls)
        if self.bug == "garbage" and v.numel():
            v[-1, 0] += 10 * (v.abs().max() + 1)  # (column 0: never padding)
        if self.bug == "nondeterministic" and call % 2 and v.numel():
            v[0, 0] = torch.nextafter(v[0, 0].to(dt), torch.tensor(float("inf"), dtype=dt)).float()
        if ep.permute is Permute.NONE:
            D = _view(a.d, (m, n), (a.ldd, 1), dt)
            if self.bug == "overflow" and m > 1 and a.ldd > n:  # (inside the buffer: row 0's slack)
                _view(a.d, (1, n + 1), (a.ldd, 1), dt)[0, n] = 0.0
            rows = m - 1 if self.bug == "unwritten" else m
            D[:rows, :n] = v[:rows].to(dt)
        else:
            s, h = a.permute_s, a.permute_h
            view = (m // s, s, h, n // h) if ep.permute is Permute.HEAD_SPLIT else (m // s, s, 3, h, n // (3 * h))
            out = permute(v.to(dt), ep.permute, view).reshape(-1)
            D = _view(a.d, (m * n,), (1,), dt)
            last = m * n - 1 if self.bug == "unwritten" else m * n
            D[:last] = out[:last]


def emulated_op(spec: OpSpec, bug: Optional[str] = None) -> Op:
    library = Library(Path("emulated"), {}, {}, platform=FakePlatform(EMU_DEVICE, "emulated"))
    op = Op(library, spec, EmuBound(spec, bug))
    library._ops[spec.name] = op
    return op
