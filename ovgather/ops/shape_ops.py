"""Shape-moving ops: ShapeOf, Reshape, Squeeze, Unsqueeze, Concat, Transpose, Broadcast,
Tile, Split, VariadicSplit, StridedSlice and Slice.

These carry shapes from the Parameters to the gathers, and most also carry the *value*
of a small integer tensor with its bounds (see ``values.py``), because that is how
OpenVINO resolves a Reshape whose target is computed at run time:

>>> from ovgather.shapes import PartialShape as P
>>> str(reshape_shape(P.parse("[2..4,6]"), [(-1, -1), (4, 4)], special_zero=False))
'[3..6,4]'

Behaviour on intervals was checked by experiment against openvino 2026.4.1; see the
tests in ``tests/ops/test_ops_common.py`` which compare every rule with OpenVINO.
"""

from __future__ import annotations

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import INF, Dimension, PartialShape
from .elementwise import broadcast_shapes
from .spec import Attrs, Rule, Trace, specs_of
from .values import (
    MAX_VALUE_SIZE,
    NINF,
    Tensor,
    Value,
    computed_shape_bounds,
    dim_of_bounds,
    exact_ints,
    exact_scalar,
    shape_of_len,
    static_size,
    value_of_dims,
)

__all__ = ["normalize_axis", "reshape_shape", "slice_bounds_dim", "SPECS"]

