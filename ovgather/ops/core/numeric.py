"""Values computed in the element type OpenVINO computes them in.

OpenVINO folds a constant subgraph (and evaluates the bounds of a shape computation) with
each op's ``evaluate``, which runs the op's C++ reference on the tensor's own element
type: ``i32`` arithmetic wraps (``65536*65536+5`` is 5), ``f32`` arithmetic rounds to
float32 after every op (``Ceiling(0.1f*10f)`` is 1), ``f16`` and ``bf16`` compute in f32
and round back. And each op evaluates only some types: an op OpenVINO cannot evaluate
on a type folds nothing, so a Reshape fed by it stays ``?``. This module holds both:

- :data:`EVALUATES`, by op, the element types its ``evaluate`` takes (measured on
  OpenVINO 2026.4 with ``ConstantFolding`` on every op and type, see
  ``tests/infer/test_value_differential.py``);
- :func:`exact_array` and :func:`value_of`, between the walk's values (flat tuples of
  Python numbers: ints for the integer types and boolean, floats for the real ones,
  each exactly a value of the type) and NumPy arrays of the type;
- :func:`unpack`, the packed sub-byte and 8-bit types as OpenVINO lays them out.

>>> import numpy as np
>>> value_of(np.array([65536], np.int32) * np.array([65536], np.int32) + np.int32(5), "i32")
((5,), (5,))
>>> value_of(np.ceil(np.float32(0.1) * np.float32(10)), "f32")
((1.0,), (1.0,))
>>> unpack(np.array([0x32, 0x14], np.uint8), "u4", 4).tolist()
[2, 3, 4, 1]
"""

from __future__ import annotations

import itertools
import math

from ..._lazy import numpy as np
from .clib import c_cast, c_math, c_math2
from .packed import UNPACKED, unpack

__all__ = ["EVALUATES", "evaluates", "DTYPES", "exact_array", "value_of", "in_type",
           "unpack", "UNPACKED", "REALS", "py_binary", "wrapped", "binary", "unary", "clamp",
           "reduce", "reduction_groups", "matmul", "gathered"]

_I = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
_WIDE = ("i32", "i64", "u32", "u64", "f16", "bf16", "f32")  # the usual IfTypeOf list
_ALL = (*_I, "f16", "bf16", "f32", "f64", "boolean")


def _t(*names: str) -> frozenset[str]:
    return frozenset(names)


#: by op, the element types (of its first input) whose values OpenVINO 2026.4 evaluates
EVALUATES: dict[str, frozenset[str]] = {
    "Add": _t(*_I, "f16", "bf16", "f32"),
    "Subtract": _t("i8", "i32", "i64", "u8", "u32", "u64", "f16", "bf16", "f32"),
    "Multiply": _t(*_WIDE, "f64"),
    "Divide": _t(*_WIDE),
    "Maximum": _t(*_WIDE),
    "Minimum": _t(*_WIDE, "u8", "u16"),
    "Mod": _t(*_I),
    "FloorMod": _t("i8", "i32", "i64", "u8", "u32", "u64", "f16", "bf16", "f32"),
    "Power": _t(*_WIDE),
    "SquaredDifference": _t("f32"),
    "Equal": _t(*_ALL),
    "NotEqual": _t(*_WIDE, "boolean"),
    "Less": _t(*_WIDE),
    "LessEqual": _t(*_WIDE),
    "Greater": _t(*_WIDE),
    "GreaterEqual": _t(*_WIDE),
    "LogicalAnd": _t("boolean"),
    "LogicalOr": _t("boolean"),
    "LogicalXor": _t("boolean"),
    "LogicalNot": _t("boolean"),
    "Abs": _t(*_WIDE),
    "Negative": _t("i32", "i64", "f16", "bf16", "f32"),
    "Relu": _t(*_WIDE),
    "Sign": _t(*_WIDE),
    "Floor": _t(*_I, "f16", "bf16", "f32"),
    "Ceiling": _t(*_I, "f16", "f32"),
    "Round": _t(*_I, "f16", "bf16", "f32"),
    "Sqrt": _t(*_WIDE, "f64"),
    "Sigmoid": _t(*_WIDE),
    **{op: _t(*_WIDE) for op in ("Exp", "Log", "Sin", "Cos", "Tan", "Tanh", "Atan", "Sinh",
                                 "Cosh", "Asinh", "Erf")},
    "Clamp": _t(*_I, "f16", "bf16", "f32"),
    "Convert": _t(*_ALL),
    "ReduceSum": _t(*_WIDE),
    "ReduceProd": _t(*_WIDE),
    "ReduceMax": _t(*_WIDE, "i8", "u8"),
    "ReduceMin": _t(*_WIDE, "i8", "u8"),
    "ReduceMean": _t(*_WIDE),
    "ReduceL1": _t("i32", "i64", "f16", "bf16", "f32"),
    "ReduceL2": _t("f16", "bf16", "f32"),
    "ReduceLogicalAnd": _t("boolean"),
    "ReduceLogicalOr": _t("boolean"),
    "Gather": _t("i8", "i32", "i64", "u8", "u32", "u64", "f16", "bf16", "f32", "boolean"),
    "TopK": _t(*_WIDE),
    "MatMul": _t(*_WIDE),
    "CumSum": _t("f32"),
}


