"""Ops that join or cut a tensor along one axis: Concat, Split and VariadicSplit.

The output dims are sums or parts of the input dims along the axis, and a small integer
tensor (a ``ShapeOf`` output on its way to a Reshape) keeps its value with its bounds, as
OpenVINO's bound evaluation does. Checked by experiment against openvino 2026.4.1 (see
``tests/ops/test_ops_common.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import INF, Dimension, PartialShape
from .core.dims import normalize_axis
from .core.inputs import InputMaker
from .core.spec import Attrs, Trace, specs_of
from .core.values import (
    MAX_VALUE_SIZE,
    Tensor,
    Value,
    bound_arrays,
    exact_ints,
    exact_scalar,
    shape_of_len,
    static_size,
    value_of_arrays,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["SPECS"]

ONE = Dimension.static(1)


# -- Concat ----------------------------------------------------------------------------
def _concat(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    axis = data.int("axis", 0)
    ranked = [t.shape.dims for t in ins if t.shape.dims is not None]
    etype = ins[0].etype
    if not ranked:
        return [Tensor(PartialShape.dynamic(), etype)]
    rank = len(ranked[0])
    if rank == 0:
        raise ShapeInferenceError("Concat inputs must have rank at least 1, but got a scalar")
    ax = normalize_axis(axis, rank, "the Concat axis")
    out = list(ranked[0])
    out[ax] = Dimension.static(0)
    for dims in ranked:
        if len(dims) != rank:
            raise ShapeInferenceError(
                f"Concat inputs must have the same rank, but got ranks {rank} and {len(dims)}"
            )
        for i, d in enumerate(dims):
            if i == ax:
                out[i] = out[i] + d
            else:
                m = out[i].merge(d)
                if m is None:
                    raise ShapeInferenceError(
                        f"Concat inputs must agree on every dim except the axis {axis}, "
                        f"but dim {i} is {out[i]} and {d}"
                    )
                out[i] = m
    if len(ranked) < len(ins):
        out[ax] = Dimension.dynamic()
    result = Tensor(PartialShape.of(tuple(out)), etype, _concat_value(ins, rank, ax))
    if result.value is None and rank == 1 and all(t.shape.dims == (ONE,) for t in ins):
        result.parts = tuple(exact_scalar(t) if t.const else None for t in ins)
    return [result]


def _concat_value(ins: list[Tensor], rank: int, ax: int) -> Value | None:
    """The inputs' values (or bounds) joined, as OpenVINO's Concat evaluates them on any
    type and rank (its lower and upper bound tensors are concatenated alike)."""
    if rank != 1:
        sizes = [static_size(t.shape) for t in ins]
        # a Const's data is read only when every other input has a value
        if None in sizes or sum(sizes) > MAX_VALUE_SIZE \
                or any(not t.pending and t.value is None for t in ins):
            return None
        sides = [bound_arrays(t) for t in ins]
        if None in sides:
            return None
        return value_of_arrays(*(np.concatenate([side[i] for side in sides], axis=ax)
                                 for i in (0, 1)))
    lo: tuple[int, ...] = ()
    hi: tuple[int, ...] = ()
    for t in ins:
        v = t.value
        if v is None:  # OpenVINO then knows no bound of the whole result
            return None
        lo += v[0]
        hi += v[1]
    return lo, hi


# -- Split / VariadicSplit -------------------------------------------------------------
def _split(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    n = data.int("num_splits")
    dims, axis = t.shape.dims, exact_scalar(ins[1])
    if dims is None:
        return [Tensor(PartialShape.dynamic(), t.etype)] * n
    if axis is None:
        return [Tensor(PartialShape.dynamic(len(dims)), t.etype)] * n
    ax = normalize_axis(axis, len(dims), "the Split axis")
    d = dims[ax]
    if d.lo == d.hi and d.lo % n:
        raise ShapeInferenceError(
            f"Split needs the axis dim divisible by num_splits={n}, but got {d}"
        )
    if d.lo != d.hi and d.hi < n:
        raise ShapeInferenceError(
            f"Split needs an axis dim that may reach num_splits={n}, but got {d}")
    # OpenVINO divides both ends rounding down (``4..7`` in 3 parts: ``1..2``)
    part = Dimension.from_bounds(d.lo // n, d.hi if d.hi >= INF else d.hi // n)
    out = PartialShape.of(dims[:ax] + (part,) + dims[ax + 1:])
    values = _split_values(t, ax, [d.lo // n] * n) if d.lo == d.hi else None
    return [Tensor(out, t.etype, v) for v in values or [None] * n]


def _split_values(t: Tensor, ax: int, lengths: list[int]) -> list[Value] | None:
    """The bounds of each piece of a split along ``ax`` (OpenVINO splits the lower and
    the upper bound tensors alike once the axis, and the lengths, are known)."""
    size = static_size(t.shape)
    if t.value is None or size is None or size != len(t.value[0]):
        return None
    dims = [d.lo for d in t.shape.dims]
    inner = 1
    for d in dims[ax + 1:]:
        inner *= d
    outer = size // (dims[ax] * inner) if dims[ax] * inner else 0
    pieces, begin = [], 0
    for n in lengths:
        picks = [o * dims[ax] * inner + k for o in range(outer)
                 for k in range(begin * inner, (begin + n) * inner)]
        pieces.append((tuple(t.value[0][k] for k in picks), tuple(t.value[1][k] for k in picks)))
        begin += n
    return pieces


def _variadic_split(ins: list[Tensor], data: Attrs, trace: Trace | None = None):
    t = ins[0]
    dims, axis, lengths = t.shape.dims, exact_scalar(ins[1]), exact_ints(ins[2])
    if dims is None:
        return [Tensor(PartialShape.dynamic(), t.etype)] * data.n_outputs
    if axis is None:
        return [Tensor(PartialShape.dynamic(len(dims)), t.etype)] * data.n_outputs
    ax = normalize_axis(axis, len(dims), "the VariadicSplit axis")
    d = dims[ax]
    if lengths is None:  # only the axis dim is unknown
        out = PartialShape.of(dims[:ax] + (Dimension.dynamic(),) + dims[ax + 1:])
        return [Tensor(out, t.etype)] * data.n_outputs
    sizes = _split_lengths(lengths, d)
    outs = [Tensor(PartialShape.of(dims[:ax] + (part,) + dims[ax + 1:]), t.etype)
            for part in sizes]
    if d.lo == d.hi and all(p.lo == p.hi for p in sizes):
        values = _split_values(t, ax, [p.lo for p in sizes])
        for out, v in zip(outs, values or (), strict=False):
            out._value = v
    return outs


def _split_lengths(lengths: tuple[int, ...], d: Dimension) -> list[Dimension]:
    """Each piece's length along the axis, as OpenVINO's VariadicSplit gives it: the one
    -1 takes the rest of a static dim (a rest of -1 prints as ``?`` and a more negative
    one as 0, as OpenVINO 2026.4.1 does) and is ``?`` on any other dim; the lengths must
    add up to a static dim."""
    if any(x < -1 for x in lengths):
        raise ShapeInferenceError(
            f"VariadicSplit lengths must be >= -1, but got {list(lengths)}")
    if lengths.count(-1) > 1:
        raise ShapeInferenceError(
            f"VariadicSplit lengths may hold one -1 at most, but got {list(lengths)}")
    known = sum(x for x in lengths if x != -1)
    static = d.lo == d.hi
    if static and -1 not in lengths and known != d.lo:
        raise ShapeInferenceError(
            f"VariadicSplit lengths must add up to the axis dim {d}, but got "
            f"{list(lengths)} (total {known})")
    rest = d.lo - known if static else -1
    rest_dim = Dimension.dynamic() if rest == -1 else Dimension.static(max(rest, 0))
    return [rest_dim if x == -1 else Dimension.static(x) for x in lengths]


def _concat_rows(attrs: Attrs, shapes: list) -> tuple[None, set[int]] | None:
    """Every input agrees on every dim but the axis."""
    rank = shapes[0].rank
    axis = attrs.int("axis", 0)
    if not rank or any(s.rank != rank for s in shapes) or not -rank <= axis < rank:
        return None
    return None, set(range(rank)) - {axis % rank}


# -- symbolic dims (infer --symbols) -----------------------------------------------------
def _concat_symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """The axis dim is the sum of the inputs'; the other dims must be equal (the walk
    unites them); a 1-D value is the inputs' values one after the other."""
    from .core.symbolic import Sym
    ranked = [s.dims for s in ins if s.dims is not None]
    if len(ranked) < len(ins) or not ranked[0]:
        return None
    ax = normalize_axis(data.int("axis", 0), len(ranked[0]), "the Concat axis")
    out = list(ranked[0])
    for dims in ranked[1:]:
        for i, d in enumerate(dims):
            out[i] = out[i] + d if i == ax else facts.equal(out[i], d)
    value = None
    lengths = [shape_of_len(t) for t in facts.inputs]
    if len(out) == 1 and None not in lengths:
        value = [v for s, n in zip(ins, lengths, strict=True)
                 for v in (s.value if s.value is not None else [None] * n)]
    return [Sym(out, value)]


