"""Ops whose output size depends on values: Range, NonZero, TopK.

NonZero gives ``[rank, 0..N]`` where N is the largest element count of its input, as
OpenVINO does (a ``[3,6]`` input gives ``[2,..18]``):

>>> from ovgather.shapes import PartialShape as P
>>> str(nonzero_shape(P.parse("[3,6]"))), str(nonzero_shape(P.parse("[?,6]")))
('[2,..18]', '[2,?]')
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.dims import normalize_axis
from .core.folds import RANGE_EVALUATES, range_value, topk_values
from .core.inputs import InputMaker
from .core.spec import Attrs, Rule, Trace, specs_of
from .core.values import (
    INT_TYPES,
    Tensor,
    computed_shape_bounds,
    dim_of_bounds,
    exact_ints,
    exact_scalar,
    static_size,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["nonzero_shape", "range_length", "SPECS"]


def nonzero_shape(shape: PartialShape) -> PartialShape:
    """``[rank, 0..N]`` with N the upper bound of the element count (``?`` if unbounded)."""
    dims = shape.dims
    if dims is None or not dims:
        return PartialShape.dynamic(2)
    n = 1
    for d in dims:
        n = INF if d.hi >= INF or n >= INF else n * d.hi
        if n == 0:
            break
    return PartialShape.of((Dimension.static(len(dims)), Dimension.from_bounds(0, n)))


def range_length(start: int, stop: int, step: int) -> int:
    """The number of elements of Range(start, stop, step) (0 for an empty range)."""
    if step == 0:
        raise ShapeInferenceError("the Range step must not be 0, but got 0")
    if isinstance(start, float) or isinstance(stop, float) or isinstance(step, float):
        return max(0, math.ceil((stop - start) / step))
    return max(0, -(-(stop - start) // step))


def _nonzero(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """An exact input folds (OpenVINO evaluates NonZero when it reads a model): the
    output is then static and its value known; bounds give only the general shape."""
    t, etype = ins[0], data.text("output_type", "i64")
    value, size = exact_ints(t), static_size(t.shape)
    if value is None or size is None or size != len(value) or not t.shape.dims:
        return [Tensor(nonzero_shape(t.shape), etype)]
    dims = [d.lo for d in t.shape.dims]
    where = [_coords(k, dims) for k, v in enumerate(value) if v]
    coords = tuple(c[axis] for axis in range(len(dims)) for c in where)
    shape = PartialShape.of((Dimension.static(len(dims)), Dimension.static(len(where))))
    return [Tensor(shape, etype, (coords, coords))]


def _coords(index: int, dims: list[int]) -> tuple[int, ...]:
    """The coordinates of the flat row-major ``index`` in a tensor of ``dims``.

    >>> _coords(5, [2, 3])
    (1, 2)
    """
    out = []
    for d in reversed(dims):
        index, r = divmod(index, d)
        out.append(r)
    return tuple(reversed(out))


def _range(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    etype = data.text("output_type", ins[0].etype) if data.version >= 4 else ins[0].etype
    for t in ins[:3]:
        if t.shape.dims is not None and len(t.shape.dims) > 1:
            raise ShapeInferenceError(f"Range inputs must be scalars, but got {t.shape}")
    start, stop, step = (exact_scalar(t) for t in ins[:3])
    if start is None or stop is None or step is None:
        return [Tensor(PartialShape.dynamic(1), etype)]
    if step == 0:
        raise ShapeInferenceError("the Range step must not be 0, but got 0")
    if (etype if data.version >= 4 else ins[0].etype) in INT_TYPES:
        # OpenVINO truncates the three toward zero first: a step of 0.5 then counts 0
        start, stop, step = (math.trunc(v) for v in (start, stop, step))
    n = range_length(start, stop, step) if step else 0
    value = None
    if ins[0].etype in RANGE_EVALUATES and (data.version >= 4 or etype not in ("f16", "bf16")):
        value = range_value(start, step, n, etype)  # Range-0 evaluates no f16 nor bf16
    return [Tensor(PartialShape.of((Dimension.static(n),)), etype, value)]


def _k_dim(k_in: Tensor, d: Dimension) -> Dimension:
    """The TopK axis dim, as OpenVINO 2026.4.1 gives it (checked by experiment): a known
    k is the dim, whatever the input dim (``k=7`` on ``3`` gives 7); a k known only
    within bounds gives from the smaller lower bound up to the smaller upper bound, or
    without bound when the input dim has none; an unknown k is ``0..`` the input dim."""
    computed_shape_bounds(k_in, "TopK's k")
    k = exact_scalar(k_in)
    if k is not None:
        if k < 0:
            raise ShapeInferenceError(f"TopK needs k >= 0, but got {k}")
        return Dimension.static(k)
    v = k_in.value
    kd = dim_of_bounds(v[0][0], v[1][0]) if v is not None and len(v[0]) == 1 else DYNAMIC
    if kd.lo == kd.hi:
        return kd
    return Dimension.from_bounds(min(d.lo, kd.lo), INF if d.hi >= INF else min(d.hi, kd.hi))


def _topk(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    index_type = data.text("index_element_type", "i32")
    dims = t.shape.dims
    if dims is None:
        shape = PartialShape.dynamic()
    else:
        ax = normalize_axis(data.int("axis"), len(dims), "the TopK axis")
        shape = PartialShape.of(dims[:ax] + (_k_dim(ins[1], dims[ax]),) + dims[ax + 1:])
    values = _topk_values(t, ins[1], data, index_type)
    outs = [Tensor(shape, t.etype, values[0]), Tensor(shape, index_type, values[1])]
    return outs[:max(data.n_outputs, 1)]


def _topk_values(t: Tensor, k_in: Tensor, data: Attrs, index_type: str):
    """The values and indices OpenVINO folds an exact TopK to (``folds.topk_values``)."""
    k = exact_scalar(k_in)
    if k is None or t.value is None or t.shape.dims is None:
        return None, None
    out = topk_values(t, k, data.int("axis"), data.text("mode", "max").lower() == "max",
                      data.text("sort", "none").lower(), index_type)
    return out if out is not None else (None, None)


class _RangeInputs(InputMaker):
    """Valid start, stop and step for a run that feeds them (Parameters): a zero step,
    from the usual zero integer input, makes the CPU plugin divide by zero and end the
    process."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, int | list[int]]:
        """By input position: start 0, stop 4, step 1 (four elements when all three are
        fed), each a scalar or a one-element list as its shape asks. A step fed alone
        next to constants is still never 0, so the run is valid: empty when the
        constants count down."""
        values = {}
        for position, value in enumerate((0, 4, 1)):
            shape = shapes[position] if position < len(shapes) else None
            values[position] = [value] if shape else value
        return values