def evaluates(op: str, etype: str) -> bool:
    """Whether OpenVINO evaluates ``op`` on values of ``etype``."""
    types = EVALUATES.get(op)
    return types is not None and etype in types


#: the NumPy dtype a value of each type computes in (bf16: float32, rounded after)
DTYPES = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
          "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16",
          "bf16": "float32", "f32": "float32", "f64": "float64", "boolean": "bool",
          "u1": "uint8", "u2": "uint8", "u3": "uint8", "u4": "uint8", "u6": "uint8",
          "i4": "int8", "nf4": "float32", "f4e2m1": "float32", "f8e4m3": "float32",
          "f8e5m2": "float32", "f8e8m0": "float32"}
REALS = frozenset({"f16", "bf16", "f32", "f64", "nf4", "f4e2m1", "f8e4m3", "f8e5m2",
                   "f8e8m0"})


def exact_array(value, etype: str):
    """A value known exactly as a flat array of ``etype``'s dtype; None when it is not
    exact, or an element is not a value of the type (the walk's ``INF``)."""
    dtype = DTYPES.get(etype)
    if value is None or dtype is None or value[0] != value[1]:
        return None
    try:
        arr = np.array(value[0], dtype=dtype)
    except (OverflowError, TypeError, ValueError):
        return None
    if etype not in REALS and etype != "boolean" and arr.tolist() != list(value[0]):
        return None
    return arr


def exact_array_of(arr, etype: str):
    """A packed value (int64 or float64 array) as an array of ``etype``'s dtype, None
    when an element is not a value of the type."""
    dtype = np.dtype(DTYPES[etype])
    with np.errstate(all="ignore"):
        out = arr.astype(dtype)
    if etype not in REALS and etype != "boolean" and not np.array_equal(out, arr):
        return None
    return out


def in_type(arr, etype: str):
    """``arr`` as the type holds it: cast with C's wrap-around for integers, rounded to
    nearest even for the reals (bf16 from float32 as OpenVINO's ``bfloat16`` does)."""
    dtype = DTYPES[etype]
    arr = np.asarray(arr)
    with np.errstate(all="ignore"):
        if etype == "bf16":
            return _bf16(np.asarray(arr, dtype=np.float32))
        if etype == "boolean":
            return arr != 0
        if arr.dtype.kind == "f" and etype not in REALS:
            return c_cast(arr, np.dtype(dtype))
        if etype == "f16" and arr.dtype == np.int32:  # OpenVINO saturates i32 (only)
            return np.clip(arr.astype(np.float64), -65504.0, 65504.0).astype(dtype)
        return arr.astype(dtype)





def value_of(arr, etype: str):
    """The walk's value of an array of ``etype`` (exact: one tuple for both bounds)."""
    flat = in_type(arr, etype).reshape(-1)
    if etype == "boolean":
        flat = flat.astype(np.int64)
    values = tuple(flat.tolist())
    return values, values


