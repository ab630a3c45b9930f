"""Slices: Slice-8 and StridedSlice-1.

Each sliced dim is the length of ``range(start, stop, step)`` clipped to the dim, computed
on both ends of an interval dim as OpenVINO does; a small integer tensor keeps the sliced
part of its value with its bounds. Checked by experiment against openvino 2026.4.1 (see
``tests/ops/test_ops_common.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import INF, Dimension, PartialShape
from .core.dims import normalize_axis
from .core.inputs import InputMaker
from .core.spec import Attrs, Trace, specs_of
from .core.values import (
    NINF,
    Tensor,
    Value,
    exact_ints,
    shape_of_len,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Expr, Facts, Sym

__all__ = ["slice_bounds_dim", "SPECS"]

ONE = Dimension.static(1)


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
    n, k = len(t.value[0]), step[0]
    if n == 0 or k == 0:
        return None
    # OpenVINO clamps the ends as its shape rule does (``_sliced_len``): with a negative
    # step the start to [0, n-1] (Python's slice would take -2 of 1 element for "none")
    b = min(max(b + n if b < 0 else b, 0), n - 1 if k < 0 else n)
    e = min(max(e + n if e < 0 else e, -1 if k < 0 else 0), n)
    idx = range(b, e, k)
    return tuple(t.value[0][i] for i in idx), tuple(t.value[1][i] for i in idx)


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
        k = strides[0]
        if k == 0 or size == 0:
            return None
        # the ends clamped as OpenVINO clamps them (with a negative stride the begin
        # to [0, size-1]: -5 of 3 elements is the first, not Python's "none")
        b = (size - 1 if k < 0 else 0) if 0 in masks["begin"] else \
            min(max(b + size if b < 0 else b, 0), size - 1 if k < 0 else size)
        e = (-1 if k < 0 else size) if 0 in masks["end"] else \
            min(max(e + size if e < 0 else e, -1 if k < 0 else 0), size)
        picks = list(range(b, e, k))
    if picks is None:
        return None
    return tuple(t.value[0][k] for k in picks), tuple(t.value[1][k] for k in picks)


# -- symbolic dims (infer --symbols) -----------------------------------------------------
def _symbolic(ins: list[Sym], data: Attrs, facts: Facts) -> list[Sym] | None:
    """Each sliced axis as ``stop - start`` clamped into the dim (``D-1`` for ``[1:]``),
    from start and stop as expressions; StridedSlice with its masks (no ellipsis)."""
    from .core.symbolic import Expr, Sym, moved
    x, t = ins[0], facts.inputs[0]
    starts, stops = ins[1].value, ins[2].value
    steps = exact_ints(facts.inputs[3]) if len(ins) > 3 else None
    if x.dims is None or starts is None or stops is None:
        return None
    steps = steps if steps is not None else (1,) * len(starts)
    if facts.op == "Slice":
        axes = exact_ints(facts.inputs[4]) if len(ins) > 4 else tuple(range(len(starts)))
        out = list(x.dims)
        cuts = [slice(None)] * len(out)
        exact = all(c is not None and c.const is not None for c in (*starts, *stops))
        for k, a in enumerate(axes):
            i = normalize_axis(a, len(out), "a Slice axis")
            out[i] = _sliced(x.dims[i], t.shape.dims[i], starts[k], stops[k], steps[k])
            if exact:
                cuts[i] = slice(starts[k].const, stops[k].const, steps[k])
        value = _picked(x, starts, stops, steps)
        if value is None and exact:  # an N-D value (the pads ONNX exports reverse)
            value = moved(x, lambda a: a[tuple(cuts)])
        return [Sym(out, value)]
    masks = {name: {i for i, b in enumerate(data.ints(name + "_mask", ())) if b == 1}
             for name in ("begin", "end", "new_axis", "shrink_axis", "ellipsis")}
    if masks["ellipsis"]:
        return None
    out, k = [], 0
    for axis in range(len(starts)):
        if axis in masks["new_axis"]:
            out.append(Expr({(): 1}))
            continue
        if axis not in masks["shrink_axis"]:
            out.append(_sliced(x.dims[k], t.shape.dims[k],
                               None if axis in masks["begin"] else starts[axis],
                               None if axis in masks["end"] else stops[axis], steps[axis]))
        k += 1
    value = None if masks["new_axis"] else _picked(x, starts, stops, steps, masks)
    return [Sym(out + list(x.dims[k:]), value)]


def _sliced(d: Expr, n: Dimension, start: Expr | None, stop: Expr | None, step: int):
    """``len(range(D)[start:stop:step])`` as an expression (None when not written)."""
    from .core.symbolic import Expr
    if step < 0:  # only the whole reversal
        full = (start is None or (start.const is not None and start.const >= n.hi - 1)) and \
            (stop is None or (stop.const is not None and stop.const <= -n.hi - 1))
        return d if full else None
    first = Expr({}) if start is None else _clamped(start, d, n)
    last = d if stop is None else _clamped(stop, d, n)
    length = _span(d, n, first, last)
    return length if step == 1 else (length + step - 1) // step


#: A start or stop at least this far from 0 reads to the end (no dim is that long).
_FAR = 2**31 - 1


def _clamped(x: Expr, d: Expr, n: Dimension) -> Expr:
    """An index into ``[0, D]`` as a forward slice reads it (negative from the end)."""
    from .core.symbolic import const, maximum, minimum
    c = x.const
    if c is None:
        return x if x == d else minimum(x, d)
    if c >= min(n.hi, _FAR):
        return d
    if c >= 0:
        return x if c <= n.lo else minimum(x, d)
    if c <= -_FAR:
        return const(0)
    return d + c if -c <= n.lo else maximum(d + c, 0)


def _span(d: Expr, n: Dimension, first: Expr, last: Expr) -> Expr:
    """``max(last - first, 0)``, written plainly where the two ends allow:
    ``D - min(c, D)`` is ``max(D-c, 0)`` and ``D - max(D-c, 0)`` is ``min(c, D)``."""
    from .core.symbolic import maximum, minimum
    atom = first.atom
    if first.const == 0 or (last == d and first.const is not None and first.const <= n.lo):
        return last - first
    if last == d and atom is not None and len(atom) == 3 and d in atom[1:]:
        other = atom[1] if atom[2] == d else atom[2]
        if atom[0] == "min" and other.const is not None:
            return maximum(d - other, 0)
    if last == d and atom is not None and atom[0] == "max" and len(atom) == 3:
        shifted = [a for a in atom[1:] if a.const != 0]
        if len(shifted) == 1 and (shifted[0] - d).const is not None and (shifted[0] - d).const < 0:
            return minimum(d - shifted[0], d)
    return maximum(last - first, 0)


def _picked(x: Sym, starts, stops, steps, masks=None) -> list | None:
    """The elements of a 1-D value sliced by exact start, stop and step."""
    if x.value is None or len(x.value) == 0 or len(x.dims) != 1:
        return None
    b, e = starts[0].const, stops[0].const
    if masks is not None:
        b = None if 0 in masks["begin"] else b
        e = None if 0 in masks["end"] else e
        if 0 in masks["shrink_axis"]:
            return [x.value[b]] if b is not None and -len(x.value) <= b < len(x.value) else None
    if masks is None and (b is None or e is None):
        return None
    return [x.value[k] for k in range(*slice(b, e, steps[0]).indices(len(x.value)))]


# -- valid bounds for a run that feeds them (validate --all-layers) ----------------------
#: The stop of a slice whose data's shape is unknown: past any dim (clipped to it).
FAR = 2**31 - 1


class _SliceInputs(InputMaker):
    """Valid bounds for a run that feeds them (Parameters): zeros, the usual integer
    input, are a step of 0 (the runtime refuses it) and repeated axes (as refused)."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """By input position, for ``n`` bounds: starts 0, stops past every dim (the
        largest dim, clipped to each: the whole axis), steps 1 and, for Slice, the axes
        ``0 .. n-1`` (distinct, when the data has ``n`` dims at least): a run of every
        element, whichever axes a constant names. StridedSlice's masks keep their
        meaning: an axis they add or shrink takes start 0 alone."""
        data = shapes[0] if shapes else None
        n = _length(shapes, 1)
        if n is None:
            return {}
        stop = max(data, default=1) if data is not None else FAR
        values = {1: [0] * n, 2: [stop] * n, 3: [1] * n}
        if attrs.version == 8 and (data is None or n <= len(data)):
            values[4] = list(range(n))
        return values


def _length(shapes: list[list[int] | None], k: int) -> int | None:
    """The element count of 1-D (or scalar) input ``k``, None when unknown."""
    shape = shapes[k] if k < len(shapes) else None
    return None if shape is None else shape[0] if shape else 1


SPECS = specs_of({"Slice": _slice, "StridedSlice": _strided_slice}, symbolic=_symbolic,
                 inputs=_SliceInputs())