ONE = Dimension.static(1)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[-rank, rank-1]`` made non-negative, else a ShapeInferenceError."""
    if not -rank <= axis < rank:
        raise ShapeInferenceError(
            f"{what} must be in the range [{-rank}, {rank - 1}] of a rank-{rank} input, "
            f"but got {axis}"
        )
    return axis + rank if axis < 0 else axis


def _product(dims) -> Dimension:
    out = ONE
    for d in dims:
        out = out * d
    return out


def _reshaped_value(t: Tensor) -> Value | None:
    return t.value


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
    """The output of Reshape for a target given as per-element bounds ``(lo, hi)``."""
    in_dims = data.dims
    out: list[Dimension | None] = []
    minus_one = None
    copied: set[int] = set()
    for i, (lo, hi) in enumerate(target):
        if lo == hi == -1:
            if minus_one is not None:
                raise ShapeInferenceError(
                    "at most one dimension of a Reshape target may be -1, but got several"
                )
            minus_one = i
            out.append(None)
        elif special_zero and lo == hi == 0:
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
        out[minus_one] = _minus_one_dim(data, out, copied, target)
    elif in_dims is not None and data.is_static and all(d.lo == d.hi for d in out):
        _check_same_size(data, out)
    return PartialShape.of(tuple(out))


def _minus_one_dim(data: PartialShape, out: list, copied: set[int], target) -> Dimension:
    """The -1 dim: the input's element count over the other target dims. Dims copied by
    special_zero appear on both sides and cancel (OpenVINO does the same)."""
    if data.dims is None:
        return Dimension.dynamic()
    inp = _product(d for i, d in enumerate(data.dims) if i not in copied)
    outp = _product(d for i, d in enumerate(out) if d is not None and i not in copied)
    if inp.lo == inp.hi and outp.lo == outp.hi:
        if outp.lo == 0:
            if inp.lo == 0:
                return Dimension.dynamic()
            raise _incompatible(data, target)
        if inp.lo % outp.lo:
            raise _incompatible(data, target)
        return Dimension.static(inp.lo // outp.lo)
    lo = 0 if inp.lo == 0 else -(-inp.lo // outp.hi) if outp.hi else 0
    hi = INF if inp.hi >= INF or outp.lo == 0 else inp.hi // outp.lo
    # lo > hi is possible here; OpenVINO 2026.4.1 raises nothing then and prints the
    # empty interval as it is ('1..0'), so ovgather keeps it too, to print the same text.
    return Dimension.from_bounds(lo, hi)


def _incompatible(data: PartialShape, target) -> ShapeInferenceError:
    shown = [lo if lo == hi else f"{lo}..{hi}" for lo, hi in target]
    return ShapeInferenceError(
        f"a Reshape must keep the number of elements, but the target {shown} does not fit "
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
        return [Tensor(PartialShape.dynamic(), t.etype)]
    rank = len(dims)
    drop = set()
    for a in axes:
        i = normalize_axis(a, max(rank, 1), "a Squeeze axis")
        d = dims[i] if i < rank else ONE
        if d.lo == d.hi == 1 or (d.lo != d.hi and d.lo <= 1 <= d.hi and data.version < 15):
            drop.add(i)
    out = tuple(d for i, d in enumerate(dims) if i not in drop)
    return [Tensor(PartialShape.of(out), t.etype, t.value)]


def _unsqueeze(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    dims = t.shape.dims
    axes = exact_ints(ins[1])
    if dims is None or axes is None:
        n = shape_of_len(ins[1])
        if dims is None or n is None:
            return [Tensor(PartialShape.dynamic(), t.etype)]
        return [Tensor(PartialShape.dynamic(len(dims) + n), t.etype)]
    rank = len(dims) + len(set(axes))
    where = {normalize_axis(a, rank, "an Unsqueeze axis") for a in axes}
    rest = iter(dims)
    out = tuple(ONE if i in where else next(rest) for i in range(rank))
    return [Tensor(PartialShape.of(out), t.etype, t.value)]


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
    result = Tensor(PartialShape.of(tuple(out)), etype, _concat_value(ins, rank))
    if result.value is None and rank == 1 and all(t.shape.dims == (ONE,) for t in ins):
        result.parts = tuple(exact_scalar(t) if t.const else None for t in ins)
    return [result]


def _concat_value(ins: list[Tensor], rank: int) -> Value | None:
    if rank != 1:
        return None
    lo: tuple[int, ...] = ()
    hi: tuple[int, ...] = ()
    for t in ins:
        v = t.value
        if v is None:  # OpenVINO then knows no bound of the whole result
            return None
        lo += v[0]
        hi += v[1]
    return lo, hi


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


# -- Slice / StridedSlice ----------------------------------------------------------------
#: OpenVINO's int64 ends: a bound at one of them is "none" when it slices.
I64_MAX, I64_MIN = INF, -INF - 1


def _sliced_len(dim: int, start: int, stop: int, step: int) -> int:
    """How many elements ``start:stop:step`` takes from a dim of length ``dim`` (INF:
    unbounded), as OpenVINO's ``get_sliced_value`` counts for one end of an interval;
    -1 means "without bound". Unbounded dims clip nothing, so a negative start then
    counts from an end nobody knows."""
    reverse = step < 0
    unbounded = dim >= INF
    norm = I64_MAX if unbounded else dim
    start_limit = start in (I64_MAX, I64_MIN)
    any_max = I64_MAX in (start, stop)
    if unbounded and ((start < 0) != (stop < 0) or any_max or start_limit):
        lb = 0
        if reverse:
            ub = -1 if start < 0 or any_max else -1 - start
        elif start < 0 and not start_limit:
            ub = -start if stop == I64_MAX else stop
        else:
            ub = -1
    else:
        lb = min(max(start + norm if start < 0 else start, 0), norm - 1 if reverse else norm)
        ub = min(max(stop + norm if stop < 0 else stop, -1 if reverse else 0), norm)
    if unbounded and lb == 0 and ub == -1:
        return -1
    n = min(0, ub - lb) if reverse else max(0, ub - lb)
    if step == -1:
        return -n
    if n and step != 1:  # n and step share their sign here: no rounding question
        n = abs(n + 1 if reverse else n - 1) // abs(step) + 1
    return n


def _crossing(bounds: tuple[int, int], d: Dimension) -> tuple[int, int]:
    """Bounds that may be negative or not, narrowed as OpenVINO does: a low end that
    stays inside the dim counts from 0, a high end below the dim's top from -1."""
    lo, hi = bounds
    if lo < 0 <= hi:
        top = d.hi
        lo = 0 if top >= INF or lo + top >= 0 else lo
        hi = -1 if top >= INF or hi < top else hi
    return lo, hi


def slice_bounds_dim(d: Dimension, start: tuple[int, int], stop: tuple[int, int],
                     step: int) -> Dimension:
    """The length of ``d[start:stop:step]`` when start and stop are known within bounds,
    as OpenVINO's Slice-8 gives it (``make_dim``).

    >>> str(slice_bounds_dim(Dimension.static(64), (0, 0), (0, INF), 1))
    '..64'
    """
    s_lo, s_hi = _crossing(start, d)
    e_lo, e_hi = _crossing(stop, d)
    if step > 0:
        lo, hi = _sliced_len(d.lo, s_hi, e_lo, step), _sliced_len(d.hi, s_lo, e_hi, step)
    else:
        lo, hi = _sliced_len(d.lo, s_lo, e_hi, step), _sliced_len(d.hi, s_hi, e_lo, step)
    hi = INF if hi == -1 else hi
    return Dimension.from_bounds(lo, hi) if lo <= hi else Dimension.dynamic()


