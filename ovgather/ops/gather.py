"""Gather-1, Gather-7 and Gather-8: output shapes (SPEC.md §2).

``D[:axis] + I[b:] + D[axis+1:]``, the first ``b`` (batch_dims) dims being data and
indices merged. Gather-1 has no batch_dims; Gather-7 and -8 take a negative one as
counted from the indices rank::

    >>> gather_shape("[2,3,4]", "[2,5]", axis=1)
    PartialShape('[2,2,5,4]')
    >>> gather_shape("[2..5,3]", "[4..8,3,4]", axis=-1, batch_dims=1)
    PartialShape('[4..5,3,4]')
    >>> gather_shape("[2,3,4]", "[2,5]", axis=1, batch_dims=-1)
    PartialShape('[2,5,4]')

The axis is an input (a Constant, scalar or one element). When it is not a known
constant (``axis=None``) the rank is still known, and only the batch dims are::

    >>> gather_shape("[2..5,3]", "[?,3,4]", axis=None, batch_dims=1)
    PartialShape('[2..5,?,?]')

OpenVINO's order (gather_shape_inference.hpp, checked on 2026.4.1): Gather-7/8 want an
integer indices type; the axis input holds one element; batch_dims is normalised by the
indices rank; a known axis is normalised by the data rank (``[-r, r-1]``, a scalar takes
-1 and 0) and must not be below batch_dims; batch_dims must not exceed the indices rank;
then, with both ranks known, the batch dims must be compatible. Any unknown rank gives
``[...]``.

A batch_dims below ``-rank(indices)`` is nonsense that OpenVINO nevertheless answers: it
keeps it negative and reads dims with Python-style negative indexes, raising only when
one falls outside the shape. This rule reproduces that answer, so that ovgather rejects
exactly what OpenVINO rejects::

    >>> gather_shape("[2,3,4]", "[2,5]", axis=1, batch_dims=-4)
    PartialShape('[2,2,5,2,5,4]')
"""

from __future__ import annotations

from ..errors import ShapeInferenceError, UnsupportedOpError
from ..shapes import DYNAMIC, PartialShape, ShapeLike, as_partial_shape, normalize_axis
from .registry import is_integral_number

__all__ = ["infer_gather", "gather_shape"]

_DYNAMIC_RANK = PartialShape.of(None)


def _fail(seen: tuple, rule: str) -> ShapeInferenceError:
    """The error for a broken ``rule``: the rule in words, then what was seen.

    ``seen`` is (version, data, indices, axis, batch_dims) as the rule received them.
    """
    version, data, indices, axis, batch_dims = seen
    axis_text = "unknown" if axis is None else axis
    what = f"but got data {data}, indices {indices}, axis={axis_text}"
    if version != 1:
        what += f", batch_dims={batch_dims}"
    return ShapeInferenceError(f"Gather-{version}: {rule}, {what}")


def infer_gather(
    data: PartialShape,
    indices: PartialShape,
    axis: int | None,
    batch_dims: int,
    version: int,
    indices_type: str | None = None,
    axis_shape: PartialShape | None = None,
) -> PartialShape:
    """The output shape of Gather-``version`` (1, 7 or 8), or ShapeInferenceError.

    ``axis`` None means the axis input is not a known constant; ``axis_shape`` is the
    shape of that input when known (None skips its check). Gather-1 ignores batch_dims.

    >>> str(infer_gather(PartialShape.parse("[2,3,4]"), PartialShape.parse("[5]"), 0, 0, 1))
    '[5,3,4]'
    """
    if version not in (1, 7, 8):
        raise UnsupportedOpError(f"Gather has versions 1, 7 and 8, not {version}")
    seen = (version, data, indices, axis, batch_dims)
    if version != 1 and indices_type is not None and not is_integral_number(indices_type):
        raise _fail(seen, f"the indices must be of an integer type (not {indices_type})")
    if axis_shape is not None and axis_shape.is_static:
        a = axis_shape.dims
        if not (len(a) == 0 or (len(a) == 1 and a[0].lo == 1)):
            rule = f"the axis input must be a scalar or hold one element, not {axis_shape}"
            raise _fail(seen, rule)
    d, i = data.dims, indices.dims
    b = 0 if version == 1 else batch_dims
    if b < 0 and i is not None:
        b += len(i)
    if axis is not None:
        axis = _checked_axis(axis, b, d, seen)
    if i is not None and b > len(i):
        raise _fail(seen, f"batch_dims must not exceed the rank of indices ({b} > {len(i)})")
    if d is None or i is None:
        return _DYNAMIC_RANK
    return PartialShape.of(_known_ranks(d, i, axis, b, seen))


