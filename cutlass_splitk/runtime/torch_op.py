"""Each op as a ``torch.library`` custom op with a fake implementation, so that
``torch.compile(fullgraph=True)`` traces through a call without graph breaks (also with
``mode="reduce-overhead"``: CUDA-graph trees).

Schema: ``(a, b, bias?, c?, e?, alpha, beta, view?, negative_slope, split_k?, mode?, variant?)``.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Dict

import torch

if TYPE_CHECKING:
    from .op import Op

_CUSTOM_OP_IDS = itertools.count()
SCHEMA = ("(Tensor a, Tensor b, Tensor? bias, Tensor? c, Tensor? e, float alpha, float beta, "
          "int[]? view, float negative_slope, int? split_k, str? mode, str? variant) -> Tensor")


def register(op: "Op") -> Any:
    """Registers ``cutlass_splitk::<op>_<build hash>_<n>`` (n distinguishes libraries loaded
    twice in one process) and returns it."""
    qualname = f"cutlass_splitk::{op.name}_{op.tuner.build_hash[:8] or 'x'}_{next(_CUSTOM_OP_IDS)}"

    def impl(a, b, bias, c, e, alpha, beta, view, negative_slope, split_k, mode, variant):
        kwargs: Dict[str, Any] = {"split_k": split_k, "mode": mode, "variant": variant}
        values = {"bias": bias, "c": c, "e": e, "alpha": alpha, "beta": beta,
                  "view": tuple(view) if view is not None else None, "negative_slope": negative_slope}
        kwargs.update({k: v for k, v in values.items() if k in op.keywords})
        # Workspace per call: under torch.compile(mode="reduce-overhead") this runs while
        # cudagraph trees route every allocation of the thread to their private pool, where
        # a cached workspace would be a live tensor they do not track (they refuse that).
        return op._call(a, b, kwargs, None, scratch=True)

    custom = torch.library.custom_op(qualname, impl, mutates_args=(), device_types="cuda", schema=SCHEMA)

    def fake(a, b, bias, c, e, alpha, beta, view, negative_slope, split_k, mode, variant):
        return a.new_empty(op.out_shape(a.shape[0], b.shape[1], tuple(view) if view is not None else None))

    custom.register_fake(fake)
    return custom


def compiled_call(op: "Op", a: torch.Tensor, b: torch.Tensor, kwargs: Dict[str, Any]) -> torch.Tensor:
    """A call being traced by torch.compile: through the custom op."""
    view = kwargs.get("view")
    return op.torch_op(a, b, kwargs.get("bias"), kwargs.get("c"), kwargs.get("e"),
                       float(kwargs.get("alpha", 1.0)), float(kwargs.get("beta", 0.0)),
                       list(view) if view is not None else None,
                       float(kwargs.get("negative_slope", op.spec.epilogue.leaky_slope)), kwargs.get("split_k"),
                       kwargs.get("mode"), kwargs.get("variant"))