def _index_bounds(t: Tensor) -> list[tuple[int, int]] | None:
    """Slice start/stop bounds as OpenVINO reads them: an unbounded end, or an i32
    end at the i32 limit, is the int64 limit."""
    v = t.value
    if v is None:
        return None
    limits = {2147483647: I64_MAX, -2147483648: I64_MIN} if t.etype == "i32" else {}

    def widen(x: int) -> int:
        x = limits.get(x, x)
        return I64_MAX if x >= INF else I64_MIN if x <= NINF else x

    return [(widen(lo), widen(hi)) for lo, hi in zip(v[0], v[1], strict=False)]


def _slice(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
    t = ins[0]
    dims = t.shape.dims
    if dims is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    if not dims:
        raise ShapeInferenceError("Slice data must not be a scalar, but got a rank-0 input")
    start, stop = _index_bounds(ins[1]), _index_bounds(ins[2])
    step = exact_ints(ins[3])
    axes = exact_ints(ins[4]) if len(ins) > 4 else None
    if len(ins) <= 4 and start is not None:
        axes = tuple(range(len(start)))
    where: dict[int, int] = {}
    for k, a in enumerate(axes or ()):
        i = normalize_axis(a, len(dims), "a Slice axis")
        if i in where:
            raise ShapeInferenceError(f"Slice axes must be unique, but got {list(axes)}")
        where[i] = k
    if step is not None and 0 in step:
        raise ShapeInferenceError("Slice steps must be non-zero, but got a 0 step")
    out = []
    for i, d in enumerate(dims):
        k = where.get(i) if axes is not None else -1
        if k is None:
            out.append(d)
        elif k >= 0 and start is not None and stop is not None and step is not None:
            out.append(slice_bounds_dim(d, start[k], stop[k], step[k]))
        else:
            out.append(Dimension.from_bounds(0, d.hi))
    return [Tensor(PartialShape.of(tuple(out)), t.etype, _sliced_value(t, start, stop, step))]


def _sliced_value(t: Tensor, start, stop, step) -> Value | None:
    """A 1-D value sliced by exact start, stop and step (OpenVINO folds it)."""
    if t.value is None or len(t.shape.dims) != 1 or not start or not stop or not step:
        return None
    (b, b2), (e, e2) = start[0], stop[0]
    if b != b2 or e != e2:
        return None
    idx = range(*slice(b, e, step[0]).indices(len(t.value[0])))
    return tuple(t.value[0][k] for k in idx), tuple(t.value[1][k] for k in idx)


def _strided_slice(ins: list[Tensor], data: Attrs, trace: Trace | None = None):
    """StridedSlice-1 as OpenVINO infers it: begin and end may be known within bounds
    (each axis then sliced as Slice-8 slices it), the strides must be exact; unknown
    begin or end leave each sliced dim ``0..`` its upper bound, and an unknown number of
    axes an unknown rank."""
    t = ins[0]
    for x, name in zip(ins[1:4], ("begin", "end", "strides"), strict=False):
        if x.shape.dims is not None and len(x.shape.dims) != 1:
            raise ShapeInferenceError(f"StridedSlice {name} must be 1-D, but got {x.shape}")
    dims = t.shape.dims
    if dims is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    begin, end = _index_bounds(ins[1]), _index_bounds(ins[2])
    strides = exact_ints(ins[3]) if len(ins) > 3 else None
    if len(ins) <= 3 and begin is not None:
        strides = (1,) * len(begin)
    n = _strided_axes(ins, strides)
    if n is None:
        return [Tensor(PartialShape.dynamic(), t.etype)]
    masks = {name: {i for i, b in enumerate(data.ints(name + "_mask", ())) if b == 1}
             for name in ("begin", "end", "new_axis", "shrink_axis", "ellipsis")}
    if len(masks["ellipsis"]) > 1:
        raise ShapeInferenceError("StridedSlice allows one ellipsis at most, but got several")
    if not masks["ellipsis"] and len(dims) + len(masks["new_axis"]) < n:
        raise ShapeInferenceError(
            f"StridedSlice needs the input rank plus the new axes to cover the {n} begin and "
            f"end values, but the input is {t.shape}")
    out = _strided_dims(dims, n, begin, end, strides, masks)
    value = _strided_value(t, begin, end, strides, masks)
    return [Tensor(PartialShape.of(tuple(out)), t.etype, value)]


def _strided_axes(ins: list[Tensor], strides) -> int | None:
    """How many axes begin, end and strides address (they must agree), None if unknown."""
    counts = [shape_of_len(x) if x.shape.dims else None for x in ins[1:3]]
    n = counts[0] if counts[0] is not None else counts[1]
    if None not in counts and counts[0] != counts[1]:
        raise ShapeInferenceError(
            f"StridedSlice begin and end must have as many values, but got {counts[0]} and "
            f"{counts[1]}")
    if strides is not None:
        if n is not None and n != len(strides):
            raise ShapeInferenceError(
                f"StridedSlice strides must have as many values as begin and end ({n}), but "
                f"got {len(strides)}")
        n = len(strides)
    return n


def _strided_dims(dims, n, begin, end, strides, masks) -> list[Dimension]:
    """The output dims, axis by axis of begin/end, then the input dims left over."""
    out: list[Dimension] = []
    k = 0  # the input dim the next axis reads
    for axis in range(n):
        if axis in masks["ellipsis"]:
            before = sum(1 for i in range(axis) if i not in masks["new_axis"])
            new_after = sum(1 for i in range(axis + 1, len(begin or ()))
                            if i in masks["new_axis"])
            hidden = len(dims) - (n - axis - new_after - 1) - before
            out.extend(dims[k:k + max(hidden, 0)])
            k += max(hidden, 0)
        elif axis in masks["new_axis"]:
            out.append(ONE)
        elif k >= len(dims):
            raise ShapeInferenceError(
                f"a StridedSlice addresses more axes than the rank {len(dims)} input has")
        elif axis in masks["shrink_axis"]:
            k += 1
        elif begin is not None and end is not None and strides is not None:
            out.append(_strided_dim(dims[k], axis, begin, end, strides, masks))
            k += 1
        else:
            out.append(_strided_unknown(dims[k], strides, axis))
            k += 1
    return out + list(dims[k:])


def _strided_unknown(d: Dimension, strides, axis: int) -> Dimension:
    """An axis whose begin or end is unknown: from 0 up to what the stride can take from
    the dim's upper bound (OpenVINO 2026.4.1, by experiment: ``6`` by 2 gives ``..3``)."""
    step = abs(strides[axis]) if strides is not None and axis < len(strides) else 1
    if d.hi >= INF or step == 0:
        return Dimension.from_bounds(0, d.hi)
    return Dimension.from_bounds(0, -(-d.hi // step))


def _strided_dim(d: Dimension, axis: int, begin, end, strides, masks) -> Dimension:
    step = strides[axis] if axis < len(strides) else 1
    if step == 0:
        raise ShapeInferenceError("StridedSlice strides must be non-zero, but got 0")
    top = I64_MAX if d.hi >= INF else d.hi
    if step > 0:
        default_start, default_stop = (0, 0), (top, top)
    else:
        default_start, default_stop = (top, top), (-1 - top, -1 - top)
    start = default_start if axis in masks["begin"] else begin[axis]
    stop = default_stop if axis in masks["end"] else end[axis]
    return slice_bounds_dim(d, start, stop, step)


def _strided_value(t: Tensor, begin, end, strides, masks) -> Value | None:
    """A 1-D value sliced by exact begin, end and strides (OpenVINO folds it)."""
    dims = t.shape.dims
    if t.value is None or len(dims) != 1 or dims[0].lo != dims[0].hi or not begin or not end:
        return None
    if not strides or masks["new_axis"] or masks["ellipsis"]:
        return None
    (b, b2), (e, e2), size = begin[0], end[0], dims[0].lo
    if b != b2 or e != e2:
        return None
    if 0 in masks["shrink_axis"]:
        picks = [b % size] if -size <= b < size else None
    else:
        b = None if 0 in masks["begin"] else b
        e = None if 0 in masks["end"] else e
        picks = list(range(*slice(b, e, strides[0]).indices(size)))
    if picks is None:
        return None
    return tuple(t.value[0][k] for k in picks), tuple(t.value[1][k] for k in picks)


_RULES: dict[str, Rule] = {
    "ShapeOf": _shape_of,
    "Reshape": _reshape,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Concat": _concat,
    "Transpose": _transpose,
    "Broadcast": _broadcast,
    "Tile": _tile,
    "Split": _split,
    "VariadicSplit": _variadic_split,
    "Slice": _slice,
    "StridedSlice": _strided_slice,
}


SPECS = specs_of(_RULES)