def _checked_axis(axis: int, b: int, d, seen: tuple) -> int:
    """The axis normalised by a known data rank; it must not be below batch_dims."""
    if d is not None:
        at = normalize_axis(axis, len(d))
        if at is None:
            top = max(len(d), 1)
            raise _fail(seen, f"the axis must lie in [-{top}, {top - 1}] for data of rank {len(d)}")
        axis = at
    if axis < b and b >= 0 and axis >= 0:
        rule = f"batch_dims must not exceed the axis once both are normalised ({b} > {axis})"
        raise _fail(seen, rule)
    return axis


def _known_ranks(d, i, axis: int | None, b: int, seen: tuple) -> tuple:
    """The output dims once both ranks are known, filled as OpenVINO fills them."""
    out_rank = len(d) + len(i) - 1 - b
    if out_rank < 0:
        rule = (
            "the output would have a negative rank (rank(data) + rank(indices) - 1 "
            f"- batch_dims = {out_rank})"
        )
        raise _fail(seen, rule)
    batch = _batch(d, i, b, out_rank, seen)
    if axis is None:
        return (*batch, *(DYNAMIC,) * (out_rank - len(batch)))
    if not d:  # OpenVINO then writes one dim past the output
        raise _fail(seen, "data must have rank at least 1 to gather along a known axis")
    if b >= 0:
        return (*batch, *d[b:axis], *i[b:], *d[axis + 1 :])
    # b < 0 only for batch_dims < -rank(indices): OpenVINO reads indices[b:] with
    # negative positions, so dims repeat, until one falls off the front
    return (*d[:axis], *(_at(i, n, seen) for n in range(b, len(i))), *d[axis + 1 :])


def _batch(d, i, b: int, out_rank: int, seen: tuple) -> list:
    """The first ``b`` dims of data and indices, merged; empty when ``b <= 0``."""
    batch = []
    for n in range(b):
        if n >= len(d):  # only when the axis is unknown
            raise _fail(seen, f"batch_dims must not exceed the rank of data ({b} > {len(d)})")
        if n >= out_rank:
            rule = (
                "batch_dims must not exceed the output rank rank(data) + rank(indices) - 1 "
                f"- batch_dims ({b} > {out_rank})"
            )
            raise _fail(seen, rule)
        merged = d[n].merge(i[n])
        if merged is None:
            rule = (
                "the leading batch_dims dims of data and indices must match "
                f"(dim {n}: {d[n]} in data, {i[n]} in indices)"
            )
            raise _fail(seen, rule)
        batch.append(merged)
    return batch


def _at(dims: tuple, n: int, seen: tuple):
    """``dims[n]`` as OpenVINO indexes a shape: negative from the back, else an error."""
    if -len(dims) <= n < len(dims):
        return dims[n]
    rule = f"batch_dims must be at least -2 * rank(indices) = {-2 * len(dims)}"
    raise _fail(seen, rule)


def gather_shape(
    data: ShapeLike,
    indices: ShapeLike,
    axis: int | None,
    batch_dims: int = 0,
    version: int = 8,
    indices_type: str | None = "i64",
    axis_shape: ShapeLike | None = None,
) -> PartialShape:
    """The output shape of Gather-``version``; shapes as text or PartialShape.

    >>> gather_shape("[3,4]", "[2]", axis=0, version=1)
    PartialShape('[2,4]')
    """
    return infer_gather(
        as_partial_shape(data),
        as_partial_shape(indices),
        axis,
        batch_dims,
        version,
        indices_type,
        None if axis_shape is None else as_partial_shape(axis_shape),
    )


