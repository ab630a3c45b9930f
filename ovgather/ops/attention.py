"""Attention: ScaledDotProductAttention-13.

Query ``[N..., L, E]``, key ``[N..., S, E]``, value ``[N..., S, Ev]`` (each of rank 3 or
more), then optionally an attention mask broadcastable to ``[N..., L, S]``, a scale
(a scalar or one element) and, from OpenVINO 2025 on, a sink. The output is
``[N..., L, Ev]``: the batch dims ``N...`` of all inputs broadcast together (numpy rules,
as ``core/dims.py`` does them), the shared ``E`` and ``S`` dims must be
equal (they merge), and the mask's last two dims (unless ``causal``) broadcast with ``L``
and ``S``, which can make the output more precise than the query alone:

>>> from ovgather.shapes import PartialShape as P
>>> str(sdpa_shape([P.parse("[?,8,?,64]"), P.parse("[2,8,10,64]"), P.parse("[2,1,?,32]"),
...                 P.parse("[1,1,7,10]")], causal=False))
'[2,8,7,32]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, PartialShape
from .core.dims import broadcast_dims, broadcast_shapes
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["sdpa_shape", "SPECS"]

NAMES = ("query", "key", "value", "attention mask", "scale")


def _merge(batch: PartialShape, dims, name: str):
    try:
        return broadcast_shapes(batch, PartialShape.of(dims))
    except ShapeInferenceError as err:
        raise ShapeInferenceError(
            f"the {name} batch dims must broadcast with the query's: {err.message}") from None


def _same(a, b, name: str):
    merged = a.merge(b)
    if merged is None:
        raise ShapeInferenceError(
            f"the {name} dims must be equal to the other inputs', but got {a} and {b}")
    return merged


def _pair(a, b, name: str):
    try:
        return broadcast_dims(a, b)
    except ShapeInferenceError:
        raise ShapeInferenceError(
            f"the {name} dims must broadcast with the other inputs', but got {a} and {b}"
        ) from None


def sdpa_shape(shapes: list[PartialShape], causal: bool) -> PartialShape:
    """The output shape from the input shapes (3 to 6 of them)."""
    if not 3 <= len(shapes) <= 6:
        raise ShapeInferenceError(
            f"ScaledDotProductAttention takes 3 to 6 inputs, but got {len(shapes)}")
    for shape, name in zip(shapes[:3], NAMES, strict=False):
        if shape.dims is not None and len(shape.dims) < 3:
            raise ShapeInferenceError(f"the {name} must have rank 3 or more, but got {shape}")
    query, key, value = (s.dims for s in shapes[:3])
    batch, l_dim, e_dim, s_dim, ev_dim = PartialShape.dynamic(), DYNAMIC, DYNAMIC, DYNAMIC, DYNAMIC
    if query is not None:
        batch, l_dim, e_dim = PartialShape.of(query[:-2]), query[-2], query[-1]
    if key is not None:
        batch = _merge(batch, key[:-2], "key")
        e_dim, s_dim = _same(e_dim, key[-1], "key embedding"), key[-2]
    if value is not None:
        batch = _merge(batch, value[:-2], "value")
        s_dim, ev_dim = _same(s_dim, value[-2], "value sequence"), value[-1]
    mask = shapes[3].dims if len(shapes) > 3 and not causal else None
    if mask:
        if len(mask) < 2:
            raise ShapeInferenceError(
                f"the attention mask must have rank 0, 2 or more, but got {shapes[3]}")
        l_dim = _pair(l_dim, mask[-2], "attention mask target")
        s_dim = _pair(s_dim, mask[-1], "attention mask source")
        if len(mask) > 2:
            batch = _merge(batch, mask[:-2], "attention mask")
    if len(shapes) > 4 and shapes[4].is_static:
        scale = shapes[4].dims
        if not (len(scale) == 0 or len(scale) == 1 and scale[0].lo == 1):
            raise ShapeInferenceError(
                f"the scale must be a scalar or have one element, but got {shapes[4]}")
    if batch.dims is None:
        return batch
    return PartialShape.of(batch.dims + (l_dim, ev_dim))


def _sdpa(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = sdpa_shape([t.shape for t in ins], attrs.bool("causal", False))
    return [Tensor(shape, ins[0].etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """The batch dims broadcast from the query's, key's and value's; then the query
    length and the value embedding. Query and key embeddings, key and value lengths
    must be equal."""
    from .core.symbolic import Sym, broadcast
    q, k, v = (s.dims for s in ins[:3])
    if q is None or k is None or v is None or not len(q) == len(k) == len(v):
        return None
    facts.equal(q[-1], k[-1])
    facts.equal(k[-2], v[-2])
    batch = [broadcast(broadcast(a, b, facts), c, facts)
             for a, b, c in zip(q[:-2], k[:-2], v[:-2], strict=True)]
    return [Sym([*batch, q[-2], v[-1]])]


SPECS = specs_of({"ScaledDotProductAttention": _sdpa}, symbolic=_symbolic)