def _bf16(x):
    """float32 ``x`` rounded to bfloat16 as OpenVINO's ``bfloat16`` rounds: half of the
    last kept bit is added only when that bit is 1, so a value is rounded up only when
    its lower half is at least one half and the kept part is odd (``1 + 0.75 ulp`` goes
    down; measured on 2026.4, in Convert and in the ops' arithmetic alike). NaN kept."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + ((bits & 0x10000) >> 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), x, out)


# -- integers in plain Python (no NumPy import for a shape computation) ------------------
_BITS = {"i8": (8, True), "i16": (16, True), "i32": (32, True), "i64": (64, True),
         "u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False)}


def wrapped(v: int, etype: str) -> int:
    """``v`` wrapped into integer type ``etype`` as C wraps it."""
    bits, signed = _BITS[etype]
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _py_divide(a: int, b: int, floor: bool, etype: str):
    if b == 0 or (_BITS[etype][1] and b == -1 and a == -(1 << (_BITS[etype][0] - 1))):
        return None
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return q - 1 if floor and q * b != a and (a < 0) != (b < 0) else q


_PY_BINARY = {
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "Maximum": lambda a, b: b if a < b else a,
    "Minimum": lambda a, b: b if b < a else a,
    "Equal": lambda a, b: int(a == b),
    "NotEqual": lambda a, b: int(a != b),
    "Less": lambda a, b: int(a < b),
    "LessEqual": lambda a, b: int(a <= b),
    "Greater": lambda a, b: int(a > b),
    "GreaterEqual": lambda a, b: int(a >= b),
}
_PY_LOGICAL = {"LogicalAnd": lambda a, b: a and b, "LogicalOr": lambda a, b: a or b,
               "LogicalXor": lambda a, b: a != b, "Equal": lambda a, b: a == b,
               "NotEqual": lambda a, b: a != b}
_COMPARISONS = frozenset({"Equal", "NotEqual", "Less", "LessEqual", "Greater",
                          "GreaterEqual"})


def py_binary(op: str, etype: str, pairs, a: tuple, b: tuple, pythondiv: bool = True):
    """Binary ``op`` of two exact integer values in plain Python, C's way, on the element
    pairs a broadcast combines; NotImplemented for an op or type it leaves to NumPy, None
    for no value."""
    if etype == "boolean" and op in _PY_LOGICAL and evaluates(op, etype):
        fn = _PY_LOGICAL[op]
        values = tuple([int(fn(bool(a[i]), bool(b[j]))) for i, j in pairs])
        return values, values
    if etype not in _BITS:
        return NotImplemented  # reals, and booleans of other ops: through NumPy
    if not evaluates(op, etype):
        return None
    bits, signed = _BITS[etype]
    top = (1 << (bits - signed)) - 1
    low = -(1 << (bits - 1)) if signed else 0
    for v in (*a, *b):
        if type(v) is not int or not low <= v <= top:
            return None
    fn = _PY_BINARY.get(op)
    out = []
    if fn is not None:
        for i, j in pairs:
            out.append(fn(a[i], b[j]))
        if op not in _COMPARISONS:
            out = [wrapped(v, etype) for v in out]
    elif op in ("Divide", "Mod", "FloorMod"):
        zero_at_top = op in _ZERO_AT_MAX and bits // 8 in _ZERO_AT_MAX[op]
        for i, j in pairs:
            x, y = a[i], b[j]
            if zero_at_top and top in (x, y):
                if op == "FloorMod":
                    return None
                out.append(0)
                continue
            if op == "FloorMod":
                if y == 0 or (bits == 64 and max(abs(x), abs(y)) >= 1 << 53):
                    return None
                out.append(x % y)
                continue
            q = _py_divide(x, y, pythondiv if op == "Divide" else False, etype)
            if q is None:
                return None
            out.append(wrapped(q if op == "Divide" else x - q * y, etype))
    else:
        return NotImplemented
    values = tuple(out)
    return values, values


# -- evaluation ------------------------------------------------------------------------
def shaped_array(t):
    """``t``'s exact value as an array of its element type and static shape, else None."""
    dims = t.shape.dims
    if dims is None or any(d.lo != d.hi for d in dims):
        return None
    packed = t.packed
    if packed is not None and t.etype in DTYPES:  # no tuple built and dropped
        arr = exact_array_of(packed, t.etype)
    else:
        arr = exact_array(t.value, t.etype)
    if arr is None:
        return None
    shape = tuple(d.lo for d in dims)
    size = 1
    for d in shape:
        size *= d
    return arr.reshape(shape) if size == arr.size else None


#: the binary ops whose value is 0 where an integer input holds its type's maximum, by
#: the byte sizes of the types where OpenVINO 2026.4 does so (FloorMod of 64-bit types
#: gives 0 or its value there, as the ops after it decide: no value)
_ZERO_AT_MAX = {"Divide": (4, 8), "Mod": (4, 8), "FloorMod": (8,)}


