"""The constant values of Range, TopK and CumSum, as OpenVINO's ``evaluate`` gives them.

- Range: version 4 reads start and step as doubles and casts them to the output type
  (a real one computes ``start + i * step`` in it, f16 and bf16 through f32 and rounded
  back; an integer one adds the step to a running value, wrapping as C does); version 0
  reads them in their own type, which is the output's.
- TopK: each slice along the axis is ordered by value (largest first for ``max``) and then
  by index, the first k kept; ``sort`` orders those k by value or by index. Without a sort
  the order of the k is whatever the reference's ``nth_element`` leaves: not followed.
- CumSum: a running sum along the axis in the type (f32 only in OpenVINO 2026.4), each
  addition rounded; ``exclusive`` starts from +0.0, ``reverse`` runs from the end.

>>> range_value(0.5, 1.5, 3, "f32")
((0.5, 2.0, 3.5), (0.5, 2.0, 3.5))
>>> range_value(120, 5, 3, "i8")
((120, 125, -126), (120, 125, -126))
"""

from __future__ import annotations

import math

from ..._lazy import numpy as np
from . import numeric
from .values import MAX_VALUE_SIZE, Tensor, Value

__all__ = ["RANGE_EVALUATES", "range_value", "topk_values", "cumsum_value"]

#: the types of Range's start whose values OpenVINO evaluates (``has_evaluate``)
RANGE_EVALUATES = frozenset(("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16",
                             "bf16", "f32", "f64"))

_REAL_WORK = {"f16": "float32", "bf16": "float32", "f32": "float32", "f64": "float64"}


def range_value(start, step, n: int, etype: str) -> Value | None:
    """Range's ``n`` elements from ``start`` by ``step`` in ``etype``; None when OpenVINO
    would cast a start or step the type cannot hold (undefined in C++)."""
    if n > MAX_VALUE_SIZE or n < 0:
        return None
    work = _REAL_WORK.get(etype)
    if work is not None:
        dt = np.dtype(work)
        with np.errstate(all="ignore"):
            first, by = dt.type(float(start)), dt.type(float(step))
            out = first + np.arange(n, dtype=dt) * by
        return numeric.value_of(out, etype)
    if etype not in numeric.DTYPES or etype in numeric.REALS or etype == "boolean":
        return None
    info = np.iinfo(numeric.DTYPES[etype])
    ends = []
    for x in (start, step):
        if isinstance(x, float):
            if not math.isfinite(x):
                return None
            x = math.trunc(x)
        if not info.min <= x <= info.max:
            return None
        ends.append(x)
    first, by = ends
    values = tuple(numeric.wrapped(first + i * by, etype) for i in range(n))
    return values, values


def topk_values(t: Tensor, k: int, axis: int, largest: bool, sort: str,
                index_type: str) -> tuple[Value, Value] | None:
    """TopK's values and indices of an exact ``t``, or None (no sort order, a NaN, k
    beyond the axis, a type OpenVINO does not evaluate)."""
    if sort not in ("value", "index") or not numeric.evaluates("TopK", t.etype):
        return None
    x = numeric.shaped_array(t)
    if x is None or x.ndim == 0 or not 0 <= k <= x.shape[axis % x.ndim]:
        return None
    if x.dtype.kind == "f" and np.isnan(x).any():
        return None
    axis %= x.ndim
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    picked_values, picked_index = [], []
    for row in rows.tolist():
        order = sorted(range(len(row)), key=lambda i: (-row[i] if largest else row[i], i))[:k]
        if sort == "index":
            order.sort()
        picked_values.append([row[i] for i in order])
        picked_index.append(order)
    shape = moved.shape[:-1] + (k,)
    values = np.moveaxis(np.array(picked_values, dtype=x.dtype).reshape(shape), -1, axis)
    index = np.moveaxis(np.array(picked_index, dtype=np.int64).reshape(shape), -1, axis)
    return numeric.value_of(values, t.etype), numeric.value_of(index, index_type)


def cumsum_value(t: Tensor, axis: int, exclusive: bool, reverse: bool) -> Value | None:
    """CumSum of an exact ``t`` along ``axis``, summed in its type; None where OpenVINO
    does not evaluate it."""
    if not numeric.evaluates("CumSum", t.etype):
        return None
    x = numeric.shaped_array(t)
    if x is None or x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        return None
    axis %= x.ndim
    work = np.dtype(numeric.DTYPES[t.etype])
    seq = np.flip(x, axis) if reverse else x
    if exclusive:
        zero = np.zeros_like(np.take(seq, [0], axis=axis))
        seq = np.concatenate([zero, np.delete(seq, -1, axis=axis)], axis=axis) \
            if seq.shape[axis] else seq
    with np.errstate(all="ignore"):
        out = np.add.accumulate(seq, axis=axis, dtype=work)
    if reverse:
        out = np.flip(out, axis)
    return numeric.value_of(out, t.etype)