def _split_symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """Split: the axis dim divided by the number of parts; VariadicSplit: the lengths,
    a -1 the rest. A 1-D value splits into its pieces."""
    from .core.symbolic import Sym, const
    x, axis = ins[0], exact_scalar(facts.inputs[1])
    if x.dims is None or axis is None:
        return None
    ax = normalize_axis(axis, len(x.dims), "the Split axis")
    d = x.dims[ax]
    if facts.op == "Split":
        n = data.int("num_splits")
        parts = [d // n] * n
    else:
        parts = list(ins[2].value) if ins[2].value is not None else [None] * data.n_outputs
        rest = [p for p in parts if p is None or p.const != -1]
        if len(rest) < len(parts):
            left = None if None in rest else d - sum(rest, const(0))
            parts = [left if p is not None and p.const == -1 else p for p in parts]
    values = [None] * len(parts)
    if x.value is not None and len(x.dims) == 1 and all(p is not None and p.const is not None
                                                        for p in parts):
        cuts, begin = [], 0
        for p in parts:
            cuts.append(x.value[begin:begin + p.const])
            begin += p.const
        values = cuts
    return [Sym(x.dims[:ax] + (p,) + x.dims[ax + 1:], v)
            for p, v in zip(parts, values, strict=True)]


class _SplitInputs(InputMaker):
    """A valid axis (Split) or valid lengths (VariadicSplit) for a run that feeds them
    (Parameters): axis 0 need not divide by the number of splits, zero lengths do not
    add up to the axis."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """Split: input 1 (the axis), the first axis whose dim divides by
        ``num_splits``. VariadicSplit: input 1 (the axis), 0; input 2, lengths that add up
        to the axis: when it is known (the data is 1-D, or every dim is the same) the dim
        shared out nearly evenly, otherwise ``-1`` (the rest) then zeros, which fits any
        axis a constant names."""
        data = shapes[0] if shapes else None
        if data is None:
            return {}
        if "num_splits" in attrs:
            parts = attrs.int("num_splits")
            axes = [i for i, d in enumerate(data) if parts > 0 and d % parts == 0]
            return {1: axes[:1]} if axes else {}
        lengths = shapes[2] if len(shapes) > 2 else None
        if lengths is None or not data:
            return {1: [0]}
        n = lengths[0] if lengths else 1
        if n and len(set(data)) == 1:
            share, extra = divmod(data[0], n)
            return {1: [0], 2: [share + (k < extra) for k in range(n)]}
        return {1: [0], 2: [-1] + [0] * (n - 1)} if n else {1: [0]}


SPECS = (specs_of({"Concat": _concat}, row_dims=_concat_rows, symbolic=_concat_symbolic)
         + specs_of({"Split": _split, "VariadicSplit": _variadic_split},
                    symbolic=_split_symbolic, inputs=_SplitInputs()))