def _compute_dtype(etype: str) -> str:
    """f16 and bf16 compute in f32 and round back (OpenVINO converts them so)."""
    return "float32" if etype in ("f16", "bf16") else DTYPES[etype]


def _int_divide(a, b, floor: bool):
    """C's integer division (toward zero), or Python's floor with ``floor``; None on a
    division OpenVINO refuses (by zero) or that traps (the minimum by -1)."""
    if (b == 0).any():
        return None
    if a.dtype.kind == "i" and ((a == np.iinfo(a.dtype).min) & (b == -1)).any():
        return None
    q = np.floor_divide(a, b)
    r = a - q * b
    if not floor:  # Python floors; C truncates: one up where the signs differ
        q = np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q)
    return q


def _c_mod(a, b):
    q = _int_divide(a, b, floor=False)
    return None if q is None else a - q * b


def _floor_mod(a, b):
    """In double, cast back (an i64 beyond 2^53 is rounded on the way, as OpenVINO's
    reference rounds it): reals as ``x - y * floor(x / y)``, integers as C's ``fmod``
    moved to the divisor's sign (what OpenVINO 2026.4 gives, by experiment)."""
    if a.dtype.kind in "iu" and (b == 0).any():
        return None
    if a.dtype.itemsize == 8 and a.dtype.kind in "iu" and (
            (np.abs(a.astype(np.float64)) >= 2.0 ** 53)
            | (np.abs(b.astype(np.float64)) >= 2.0 ** 53)).any():
        return None  # past 2^53 its evaluate and its bounds (what shapes read) differ
    x, y = a.astype(np.float64), b.astype(np.float64)
    if a.dtype.kind == "f":
        return x - y * np.floor(x / y)
    r = np.fmod(x, y)
    return np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


def _power(a, b):
    if a.dtype.kind in "iu":  # std::pow on doubles, cast back
        return np.power(a.astype(np.float64), b.astype(np.float64))
    return c_math2("pow", a, b, single=a.dtype != np.float64)


_BINARY = {
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "Maximum": lambda a, b: np.where(a < b, b, a),  # std::max
    "Minimum": lambda a, b: np.where(b < a, b, a),  # std::min
    "Mod": _c_mod,
    "FloorMod": _floor_mod,
    "Power": _power,
    "SquaredDifference": lambda a, b: (a - b) * (a - b),
    "Equal": lambda a, b: a == b,
    "NotEqual": lambda a, b: a != b,
    "Less": lambda a, b: a < b,
    "LessEqual": lambda a, b: a <= b,
    "Greater": lambda a, b: a > b,
    "GreaterEqual": lambda a, b: a >= b,
    "LogicalAnd": lambda a, b: a & b,
    "LogicalOr": lambda a, b: a | b,
    "LogicalXor": lambda a, b: a ^ b,
}


def binary(op: str, ta, tb, mode: str = "numpy", pythondiv: bool = True,
           limit: int = 1024):
    """The exact value of binary ``op`` on two exact inputs as OpenVINO's ``evaluate``
    computes it (in the first input's type; comparisons give booleans), or None when
    OpenVINO does not evaluate it or an input is not exact."""
    etype = ta.etype
    if not evaluates(op, etype) or tb.etype != etype or mode == "pdpd":
        return None
    a, b = shaped_array(ta), shaped_array(tb) if ta.value is not None else None
    if a is None or b is None or (mode == "none" and a.shape != b.shape):
        return None
    try:
        out_shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return None
    if int(np.prod(out_shape)) > limit:
        return None
    work = _compute_dtype(etype)
    a, b = a.astype(work), b.astype(work)
    with np.errstate(all="ignore"):
        if op == "Divide":
            out = _int_divide(a, b, pythondiv) if a.dtype.kind in "iu" else a / b
        else:
            out = _BINARY[op](a, b)
    if out is None:
        return None
    out = np.broadcast_to(out, out_shape)
    if op in _ZERO_AT_MAX and a.dtype.kind in "iu" and a.dtype.itemsize in _ZERO_AT_MAX[op]:
        # OpenVINO's bounds read the type's maximum as "no bound", and these ops give 0
        # there (``max / -2`` is 0 in a shape; measured on 2026.4)
        top = np.iinfo(a.dtype).max
        at = (np.broadcast_to(a, out_shape) == top) | (np.broadcast_to(b, out_shape) == top)
        if op == "FloorMod":  # 0 or the value, by what follows it: not known here
            return None if at.any() else value_of(out, etype)
        out = np.where(at, out.dtype.type(0), out)
    return value_of(out, "boolean" if out.dtype == np.bool_ else etype)


