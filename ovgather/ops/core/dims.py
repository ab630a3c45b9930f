"""The dim and shape arithmetic several op families share, as OpenVINO computes it.

Intervals follow OpenVINO's interval arithmetic: a difference never drops below 0, a
division floors (or ceils) both ends, and an unbounded end stays unbounded. Broadcasting
follows ``Dimension::broadcast_merge`` (checked on openvino 2026.4.1): a static 1 yields
the other dim; when exactly one dim may be 1 the other one wins (``? ⊕ 3 = 3``); when both
may be 1 their union is taken (``0..5 ⊕ 1..8 = ..8``); otherwise the two must intersect.

The window of a convolution or a pooling: each spatial dim of the output is

    floor((data + pads_begin + pads_end - dilated kernel) / stride) + 1

with ``dilated kernel = (k - 1) * dilation + 1``, or ``ceil(data / stride)`` when
``auto_pad`` is ``same_upper``/``same_lower`` (``valid`` drops the pads). The kernel must
fit the padded data only when both are known exactly. OpenVINO adds the pad sum as a
dimension: a sum of ``-1`` is a dynamic dim and a more negative one adds nothing (checked
on 2026.4.1; see ``padded``).

>>> from ovgather.shapes import PartialShape as P
>>> str(broadcast_shapes(P.parse("[?,1,4]"), P.parse("[3,2..5,1]")))
'[3,2..5,4]'
>>> str(conv_shape(P.parse("[1,3,2..10,?]"), P.parse("[8,3,3,3]"), (2, 1), (1, 1), (0, 0),
...                (0, 0)))
'[1,8,1..4,1..]'
"""

from __future__ import annotations

import math

from ...errors import ShapeInferenceError
from ...shapes import DYNAMIC, INF, Dimension, PartialShape
from .spec import Attrs
from .values import Tensor, dim_of_bounds

__all__ = ["normalize_axis", "int_dim", "bounds_dim", "value_dims", "broadcast_dims",
           "broadcast_shapes", "floor_div", "ceil_div", "divided", "padded", "shifted",
           "dilated", "PAD_MODES", "pad_mode", "spatial_rank", "check_window", "window_dims",
           "prepare_window", "conv_shape"]


# -- axes and single dims ------------------------------------------------------------------
def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[-rank, rank-1]`` made non-negative, else a ShapeInferenceError. A
    real axis (from a real Const) counts truncated, as OpenVINO casts it."""
    if isinstance(axis, float):
        if not math.isfinite(axis):
            raise ShapeInferenceError(f"{what} must be a number, but got {axis}")
        axis = int(axis)
    if not -rank <= axis < rank:
        raise ShapeInferenceError(
            f"{what} must be in the range [{-rank}, {rank - 1}] of a rank-{rank} input, "
            f"but got {axis}"
        )
    return axis + rank if axis < 0 else axis


def int_dim(v: int) -> Dimension:
    """``Dimension(v)`` as OpenVINO makes it from an int64: -1 is ``?``, below that 0."""
    return DYNAMIC if v == -1 else Dimension.static(max(v, 0))


def bounds_dim(lo: int, hi: int) -> Dimension:
    """``Dimension(lo, hi)`` as OpenVINO builds it from int64 bounds (-1: no bound)."""
    lo = max(lo, 0)
    hi = INF if hi < 0 else hi
    return Dimension.from_bounds(lo, hi) if lo <= hi else DYNAMIC


def value_dims(t: Tensor) -> tuple[Dimension, ...] | None:
    """A shape tensor's elements as dims, from its value bounds (None when unknown); an
    exact -1 is ``?``, as OpenVINO reads a shape from a constant."""
    v = t.value
    if v is None:
        return None
    return tuple(bounds_dim(lo, lo) if lo == hi else dim_of_bounds(lo, hi)
                 for lo, hi in zip(*v, strict=True))


# -- numpy broadcasting --------------------------------------------------------------------
def broadcast_dims(a: Dimension, b: Dimension) -> Dimension:
    """OpenVINO's numpy broadcast of one pair of dims (ShapeInferenceError if they clash)."""
    if a is b:
        return a
    if a.lo == a.hi == 1:
        return b
    if b.lo == b.hi == 1:
        return a
    a1, b1 = a.lo <= 1 <= a.hi, b.lo <= 1 <= b.hi
    if a1 and b1:
        return Dimension.from_bounds(min(a.lo, b.lo), max(a.hi, b.hi))
    if a1:
        return b
    if b1:
        return a
    m = a.merge(b)
    if m is None:
        raise ShapeInferenceError(
            f"numpy broadcasting needs each pair of dims equal or one of them 1, "
            f"but got {a} and {b}"
        )
    return m


