"""Element casts as OpenVINO's Convert evaluates them on value bounds.

OpenVINO converts the lower and the upper bound tensors with the same C++ casts as the
op's ``evaluate``, then maps a bound at the input type's maximum (``?`` in a ShapeOf is the
i64 maximum) to the output type's, except when either type is an integer of at most 16
bits. ovgather's ``INF`` stands for "the maximum" in any integer type of 32 bits or more.
"""

from __future__ import annotations

import math

from ..._lazy import numpy as np
from .numeric import _BITS, DTYPES, REALS, exact_array, in_type, value_of, wrapped
from .values import INF, NINF, Value

__all__ = ["converted"]


#: bits and signedness of the integer types a value converts to (boolean: any non-zero).
_INT_FORMS = {"i64": (64, True), "i32": (32, True), "i16": (16, True), "i8": (8, True),
              "i4": (4, True), "u64": (64, False), "u32": (32, False), "u16": (16, False),
              "u8": (8, False), "u4": (4, False), "u1": (1, False), "boolean": (8, False)}
_REAL_FORMS = {"f64": float, "f32": lambda v: float(np.float32(v)),
               "f16": lambda v: float(np.float16(v)),
               "bf16": lambda v: float(in_type(np.array([v], np.float32), "bf16")[0])}


#: the types OpenVINO converts only into the real types that decode them
_DECODED_ONLY = {t: ("f16", "bf16", "f32") for t in ("nf4", "f4e2m1", "f8e8m0")}

#: the integers each real type holds exactly, and the reals that widen exactly
_EXACT_INTS = {"f64": 1 << 53, "f32": 1 << 24, "f16": 1 << 11, "bf16": 1 << 8}
_WIDER = {"f64": ("f64", "f32", "f16", "bf16"), "f32": ("f32", "f16", "bf16"),
          "f16": ("f16",), "bf16": ("bf16",)}


def _top(etype: str) -> int:
    """The integer type's maximum (OpenVINO's bounds read it as "no bound")."""
    bits, signed = _INT_FORMS.get(etype, (64, True))
    return (1 << (bits - signed)) - 1


def _kept(value: Value, src: str, dst: str) -> bool:
    """Whether every element converts to itself: a weight's f16 to f32, shape elements to
    i32. Four scans at C speed spare the walk a cast per element of every decompressed
    weight that a model converts."""
    if src in _REAL_FORMS:
        return src in _WIDER.get(dst, ())
    low, high = min(min(value[0]), min(value[1])), max(max(value[0]), max(value[1]))
    if dst in _REAL_FORMS:
        return -_EXACT_INTS[dst] <= low and high <= _EXACT_INTS[dst]
    bits, signed = _INT_FORMS[dst]
    if dst == "boolean":
        return low >= 0 and high <= 1
    return (-(1 << (bits - 1)) if signed else 0) <= low and high < 1 << (bits - signed)


def converted(value: Value | None, src: str, dst: str) -> Value | None:
    """``value`` (of type ``src``) converted to ``dst`` as OpenVINO bounds a Convert: each
    bound cast as C++ casts it (integers wrap, reals truncate toward zero), then a bound
    at the input type's maximum becomes the output type's, unless either type is an
    integer of 16 bits or fewer. None for a type it cannot hold.

    >>> converted(((0, 3), (INF, 3)), "i64", "u8"), converted(((0,), (INF,)), "i64", "u32")
    (((0, 3), (255, 3)), ((0,), (9223372036854775807,)))
    """
    if value is None or (dst not in _INT_FORMS and dst not in _REAL_FORMS) \
            or (src in _DECODED_ONLY and dst not in _DECODED_ONLY[src]):
        return None
    if not value[0]:
        return value
    if value[0] == value[1] and (src in _BITS or src == "boolean") \
            and (dst in _BITS or dst == "boolean") \
            and all(type(v) is int or type(v) is bool for v in value[0]):
        # a folded value (not bounds: -(2^63-1) is a value here), wrapped as C does; an
        # element at the source type's maximum is "no bound" (the new type's maximum)
        top, narrow = _top(src), any(_INT_FORMS.get(t, (64,))[0] <= 16 for t in (src, dst))
        ints = tuple([int(v != 0) for v in value[0]] if dst == "boolean"
                     else [INF if v >= top and not narrow and src != "boolean"
                           else wrapped(int(v), dst) for v in value[0]])
        return ints, ints
    if src in _REAL_FORMS and dst in _REAL_FORMS and _kept(value, src, dst):
        return value  # a real widened: every element is itself (f16 weights to f32)
    if value[0] == value[1] and src in DTYPES and dst in DTYPES \
            and (src in REALS or dst in REALS) \
            and (src in REALS or max(value[0]) < _top(src)):
        if src not in REALS and dst in _EXACT_INTS \
                and -_EXACT_INTS[dst] <= min(value[0]) and max(value[0]) <= _EXACT_INTS[dst]:
            reals = tuple([float(v) for v in value[0]])  # exact in the type: no NumPy
            return reals, reals
        arr = exact_array(value, src)  # a folded value: cast in C++'s way, type to type
        if arr is not None:
            return value_of(in_type(arr, dst), dst)
    if _kept(value, src, dst) and (src in _REAL_FORMS) == (dst in _REAL_FORMS):
        return value
    narrow = any(_INT_FORMS.get(t, (64,))[0] <= 16 for t in (src, dst))
    top = _INT_FORMS.get(src)
    top = (1 << (top[0] - top[1])) - 1 if top else INF
    try:
        with np.errstate(all="ignore"):  # an overflow is an OverflowError below, no warning
            lo, hi = ([INF if (v >= top or v == INF) and not narrow else _cast(v, dst)
                       for v in side] for side in value)
    except (OverflowError, ValueError):
        return None
    return tuple(lo), tuple(hi)


def _cast(v, dst: str):
    """``v`` cast to ``dst`` as C++ does (the walk's own ``-INF`` stays itself)."""
    if dst == "boolean":
        return int(v != 0)
    if dst in _REAL_FORMS:
        real = _REAL_FORMS[dst](v)
        if math.isinf(real):
            raise OverflowError(f"{v} overflows {dst}")
        return int(real) if isinstance(v, int) and real.is_integer() else real
    if v <= NINF:
        return v
    bits, signed = _INT_FORMS[dst]
    v = int(v) % (1 << bits)
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