class _TopKInputs(InputMaker):
    """A valid k for a run that feeds it (a Parameter): 0, the usual integer input, is
    refused by the CPU plugin (``top_k >= 1``)."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """Input 1: half the axis dim, rounded up (1 when the data's shape is unknown):
        a k that is neither the whole axis nor past it."""
        data = shapes[0] if shapes else None
        k = 1
        if data:
            try:
                k = max(1, (data[normalize_axis(attrs.int("axis"), len(data), "axis")] + 1)
                        // 2)
            except ShapeInferenceError:
                pass
        return {1: [k]}


_RULES: dict[str, Rule] = {
    "NonZero": _nonzero,
}


def _symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """Range: ``stop - start`` elements (over a constant step, rounded up); TopK: the
    axis dim is k. NonZero's count is data, never a shape fact."""
    from .core.symbolic import Sym, maximum
    if facts.op == "Range":
        start, stop = (s.value[0] if s.value and len(s.value) == 1 else None for s in ins[:2])
        step = exact_scalar(facts.inputs[2])
        if start is None or stop is None or not isinstance(step, int) or step == 0:
            return None
        span = stop - start if step > 0 else start - stop
        n = span if abs(step) == 1 else (span + abs(step) - 1) // abs(step)
        return [Sym([n if start.const == 0 and step > 0 else maximum(n, 0)])]
    if facts.op == "TopK" and ins[0].dims is not None and ins[1].value:
        ax = normalize_axis(data.int("axis"), len(ins[0].dims), "the TopK axis")
        dims = list(ins[0].dims)
        dims[ax] = ins[1].value[0]
        return [Sym(dims)] * max(data.n_outputs, 1)
    return None


SPECS = [*specs_of(_RULES, symbolic=_symbolic),
         *specs_of({"TopK": _topk}, symbolic=_symbolic, inputs=_TopKInputs()),
         *specs_of({"Range": _range}, {1: {"inputs": _RangeInputs()},
                                       4: {"inputs": _RangeInputs()}}, symbolic=_symbolic)]
