"""GatherElements-6 (ONNX GatherElements-11/13): output shapes (SPEC.md §2).

The output has the shape of ``indices``; data and indices have the same rank, and every
dim but the one at ``axis`` must be able to agree (OpenVINO merges them, so the output
takes whatever both inputs know)::

    >>> gather_elements_shape("[2,2]", "[2,2]", axis=1)
    PartialShape('[2,2]')
    >>> gather_elements_shape("[3,3]", "[2,3]", axis=0)
    PartialShape('[2,3]')
    >>> gather_elements_shape("[4,4,?]", "[1,?,5]", axis=0)
    PartialShape('[1,4,5]')
    >>> gather_elements_shape("[2..5,3,?]", "[7,?,1..3]", axis=-3)
    PartialShape('[7,3,1..3]')

OpenVINO's order (openvino-facts.md §8, checked on 2026.4.1): indices of type i32 or i64
(exactly: no other integer type, not even ``dynamic``), indices rank ≥ 1, data rank ≥ 1,
the axis within ``[-r, r-1]`` of the data rank, then equal ranks and the merge. An unknown
data rank gives the indices shape; unknown indices rank gives the data shape with ``?``
at the axis::

    >>> gather_elements_shape("[2,3,4]", "[...]", axis=-2)
    PartialShape('[2,?,4]')
    >>> gather_elements_shape("[...]", "[2,1]", axis=7)
    PartialShape('[2,1]')
    >>> try:
    ...     gather_elements_shape("[2,3]", "[2,4]", axis=0)
    ... except ShapeInferenceError as err:
    ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
    GatherElements-6: data and indices must have the same dims except at the axis (dim 1: 3
    in data, 4 in indices), but got data [2,3], indices [2,4], axis=0
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, PartialShape, ShapeLike, as_partial_shape, normalize_axis
from .registry import element_type_name

__all__ = ["infer_gather_elements", "gather_elements_shape"]

_DYNAMIC_RANK = PartialShape.of(None)


def _fail(rule: str, data, indices, axis: int) -> ShapeInferenceError:
    """The error for a broken ``rule``: the rule in words, then what was seen."""
    seen = f"but got data {data}, indices {indices}, axis={axis}"
    return ShapeInferenceError(f"GatherElements-6: {rule}, {seen}")


def infer_gather_elements(
    data: PartialShape,
    indices: PartialShape,
    axis: int,
    indices_type: str | None = None,
) -> PartialShape:
    """The output shape of GatherElements-6, or ShapeInferenceError.

    ``indices_type`` is the indices element type; None skips that check.

    >>> str(infer_gather_elements(PartialShape.parse("[3,3]"), PartialShape.parse("[2,3]"), 0))
    '[2,3]'
    """
    if indices_type is not None and element_type_name(indices_type) not in ("i32", "i64"):
        raise _fail(f"the indices must be i32 or i64 (not {indices_type})", data, indices, axis)
    d, i = data.dims, indices.dims
    if i is not None and not i:
        raise _fail("indices must have rank at least 1", data, indices, axis)
    if d is None:
        return indices if i is not None else _DYNAMIC_RANK
    if not d:
        raise _fail("data must have rank at least 1", data, indices, axis)
    at = normalize_axis(axis, len(d))
    if at is None:
        rule = f"the axis must lie in [-{len(d)}, {len(d) - 1}] for data of rank {len(d)}"
        raise _fail(rule, data, indices, axis)
    if i is None:
        return PartialShape.of((*d[:at], DYNAMIC, *d[at + 1 :]))
    if len(d) != len(i):
        raise _fail("data and indices must have the same rank", data, indices, axis)
    return PartialShape.of(_merge_except_axis(d, i, at, data, indices, axis))


def _merge_except_axis(d, i, at: int, data, indices, axis: int) -> tuple:
    """Indices dims, each merged with the data dim beside it except at the axis."""
    out = list(i)
    for n, (x, y) in enumerate(zip(d, i, strict=True)):
        if n == at or x is y:
            continue
        merged = x.merge(y)
        if merged is None:
            rule = (
                "data and indices must have the same dims except at the axis "
                f"(dim {n}: {x} in data, {y} in indices)"
            )
            raise _fail(rule, data, indices, axis)
        out[n] = merged
    return tuple(out)


def gather_elements_shape(
    data: ShapeLike,
    indices: ShapeLike,
    axis: int = 0,
    indices_type: str | None = "i64",
) -> PartialShape:
    """The output shape of GatherElements; shapes as text or PartialShape.

    >>> gather_elements_shape("[3,3]", "[2,3]", axis=-2, indices_type="i32")
    PartialShape('[2,3]')
    """
    return infer_gather_elements(
        as_partial_shape(data), as_partial_shape(indices), axis, indices_type
    )


# ---- NumPy reference (issue 6) ----
#
# What OpenVINO 2026.4.1's CPU plugin does with index values, found by running it
# (tests/test_reference.py keeps checking it against the runtime):
#
# | op                | index in [-s, -1]        | index outside [-s, s-1]                 |
# | ----------------- | ------------------------ | --------------------------------------- |
# | GatherElements-6  | counts from the end: s+i | inference fails ("indices values of     |
# |                   |                          | GatherElement exceed data size")        |
# | ONNX GatherElements-11/13 | counts from the end | "an error" (ONNX spec)                |
#
# The reference matches: negatives wrap, and anything outside [-s, s-1] raises
# IndexError, as the runtime raises.

import numpy as _np  # noqa: E402 (this section sits below the shape rules)


def gather_elements_reference(
    data: _np.ndarray, indices: _np.ndarray, axis: int = 0
) -> _np.ndarray:
    """GatherElements-6 (and ONNX GatherElements-11/13): ``out[i][j][k] = data[i][idx][k]``
    for ``axis == 1``, with ``idx = indices[i][j][k]``; the output has the indices' shape.

    >>> gather_elements_reference(_np.array([[1, 2], [3, 4]]), [[0, 0], [-1, 0]], axis=1)
    array([[1, 1],
           [4, 3]])
    """
    data, idx = _np.asarray(data), _np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be of an integer type, but got {idx.dtype}")
    rank = data.ndim
    if rank < 1 or idx.ndim != rank:
        raise ValueError(
            "GatherElements needs data and indices of the same rank >= 1, but got "
            f"{data.shape} and {idx.shape}"
        )
    if not -rank <= axis < rank:
        raise ValueError(f"GatherElements axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    axis %= rank
    others = [d for d in range(rank) if d != axis]
    if any(idx.shape[d] > data.shape[d] for d in others):
        raise ValueError(
            f"GatherElements indices {idx.shape} exceed data {data.shape} outside axis {axis}"
        )
    size = data.shape[axis]
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        if low < -size or high >= size:
            raise IndexError(
                f"GatherElements indices must lie in [{-size}, {size - 1}] on axis {axis}, "
                f"but they span [{low}, {high}]"
            )
        if low < 0:
            idx = _np.where(idx < 0, idx + size, idx)
    view = data[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(idx.shape))]
    return _np.take_along_axis(view, idx.astype(_np.intp, copy=False), axis=axis)