# ---- NumPy reference (issue 6) ----
#
# What OpenVINO 2026.4.1's CPU plugin does with index values, found by running it
# (tests/test_reference.py keeps checking it against the runtime):
#
# | op                 | index in [-s, -1]         | index outside [-s, s-1] |
# | ------------------ | ------------------------- | ----------------------- |
# | Gather-1, Gather-7 | zeros (not from the end)  | zeros                   |
# | Gather-8           | counts from the end: s+i  | zeros (as its spec says)|
#
# Except: on 1-D data of a 32/64-bit integer type the CPU plugin reads stray memory
# for out-of-range Gather-8 indices (data [4] i32, index 7 gave 1646898464); such
# cases are never compared. And on static shapes with every batch dim of size 1 and
# axis == batch_dims (>= 1), Gather-7/8 crash the process (see runtime.known_crash).
#
# The Gather-1/7 specs allow only [0, s-1], so validation feeds them no negative
# index; the reference still returns the CPU plugin's zeros. Gather-8 gets negative and
# a few out-of-range indices: both are defined.

import numpy as _np  # noqa: E402 (this section sits below the shape rules)


def _ref_gather_attrs(
    data: _np.ndarray, idx: _np.ndarray, axis: int, batch_dims: int, version: int
) -> tuple[int, int]:
    """``axis`` and ``batch_dims`` made non-negative and checked as OpenVINO does."""
    if version not in (1, 7, 8):
        raise ValueError(f"Gather has versions 1, 7 and 8, but got {version}")
    if version == 1 and batch_dims:
        raise ValueError("Gather-1 has no batch_dims")
    rank = data.ndim
    if not -rank <= axis < rank:
        raise ValueError(f"Gather axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    b = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    axis %= rank
    if not 0 <= b <= min(axis, idx.ndim):
        raise ValueError(
            f"Gather needs 0 <= batch_dims <= axis and <= indices rank, but got batch_dims "
            f"{batch_dims}, axis {axis}, indices rank {idx.ndim}"
        )
    if data.shape[:b] != idx.shape[:b]:
        raise ValueError(
            f"Gather batch dims of data and indices must be equal, but got "
            f"{data.shape[:b]} and {idx.shape[:b]}"
        )
    return axis, b


def gather_reference(
    data: _np.ndarray,
    indices: _np.ndarray,
    axis: int = 0,
    batch_dims: int = 0,
    version: int = 8,
) -> _np.ndarray:
    """Gather-``version`` (1, 7 or 8) as OpenVINO's CPU plugin computes it.

    Output shape ``D[:axis] + I[b:] + D[axis+1:]``; within each of the ``b`` batch
    positions the indices pick along ``axis``. Out-of-range picks are zeros.

    >>> gather_reference(_np.array([[1, 2, 3], [4, 5, 6]]), [[2, -1], [0, 9]], 1, 1)
    array([[3, 3],
           [4, 0]])
    """
    data, idx = _np.asarray(data), _np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be of an integer type, but got {idx.dtype}")
    axis, b = _ref_gather_attrs(data, idx, int(axis), int(batch_dims), version)
    idx = idx.astype(_np.int64, copy=False)
    shape = data.shape[:axis] + idx.shape[b:] + data.shape[axis + 1 :]
    size = data.shape[axis]
    n_batch, n_outer = _ref_prod(data.shape[:b]), _ref_prod(data.shape[b:axis])
    picks = idx.reshape(n_batch, 1, -1)
    low, high = (int(idx.min()), int(idx.max())) if idx.size else (0, 0)
    if version == 8 and low < 0:
        picks = _np.where(picks < 0, picks + size, picks)
    bad = None
    if low < 0 or high >= size:
        bad = (picks < 0) | (picks >= size)
        picks = _np.where(bad, 0, picks)
    if _ref_prod(shape) == 0 or size == 0:
        return _np.zeros(shape, dtype=data.dtype)
    base = _np.arange(n_batch * n_outer, dtype=_np.int64).reshape(n_batch, n_outer, 1) * size
    rows = (base + picks).reshape(-1)
    table = data.reshape(n_batch * n_outer * size, _ref_prod(data.shape[axis + 1 :]))
    out = table.take(rows, axis=0, mode="clip").reshape(n_batch, n_outer, -1, table.shape[1])
    if bad is not None:
        out[_np.broadcast_to(bad[..., None], out.shape)] = 0
    return out.reshape(shape)


def _ref_prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out
