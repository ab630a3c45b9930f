"""SparseFillEmptyRows-16: fills the empty rows of a 2-D sparse tensor with a default value.

Inputs: ``values [N]``, ``dense_shape`` (1-D of two elements), ``indices [N, 2]`` and a
scalar ``default_value``. Outputs: ``[N + empty, 2]`` indices, ``[N + empty]`` values and
``[rows]`` empty-row flags, where ``rows`` is the dense shape's first value and ``empty``
the rows no index names (both need constant inputs, and a dense shape known exactly,
not as an interval or with a -1; else ``?``). Constant indices must lie
inside the dense shape.

>>> from ovgather.shapes import PartialShape as P
>>> [str(s) for s in fill_shapes(P.parse("[3]"), P.parse("[3,2]"), (4, 5), (0, 1, 0, 2, 2, 0))]
['[5,2]', '[5]', '[4]']
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, exact_ints

__all__ = ["fill_shapes", "SPECS"]

TWO = Dimension.static(2)


def _first(shape: PartialShape) -> Dimension:
    return DYNAMIC if shape.dims is None else shape.dims[0]


def fill_shapes(values: PartialShape, indices: PartialShape, dense: tuple | None,
                index_values: tuple[int, ...] | None) -> list[PartialShape]:
    """The three outputs from the dense shape's value (None: unknown) and the indices'."""
    count = rows = DYNAMIC
    if dense is not None and all(isinstance(d, int) or d.is_static for d in dense[:2]):
        n_rows, n_cols = (d if isinstance(d, int) else d.lo for d in dense[:2])
        rows = Dimension.static(n_rows)
        if index_values is not None:
            pairs = list(zip(index_values[::2], index_values[1::2], strict=False))
            for r, c in pairs:
                if not (0 <= r < n_rows and 0 <= c < n_cols):
                    raise ShapeInferenceError(
                        f"the indices must lie inside the dense shape [{n_rows}, {n_cols}], "
                        f"but got [{r}, {c}]")
            if values.dims is None:  # OpenVINO reads the values' first dim, and fails
                raise ShapeInferenceError("the values must have a known rank to be filled, "
                                          "but got [...]")
            empty = n_rows - len({r for r, _ in pairs})
            count = indices.dims[0] + empty
            return [PartialShape.of((count, TWO)), PartialShape.of((_first(values) + empty,)),
                    PartialShape.of((rows,))]
    return [PartialShape.of((count, TWO)), PartialShape.of((count,)), PartialShape.of((rows,))]


def _check(ok: bool, rule: str, shape: PartialShape) -> None:
    if not ok:
        raise ShapeInferenceError(f"{rule}, but got {shape}")


def _sparse_fill(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    values, dense, indices, default = (t.shape for t in ins[:4])
    _check(values.rank in (None, 1), "values must be 1-D", values)
    _check(dense.dims is None or (len(dense.dims) == 1 and dense.dims[0].compatible(TWO)),
           "the dense shape must be 1-D of two elements", dense)
    if indices.dims is not None:
        _check(len(indices.dims) == 2 and indices.dims[1].compatible(TWO),
               "indices must be [N, 2]", indices)
        if dense.dims is not None:
            _check(indices.dims[0].compatible(_first(values)),
                   "indices must have one row per value", indices)
    _check(default.rank in (None, 0), "the default value must be a scalar", default)
    computed_shape_bounds(ins[1], "the dense shape")
    shapes = fill_shapes(values, indices, value_dims(ins[1]), exact_ints(ins[2]))
    return [Tensor(shapes[0], ins[2].etype), Tensor(shapes[1], ins[0].etype),
            Tensor(shapes[2], "boolean")]


SPECS = specs_of({"SparseFillEmptyRows": _sparse_fill})
