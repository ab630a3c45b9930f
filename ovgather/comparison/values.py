"""The numbers of ``compare``: how far two outputs differ (floats by ``isclose``'s rule,
integers exactly in their own type) and why two equal outputs prove nothing, a chunk of
:data:`CHUNK` elements at a time (views: nothing copied but a chunk)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..runtime.core import I32_EDGES, saturated

__all__ = ["differences", "unproven", "saturated", "status_counts", "CHUNK", "I32_EDGES"]

#: Elements compared at a time: the comparison's own memory stays a few tens of MB.
CHUNK = 1 << 20


def _flat_chunks(*arrays: np.ndarray) -> Iterator[tuple[np.ndarray, ...]]:
    """The arrays (of one size) flattened, :data:`CHUNK` elements at a time (views of a
    contiguous array: nothing copied but a chunk)."""
    flat = [a.reshape(-1) for a in arrays]
    for start in range(0, flat[0].size, CHUNK):
        yield tuple(f[start:start + CHUNK] for f in flat)


def _is_integral(x: np.ndarray) -> bool:
    return x.dtype.kind in "iub"


def differences(x: np.ndarray, y: np.ndarray, rtol: float, atol: float
                ) -> tuple[float, float, int]:
    """The largest absolute difference of two arrays of one shape, the largest relative
    one (to ``|y|``, over the elements where ``y`` is not zero), and how many elements
    break ``|x - y| <= atol + rtol * |y|`` (NaN matches NaN, an infinity the same one;
    a NaN or an infinity against a number makes the largest difference ``inf``).

    Integers (and booleans) are compared exactly in their own values, never rounded to
    float64: the largest absolute difference is then an int. Strings are equal or not
    (a difference is ``inf``).

    >>> differences(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-5, 1e-5)
    (0.5, 0.2, 1)
    >>> differences(np.array([2**53]), np.array([2**53 + 1]), 0, 0)
    (1, 1.1102230246251565e-16, 1)
    """
    if x.size == 0:
        return 0.0, 0.0, 0
    if x.dtype.kind in "OUS" or y.dtype.kind in "OUS":  # strings: equal or not
        bad = sum(int(np.count_nonzero(cx != cy)) for cx, cy in _flat_chunks(x, y))
        return (math.inf, math.inf, bad) if bad else (0.0, 0.0, 0)
    if _is_integral(x) and _is_integral(y):
        return _int_differences(x, y, rtol, atol)
    max_abs = max_rel = 0.0
    bad = 0
    for cx, cy in _flat_chunks(x, y):
        a, b = cx.astype(np.float64), cy.astype(np.float64)
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            diff = np.where(close & ~np.isfinite(a), 0.0, np.abs(a - b))
            rel = np.where((diff == 0) | (b == 0), 0.0, diff / np.abs(b))
        max_abs = max(max_abs, _nan_inf(float(np.max(diff))))
        max_rel = max(max_rel, _nan_inf(float(np.max(rel))))
        bad += int(close.size - np.count_nonzero(close))
    return max_abs, max_rel, bad


def _nan_inf(value: float) -> float:
    return math.inf if math.isnan(value) else value


def _int_differences(x: np.ndarray, y: np.ndarray, rtol: float, atol: float
                     ) -> tuple[int, float, int]:
    """:func:`differences` for integers: ``|x - y|`` exact in uint64 (the modular
    difference of the larger minus the smaller), the bound ``atol + rtol * |y|`` rounded
    down to a whole number, so that two integers pass exactly when they are equal while
    that bound is below 1."""
    common = np.result_type(x, y)
    if common.kind == "b":
        common = np.dtype(np.uint8)
    in_python = common.kind not in "iu"  # uint64 against a signed type: Python ints
    if in_python:
        common = np.dtype(object)
    max_abs, max_rel, bad = 0, 0.0, 0
    for cx, cy in _flat_chunks(x, y):
        a, b = cx.astype(common), cy.astype(common)
        if in_python:
            diff, size = np.abs(a - b), np.abs(b)
        else:
            ua, ub = a.astype(np.uint64), b.astype(np.uint64)
            diff = np.where(a >= b, ua - ub, ub - ua)
            size = np.where(b < 0, np.uint64(0) - ub, ub)
        limit = np.floor(atol + rtol * size.astype(np.float64))
        if in_python:
            close = diff <= limit
        else:  # a bound of 2**64 or more passes every difference
            close = (limit >= 2.0**64) | (diff <= np.minimum(limit, 1.8e19).astype(np.uint64))
        bad += int(close.size - np.count_nonzero(close))
        max_abs = max(max_abs, int(diff.max()))
        nonzero = size != 0
        if np.any(nonzero & (diff != 0)):
            rel = diff[nonzero].astype(np.float64) / size[nonzero].astype(np.float64)
            max_rel = max(max_rel, float(rel.max()))
    return max_abs, max_rel, bad


def _count_nan(x: np.ndarray) -> int:
    return sum(int(np.count_nonzero(np.isnan(c))) for (c,) in _flat_chunks(x))


def unproven(x: np.ndarray, y: np.ndarray) -> str | None:
    """Why two equal outputs prove nothing, or None: empty (a zero-size dim), NaN or
    infinite everywhere in both, or (two elements or more) one value everywhere in both.

    >>> unproven(np.full(4, np.nan), np.full(4, np.nan))
    'every element is NaN or infinite in both models'
    >>> unproven(np.zeros(3), np.zeros(3)), unproven(np.arange(3), np.arange(3))
    ('every element is 0 in both models', None)
    """
    if x.size == 0:
        return "the output is empty (a zero-size dim): no element was compared"
    if x.dtype.kind == "f" and y.dtype.kind == "f" and not _any_finite(x) \
            and not _any_finite(y):
        return "every element is NaN or infinite in both models"
    if x.size < 2:
        return None
    first_x, first_y = x.reshape(-1)[0], y.reshape(-1)[0]
    if _all_equal(x, first_x) and _all_equal(y, first_y):
        where = " in both models" if first_x == first_y else f" in A, {_num(first_y)} in B"
        return f"every element is {_num(first_x)}{where}"
    return None


def status_counts(total: str, items: Any, statuses: Any) -> dict[str, int]:
    """``{total: len(items), status: count, …}``: every status of ``statuses`` (0 when
    none has it), then any other an item has (``crashed``, only when some have it)."""
    counts = {total: len(items), **dict.fromkeys(statuses, 0)}
    for item in items:
        counts[item.status] = counts.get(item.status, 0) + 1
    return counts


def _num(value: np.generic) -> str:
    """A number as a person reads it: integers whole, floats in ``%g``."""
    v = value.item()
    return f"{v:g}" if isinstance(v, float) else str(v)


def _any_finite(x: np.ndarray) -> bool:
    return any(np.isfinite(c).any() for (c,) in _flat_chunks(x))


def _all_equal(x: np.ndarray, value: Any) -> bool:
    return all(bool(np.all(c == value)) for (c,) in _flat_chunks(x))