def _round_away(x):
    """C's ``std::round``: half away from zero, exactly (no ``x + 0.5`` rounding)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


#: how OpenVINO brings a real result back to an integer type, per math op (its
#: references round some and truncate others: measured on 2026.4)
def _trunc(x):
    return np.trunc(x)


_INT_RESULT = {"Sqrt": _round_away, "Exp": _trunc, "Log": _trunc, "Sin": _trunc,
               "Cos": _round_away, "Tan": _round_away, "Atan": _round_away,
               "Sinh": _round_away, "Cosh": _round_away, "Asinh": _round_away,
               "Tanh": _round_away}
#: the C library function of each math op (OpenVINO calls ``std::sinh`` and the like:
#: the ``float`` one for the real types, the ``double`` one for integers)
_MATH = {"Sqrt": "sqrt", "Exp": "exp", "Log": "log", "Sin": "sin", "Cos": "cos",
         "Tan": "tan", "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "asinh",
         "Tanh": "tanh", "Erf": "erf"}


def _relu(x):
    """``x < 0 ? 0 : x``: -0.0 and NaN pass as they are."""
    return np.where(x < 0, np.zeros_like(x), x)


_UNARY = {
    "Negative": lambda x: -x,
    "Abs": lambda x: x if x.dtype.kind == "u" else np.abs(x),  # |-0.0| is 0.0
    "Relu": _relu,
    "Sign": lambda x: np.sign(x) if x.dtype.kind != "u" else (x > 0).astype(x.dtype),
    "Floor": lambda x: x if x.dtype.kind in "iu" else np.floor(x),
    "Ceiling": lambda x: x if x.dtype.kind in "iu" else np.ceil(x),
    "LogicalNot": lambda x: ~x,
}


_PY_UNARY = {"Negative": lambda v: -v, "Abs": abs, "Relu": lambda v: 0 if v < 0 else v,
             "Sign": lambda v: (v > 0) - (v < 0), "Floor": lambda v: v,
             "Ceiling": lambda v: v, "Round": lambda v: v}


def unary(op: str, t, mode: str | None = None):
    """The exact value of a one-input op on an exact input as OpenVINO evaluates it, or
    None. ``mode`` is Round's. The math ops compute in double and round to the type
    (C's correctly rounded ``float`` functions give the same, where NumPy's own float32
    ones may differ in the last bit)."""
    etype = t.etype
    if not evaluates(op, etype):
        return None
    if etype in _BITS and op in _PY_UNARY:  # plain Python: no NumPy for a shape value
        lo, hi = t.value
        if lo == hi and all(type(v) is int for v in lo):
            fn = _PY_UNARY[op]
            values = tuple([wrapped(fn(v), etype) for v in lo])
            return values, values
    if etype == "boolean" and op == "LogicalNot":
        values = tuple([int(not v) for v in t.value[0]])
        return (values, values) if t.value[0] == t.value[1] else None
    x = exact_array(t.value, etype)
    if x is None:
        return None
    with np.errstate(all="ignore"):
        if op == "Sigmoid":  # 1 / (1 + exp(-x)) in float (reals only here)
            if x.dtype.kind in "iu":
                return None
            single = etype != "f64"
            w = x.astype(np.float32 if single else np.float64)
            e = c_math("exp", -w, single)
            out = w.dtype.type(1) / (w.dtype.type(1) + e)
        elif op in _MATH:
            integral = x.dtype.kind in "iu"
            if integral and op not in _INT_RESULT:
                return None
            out = c_math(_MATH[op], x, single=etype != "f64" and not integral)
            if integral:  # NaN and infinities then cast as C casts them
                out = _INT_RESULT[op](out)
        elif op == "Round":
            if x.dtype.kind in "iu":
                out = x
            else:
                w = x.astype(_compute_dtype(etype))
                out = np.rint(w) if mode == "half_to_even" else _round_away(w)
        else:
            out = _UNARY[op](x.astype(_compute_dtype(etype)) if etype in REALS else x)
    return value_of(out, "boolean" if out.dtype == np.bool_ else etype)


def clamp(t, low: float, high: float):
    """Clamp of an exact value: reals clamp in their type (the limits cast to it),
    integers to ``ceil(min)..floor(max)`` (limits beyond the type: its ends)."""
    etype = t.etype
    x = exact_array(t.value, etype) if evaluates("Clamp", etype) else None
    if x is None:
        return None
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        lo = int(max(min(np.ceil(low), info.max), info.min))
        hi = int(max(min(np.floor(high), info.max), info.min))
    else:
        w = x.astype(_compute_dtype(etype))
        lo, hi = in_type(np.array([low]), etype)[0], in_type(np.array([high]), etype)[0]
    # OpenVINO's reference: below min is min, else above max is max (min > max: no swap)
    out = np.where(x < lo, lo, np.where(x > hi, hi, x)) if x.dtype.kind in "iu" \
        else np.where(w < lo, lo, np.where(w > hi, hi, w))
    return value_of(out, etype)


def _kahan(values, dtype):
    """OpenVINO's sum of one group: Kahan's compensated sum for reals (a plain one once
    an addend or the sum is not finite), C's wrapping sum for integers."""
    total, comp = dtype.type(0), dtype.type(0)
    real = dtype.kind == "f"
    for v in values:
        if real and np.isfinite(v) and np.isfinite(total):
            y = v - comp
            temp = total + y
            comp = (temp - total) - y
            total = temp
        else:
            total = total + v
    return total


