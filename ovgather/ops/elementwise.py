"""Elementwise ops: unary ops keep the shape, binary ops broadcast (numpy rules).

The broadcast of two dims follows OpenVINO's ``Dimension::broadcast_merge``
(``core/dims.py``): ``2..4 ⊕ 5..6`` is an error.

>>> from ovgather.shapes import PartialShape as P
>>> ins = [Tensor(P.parse("[?,1,4]"), "f32"), Tensor(P.parse("[3,2..5,1]"), "f32")]
>>> str(_RULES["Add"](ins, Attrs(), None)[0].shape)
'[3,2..5,4]'

Value bounds travel through Add, Subtract, Multiply (every pair of ends, as OpenVINO),
Divide (by a divisor of one sign), Maximum and Minimum, as OpenVINO's bound evaluation does
(checked by experiment: ``Maximum(ShapeOf(x)[0], 3)`` with ``x[0]`` in ``2..3`` reaches a
Reshape as ``3``), except that an element with no upper bound makes the result element
unknown (``Minimum(?, 3)`` is ``?``, not ``..3``; the reductions keep such bounds). Equal,
Select, Convert, Clamp, Abs and the scatters carry bounds too; an op OpenVINO can evaluate
gives an exact value when its inputs are all exact (it folds it). docs/evaluation.md has
the table, op by op.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import TYPE_CHECKING

from .._lazy import numpy as np
from ..element_types import FLOAT_VALUE_TYPES
from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, PartialShape
from .core import data_checks as checks
from .core import numeric
from .core.casts import converted
from .core.dims import broadcast_shapes
from .core.folds import cumsum_value
from .core.intervals import exact_mod, mod_bounds, mod_top
from .core.numeric import evaluates
from .core.spec import Attrs, Rule, Trace, specs_of
from .core.values import (
    INF,
    INT_TYPES,
    NINF,
    UNBOUNDED,
    Tensor,
    Value,
    bound_arrays,
    exact_ints,
    exact_scalar,
    static_size,
    value_of_arrays,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["SPECS"]


UNARY = (
    "Acos Acosh Asin Asinh Atan Atanh Ceiling Cos Cosh Elu Erf Exp Floor Gelu "
    "HSigmoid HSwish Log Mish Round Selu Sigmoid Sin Sinh "
    "SoftPlus SoftSign Sqrt Swish Tan Tanh Result Identity MVN NormalizeL2 LRN "
    "GRN PRelu ReverseSequence ErfInv ScatterUpdate "
    "ScatterNDUpdate ScatterElementsUpdate Roll Reverse"
).split()
BINARY = (
    "Add Subtract Multiply Divide Power Maximum Minimum SquaredDifference FloorMod Mod "
    "BitwiseAnd BitwiseOr BitwiseXor BitwiseLeftShift BitwiseRightShift"
).split()
LOGICAL = (
    "Equal NotEqual Less LessEqual Greater GreaterEqual LogicalAnd LogicalOr LogicalXor"
).split()


def _merge_shapes(a: PartialShape, b: PartialShape) -> PartialShape:
    m = a.merge(b)
    if m is None:
        raise ShapeInferenceError(
            f"with auto_broadcast none the input shapes must be equal, but got {a} and {b}"
        )
    return m


def _out_shape(ins: list[Tensor], data: dict[str, str]) -> PartialShape:
    mode = data.text("auto_broadcast", "numpy").lower()
    shape = ins[0].shape
    for t in ins[1:]:
        if mode == "none":
            shape = _merge_shapes(shape, t.shape)
        elif mode == "pdpd":
            continue  # the second input broadcasts into the first
        else:
            shape = broadcast_shapes(shape, t.shape)
    return shape


def _add(a: int, b: int) -> int:
    if a >= INF or b >= INF:
        return INF
    if a <= NINF or b <= NINF:
        return NINF
    return a + b


#: The most elements a value broadcast across dims (``[n,1]`` with ``[1,m]``) may have:
#: shape computations are that small, and following Swin's shifted-window masks, which
#: broadcast so, cost its check half as much time again.
BROADCAST_VALUE_SIZE = 64


def _pairs(a: Tensor, b: Tensor) -> list[tuple[int, int]] | None:
    """The element pairs a numpy broadcast of ``a`` and ``b`` combines, in output order
    (``[2,1]`` with ``[4]`` gives 8); None when the shapes are not both static, the
    values do not fill them, or the broadcast is larger than ``BROADCAST_VALUE_SIZE``."""
    na, nb = len(a.value[0]), len(b.value[0])
    if a.shape == b.shape and na == nb:
        return [(i, i) for i in range(na)]
    if 1 in (na, nb) and a.shape.rank == b.shape.rank:
        return [(i if na > 1 else 0, i if nb > 1 else 0) for i in range(max(na, nb))]
    sa, sb = static_size(a.shape), static_size(b.shape)
    if sa != na or sb != nb:
        return None
    # plain Python on these few elements: numpy's import alone costs a small check more
    da, db = [d.lo for d in a.shape.dims], [d.lo for d in b.shape.dims]
    rank = max(len(da), len(db))
    da, db = [1] * (rank - len(da)) + da, [1] * (rank - len(db)) + db
    if any(x != y and 1 not in (x, y) for x, y in zip(da, db, strict=True)):
        return None
    out = [max(x, y) if 0 not in (x, y) else 0 for x, y in zip(da, db, strict=True)]
    if math.prod(out) > BROADCAST_VALUE_SIZE:
        return None
    steps = [[math.prod(d[i + 1:]) if d[i] > 1 else 0 for i in range(rank)] for d in (da, db)]
    return [tuple(sum(k * s for k, s in zip(at, step, strict=True)) for step in steps)
            for at in itertools.product(*(range(n) for n in out))]


def _pairwise(ta: Tensor, tb: Tensor, fn, unbounded_unknown: bool = True) -> Value | None:
    """``fn`` on each pair of elements the broadcast combines; with
    ``unbounded_unknown``, an inexact element without upper bound gives ``?`` whatever
    ``fn`` says, as OpenVINO's arithmetic bounds do."""
    pairs = _pairs(ta, tb)
    if pairs is None:
        return None
    a, b = ta.value, tb.value
    out_lo, out_hi = [], []
    for ia, ib in pairs:
        if unbounded_unknown and (a[1][ia] >= UNBOUNDED or b[1][ib] >= UNBOUNDED):
            if a[0][ia] != a[1][ia] or b[0][ib] != b[1][ib]:
                out_lo.append(0)  # OpenVINO: an unbounded input makes the element unknown
                out_hi.append(INF)
                continue
        r = fn(a[0][ia], a[1][ia], b[0][ib], b[1][ib])
        if r is None:
            return None
        out_lo.append(r[0])
        out_hi.append(r[1])
    return tuple(out_lo), tuple(out_hi)


