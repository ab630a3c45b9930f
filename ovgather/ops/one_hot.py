"""OneHot-1: the indices' shape with the depth inserted at ``axis``.

``axis`` may count from the end over the output's rank (``-1`` appends the depth). The
depth is a scalar whose value (or value bounds) gives the new dim, ``?`` when unknown; a
negative depth is an error. ``on_value`` and ``off_value`` are scalars too: an input whose
shape is known and is not ``[]`` breaks the rule.

>>> from ovgather.shapes import PartialShape as P
>>> str(one_hot_shape(P.parse("[2,?]"), Dimension(5), -1))
'[2,?,5]'
>>> str(one_hot_shape(P.parse("[2,?]"), Dimension(5), 0))
'[5,2,?]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.inputs import InputMaker
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, dim_of_bounds

if TYPE_CHECKING:  # the symbolic rule imports it when infer --symbols runs it
    from .core.symbolic import Facts, Sym

__all__ = ["one_hot_shape", "SPECS"]


def one_hot_shape(indices: PartialShape, depth: Dimension, axis: int) -> PartialShape:
    dims = indices.dims
    if dims is None:
        return indices
    rank = len(dims) + 1
    if not -rank <= axis < rank:
        raise ShapeInferenceError(f"the axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    axis = axis + rank if axis < 0 else axis
    return PartialShape.of(dims[:axis] + (depth,) + dims[axis:])


def _one_hot(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    for t, name in zip(ins[1:4], ("depth", "on_value", "off_value"), strict=False):
        if t.shape.is_static and t.shape.dims:
            raise ShapeInferenceError(f"{name} must be a scalar, but got {t.shape}")
    if ins[0].shape.dims is None:
        return [Tensor(ins[0].shape, ins[2].etype)]
    computed_shape_bounds(ins[1], "the depth")
    depth, value = DYNAMIC, ins[1].value
    if value is not None and len(value[0]) == 1:
        lo, hi = value[0][0], value[1][0]
        if hi < 0:
            raise ShapeInferenceError(f"the depth must not be negative, but got {hi}")
        depth = dim_of_bounds(lo, hi)
    shape = one_hot_shape(ins[0].shape, depth, attrs.int("axis"))
    return [Tensor(shape, ins[2].etype)]


# -- symbolic dims (infer --symbols) -----------------------------------------------------
def _symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """The indices' dims with the depth (an expression) inserted; the elements of a small
    one-hot of exact indices and depth (the Tile repeats an ONNX export builds so)."""
    from .core.symbolic import MAX_VALUE, Sym
    x, depth = ins[0], ins[1].value[0] if ins[1].value else None
    if x.dims is None:
        return None
    rank = len(x.dims) + 1
    axis = data.int("axis")
    axis = axis + rank if -rank <= axis < 0 else axis
    dims = [*x.dims[:axis], depth, *x.dims[axis:]]
    on, off = (t.value[0] if t.value else None for t in ins[2:4])
    indices = [None if e is None else e.const for e in x.value or [None]]
    n = depth.const if depth is not None else None
    if n is None or on is None or off is None or None in indices or \
            any(d.const is None for d in x.dims) or not 0 <= n * len(indices) <= MAX_VALUE:
        return [Sym(dims)]
    if data.text("negative_indices_mode", "ignore_negative") == "normalize":
        indices = [i + n if i < 0 else i for i in indices]
    hot = np.arange(n) == np.array(indices).reshape([d.const for d in x.dims] + [1])
    hot = np.moveaxis(hot, -1, axis).reshape(-1)
    return [Sym(dims, [on if h else off for h in hot])]


class _OneHotInputs(InputMaker):
    """A valid depth for a run that feeds it (a Parameter): 0, the usual integer input,
    makes an empty axis that proves little."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """Input 1: a depth of 3 (zero indices, the usual ones, are inside it)."""
        return {1: [3]}


SPECS = specs_of({"OneHot": _one_hot}, symbolic=_symbolic, inputs=_OneHotInputs())
