"""Random generators: RandomUniform-8 and Multinomial-13.

RandomUniform's output shape is the value of its 1-D ``shape`` input (value bounds give
intervals, ``-1`` is ``?``); without a value, a shape of as many ``?`` as the input's
length can hold (a dynamic rank when that has no bound). ``min`` and ``max`` are scalars
or hold one element, and when both are constants ``min`` must be below ``max``.

Multinomial draws from 2-D probabilities ``[batch, classes]``: ``[batch, num_samples]``,
the sample count a scalar or one element (its value or bounds; ``?`` when unknown; a
constant below -1 counts as 0, as OpenVINO makes a dim of it).
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, PartialShape
from .core.dims import int_dim, value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, exact_ints

__all__ = ["SPECS"]

SCALAR, ONE = PartialShape([]), PartialShape([1])


def _one_value(t: Tensor, name: str) -> None:
    if not (t.shape.compatible(SCALAR) or t.shape.compatible(ONE)):
        raise ShapeInferenceError(f"{name} must be a scalar or hold one element, but got "
                                  f"{t.shape}")


def _random_uniform(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape_t = ins[0]
    if shape_t.shape.rank not in (None, 1):
        raise ShapeInferenceError(f"the shape input must be 1-D, but got {shape_t.shape}")
    _one_value(ins[1], "min")
    _one_value(ins[2], "max")
    low, high = exact_ints(ins[1]), exact_ints(ins[2])
    if low and high and not low[0] < high[0]:
        raise ShapeInferenceError(f"min must be below max, but got {low[0]} and {high[0]}")
    etype = attrs.text("output_type", "f32")
    computed_shape_bounds(shape_t, "the shape input")
    dims = value_dims(shape_t)
    if dims is not None:
        return [Tensor(PartialShape.of(dims), etype)]
    length = shape_t.shape.dims
    n = None if length is None or length[0].hi == INF else length[0].hi
    return [Tensor(PartialShape.dynamic(n), etype)]


def _multinomial(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    probs = ins[0].shape
    if probs.rank not in (None, 2):
        raise ShapeInferenceError(f"the probabilities must be 2-D, but got {probs}")
    _one_value(ins[1], "num_samples")
    computed_shape_bounds(ins[1], "num_samples")
    etype = attrs.text("convert_type", "i64")
    if probs.dims is None:
        return [Tensor(probs, etype)]
    exact, samples = exact_ints(ins[1]), value_dims(ins[1])
    if exact:
        samples = (int_dim(exact[0]),)
    shape = (probs.dims[0], samples[0] if samples else DYNAMIC)
    return [Tensor(PartialShape.of(shape), etype)]


SPECS = specs_of({"RandomUniform": _random_uniform, "Multinomial": _multinomial})
