"""Reductions (ReduceSum/Prod/Max/Min/Mean/L1/L2, ReduceLogical*) and MatMul.

A reduction drops its axes, or keeps them as 1 with ``keep_dims``; with axes that are
not constants the rank is still known under ``keep_dims`` or when there is one axis.

>>> from ovgather.shapes import PartialShape as P
>>> str(matmul_shape(P.parse("[2,?,3,4]"), P.parse("[4,5]"), False, False))
'[2,?,3,5]'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import INF, Dimension, PartialShape
from .core import numeric
from .core.dims import broadcast_shapes, normalize_axis
from .core.inputs import InputMaker
from .core.spec import Attrs, Rule, Trace, specs_of
from .core.values import (
    MAX_VALUE_SIZE,
    Tensor,
    bound_arrays,
    exact_ints,
    shape_of_len,
    static_size,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Expr, Facts, Sym

__all__ = ["reduce_shape", "matmul_shape", "SPECS"]

ONE = Dimension.static(1)


def reduce_shape(shape: PartialShape, axes: tuple[int, ...], keep_dims: bool) -> PartialShape:
    """The output of a reduction over ``axes`` (negative axes allowed)."""
    dims = shape.dims
    if dims is None:
        return shape
    rank = len(dims)
    drop = {normalize_axis(a, max(rank, 1), "a reduction axis") for a in axes}
    if keep_dims:
        return PartialShape.of(tuple(ONE if i in drop else d for i, d in enumerate(dims)))
    return PartialShape.of(tuple(d for i, d in enumerate(dims) if i not in drop))


def _mean(values: list) -> int | float:
    """The mean as OpenVINO's reference computes it: integers divide truncating."""
    total, n = sum(values), len(values)
    if isinstance(total, float):
        return total / n
    return total // n if total >= 0 else -(-total // n)


_FOLD = {
    "ReduceSum": sum,
    "ReduceProd": math.prod,
    "ReduceMax": max,
    "ReduceMin": min,
    "ReduceMean": _mean,
    "ReduceL1": lambda values: sum(abs(v) for v in values),
    "ReduceLogicalAnd": lambda values: int(all(values)),
    "ReduceLogicalOr": lambda values: int(any(values)),
}


def _folded(op: str, t: Tensor, axes: tuple[int, ...]):
    """A reduction of a value: exact values fold (OpenVINO evaluates the op); for
    ReduceProd/Max/Min the bounds fold too, each side on its own as OpenVINO's default
    bound evaluator runs the op on the lower and on the upper bounds, whatever their
    signs (ReduceMin over ``-5..-3`` and ``2..3`` is ``-5..-3``; a ReduceProd may even
    end with its lower bound above its upper one, as OpenVINO 2026.4 has it). ReduceSum's
    and the others' bounds do not fold in OpenVINO. Each output element reduces one group
    of input elements; ``keep_dims`` only adds ones to the shape, not to the order."""
    fn, v, size = _FOLD.get(op), t.value, static_size(t.shape)
    if fn is None or v is None or not v[0] or size != len(v[0]) \
            or not all(isinstance(a, int) for a in axes):
        return None
    groups = numeric.reduction_groups([d.lo for d in t.shape.dims], axes)
    if groups is None:
        return None
    lo, hi = v
    if lo == hi:
        return numeric.reduce(op, t, axes)
    if not numeric.evaluates(op, t.etype) or op not in ("ReduceMax", "ReduceMin", "ReduceProd"):
        return None
    if op != "ReduceProd":
        return tuple(fn([lo[k] for k in g]) for g in groups), \
            tuple(fn([hi[k] for k in g]) for g in groups)
    top = _top_of(t.etype)
    if top is None:
        return None
    if any(x >= top for x in hi) and 0 not in hi:
        # OpenVINO writes the type's maximum as the upper bound of the first element only
        low = _prod(lo, t.etype)
        return ((low,), (INF,)) if len(groups) == 1 and low is not None else None
    lows = tuple(_prod([lo[k] for k in g], t.etype) for g in groups)
    highs = tuple(_prod([hi[k] for k in g], t.etype) for g in groups)
    return None if None in lows or None in highs else (lows, highs)


def _top_of(etype: str) -> int | None:
    """The largest value of an integer type: an upper bound there means none."""
    bits = {"i32": 31, "i64": 63, "u32": 32, "u64": 64}.get(etype)
    return None if bits is None else (1 << bits) - 1


def _prod(values, etype: str) -> int | None:
    """The product of bounds in the type as OpenVINO's ReduceProd computes it (wrapping);
    None when one of them is no number (an unknown end)."""
    if 0 in values:
        return 0
    if any(x >= INF or x <= -INF for x in values):
        return None
    return numeric.wrapped(math.prod(values), etype)


def _unknown_axes_shape(shape: PartialShape, axes: Tensor, keep: bool) -> PartialShape:
    """Axes known only by their shape: with ``keep_dims`` the rank stays; without, one
    axis drops one dim (which one is unknown) and more axes leave the rank unknown, as
    OpenVINO 2026.4.1 has it (they might repeat).

    >>> from ovgather.shapes import PartialShape as P
    >>> str(_unknown_axes_shape(P.parse("[2,3,4]"), Tensor(P.parse("[1]"), "i64"), False))
    '[?,?]'
    """
    dims = shape.dims
    if dims is None:
        return shape
    if keep:
        return PartialShape.dynamic(len(dims))
    if shape_of_len(axes) == 1:
        return PartialShape.dynamic(max(len(dims) - 1, 0))
    return PartialShape.dynamic()


