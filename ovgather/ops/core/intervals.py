"""Bounds of the ops whose ``evaluate_lower``/``evaluate_upper`` is more than the op run
on each side of the bounds.

Mod: OpenVINO estimates the remainder of an interval by an interval divisor with its own
formula (``mod_interval`` of its reference), in C's truncating integer arithmetic,
and gives ``0..max`` where the divisor may be 0 or is unbounded, or the dividend is
unbounded. The result is an estimate, not the exact set: ``[4..6] % 5`` is ``0..4``.

>>> mod_bounds(4, 6, 5, 5)
(0, 4)
>>> mod_bounds(7, 7, 2, 5)
(0, 3)
"""

from __future__ import annotations

from ...shapes import INF

__all__ = ["mod_bounds", "mod_top", "exact_mod", "c_mod"]

NINF = -INF


def _c_div(x: int, y: int) -> int:
    """C's integer division: the quotient truncated toward zero."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def c_mod(x: int, y: int) -> int:
    """C's ``x % y``: the remainder takes the dividend's sign."""
    return x - y * _c_div(x, y)


def _value_interval(v1: int, v2: int, m: int) -> tuple[int, int]:
    r = c_mod(v1, m), c_mod(v2, m)
    span = v2 - v1
    if r[1] < r[0] or (span != 0 and span >= m):
        return 0, m - 1
    return r


def _mod_interval(v1: int, v2: int, m1: int, m2: int) -> tuple[int, int]:
    lo, hi = _value_interval(v1, v2, m1)
    if v2 != 0 and m1 != m2:
        lo2, hi2 = _value_interval(v1, v2, m2)
        lo, hi = min(lo, lo2), max(hi, hi2)
        if v1 == v2 and m2 - m1 != 1:
            half = _c_div(v2, 2)
            if m1 < half or m1 < v2 < m2:
                lo = 0
                hi = c_mod(v2, half + 1) if half < m2 < v2 else m2 - 1
    return lo, hi


def mod_top(etype: str) -> int:
    """The value that stands for "no bound" in Mod's bounds of ``etype``: the walk's
    ``INF`` for the 32- and 64-bit integers, the type's maximum for narrower ones."""
    bits = {"i8": 7, "u8": 8, "i16": 15, "u16": 16}.get(etype)
    return INF if bits is None else (1 << bits) - 1


def mod_bounds(vlo: int, vhi: int, mlo: int, mhi: int, top: int = INF
               ) -> tuple[int, int] | None:
    """Mod's lower and upper bound of one element from its inputs' bounds (``top``: the
    type's maximum, which OpenVINO reads as "no bound"); None when an end is unknown."""
    if 0 in (mlo, mhi) or mlo >= top or vhi >= top:
        return 0, top
    if min(vlo, mlo) <= NINF or mhi >= top:
        return None
    return _mod_interval(vlo, vhi, mlo, mhi)


def exact_mod(v: tuple, m: tuple, pairs, top: int) -> tuple | None:
    """Mod of exact values as a shape reads it: OpenVINO evaluates the lower bound only
    (both inputs are exact) and takes it for the upper one too, so an element at the
    type's maximum or by 0 is 0, not its remainder (``127 % 3`` in i8 is 0 there, while
    the op's ``evaluate`` gives 1); None when no element is such (the op's own value
    then), or the pairs are not known."""
    if pairs is None or not any(v[i] >= top or m[j] in (0, top) or m[j] >= top
                                for i, j in pairs):
        return None
    out = tuple(0 if v[i] >= top or m[j] == 0 or m[j] >= top else c_mod(v[i], m[j])
                for i, j in pairs)
    return out, out