def broadcast_shapes(a: PartialShape, b: PartialShape) -> PartialShape:
    """The numpy broadcast of two shapes, aligned on the right; dynamic rank wins."""
    da, db = a.dims, b.dims
    if da is None or db is None:
        return PartialShape.of(None)
    if da == db:
        return a
    n = max(len(da), len(db))
    pa = (Dimension.static(1),) * (n - len(da)) + da
    pb = (Dimension.static(1),) * (n - len(db)) + db
    return PartialShape.of(tuple(broadcast_dims(x, y) for x, y in zip(pa, pb, strict=False)))


# -- the interval arithmetic of a window ---------------------------------------------------
PAD_MODES = ("explicit", "same_upper", "same_lower", "valid")


def floor_div(d: Dimension, n: int) -> Dimension:
    """Both ends divided by ``n``, rounded down (an unbounded end stays unbounded).

    >>> floor_div(Dimension(3, 8), 2), floor_div(Dimension(5, INF), 2)
    (Dimension('1..4'), Dimension('2..'))
    """
    return Dimension.from_bounds(d.lo // n, d.hi if d.hi == INF else d.hi // n)


def ceil_div(d: Dimension, n: int) -> Dimension:
    """Both ends divided by ``n``, rounded up (an unbounded end stays unbounded)."""
    return Dimension.from_bounds(-(-d.lo // n), d.hi if d.hi == INF else -(-d.hi // n))


def padded(d: Dimension, pad: int) -> Dimension:
    """``d`` plus the pad sum as OpenVINO adds it: as a dimension, so -1 is ``?`` and a
    more negative sum adds nothing.

    >>> padded(Dimension(10), 2), padded(Dimension(10), -1), padded(Dimension(10), -3)
    (Dimension('12'), Dimension('10..'), Dimension('10'))
    """
    if pad == -1:
        return d + DYNAMIC
    return d + pad if pad > 0 else d


def shifted(d: Dimension, pad: int) -> Dimension:
    """OpenVINO's ``dim::padded``: each end plus ``pad``; an end below 0 loses its bound.

    >>> shifted(Dimension(2, 5), -3), shifted(Dimension(4), -5), shifted(Dimension(4), 2)
    (Dimension('..2'), Dimension('?'), Dimension('6'))
    """
    if pad == 0:
        return d
    hi = -1 if d.hi == INF or d.hi + pad < 0 else d.hi + pad
    if d.is_static:
        return bounds_dim(hi, hi) if hi >= 0 else DYNAMIC
    return bounds_dim(-1 if d.lo + pad < 0 else d.lo + pad, hi)


def dilated(k: Dimension, dilation: int) -> Dimension:
    """The extent of a kernel dim with ``dilation``: ``(k - 1) * dilation + 1``."""
    return (k - 1) * dilation + 1


def pad_mode(attrs: Attrs) -> str:
    """The ``auto_pad`` attribute (``explicit`` when absent)."""
    mode = attrs.text("auto_pad", "explicit").lower()
    if mode not in PAD_MODES:
        raise ShapeInferenceError(
            f"auto_pad must be one of {', '.join(PAD_MODES)}, but got '{mode}'")
    return mode


def divided(d: Dimension, k: int) -> Dimension | None:
    """OpenVINO's ``Dimension / k``: the sizes ``x`` with ``x * k`` in ``d`` (None if none).

    As OpenVINO computes it: ``?`` stays ``?``, a division by 0 gives 0, and an unbounded
    upper end is divided as a double (``5.. / 3`` is ``2..3074457345618258432``).
    """
    if k == 1 or d.is_fully_dynamic:
        return d
    if k == 0:
        return Dimension.static(0)
    lo = -(-d.lo // k)
    hi = math.floor(float(INF) / k) if d.hi == INF else d.hi // k
    return Dimension.from_bounds(lo, hi) if lo <= hi else None


# -- the window of a convolution -----------------------------------------------------------
def spatial_rank(data: PartialShape, filters: PartialShape, filter_extra: int,
                 lists: tuple[tuple[int, ...], ...]) -> int | None:
    """The spatial rank: from the data, else the filters, else the first non-empty list."""
    if data.dims is not None:
        return len(data.dims) - 2
    if filters.dims is not None:
        return len(filters.dims) - filter_extra
    return next((len(v) for v in lists if v), None)


def check_window(n: int, strides, dilations, pads_begin, pads_end) -> None:
    for name, values in (("strides", strides), ("dilations", dilations),
                         ("pads_begin", pads_begin), ("pads_end", pads_end)):
        if len(values) != n:
            raise ShapeInferenceError(
                f"{name} must have one value per spatial dim ({n}), but got {len(values)}")
    if 0 in strides or 0 in dilations:
        raise ShapeInferenceError(
            f"strides and dilations must not be 0, but got {strides} and {dilations}")


def window_dims(data: PartialShape, filters: PartialShape, n: int, strides, dilations,
             pads_begin, pads_end, mode: str) -> tuple[Dimension, ...]:
    dims = data.dims[-n:] if data.dims is not None and n else (DYNAMIC,) * n
    if mode in ("same_upper", "same_lower"):
        return tuple(ceil_div(d, s) for d, s in zip(dims, strides, strict=True))
    kernel = filters.dims[-n:] if filters.dims is not None and n else (DYNAMIC,) * n
    if mode == "valid":
        pads_begin = pads_end = (0,) * n
    out = []
    for i in range(n):
        d = padded(dims[i], pads_begin[i] + pads_end[i])
        k = dilated(kernel[i], dilations[i])
        if d.is_static and k.is_static and not 0 < k.lo <= d.lo:
            raise ShapeInferenceError(
                f"the dilated kernel must fit the padded data, but at spatial axis {i} the "
                f"kernel is {k} and the padded data {d}")
        out.append(floor_div(d - k, strides[i]) + 1)
    return tuple(out)


def prepare_window(data: PartialShape, filters: PartialShape, filter_extra: int, strides,
             dilations, pads_begin, pads_end):
    """The spatial rank and the attributes (empty strides and dilations mean ones, empty
    pads zeros), after the checks every convolution makes on ranks and attributes."""
    n = spatial_rank(data, filters, filter_extra, (strides, dilations, pads_begin, pads_end))
    if n is None:
        return None, strides, dilations, pads_begin, pads_end
    if data.dims is not None and len(data.dims) not in (3, 4, 5):
        raise ShapeInferenceError(f"the data must be 3-D, 4-D or 5-D, but got {data}")
    if data.dims is not None and filters.dims is not None and \
            len(filters.dims) != len(data.dims) + filter_extra - 2:
        raise ShapeInferenceError(
            f"the data and filters ranks must match, but got {data} and {filters}")
    strides, dilations = strides or (1,) * n, dilations or (1,) * n
    pads_begin, pads_end = pads_begin or (0,) * n, pads_end or (0,) * n
    check_window(n, strides, dilations, pads_begin, pads_end)
    return n, strides, dilations, pads_begin, pads_end


def conv_shape(data: PartialShape, filters: PartialShape, strides: tuple[int, ...],
               dilations: tuple[int, ...], pads_begin: tuple[int, ...],
               pads_end: tuple[int, ...], mode: str = "explicit") -> PartialShape:
    """Convolution-1: ``[N, C_out, spatial...]``."""
    n, strides, dilations, pads_begin, pads_end = prepare_window(
        data, filters, 2, strides, dilations, pads_begin, pads_end)
    if n is None:
        return PartialShape.dynamic()
    if data.dims is not None and filters.dims is not None and \
            not data.dims[1].compatible(filters.dims[1]):
        raise ShapeInferenceError(
            f"the data channels must equal the filter input channels, but got "
            f"{data.dims[1]} and {filters.dims[1]}")
    batch = data.dims[0] if data.dims is not None else DYNAMIC
    channels = filters.dims[0] if filters.dims is not None else DYNAMIC
    return PartialShape.of((batch, channels) + window_dims(
        data, filters, n, strides, dilations, pads_begin, pads_end, mode))
