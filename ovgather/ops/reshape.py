"""Ops that rearrange the dims of a tensor: ShapeOf, Reshape, Squeeze, Unsqueeze,
Transpose, Broadcast and Tile.

These carry shapes from the Parameters to the gathers, and most also carry the *value*
of a small integer tensor with its bounds (see ``core/values.py``), because that is how
OpenVINO resolves a Reshape whose target is computed at run time:

>>> from ovgather.shapes import PartialShape as P
>>> str(reshape_shape(P.parse("[2..4,6]"), [(-1, -1), (4, 4)], special_zero=False))
'[3..6,4]'

Behaviour on intervals was checked by experiment against openvino 2026.4.1; see the
tests in ``tests/ops/test_ops_common.py`` which compare every rule with OpenVINO.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import INF, Dimension, PartialShape
from .core.dims import broadcast_shapes, normalize_axis
from .core.inputs import InputMaker
from .core.spec import Attrs, Trace, specs_of
from .core.values import (
    MAX_VALUE_SIZE,
    Tensor,
    Value,
    computed_shape_bounds,
    dim_of_bounds,
    exact_ints,
    shape_of_len,
    static_size,
    value_of_dims,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Expr, Facts, Sym

__all__ = ["reshape_shape", "SPECS"]

ONE = Dimension.static(1)


# -- ShapeOf ---------------------------------------------------------------------------
def _shape_of(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    etype = data.text("output_type", "i64") if data.version >= 3 else "i64"
    dims = ins[0].shape.dims
    if dims is None:
        return [Tensor(PartialShape.dynamic(1), etype)]
    return [Tensor(PartialShape.of((Dimension.static(len(dims)),)), etype, value_of_dims(dims))]


# -- Reshape ---------------------------------------------------------------------------
def reshape_shape(
    data: PartialShape, target: list[tuple[int, int]], special_zero: bool
) -> PartialShape:
    """The output of Reshape for a target given as per-element bounds ``(lo, hi)``, as
    OpenVINO's ``reshape_shape_inference.hpp`` computes it: the -1 dim is the input's
    element count over the other target dims, static dims that appear on both sides
    cancel, and an input of unknown rank counts as one element or more."""
    in_dims = data.dims
    out: list[Dimension | None] = []
    minus_one = None
    copied: set[int] = set()
    zeros = False
    for i, (lo, hi) in enumerate(target):
        if lo == hi == -1:
            if minus_one is not None:
                raise ShapeInferenceError(
                    "at most one dimension of a Reshape target may be -1, but got several"
                )
            minus_one = i
            out.append(None)
        elif special_zero and hi == 0 and lo >= -1:  # OpenVINO: a 0 (-1..0 too) copies
            zeros = True
            if in_dims is None:
                out.append(Dimension.dynamic())
            elif i >= len(in_dims):
                raise ShapeInferenceError(
                    f"a 0 in a Reshape target with special_zero copies an input dim, but "
                    f"position {i} is beyond the rank {len(in_dims)} input {data}"
                )
            else:
                out.append(in_dims[i])
                copied.add(i)
        elif hi < 0:
            shown = lo if lo == hi else f"{lo}..{hi}"
            raise ShapeInferenceError(f"a Reshape target dim must be >= -1, but got {shown}")
        elif lo < -1:  # OpenVINO knows nothing of a dim whose bounds span -2 and 0
            out.append(Dimension.dynamic())
        else:
            out.append(dim_of_bounds(lo, hi))
    if minus_one is not None:
        out[minus_one] = _minus_one_dim(data, out, copied, target, zeros and in_dims is None)
    elif in_dims is not None and data.is_static and all(d.lo == d.hi for d in out) \
            and not (zeros and special_zero):
        _check_same_size(data, out)
    return PartialShape.of(tuple(out))


def _split_product(dims) -> tuple[int, Dimension]:
    """The product of the static dims and, apart, that of the others (OpenVINO keeps the
    two apart so that an interval is not widened by a static factor it cancels)."""
    static, dynamic = 1, ONE
    for d in dims:
        if d.lo == d.hi:
            static *= d.lo
        else:
            dynamic = dynamic * d
    return static, dynamic


def _minus_one_dim(data: PartialShape, out: list, copied: set[int], target,
                   unknown_copies: bool) -> Dimension:
    """The -1 dim: the input's element count over the other target dims. Dims copied by
    special_zero are left out of both sides, and so is each static dim (not 0) found on
    both sides; an input of unknown rank counts as one element (the -1 itself then stands
    among the output dims, unknown)."""
    if data.dims is None:
        ins: list[Dimension] = []
        outs = [d if d is not None else Dimension.dynamic() for d in out]
        if unknown_copies:  # a copied dim of an unknown input: nothing is known
            return Dimension.dynamic()
    else:
        ins = [d for i, d in enumerate(data.dims) if i not in copied]
        outs = [d for i, d in enumerate(out) if d is not None and i not in copied]
    left = list(outs)
    kept = []
    for d in ins:
        same = next((k for k, o in enumerate(left) if d.lo == d.hi == o.lo == o.hi != 0), None)
        if same is None:
            kept.append(d)
        else:
            left.pop(same)
    in_static, in_dyn = _split_product(kept)
    out_static, out_dyn = _split_product(left)
    if out_static == 0 and in_static != 0:
        raise ShapeInferenceError(
            "Cannot infer '-1' dimension with zero-size output dimension unless at least one "
            f"input dimension is also zero-size (target {_shown(target)}, input {data})")
    if in_static != out_static:
        in_dyn, out_dyn = in_dyn * in_static, out_dyn * out_static
    if in_dyn.lo == in_dyn.hi and out_dyn.lo == out_dyn.hi:
        if out_dyn.lo == 0:
            return Dimension.dynamic()
        if in_dyn.lo % out_dyn.lo:
            raise _incompatible(data, target)
        return Dimension.static(in_dyn.lo // out_dyn.lo)
    lo, hi = in_dyn.lo, in_dyn.hi
    hi = hi // out_dyn.lo if hi < INF and out_dyn.lo != 0 and not out_dyn.is_fully_dynamic \
        else INF
    if out_dyn.hi != 0:
        lo = (1 if lo else 0) if out_dyn.hi >= INF else -(-lo // out_dyn.hi)
    # lo > hi is possible here; OpenVINO 2026.4.1 raises nothing then and prints the
    # empty interval as it is ('1..0'), so ovgather keeps it too, to print the same text.
    return Dimension.from_bounds(lo, hi)


def _shown(target) -> list:
    return [lo if lo == hi else f"{lo}..{hi}" for lo, hi in target]


def _incompatible(data: PartialShape, target) -> ShapeInferenceError:
    return ShapeInferenceError(
        f"a Reshape must keep the number of elements, but the target {_shown(target)} does not fit "
        f"the input shape {data}"
    )


def _check_same_size(data: PartialShape, out: list[Dimension]) -> None:
    a = static_size(data)
    b = 1
    for d in out:
        b *= d.lo
    if a != b:
        raise _incompatible(data, [(d.lo, d.lo) for d in out])


def _target_bounds(t: Tensor, what: str) -> list[tuple[int, int]] | int | None:
    """Per-element bounds of a shape-like input, or its static length, or None."""
    dims = t.shape.dims
    if dims is not None and len(dims) > 1:
        raise ShapeInferenceError(f"{what} must be a scalar or 1-D tensor, but got {t.shape}")
    if t.value is not None:
        return list(zip(t.value[0], t.value[1], strict=False))
    return shape_of_len(t)


def _reshape(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    special_zero = data.bool("special_zero", False)
    target = _target_bounds(ins[1], "the Reshape target shape")
    if target is None:
        shape = PartialShape.dynamic()
    elif isinstance(target, int):
        shape = PartialShape.dynamic(target)
    else:
        shape = reshape_shape(ins[0].shape, target, special_zero)
    return [Tensor(shape, ins[0].etype, ins[0].value if shape.is_static else None)]


# -- Squeeze / Unsqueeze ----------------------------------------------------------------
def _squeeze(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    dims = ins[0].shape.dims
    t = ins[0]
    if dims is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    if len(ins) < 2:
        if any(d.lo <= 1 <= d.hi and d.lo != d.hi for d in dims):
            return [Tensor(PartialShape.dynamic(), t.etype)]
        out = tuple(d for d in dims if not (d.lo == d.hi == 1))
        return [Tensor(PartialShape.of(out), t.etype, t.value)]
    axes = exact_ints(ins[1])
    if axes is None:
        return [Tensor(_squeeze_unknown_axes(dims, ins[1], data.version), t.etype)]
    rank = len(dims)
    drop = set()
    for a in axes:
        i = normalize_axis(a, max(rank, 1), "a Squeeze axis")
        d = dims[i] if i < rank else ONE
        if d.lo == d.hi == 1 or (d.lo != d.hi and d.lo <= 1 <= d.hi and data.version < 15):
            drop.add(i)
    out = tuple(d for i, d in enumerate(dims) if i not in drop)
    return [Tensor(PartialShape.of(out), t.etype, t.value)]


def _squeeze_unknown_axes(dims: tuple[Dimension, ...], axes: Tensor,
                          version: int) -> PartialShape:
    """Squeeze by axes known only by their shape, as OpenVINO 2026.4.1 has it: one axis
    and no dim that may be 1 leaves the shape as it is; one axis and such a dim drops
    one dim, which one unknown (Squeeze-1) or leaves the rank unknown (Squeeze-15); more
    axes, or a scalar input, leave the rank unknown."""
    if shape_of_len(axes) != 1 or not dims:
        return PartialShape.dynamic()
    if not any(d.lo <= 1 <= d.hi for d in dims):
        return PartialShape.of(dims)
    return PartialShape.dynamic(len(dims) - 1) if version < 15 else PartialShape.dynamic()


def _unsqueeze(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """Unsqueeze by axes that are not known exactly gives an unknown rank: OpenVINO
    2026.4.1 does not count them, even when their number is known."""
    t = ins[0]
    dims = t.shape.dims
    axes = exact_ints(ins[1])
    if dims is None or axes is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    rank = len(dims) + len(set(axes))
    out = list(dims)
    # axes that name one place (1 and -3 of a rank-2 input) insert one dim, at most at
    # the end: OpenVINO gives [2,1,3] for [2,3] by [1,-3], and [2,3,1] by [3,-1]
    for where in sorted({normalize_axis(a, rank, "an Unsqueeze axis") for a in axes}):
        out.insert(min(where, len(out)), ONE)
    return [Tensor(PartialShape.of(tuple(out)), t.etype, t.value)]


# -- Transpose -------------------------------------------------------------------------
def _transpose(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    dims = t.shape.dims
    order = exact_ints(ins[1])
    if dims is None:
        n = shape_of_len(ins[1])
        return [Tensor(PartialShape.dynamic(n or None) if n else PartialShape.dynamic(), t.etype)]
    if order is None:
        return [Tensor(PartialShape.dynamic(len(dims)), t.etype)]
    if not order:
        order = tuple(range(len(dims) - 1, -1, -1))
    if sorted(order) != list(range(len(dims))):
        raise ShapeInferenceError(
            f"a Transpose order must be a permutation of the {len(dims)} axes, but got "
            f"{list(order)}"
        )
    out = PartialShape.of(tuple(dims[i] for i in order))
    return [Tensor(out, t.etype, _moved_value(t, out, lambda a: a.transpose(order)))]


def _moved_value(t: Tensor, out: PartialShape, move) -> Value | None:
    """The bounds of an op that only moves elements (Transpose, Tile, Broadcast), when
    its order, repeats or target are known: OpenVINO moves the lower and the upper bound
    tensors alike. ``move`` maps an array of element indices to the output's."""
    size, n = static_size(t.shape), static_size(out)
    if t.value is None or size is None or n is None or n > MAX_VALUE_SIZE \
            or size != len(t.value[0]):
        return None
    picks = move(np.arange(size).reshape([d.lo for d in t.shape.dims])).ravel().tolist()
    return tuple(t.value[0][k] for k in picks), tuple(t.value[1][k] for k in picks)