def _plain_sum(values, dtype):
    total = dtype.type(0)
    for v in values:
        total = total + v
    return total


def _py_mean(values: list, etype: str) -> int:
    total = wrapped(sum(values), etype)
    q = abs(total) // len(values)
    return q if total >= 0 else -q


def _py_prod(values: list) -> int:
    out = 1
    for v in values:
        out *= v
    return out


_PY_REDUCE = {"ReduceSum": lambda v, t: sum(v), "ReduceProd": lambda v, t: _py_prod(v),
              "ReduceMax": lambda v, t: max(v), "ReduceMin": lambda v, t: min(v),
              "ReduceMean": _py_mean, "ReduceL1": lambda v, t: sum(map(abs, v))}


def reduction_groups(dims: list[int], axes: tuple[int, ...]) -> list[list[int]] | None:
    """The flat indices each output element of a reduction over ``axes`` reads, in
    output order; None when one reads nothing (a reduced dim of 0).

    >>> reduction_groups([2, 3], (0,))
    [[0, 3], [1, 4], [2, 5]]
    """
    rank = len(dims)
    moved = sorted({a % rank for a in axes}) if rank else []
    if math.prod(dims[a] for a in moved) == 0:
        return None
    # plain Python on these few elements: numpy's import alone costs a small check more
    strides = [math.prod(dims[i + 1:]) for i in range(rank)]
    kept = [i for i in range(rank) if i not in moved]
    spans = [sum(k * strides[i] for i, k in zip(moved, at, strict=True))
             for at in itertools.product(*(range(dims[i]) for i in moved))]
    return [[base + span for span in spans]
            for base in (sum(k * strides[i] for i, k in zip(kept, at, strict=True))
                         for at in itertools.product(*(range(dims[i]) for i in kept)))]


def _py_groups(t, axes):
    """The flat indices each output element reduces, row-major (None: no plain case)."""
    dims = t.shape.dims
    if dims is None or any(d.lo != d.hi for d in dims) or t.value is None \
            or t.value[0] != t.value[1] or any(type(v) is not int for v in t.value[0]):
        return None
    dims = [d.lo for d in dims]
    if math.prod(dims) != len(t.value[0]):
        return None
    return reduction_groups(dims, axes)


def reduce(op: str, t, axes: tuple[int, ...]):
    """The exact value of a reduction as OpenVINO's reference computes it (sums in the
    type with Kahan's compensation for reals; a mean divides the sum by the count in the
    type, so integers truncate), or None."""
    etype = t.etype
    if not evaluates(op, etype):
        return None
    if etype in _BITS and t.packed is None and op in _PY_REDUCE:
        groups = _py_groups(t, axes)
        if groups is not None:
            fn, v = _PY_REDUCE[op], t.value[0]
            values = tuple([wrapped(fn([v[k] for k in g], etype), etype) for g in groups])
            return values, values
    x = shaped_array(t)
    if x is None:
        return None
    rank = x.ndim
    moved = sorted({a % rank for a in axes}) if rank else []
    kept = [i for i in range(rank) if i not in moved]
    if any(x.shape[a] == 0 for a in moved):
        return None
    work = np.dtype(_compute_dtype(etype)) if etype != "boolean" else np.dtype(bool)
    groups = np.transpose(x.astype(work), kept + moved).reshape(
        [x.shape[i] for i in kept] + [-1])
    flat = groups.reshape(-1, groups.shape[-1]) if groups.ndim > 1 else groups.reshape(1, -1)
    with np.errstate(all="ignore"):
        out = np.array([_group(op, g, work) for g in flat], dtype=work)
    return value_of(out, "boolean" if work == np.bool_ else etype)


