"""The epilogue's meaning in torch, written once: what every kernel computes,

    F = permute( E_op( act( alpha * (A x B) + beta * C + bias ), E ) ),

used by the K = 0 path (no kernel runs), the eager chain ``cutlass-splitk bench`` compares
against, and the GPU tests' float64 reference; random inputs for an op's signature (tuning,
benchmarks, tests); and the error measure the GPU tests and benchmark checks judge by.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

import torch

from ..spec import Activation, BiasMode, DType, EOp, EpilogueSpec, Layout, OpSpec, Permute

TORCH_DTYPES = {DType.F16: torch.float16, DType.BF16: torch.bfloat16}


def activation(v: torch.Tensor, act: Activation, slope: float = 0.01) -> torch.Tensor:
    """The activation as torch.nn.functional computes it (NaN propagates, also through relu)."""
    F = torch.nn.functional
    return {
        Activation.IDENTITY: lambda x: x,
        Activation.RELU: F.relu,
        Activation.GELU: F.gelu,
        Activation.GELU_TANH: lambda x: F.gelu(x, approximate="tanh"),
        Activation.SILU: F.silu,
        Activation.SIGMOID: torch.sigmoid,
        Activation.LEAKY_RELU: lambda x: F.leaky_relu(x, slope),
    }[act](v)


def permute(v: torch.Tensor, how: Permute, view: Any) -> torch.Tensor:
    """The (M, N) result written in the op's output layout (as a contiguous tensor)."""
    if how is Permute.NONE:
        return v
    if how is Permute.HEAD_SPLIT:
        return v.reshape(tuple(view)).permute(0, 2, 1, 3).contiguous()
    return v.reshape(tuple(view)).permute(2, 0, 3, 1, 4).contiguous()


def epilogue(ep: EpilogueSpec, v: torch.Tensor, *, alpha: float = 1.0, beta: float = 0.0,
             c: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None, e: Optional[torch.Tensor] = None,
             view: Any = None, slope: Optional[float] = None) -> torch.Tensor:
    """The whole epilogue of ``ep`` applied to the product ``v`` (A x B), computed in ``v``'s
    dtype. ``slope`` defaults to the op's ``leaky_slope``."""
    if alpha != 1.0:
        v = alpha * v
    if beta != 0.0 and c is not None:
        v = v + beta * c.to(v.dtype)
    if bias is not None:
        b = bias.to(v.dtype)
        v = v + (b[None, :] if ep.bias is BiasMode.PER_COL else b[:, None])
    v = activation(v, ep.activation, ep.leaky_slope if slope is None else slope)
    if ep.e_op is EOp.ADD:
        v = v + e.to(v.dtype)
    elif ep.e_op is EOp.MUL:
        v = v * e.to(v.dtype)
    return permute(v, ep.permute, view)


def random_inputs(spec: OpSpec, m: int, n: int, k: int, *, view: Any = None, device: Any = "cuda",
                  generator: Optional[torch.Generator] = None,
                  scalars: bool = False) -> Tuple[torch.Tensor, torch.Tensor, Dict[str, Any]]:
    """(a, b, keyword arguments) of standard normal data for ``spec``'s signature and layout
    (``b`` column-major for tn: an nn.Linear weight transposed), drawn in the order a, b, c,
    bias, e. With ``scalars``, also alpha=0.75 and, where the op takes them, beta=-0.5 and c."""
    dtype = TORCH_DTYPES[spec.dtype]
    ep = spec.epilogue

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device=device, dtype=dtype, generator=generator)

    a = randn(m, k)
    b = randn(n, k).t() if spec.layout is Layout.TN else randn(k, n)
    kw: Dict[str, Any] = {}
    if scalars and ep.alpha:
        kw["alpha"] = 0.75
    if scalars and ep.beta:
        kw["beta"] = -0.5
        kw["c"] = randn(m, n)
    if ep.bias is not BiasMode.NONE:
        kw["bias"] = randn(n if ep.bias is BiasMode.PER_COL else m)
    if ep.e_op is not EOp.NONE:
        kw["e"] = randn(m, n)
    if ep.permute is not Permute.NONE:
        kw["view"] = view
    return a, b, kw


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """Relative Frobenius error of ``out`` against ``ref``, against at least an RMS of 1e-3 per
    element: a tiny reference (a 1x1 output of GELU far in its negative tail, ~1e-6) is dominated
    by the rounding of the f16 / bf16 inputs and output (and, in a float32 reference, by torch's
    cancellation in 1 + erf(x), which the kernels' GELU avoids: cks_activation.cuh)."""
    floor = 1e-3 * math.sqrt(max(ref.numel(), 1))
    return ((out.double() - ref).norm() / ref.norm().clamp_min(floor)).item()
