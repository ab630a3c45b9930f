"""Eye-9: identity-like matrices ``[batch..., num_rows, num_columns]``.

``num_rows``, ``num_columns`` and ``diagonal_index`` hold one element each (a scalar or a
1-D tensor of one); the row and column counts come from their values or value bounds
(``?`` when unknown, an error when known negative). The optional ``batch_shape`` is a
1-D shape tensor: its values give the leading dims (``-1`` is ``?``), its length alone
gives that many ``?``, and nothing known about it gives a dynamic rank.

>>> from ovgather.shapes import Dimension as D
>>> str(eye_shape(D(3), D(2, 5), (D(2), D())))
'[2,?,3,2..5]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds

__all__ = ["eye_shape", "SPECS"]

NAMES = ("num_rows", "num_columns", "diagonal_index")


def eye_shape(rows: Dimension, cols: Dimension,
              batch: tuple[Dimension, ...] | None = ()) -> PartialShape:
    if batch is None:
        return PartialShape.dynamic()
    return PartialShape.of(tuple(batch) + (rows, cols))


def _count(t: Tensor, name: str) -> Dimension:
    computed_shape_bounds(t, name)
    dims = value_dims(t)
    if dims is None:
        return DYNAMIC
    v = t.value
    if v[1][0] < 0:
        raise ShapeInferenceError(f"{name} must not be negative, but got {v[1][0]}")
    return dims[0]


def _batch(t: Tensor) -> tuple[Dimension, ...] | None:
    dims = t.shape.dims
    if dims is not None and len(dims) != 1:
        raise ShapeInferenceError(f"batch_shape must be 1-D, but got {t.shape}")
    computed_shape_bounds(t, "batch_shape")
    values = value_dims(t)
    if values is not None:
        return values
    if dims is not None and dims[0].is_static:
        return (DYNAMIC,) * dims[0].lo
    return None


def _eye(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    for t, name in zip(ins[:3], NAMES, strict=False):
        dims = t.shape.dims
        if dims is not None and (len(dims) > 1 or dims and not dims[0].compatible(
                Dimension.static(1)) or dims and dims[0].is_static and dims[0].lo != 1):
            raise ShapeInferenceError(f"{name} must hold one element, but got {t.shape}")
    batch = _batch(ins[3]) if len(ins) > 3 else ()
    if batch is None:  # OpenVINO then looks at no value
        return [Tensor(PartialShape.dynamic(), attrs.text("output_type", "f32"))]
    shape = eye_shape(_count(ins[0], NAMES[0]), _count(ins[1], NAMES[1]), batch)
    return [Tensor(shape, attrs.text("output_type", "f32"))]


SPECS = specs_of({"Eye": _eye})