def _sub_bounds(alo, ahi, blo, bhi):
    return _add(alo, -bhi if bhi < INF else NINF), _add(ahi, -blo if blo > NINF else INF)


def _divided(div):
    """Divide's bounds as OpenVINO evaluates them: by a divisor that stays positive, the
    low end over the divisor's high end and the high end over its low end (the other way
    round when it stays negative); a divisor that may change sign bounds nothing, and a
    divisor end at 0 leaves the high end unbounded."""

    def bounds(alo, ahi, blo, bhi):
        if alo <= NINF or blo <= NINF:
            return None
        positive, negative = bhi > 0, blo < 0
        if positive and negative:
            return NINF, INF
        lo_a, lo_b, hi_a, hi_b = (alo, bhi, ahi, blo) if positive else (ahi, blo, alo, bhi)
        if lo_b == 0:
            return None
        return div(lo_a, lo_b), INF if hi_b == 0 else div(hi_a, hi_b)

    return bounds


_div_bounds = _divided(lambda a, b: a // b)


def _exact(fn):
    """Bounds only when both elements are exact: OpenVINO then evaluates the op itself."""

    def bounds(alo, ahi, blo, bhi):
        if alo != ahi or blo != bhi or abs(alo) >= INF or abs(blo) >= INF:
            return None
        try:
            r = fn(alo, blo)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return None if r is None else (r, r)

    return bounds


_EXACT_FNS = {
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "Divide": lambda a, b: a // b,
    "Maximum": max,
    "Minimum": min,
    "FloorMod": lambda a, b: a % b,
    "Mod": lambda a, b: a - b * int(a / b),
    "Power": lambda a, b: a**b if b >= 0 else None,
}  # not SquaredDifference: OpenVINO 2026.4.1 cannot evaluate it, so it folds nothing

def _mul(a: int, b: int) -> int:
    return INF if a >= INF or b >= INF else a * b


def _mul_bounds(alo, ahi, blo, bhi):
    """OpenVINO multiplies every pair of ends and keeps the least and the greatest
    (``interval_bound_evaluator``), so ``-7..-1`` times 2 is ``-14..-2``; ends without
    bound are only followed when nothing is negative."""
    if max(abs(alo), abs(ahi), abs(blo), abs(bhi)) < UNBOUNDED:
        ends = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        return min(ends), max(ends)
    if alo < 0 or blo < 0:
        return None
    return _mul(alo, blo), _mul(ahi, bhi)


def _endwise(fn):
    """OpenVINO's default bounds of FloorMod and Power: the op on both low ends and on
    both high ends, the smaller result low (``2..6 mod 5`` is ``1..2``, odd as it is)."""

    def bounds(alo, ahi, blo, bhi):
        if min(alo, blo) <= NINF:
            return None
        try:
            x, y = fn(alo, blo), fn(ahi, bhi)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return None if x is None or y is None else (min(x, y), max(x, y))

    return bounds


def _cornered(fn):
    """OpenVINO bounds Add, Subtract, Maximum and Minimum by the least and the greatest of
    the op on the four pairs of ends, so bounds that came crossed (a ReduceProd of
    negative bounds: ``15..6``) come out in order (``15..6 + 2..10`` is ``8..25``)."""

    def bounds(alo, ahi, blo, bhi):
        if alo <= ahi and blo <= bhi:
            return fn(alo, ahi, blo, bhi)
        ends = [x for a in (alo, ahi) for b in (blo, bhi) for x in fn(a, a, b, b)]
        return min(ends), max(ends)

    return bounds


_VALUE_FNS = {
    "Add": _cornered(lambda alo, ahi, blo, bhi: (_add(alo, blo), _add(ahi, bhi))),
    "Multiply": _mul_bounds,
    "Maximum": _cornered(lambda alo, ahi, blo, bhi: (max(alo, blo), max(ahi, bhi))),
    "Minimum": _cornered(lambda alo, ahi, blo, bhi: (min(alo, blo), min(ahi, bhi))),
    "Subtract": _cornered(_sub_bounds),
    "Divide": _div_bounds,
    "FloorMod": _endwise(_EXACT_FNS["FloorMod"]),
    "Power": _endwise(_EXACT_FNS["Power"]),
    "Mod": mod_bounds,
}


_real_div_bounds = _divided(lambda a, b: a / b)


#: Real types divide truly (the integer ones floor); the rest is the same arithmetic.
_REAL_EXACT_FNS = {"Divide": lambda a, b: a / b, "FloorMod": None, "Mod": None}
_REAL_VALUE_FNS = {"Divide": _real_div_bounds, "FloorMod": None, "Mod": None}


def _binary(op: str) -> Rule:
    value_fn = _VALUE_FNS.get(op)
    real_value_fn = _REAL_VALUE_FNS.get(op, value_fn)

    def rule(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
        shape = _out_shape(ins[:2], data)
        value = None
        real = ins[0].etype in FLOAT_VALUE_TYPES
        # b's value is only read (a Const's is loaded from the weights) when a has one
        a = ins[0].value if real or ins[0].etype in INT_TYPES else None
        b = ins[1].value if a is not None else None
        if a is not None and b is not None:
            mod = op == "Mod" and not real
            if a[0] == a[1] and b[0] == b[1]:  # OpenVINO evaluates the op in the type
                value = exact_mod(a[0], b[0], _pairs(ins[0], ins[1]), mod_top(ins[0].etype)) \
                    if mod and evaluates(op, ins[0].etype) else None
                value = value or _exact_binary(op, ins, data)
            elif evaluates(op, ins[0].etype):
                bounds = real_value_fn if real else value_fn
                if mod:
                    bounds = functools.partial(mod_bounds, top=mod_top(ins[0].etype))
                value = _pairwise(ins[0], ins[1], bounds) if bounds is not None else None
        return [Tensor(shape, ins[0].etype, value)]

    return rule


def _mode(data: Attrs) -> str:
    return data.text("auto_broadcast", "numpy").lower()


def _exact_binary(op: str, ins: list[Tensor], data: Attrs) -> Value | None:
    """The exact value of a binary op as OpenVINO evaluates it: integers of the usual
    broadcasts in plain Python (a shape computation imports no NumPy), the rest through
    ``numeric.binary``."""
    pythondiv = data.bool("m_pythondiv", True)
    mode = _mode(data)
    ta, tb = ins[0], ins[1]
    if ta.etype == tb.etype and mode != "pdpd" and ta.packed is None and tb.packed is None:
        pairs = _pairs(ta, tb) if mode == "numpy" or ta.shape == tb.shape else None
        if pairs is not None:
            value = numeric.py_binary(op, ta.etype, pairs, ta.value[0], tb.value[0],
                                      pythondiv)
            if value is not NotImplemented:
                return value
    return numeric.binary(op, ta, tb, mode, pythondiv)


_COMPARE_FNS = {
    "Equal": lambda a, b: a == b,
    "NotEqual": lambda a, b: a != b,
    "Less": lambda a, b: a < b,
    "LessEqual": lambda a, b: a <= b,
    "Greater": lambda a, b: a > b,
    "GreaterEqual": lambda a, b: a >= b,
    "LogicalAnd": lambda a, b: bool(a) and bool(b),
    "LogicalOr": lambda a, b: bool(a) or bool(b),
    "LogicalXor": lambda a, b: bool(a) != bool(b),
}


def _equal_bounds(alo, ahi, blo, bhi):
    """Equal of two bounded elements, as OpenVINO 2026.4 bounds it: surely true only when
    both are exact and the same, possibly true when the intervals meet. This is how
    ONNX's ``Where(Equal(shape, -1), 1, shape)`` before an Expand keeps the shape: a
    dim (``0..``) is never -1, so the condition is exactly false."""
    return int(alo == ahi == blo == bhi), int(alo <= bhi and blo <= ahi)


def _logical(op: str) -> Rule:
    """Comparisons and logical ops: a boolean tensor of the broadcast shape. Exact
    inputs give an exact value (``1``/``0``), as OpenVINO folds them; bounds give bounds
    for Equal only (the others have no bound evaluation: checked on 2026.4.1)."""
    bounds = _equal_bounds if op == "Equal" else None

    def rule(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
        a, b = ins[0].value, ins[1].value
        value = None
        if a is not None and b is not None:
            if a[0] == a[1] and b[0] == b[1]:
                value = _exact_binary(op, ins, data)
            elif bounds is not None and evaluates(op, ins[0].etype):
                value = _pairwise(ins[0], ins[1], bounds, unbounded_unknown=False)
        return [Tensor(_out_shape(ins[:2], data), "boolean", value)]

    return rule


def _unary(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    return [Tensor(ins[0].shape, ins[0].etype)]


def _batch_norm(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """BatchNormInference keeps the data shape, its channel dim (dim 1) merged with the
    length of gamma, beta, mean and variance (one rank-1 shape for the four). Version 1
    takes ``(gamma, beta, data, mean, variance)``, version 5 puts data first
    (``batch_norm_shape_inference.hpp``).

    >>> from ovgather.shapes import PartialShape as P
    >>> c, x = Tensor(P.parse("[3]"), "f32"), Tensor(P.parse("[2,?,4,4]"), "f32")
    >>> str(_batch_norm([c, c, x, c, c], Attrs(version=1))[0].shape)
    '[2,3,4,4]'
    >>> str(_batch_norm([x, c, c, c, c], Attrs(version=5))[0].shape)
    '[2,3,4,4]'
    """
    at = 2 if data.version == 1 else 0
    x = ins[at]
    channel = PartialShape.dynamic(1)
    for t in ins[:at] + ins[at + 1:]:
        merged = channel.merge(t.shape)
        if merged is None:
            raise ShapeInferenceError(
                "gamma, beta, mean and variance must have one shape of rank 1, but got "
                + ", ".join(str(t.shape) for t in ins[:at] + ins[at + 1:]))
        channel = merged
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ShapeInferenceError(f"the data of BatchNormInference must have rank 2 or more, "
                                  f"but got {x.shape}")
    dim = (DYNAMIC if x.shape.rank is None else x.shape[1]).merge(channel[0])
    if dim is None:
        raise ShapeInferenceError(
            f"the channel dim (dim 1) of the data must equal the length of gamma, beta, mean "
            f"and variance, but got {x.shape} and {channel}")
    if dim.is_static and dim.length < 1:
        raise ShapeInferenceError(f"the channel count must be at least 1, but got {dim}")
    if x.shape.rank is None:
        return [Tensor(x.shape, x.etype)]
    return [Tensor(PartialShape.of((x.shape[0], dim, *x.shape.dims[2:])), x.etype)]


def _abs(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """Abs keeps the shape; its bounds are OpenVINO's: the smaller and the larger of the
    two bounds' absolute values, element by element (so ``|-3..3|`` is ``3``, as
    OpenVINO 2026.4.1 gives it; an unbounded low end stays unbounded, as int64's does)."""
    t, value = ins[0], ins[0].value
    if value is not None and value[0] == value[1]:
        value = numeric.unary("Abs", t)
    elif value is not None and evaluates("Abs", t.etype):
        a, b = ([v if v <= NINF else abs(v) for v in side] for side in value)
        value = tuple(map(min, a, b)), tuple(map(max, a, b))
    else:
        value = None
    return [Tensor(t.shape, t.etype, value)]


def _clamp(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """Clamp keeps the shape and clamps both bounds (OpenVINO evaluates them: ``?``
    clamped to 1..4 is ``1..4``); integers clamp to ``ceil(min)..floor(max)``."""
    t, value = ins[0], ins[0].value
    try:
        low, high = float(data.text("min", "nan")), float(data.text("max", "nan"))
    except ValueError:
        low = high = math.nan
    if value is None or math.isnan(low) or math.isnan(high) or low > high \
            or not evaluates("Clamp", t.etype):
        return [Tensor(t.shape, t.etype)]
    if value[0] == value[1]:
        return [Tensor(t.shape, t.etype, numeric.clamp(t, low, high))]
    low = NINF if low == -math.inf else low  # the walk's own "no bound"
    high = INF if high == math.inf else high
    if t.etype in INT_TYPES:
        low, high = math.ceil(low), math.floor(high)
    elif t.etype not in FLOAT_VALUE_TYPES:
        return [Tensor(t.shape, t.etype)]
    clamped = tuple(tuple(min(max(v, low), high) for v in side) for side in value)
    return [Tensor(t.shape, t.etype, clamped)]


def _flags(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """IsNaN, IsInf and IsFinite: a boolean of the input's shape."""
    return [Tensor(ins[0].shape, "boolean")]


def _bitwise_not(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """BitwiseNot-13 keeps the shape; its input must be an integer or boolean tensor."""
    etype = ins[0].etype
    if etype not in INT_TYPES and etype not in ("boolean", "dynamic"):
        raise ShapeInferenceError(
            f"BitwiseNot needs an integer or boolean input, but got {etype}")
    return [Tensor(ins[0].shape, etype)]


def _softmax(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """Softmax and LogSoftmax keep the shape; their axis must be a dim of the input
    (Softmax-1 counts from the front only, Softmax-8 and LogSoftmax-5 from either end; a
    scalar has one axis)."""
    axis, dims = data.int("axis", 1), ins[0].shape.dims
    if dims is not None:
        size = max(len(dims), 1)
        lowest = 0 if data.version == 1 else -size
        if not lowest <= axis < size:
            raise ShapeInferenceError(
                f"the axis must lie in [{lowest}, {size - 1}], but got {axis}")
    return [Tensor(ins[0].shape, ins[0].etype)]


def _hard_sigmoid(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """HardSigmoid-1 keeps the shape; alpha and beta must not be known non-scalars."""
    for t, name in zip(ins[1:3], ("alpha", "beta"), strict=False):
        if t.shape.is_static and t.shape.dims:
            raise ShapeInferenceError(f"{name} must be a scalar, but got {t.shape}")
    return [Tensor(ins[0].shape, ins[0].etype)]


#: the types whose Convert OpenVINO 2026.4 does not evaluate when it reads a shape (its
#: ``evaluate`` decodes them, its bound evaluation does not: a Reshape stays ``?``)
_NO_BOUNDS = frozenset({"f4e2m1", "f8e8m0", "f8e4m3", "f8e5m2"})


def _convert(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """Convert keeps the shape and (OpenVINO evaluates its bounds) the value: each bound
    converted as C++ casts it (integers wrap, reals truncate toward zero), then a bound at
    the input type's maximum becomes the output type's, unless either type is an integer
    of 16 bits or fewer (so ``?`` is ``..255`` in u8 and still ``?`` in u32 or f32)."""
    etype = data.text("destination_type", "dynamic")
    src = ins[0]
    if src.etype in _NO_BOUNDS:
        return [Tensor(src.shape, etype)]
    if src.unpacked is not None:  # a packed Const, decoded as OpenVINO unpacks it
        unpacked = src.unpacked
        return [Tensor(src.shape, etype, load=lambda: converted(unpacked(), src.etype, etype))]
    if src.pending:  # a Const not read yet (most are weights): converted when asked for
        return [Tensor(src.shape, etype, load=lambda: converted(src.value, src.etype, etype))]
    return [Tensor(src.shape, etype, converted(src.value, src.etype, etype))]


def _convert_like(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """ConvertLike keeps the shape and evaluates nothing when a model is read, not even
    constants (OpenVINO 2026.4.1 leaves a Reshape fed by it all ``?``)."""
    return [Tensor(ins[0].shape, ins[1].etype)]


def _select(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """Select broadcasts condition, then and else together; the type is the branches'.
    A known condition picks each element's bounds from its branch (OpenVINO evaluates
    Select on the bound tensors then); an unknown one gives no value."""
    return [Tensor(_out_shape(ins[:3], data), ins[1].etype, _selected(ins))]


def _selected(ins: list[Tensor]) -> Value | None:
    if len(ins) < 3:
        return None
    cond, a, b = (t.value for t in ins[:3])
    if cond is None or a is None or b is None or cond[0] != cond[1]:
        return None
    sizes = {len(cond[0]), len(a[0]), len(b[0])}
    n = max(sizes)
    if not sizes <= {1, n}:
        return None
    pick = [(a if cond[0][i if len(cond[0]) > 1 else 0] else b) for i in range(n)]
    at = [i if len(v[0]) > 1 else 0 for i, v in enumerate(pick)]
    return tuple(v[0][k] for v, k in zip(pick, at, strict=True)), \
        tuple(v[1][k] for v, k in zip(pick, at, strict=True))


def _scatter(rule):
    """A scatter op: the data's shape, and, when the indices (and the axis) are exact and
    ``reduction`` is ``none``, the bounds of the updates written into those of the data:
    OpenVINO evaluates the op on the lower and on the upper bounds alike (a YOLO head
    builds its Reshape target with ScatterUpdate: ``[1,4,8400]``, not ``[..1,..4,..]``).
    ``rule(data, indices, updates, ins)`` writes one side in place, or says False."""

    def op(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
        t, value = ins[0], None
        sides = bound_arrays(t) if len(ins) > 2 else None
        idx, new = (exact_ints(ins[1]), bound_arrays(ins[2])) if sides else (None, None)
        if idx is not None and new is not None and static_size(ins[1].shape) == len(idx) \
                and data.text("reduction", "none") == "none" \
                and all(isinstance(i, int) and abs(i) < INF for i in idx):
            idx = np.array(idx, dtype=np.int64).reshape([d.lo for d in ins[1].shape.dims])
            out = [side.copy() for side in sides]
            if all(rule(o, idx, n, ins) is not False for o, n in zip(out, new, strict=True)):
                value = value_of_arrays(*out)
        return [Tensor(t.shape, t.etype, value)]

    return op


def _inside(idx, size: int):
    """``idx`` with negative indices counted from the end, or None when one is out."""
    return None if ((idx < -size) | (idx >= size)).any() else idx % max(size, 1)


def _update(out, idx, new, ins: list[Tensor]) -> bool:
    """ScatterUpdate-3: ``out[..., idx[j], ...] = new[..., j, ...]`` along the axis."""
    axis = exact_scalar(ins[3]) if len(ins) > 3 else None
    if axis is None or not -out.ndim <= axis < out.ndim:
        return False
    axis %= out.ndim
    picked = _inside(idx.ravel(), out.shape[axis])
    if picked is None or new.shape != out.shape[:axis] + idx.shape + out.shape[axis + 1:]:
        return False
    new = new.reshape(out.shape[:axis] + (len(picked),) + out.shape[axis + 1:])
    for j, i in enumerate(picked.tolist()):
        out[(slice(None),) * axis + (i,)] = new[(slice(None),) * axis + (j,)]
    return True


def _update_nd(out, idx, new, ins: list[Tensor]) -> bool:
    """ScatterNDUpdate: each index tuple (the last axis of the indices) names a slice."""
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim == 0 or k > out.ndim or new.shape != idx.shape[:-1] + out.shape[k:]:
        return False
    tuples = idx.reshape(-1, k).copy()
    for axis in range(k):
        inside = _inside(tuples[:, axis], out.shape[axis])
        if inside is None:
            return False
        tuples[:, axis] = inside
    for j, where in enumerate(tuples.tolist()):
        out[tuple(where)] = new.reshape((-1,) + out.shape[k:])[j]
    return True


def _update_elements(out, idx, new, ins: list[Tensor]) -> bool:
    """ScatterElementsUpdate: each index replaces its own position's coordinate on the
    axis; indices and updates have one shape, of the data's rank."""
    axis = exact_scalar(ins[3]) if len(ins) > 3 else None
    if axis is None or not -out.ndim <= axis < out.ndim or idx.shape != new.shape \
            or idx.ndim != out.ndim:
        return False
    axis %= out.ndim
    picked = _inside(idx, out.shape[axis])
    if picked is None or any(a > b for a, b in zip(idx.shape, out.shape, strict=True)):
        return False
    for where in np.ndindex(*idx.shape):
        to = where[:axis] + (int(picked[where]),) + where[axis + 1:]
        out[to] = new[where]
    return True


def _folding(op: str) -> Rule:
    """A one-input op OpenVINO folds on exact values only, in the tensor's type (no bound
    evaluation: checked on 2026.4.1, ``Negative`` of ``2..8`` gives nothing, nor does
    Floor of ``8..64``); the shape is kept. The math ops of integers come back rounded
    or truncated as OpenVINO's references do (``numeric.unary``)."""

    def rule(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
        t = ins[0]
        value = numeric.unary(op, t, data.text("mode", "half_to_even").lower()) \
            if t.value is not None else None
        return [Tensor(t.shape, t.etype, value)]

    return rule


def _cumsum(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """CumSum keeps the shape; an exact value folds (``folds.cumsum_value``)."""
    t, axis = ins[0], exact_scalar(ins[1]) if len(ins) > 1 else 0
    value = None if axis is None or not evaluates("CumSum", t.etype) or t.value is None \
        else cumsum_value(
        t, axis, data.bool("exclusive", False), data.bool("reverse", False))
    return [Tensor(t.shape, t.etype, value)]


def _fake_quantize(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = ins[0].shape
    for t in ins[1:]:
        broadcast_shapes(shape, t.shape)
    return [Tensor(shape, ins[0].etype)]


_RULES: dict[str, Rule] = {
    **{op: _unary for op in UNARY},
    **{op: _binary(op) for op in BINARY},
    **{op: _logical(op) for op in LOGICAL},
    "Abs": _abs,
    **{op: _folding(op) for op in ("Negative", "Relu", "Sign", "Floor", "Ceiling", "Round",
                                   "LogicalNot", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tan",
                                   "Atan", "Sinh", "Cosh", "Asinh", "Tanh", "Erf",
                                   "Sigmoid")},
    "Clamp": _clamp,
    "BitwiseNot": _bitwise_not,
    "HardSigmoid": _hard_sigmoid,
    "Softmax": _softmax,
    "LogSoftmax": _softmax,
    "IsNaN": _flags,
    "IsInf": _flags,
    "IsFinite": _flags,
    "Convert": _convert,
    "ConvertLike": _convert_like,
    "Select": _select,
    "FakeQuantize": _fake_quantize,
    "CumSum": _cumsum,
    "BatchNormInference": _batch_norm,
    # not UNARY's rules: these scatter values, after OpenVINO's checks of the updates
    "ScatterUpdate": checks.validated(checks.check_scatter_update, _scatter(_update), 4),
    "ScatterNDUpdate": checks.validated(checks.check_scatter_nd, _scatter(_update_nd), 3),
    "ScatterElementsUpdate": checks.validated(checks.check_scatter_elements,
                                              _scatter(_update_elements), 4),
    "ReverseSequence": checks.reverse_sequence,
}

def _symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """Shapes broadcast (the first input's for one-input ops); integer elements of shape
    values computed (``S+1``, ``B*S``), a Select picking by a condition it can decide."""
    from .core.symbolic import EXACT_TYPES, VALUE_FUNCTIONS, elementwise, exact_quotient
    op = facts.op
    fn = VALUE_FUNCTIONS.get(op)
    if op == "Divide":
        integral = facts.outputs[0].etype in INT_TYPES
        fn = (lambda a, b: a // b) if integral else exact_quotient
    elif op == "Select":
        fn = lambda c, a, b: None if c.const is None else a if c.const else b  # noqa: E731
    elif op in ("Convert", "ConvertLike") and facts.outputs[0].etype not in EXACT_TYPES:
        fn = None  # a narrow type wraps or rounds a shape value
    broadcasting = op in BINARY or op in LOGICAL or op in ("Select", "FakeQuantize")
    if op == "BatchNormInference" or data.text("auto_broadcast", "numpy").lower() == "pdpd":
        return None
    return elementwise(ins, facts, fn, broadcasting)


SPECS = specs_of(_RULES, symbolic=_symbolic)