# -- Broadcast / Tile ------------------------------------------------------------------
def _broadcast(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    mode = data.text("mode", "numpy").lower()
    target = _target_bounds(ins[1], "the Broadcast target shape")
    computed_shape_bounds(ins[1], "the Broadcast target shape")
    if target is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    if ins[1].parts is not None and isinstance(target, int):
        tshape = PartialShape.of(tuple(_part_dim(p) for p in ins[1].parts))
    elif isinstance(target, int):
        tshape = PartialShape.dynamic(target)
    else:
        tshape = PartialShape.of(tuple(dim_of_bounds(lo, hi) for lo, hi in target))
    if mode == "explicit":
        return [Tensor(tshape, t.etype)]
    if mode == "bidirectional":
        tshape = broadcast_shapes(t.shape, tshape)
    else:
        _check_numpy_into(t.shape, tshape)
    spread = [d.lo for d in tshape.dims or ()]
    return [Tensor(tshape, t.etype, _moved_value(t, tshape, lambda a: np.broadcast_to(a, spread)))]


def _part_dim(part: int | None) -> Dimension:
    """A Broadcast target dim read from a Concat input: a Const's element, else ``?``
    (a negative element, which OpenVINO rejects in its own way, is left ``?`` too)."""
    return Dimension.dynamic() if part is None or part < 0 else Dimension.static(part)


def _check_numpy_into(arg: PartialShape, target: PartialShape) -> None:
    a, b = arg.dims, target.dims
    if a is None or b is None:
        return
    if len(a) > len(b):
        raise ShapeInferenceError(
            f"numpy Broadcast needs the input rank at most the target rank, but got {arg} "
            f"into {target}"
        )
    for x, y in zip(a, b[len(b) - len(a):], strict=False):
        if x.lo == x.hi and y.lo == y.hi and x.lo not in (1, y.lo):
            raise ShapeInferenceError(
                f"numpy Broadcast needs each input dim 1 or equal to the target dim, but "
                f"got {arg} into {target}"
            )


def _tile(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    dims = t.shape.dims
    reps = _target_bounds(ins[1], "the Tile repeats")
    computed_shape_bounds(ins[1], "the Tile repeats")
    if dims is None or reps is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    if isinstance(reps, int):
        return [Tensor(PartialShape.dynamic(max(len(dims), reps)), t.etype)]
    n = max(len(dims), len(reps))
    d = (ONE,) * (n - len(dims)) + dims
    r = [(1, 1)] * (n - len(reps)) + reps
    out = PartialShape.of(tuple(x * dim_of_bounds(lo, hi) for x, (lo, hi) in
                                zip(d, r, strict=False)))
    exact = exact_ints(ins[1])
    value = None
    if exact is not None and min(exact, default=0) >= 0:
        value = _moved_value(t, out, lambda a: np.tile(a, exact))
    return [Tensor(out, t.etype, value)]


# -- symbolic dims (infer --symbols) -----------------------------------------------------
def _symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    from .core.symbolic import Sym, const, moved
    x = ins[0]
    if facts.op == "ShapeOf":
        return None if x.dims is None else [Sym([const(len(x.dims))], x.dims)]
    if facts.op == "Reshape":
        return [Sym(_reshaped(x, ins[1], data.bool("special_zero", False)), x.value)]
    if facts.op in ("Squeeze", "Unsqueeze"):
        out = facts.outputs[0].shape.dims
        if x.dims is None or out is None:
            return None
        if facts.op == "Unsqueeze":
            axes = {normalize_axis(a, len(out), "an Unsqueeze axis")
                    for a in exact_ints(facts.inputs[1])}
            rest = iter(x.dims)
            return [Sym([const(1) if i in axes else next(rest) for i in range(len(out))],
                        x.value)]
        kept = [d for d, n in zip(x.dims, facts.inputs[0].shape.dims, strict=True)
                if not (n.lo == n.hi == 1)]
        if len(ins) > 1:
            drop = {normalize_axis(a, len(x.dims), "a Squeeze axis")
                    for a in exact_ints(facts.inputs[1])}
            kept = [d for i, d in enumerate(x.dims) if i not in drop]
        return [Sym(kept, x.value)] if len(kept) == len(out) else None
    if facts.op == "Transpose":
        order = exact_ints(facts.inputs[1])
        if x.dims is None or order is None:
            return None
        order = order or tuple(range(len(x.dims) - 1, -1, -1))
        return [Sym([x.dims[i] for i in order], x.value if len(x.dims) <= 1 else
                    moved(x, lambda a: a.transpose(order)))]
    if facts.op == "Broadcast":
        return [Sym(_broadcast_dims(x, ins[1], data.text("mode", "numpy").lower(), facts),
                    _spread(x, facts))]
    if facts.op == "Tile" and x.dims is not None and ins[1].value is not None:
        reps = list(ins[1].value)
        n = max(len(x.dims), len(reps))
        dims = [const(1)] * (n - len(x.dims)) + list(x.dims)
        reps = [const(1)] * (n - len(reps)) + reps
        return [Sym([None if r is None else d * r for d, r in zip(dims, reps, strict=True)])]
    return None


def _reshaped(x: Sym, target: Sym, special_zero: bool) -> list | None:
    from .core.symbolic import dims_product
    if target.value is None:
        return None
    out: list[Expr | None] = list(target.value)
    for i, e in enumerate(out):
        if e is not None and e.const == 0 and special_zero:  # 0 copies the input's dim
            out[i] = x.dims[i] if x.dims is not None and i < len(x.dims) else None
    minus = [i for i, e in enumerate(out) if e is not None and e.const == -1]
    if minus:
        others = [e for i, e in enumerate(out) if i != minus[0]]
        out[minus[0]] = None if x.dims is None or None in others else \
            dims_product(x.dims) // dims_product(others)
    return out


def _broadcast_dims(x: Sym, target: Sym, mode: str, facts: Facts) -> list | None:
    from .core.symbolic import broadcast, const
    if target.value is None:
        return None
    want = list(target.value)
    if mode == "explicit" or x.dims is None:
        return want
    n = max(len(want), len(x.dims))
    have = [const(1)] * (n - len(x.dims)) + list(x.dims)
    want = [const(1)] * (n - len(want)) + want
    if mode == "bidirectional":
        return [None if w is None else broadcast(h, w, facts) for h, w in zip(have, want,
                                                                              strict=True)]
    # numpy mode: the target's dims; an input dim that cannot be 1 must equal its target dim
    numeric = facts.inputs[0].shape.dims
    lows = [1] * (n - len(numeric)) + [d.lo for d in numeric]
    return [w if w is None or lo <= 1 else facts.equal(h, w)
            for h, w, lo in zip(have, want, lows, strict=True)]


def _spread(x: Sym, facts: Facts) -> list | None:
    """The elements of a Broadcast of a single known element."""
    size = static_size(facts.outputs[0].shape)
    if x.value is None or len(x.value) != 1 or size is None:
        return None
    return list(x.value) * size


# -- valid shapes, axes and repeats for a run that feeds them (validate --all-layers) ------
def _length(shapes: list[list[int] | None], k: int) -> int | None:
    """The element count of 1-D (or scalar) input ``k``, None when unknown."""
    shape = shapes[k] if k < len(shapes) else None
    return None if shape is None else shape[0] if shape else 1


def _target(data: list[int], n: int) -> list[int] | None:
    """A shape of ``n`` dims holding as many elements as ``data``: the data's own, its
    leading dims merged, or ones appended; None when there is none (``n`` is 0 and the
    data holds more than one element)."""
    if n >= len(data):
        return data + [1] * (n - len(data))
    if n == 0:
        return [] if math.prod(data) == 1 else None
    cut = len(data) - n + 1
    return [math.prod(data[:cut])] + data[cut:]


class _ShapeInputs(InputMaker):
    """Valid values for the inputs of Reshape, Squeeze, Unsqueeze, Transpose, Broadcast
    and Tile that hold a shape, axes, an order or repeats, for a run that feeds them
    (Parameters): zeros, the usual integer input, are a target shape the data does not
    fill or broadcast to, repeated axes, an order that is no permutation."""

    def __init__(self, op: str) -> None:
        self.op = op

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """By input position. Reshape: the data's shape merged or extended to the target's
        length (the same elements). Squeeze: the axes of dims of 1. Unsqueeze: the axes
        ``0 .. n-1``. Transpose: the dims reversed. Broadcast: the data's shape with ones
        before it (its trailing dims when the target is shorter and the mode
        bidirectional), and for an explicit mode its axes ``0 .. rank-1``. Tile: 1 on
        every axis but the last, which is repeated twice."""
        data = shapes[0] if shapes else None
        n = _length(shapes, 1)
        if n is None:
            return {}
        if self.op == "Unsqueeze":
            return {1: list(range(n))}
        if self.op == "Transpose":
            return {1: list(range(n))[::-1]}
        if self.op == "Tile":
            return {1: [1] * (n - 1) + [2] if n else []}
        if data is None:
            return {}
        if self.op == "Reshape":
            target = _target(data, n)
            return {} if target is None else {1: target}
        if self.op == "Squeeze":
            ones = [i for i, d in enumerate(data) if d == 1]
            return {1: ones[:n]} if len(ones) >= n else {}
        return _broadcast_values(data, n, attrs)


def _broadcast_values(data: list[int], n: int, attrs: Attrs) -> dict[int, list[int]]:
    """Broadcast's target shape (and explicit axes) for data of shape ``data``."""
    mode = attrs.text("mode", "numpy").lower()
    if n >= len(data):
        target = [1] * (n - len(data)) + data
        if mode == "explicit":
            return {1: data + [1] * (n - len(data)), 2: list(range(len(data)))}
        return {1: target}
    return {1: data[len(data) - n:]} if mode == "bidirectional" else {}


SPECS = [*specs_of({"ShapeOf": _shape_of}, symbolic=_symbolic),
         *(spec for op, rule in (("Reshape", _reshape), ("Squeeze", _squeeze),
                                 ("Unsqueeze", _unsqueeze), ("Transpose", _transpose),
                                 ("Broadcast", _broadcast), ("Tile", _tile))
           for spec in specs_of({op: rule}, symbolic=_symbolic, inputs=_ShapeInputs(op)))]