def _reduce(op: str, boolean: bool = False) -> Rule:
    def rule(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
        t = ins[0]
        etype = "boolean" if boolean else t.etype
        keep = data.bool("keep_dims", False)
        axes = exact_ints(ins[1])
        if axes is None:
            return [Tensor(_unknown_axes_shape(t.shape, ins[1], keep), etype)]
        return [Tensor(reduce_shape(t.shape, axes, keep), etype, _folded(op, t, axes))]

    return rule


def matmul_shape(a: PartialShape, b: PartialShape, ta: bool, tb: bool) -> PartialShape:
    """MatMul: ``[..., M, K] x [..., K, N] → broadcast(...) + [M, N]`` (1-D inputs lose
    their unit dim again)."""
    da, db = a.dims, b.dims
    if da is None or db is None:
        return PartialShape.dynamic()
    if not da or not db:
        raise ShapeInferenceError("MatMul inputs must not be scalars")
    a1, b1 = len(da) == 1, len(db) == 1
    if a1:
        da = (ONE,) + da
    elif ta:
        da = da[:-2] + (da[-1], da[-2])
    if b1:
        db = db + (ONE,)
    elif tb:
        db = db[:-2] + (db[-1], db[-2])
    if da[-1].merge(db[-2]) is None:
        raise ShapeInferenceError(
            f"MatMul needs the inner dims equal, but got {da[-1]} and {db[-2]} "
            f"(shapes {a} and {b})"
        )
    batch = broadcast_shapes(PartialShape.of(da[:-2]), PartialShape.of(db[:-2])).dims or ()
    rows = () if a1 else (da[-2],)
    cols = () if b1 else (db[-1],)
    return PartialShape.of(batch + rows + cols)


def _matmul(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    ta = data.bool("transpose_a", False)
    tb = data.bool("transpose_b", False)
    shape = matmul_shape(ins[0].shape, ins[1].shape, ta, tb)
    return [Tensor(shape, ins[0].etype, _product_value(ins[0], ins[1], ta, tb, shape))]


def _product_value(a: Tensor, b: Tensor, ta: bool, tb: bool, out: PartialShape):
    """MatMul of two exact values folds (OpenVINO evaluates it; it has no bounds), in
    the element type (integers wrap, f16 and bf16 through f32). The side already known
    is asked first: an activation times weights costs no weight read."""
    if any(t.value is None for t in sorted((a, b), key=lambda t: t.pending)):
        return None
    sides = [bound_arrays(t) for t in (a, b)]
    size = static_size(out)
    if None in sides or size is None or size > MAX_VALUE_SIZE \
            or any(t.value[0] != t.value[1] for t in (a, b)):
        return None
    return numeric.matmul(a, b, ta, tb)


_RULES: dict[str, Rule] = {
    **{op: _reduce(op) for op in (
        "ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1",
        "ReduceL2")},
    "ReduceLogicalAnd": _reduce("ReduceLogicalAnd", True),
    "ReduceLogicalOr": _reduce("ReduceLogicalOr", True),
    "MatMul": _matmul,
}


# -- symbolic dims (infer --symbols) -----------------------------------------------------
def _symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """Reductions drop (or keep as 1) their axes and fold a 1-D value (``ReduceProd``
    of a shape is the element count); MatMul's inner dims must be equal."""
    from .core.symbolic import FOLDS, Sym, const
    if facts.op == "MatMul":
        return _matmul_symbolic(ins, data, facts)
    x, axes = ins[0], exact_ints(facts.inputs[1])
    if x.dims is None or axes is None:
        return None
    rank = len(x.dims)
    gone = {normalize_axis(a, max(rank, 1), "a reduction axis") for a in axes}
    keep = data.bool("keep_dims", False)
    out = [const(1) if i in gone else d for i, d in enumerate(x.dims) if keep or i not in gone]
    fold = FOLDS.get(facts.op)
    value = None
    if fold is not None and x.value is not None and rank <= 1 and None not in x.value \
            and x.value:
        value = [fold(list(x.value))] if rank == 0 or gone == {0} else list(x.value)
    return [Sym(out, value)]


def _matmul_symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    from .core.symbolic import Sym, broadcast, const
    da, db = ins[0].dims, ins[1].dims
    if not da or not db:
        return None
    one = const(1)
    a1, b1 = len(da) == 1, len(db) == 1
    da = (one,) + da if a1 else da[:-2] + (da[-1], da[-2]) \
        if data.bool("transpose_a", False) else da
    db = db + (one,) if b1 else db[:-2] + (db[-1], db[-2]) \
        if data.bool("transpose_b", False) else db
    facts.equal(da[-1], db[-2])
    n = max(len(da), len(db)) - 2
    pa = [one] * (n - len(da) + 2) + list(da[:-2])
    pb = [one] * (n - len(db) + 2) + list(db[:-2])
    batch: list[Expr] = [broadcast(x, y, facts) for x, y in zip(pa, pb, strict=True)]
    return [Sym(batch + ([] if a1 else [da[-2]]) + ([] if b1 else [db[-1]]))]


class _ReduceInputs(InputMaker):
    """Valid axes for a run that feeds them (a Parameter): zeros, the usual integer
    input, repeat the axis 0 when there are several."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """Input 1: the axes ``0 .. n-1`` (distinct, each inside the data's rank)."""
        data, axes = (shapes + [None, None])[:2]
        if data is None or axes is None:
            return {}
        n = axes[0] if axes else 1
        return {1: list(range(n))} if n <= len(data) else {}


SPECS = [*specs_of({"MatMul": _matmul}, symbolic=_symbolic),
         *specs_of({op: rule for op, rule in _RULES.items() if op != "MatMul"},
                   symbolic=_symbolic, inputs=_ReduceInputs())]