def _group(op: str, g, work):
    if op == "ReduceSum":
        return _kahan(g, work)
    if op == "ReduceMean":
        return _kahan(g, work) / work.type(len(g)) if work.kind == "f" \
            else _int_divide(np.array([_kahan(g, work)]), np.array([len(g)], work), False)[0]
    if op == "ReduceProd":
        return np.multiply.reduce(g, dtype=work)
    if op in ("ReduceMax", "ReduceMin"):  # std::max/std::min from the type's far end
        big = op == "ReduceMax"
        info = np.finfo(work) if work.kind == "f" else np.iinfo(work)
        acc = work.type(info.min if big else info.max)
        for v in g:
            acc = v if ((acc < v) if big else (v < acc)) else acc
        return acc
    if op == "ReduceL1":  # a plain sum, in order
        return _plain_sum(np.abs(g), work)
    if op == "ReduceL2":
        return np.sqrt(_plain_sum(g * g, work))
    if op == "ReduceLogicalAnd":
        return bool(np.all(g))
    if op == "ReduceLogicalOr":
        return bool(np.any(g))
    raise ValueError(op)


def matmul(ta, tb, transpose_a: bool, transpose_b: bool):
    """MatMul of two exact values in their type (a 1-D side is never transposed); the
    products are summed in the type, in order (reals: float32 accumulation)."""
    etype = ta.etype
    if not evaluates("MatMul", etype) or tb.etype != etype:
        return None
    x, y = shaped_array(ta), shaped_array(tb)
    if x is None or y is None:
        return None
    work = _compute_dtype(etype)
    x, y = x.astype(work), y.astype(work)
    x = x.swapaxes(-1, -2) if transpose_a and x.ndim > 1 else x
    y = y.swapaxes(-1, -2) if transpose_b and y.ndim > 1 else y
    with np.errstate(all="ignore"):
        try:
            out = np.matmul(x, y)
        except ValueError:
            return None
        if out.dtype.kind == "f":  # the products summed in k's order, each op rounded
            x2 = x[..., None, :] if x.ndim == 1 else x
            y2 = y[..., :, None] if y.ndim == 1 else y
            acc = np.zeros(np.broadcast_shapes(x2.shape[:-1] + (1,), y2.shape[:-2] + (
                1, y2.shape[-1])), dtype=x.dtype) if x2.shape[-1] else None
            for k in range(x2.shape[-1]):
                acc = acc + x2[..., :, k:k + 1] * y2[..., k:k + 1, :]
            if acc is not None:
                out = acc.reshape(out.shape)
    return value_of(out, etype)


def gathered(data, indices, axis: int):
    """Gather (no batch dims) of an exact value by exact indices along ``axis``;
    negative indices count from the end; None when one is out of range. Plain Python:
    a shape computation imports no NumPy."""
    dims, idx_dims = data.shape.dims, indices.shape.dims
    v, idx = data.value, indices.value
    if dims is None or idx_dims is None or not dims or v is None or idx is None \
            or v[0] != v[1] or idx[0] != idx[1] or not -len(dims) <= axis < len(dims) \
            or any(d.lo != d.hi for d in (*dims, *idx_dims)):
        return None
    dims = [d.lo for d in dims]
    axis %= len(dims)
    if math.prod(dims) != len(v[0]) or math.prod(d.lo for d in idx_dims) != len(idx[0]):
        return None
    n, vals = dims[axis], v[0]
    if any(type(k) is not int or not -n <= k < n for k in idx[0]):
        return None
    inner = math.prod(dims[axis + 1:])
    out: list = []
    for outer in range(math.prod(dims[:axis])):
        for k in idx[0]:
            base = (outer * n + k % n) * inner
            out.extend(vals[base:base + inner])
    values = tuple(out)
    return values, values
