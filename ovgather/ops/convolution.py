"""Convolutions: Convolution-1, GroupConvolution-1, their BackpropData-1 forms, and the
interval arithmetic of a window.

Data is ``[N, C, spatial...]`` (3-D to 5-D); Convolution's filters are ``[C_out, C, k...]``,
GroupConvolution's ``[G, C_out/G, C/G, k...]``. Each spatial dim of the output is

    floor((data + pads_begin + pads_end - dilated kernel) / stride) + 1

with ``dilated kernel = (k - 1) * dilation + 1``, or ``ceil(data / stride)`` when
``auto_pad`` is ``same_upper``/``same_lower`` (``valid`` drops the pads). Dims that are
intervals go through OpenVINO's interval arithmetic: a difference never drops below 0,
the division floors (or ceils) both ends, and an unbounded end stays unbounded. The
kernel must fit the padded data only when both are known exactly.

>>> from ovgather.shapes import PartialShape as P
>>> str(conv_shape(P.parse("[1,3,2..10,?]"), P.parse("[8,3,3,3]"), (2, 1), (1, 1), (0, 0),
...                (0, 0)))
'[1,8,1..4,1..]'

OpenVINO adds the pad sum as a dimension: a sum of ``-1`` is a dynamic dim and a more
negative one adds nothing (checked on 2026.4.1; see ``padded``).
"""

from __future__ import annotations

import math

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .spec import Attrs, Trace, specs_of
from .values import INT_TYPES, Tensor, computed_shape_bounds, dim_of_bounds

__all__ = ["conv_shape", "group_conv_shape", "backprop_shape", "floor_div", "ceil_div",
           "padded", "shifted", "bounds_dim", "value_dims", "divided",
           "dilated", "pad_mode", "SPECS"]

PAD_MODES = ("explicit", "same_upper", "same_lower", "valid")
ONE = Dimension.static(1)


# -- the interval arithmetic of a window ---------------------------------------------------
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


def bounds_dim(lo: int, hi: int) -> Dimension:
    """``Dimension(lo, hi)`` as OpenVINO builds it from int64 bounds (-1: no bound)."""
    lo = max(lo, 0)
    hi = INF if hi < 0 else hi
    return Dimension.from_bounds(lo, hi) if lo <= hi else DYNAMIC


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


# -- the shape rule ----------------------------------------------------------------------------
def _num_spatial(data: PartialShape, filters: PartialShape, filter_extra: int,
                 lists: tuple[tuple[int, ...], ...]) -> int | None:
    """The spatial rank: from the data, else the filters, else the first non-empty list."""
    if data.dims is not None:
        return len(data.dims) - 2
    if filters.dims is not None:
        return len(filters.dims) - filter_extra
    return next((len(v) for v in lists if v), None)


def _check_attributes(n: int, strides, dilations, pads_begin, pads_end) -> None:
    for name, values in (("strides", strides), ("dilations", dilations),
                         ("pads_begin", pads_begin), ("pads_end", pads_end)):
        if len(values) != n:
            raise ShapeInferenceError(
                f"{name} must have one value per spatial dim ({n}), but got {len(values)}")
    if 0 in strides or 0 in dilations:
        raise ShapeInferenceError(
            f"strides and dilations must not be 0, but got {strides} and {dilations}")


def _spatial(data: PartialShape, filters: PartialShape, n: int, strides, dilations,
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


def _window_attrs(attrs: Attrs):
    return (attrs.ints("strides"), attrs.ints("dilations"), attrs.ints("pads_begin"),
            attrs.ints("pads_end"), pad_mode(attrs))


def _prepare(data: PartialShape, filters: PartialShape, filter_extra: int, strides,
             dilations, pads_begin, pads_end):
    """The spatial rank and the attributes (empty strides and dilations mean ones, empty
    pads zeros), after the checks every convolution makes on ranks and attributes."""
    n = _num_spatial(data, filters, filter_extra, (strides, dilations, pads_begin, pads_end))
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
    _check_attributes(n, strides, dilations, pads_begin, pads_end)
    return n, strides, dilations, pads_begin, pads_end


def conv_shape(data: PartialShape, filters: PartialShape, strides: tuple[int, ...],
               dilations: tuple[int, ...], pads_begin: tuple[int, ...],
               pads_end: tuple[int, ...], mode: str = "explicit") -> PartialShape:
    """Convolution-1: ``[N, C_out, spatial...]``."""
    n, strides, dilations, pads_begin, pads_end = _prepare(
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
    return PartialShape.of((batch, channels) + _spatial(
        data, filters, n, strides, dilations, pads_begin, pads_end, mode))


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


def group_conv_shape(data: PartialShape, filters: PartialShape, strides: tuple[int, ...],
                     dilations: tuple[int, ...], pads_begin: tuple[int, ...],
                     pads_end: tuple[int, ...], mode: str = "explicit") -> PartialShape:
    """GroupConvolution-1: ``[N, G * C_out/G, spatial...]``, the data channels ``G * C/G``.

    >>> from ovgather.shapes import PartialShape as P
    >>> str(group_conv_shape(P.parse("[1,?,8]"), P.parse("[4,2,3,3]"), (1,), (1,), (0,), (0,)))
    '[1,8,6]'
    """
    n, strides, dilations, pads_begin, pads_end = _prepare(
        data, filters, 3, strides, dilations, pads_begin, pads_end)
    if n is None:
        return PartialShape.dynamic()
    batch = data.dims[0] if data.dims is not None else DYNAMIC
    channels = _group_channels(data, filters, 2, 1)
    return PartialShape.of((batch, channels) + _spatial(
        data, filters, n, strides, dilations, pads_begin, pads_end, mode))


def value_dims(t: Tensor) -> tuple[Dimension, ...] | None:
    """A shape tensor's elements as dims, from its value bounds (None when unknown); an
    exact -1 is ``?``, as OpenVINO reads a shape from a constant."""
    v = t.value
    if v is None:
        return None
    return tuple(bounds_dim(lo, lo) if lo == hi else dim_of_bounds(lo, hi)
                 for lo, hi in zip(*v, strict=True))


def _out_spatial(t: Tensor | None) -> PartialShape | None:
    """The output spatial shape input of a backprop convolution (None when absent)."""
    if t is None:
        return None
    if t.shape.dims is not None and len(t.shape.dims) != 1:
        raise ShapeInferenceError(f"the output shape input must be 1-D, but got {t.shape}")
    if t.etype not in INT_TYPES and t.etype != "dynamic":
        raise ShapeInferenceError(
            f"the output shape input must be of an integer type, but got {t.etype}")
    computed_shape_bounds(t, "the output shape input")
    dims = value_dims(t)
    if dims is not None:
        return PartialShape.of(dims)
    n = t.shape.dims[0] if t.shape.dims is not None else DYNAMIC
    return PartialShape.dynamic(n.lo) if n.is_static else PartialShape.dynamic()


def backprop_shape(data: PartialShape, filters: PartialShape, out: PartialShape | None,
                   group: bool, strides, dilations, pads_begin, pads_end, mode: str,
                   output_padding) -> PartialShape:
    """ConvolutionBackpropData-1 (``group`` False) and GroupConvolutionBackpropData-1:
    ``[N, C_out, spatial...]``, the spatial dims from the output shape input when there is
    one, else ``(data - 1) * stride + dilated kernel + output_padding - pads``."""
    extra = 3 if group else 2
    n = _num_spatial(data, filters, extra, ())
    if n is None and out is not None and out.dims:
        n = len(out.dims)
    if n is None:
        n = next((len(v) for v in (strides, dilations, pads_begin, pads_end) if v), None)
    if n is None:
        return PartialShape.dynamic()
    if out is not None and out.dims is not None and len(out.dims) != n:
        raise ShapeInferenceError(
            f"the output shape input must give the {n} spatial dims, but got {out}")
    pads_begin, pads_end = pads_begin or (0,) * n, pads_end or (0,) * n
    strides, dilations = strides or (1,) * n, dilations or (1,) * n
    output_padding = output_padding or (0,) * n
    if data.dims is not None and filters.dims is not None:
        if len(filters.dims) != len(data.dims) + extra - 2:
            raise ShapeInferenceError(
                f"the data and filters ranks must match, but got {data} and {filters}")
        if not group and not data.dims[1].compatible(filters.dims[0]):
            raise ShapeInferenceError(
                f"the data channels must equal the filter input channels, but got "
                f"{data.dims[1]} and {filters.dims[0]}")
    if data.dims is not None and len(data.dims) not in (3, 4, 5):
        raise ShapeInferenceError(f"the data must be 3-D, 4-D or 5-D, but got {data}")
    if group and out is not None:  # OpenVINO fits the pads to the spatial rank here
        pads_begin, pads_end = (tuple(p[:n]) + (0,) * (n - len(p)) for p in (pads_begin,
                                                                             pads_end))
    _check_attributes(n, strides, dilations, pads_begin, pads_end)
    if len(output_padding) != n:
        raise ShapeInferenceError(
            f"output_padding must have one value per spatial dim ({n}), but got "
            f"{len(output_padding)}")
    if out is not None and out.dims is None and mode.startswith("same") and \
            data.dims is not None and filters.dims is not None and any(
                d.is_static and k.is_static for d, k in zip(data.dims[-n:], filters.dims[-n:],
                                                            strict=True)):
        raise ShapeInferenceError(
            "same_upper/same_lower pads need the length of the output shape input, but it is "
            "unknown")
    batch = data.dims[0] if data.dims is not None else DYNAMIC
    channels = _backprop_channels(data, filters, group)
    if out is not None:
        return PartialShape.of((batch, channels) + (out.dims or ()))
    if mode != "explicit":
        pads_begin = pads_end = (0,) * n
    dims = data.dims[-n:] if data.dims is not None else (DYNAMIC,) * n
    kernel = filters.dims[-n:] if filters.dims is not None else (DYNAMIC,) * n
    spatial = tuple(
        shifted((dims[i] - 1) * strides[i] + dilated(kernel[i], dilations[i]),
                output_padding[i] - pads_begin[i] - pads_end[i]) for i in range(n))
    return PartialShape.of((batch, channels) + spatial)


def _group_channels(data: PartialShape, filters: PartialShape, per_group_in: int,
                    per_group_out: int) -> Dimension:
    """The output channels of a group convolution, ``groups * filters[per_group_out]``,
    after the groups merge with ``data channels / filters[per_group_in]``."""
    if filters.dims is None:
        return DYNAMIC
    groups, per_group = filters.dims[0], filters.dims[per_group_in]
    if data.dims is not None and per_group.is_static:
        split = divided(data.dims[1], per_group.lo)
        groups = groups.merge(split) if split is not None else None
        if groups is None:
            raise ShapeInferenceError(
                f"the data channels must be the groups times the filter input channels, "
                f"but got {data.dims[1]} channels and filters {filters}")
    return groups * filters.dims[per_group_out]


def _backprop_channels(data: PartialShape, filters: PartialShape, group: bool) -> Dimension:
    if not group:
        return filters.dims[1] if filters.dims is not None else DYNAMIC
    return _group_channels(data, filters, 1, 2)


def _backprop(group: bool):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        out = _out_spatial(ins[2] if len(ins) > 2 else None)
        shape = backprop_shape(ins[0].shape, ins[1].shape, out, group, *_window_attrs(attrs)[:4],
                               pad_mode(attrs), attrs.ints("output_padding"))
        return [Tensor(shape, ins[0].etype)]

    return rule


def _conv(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = conv_shape(ins[0].shape, ins[1].shape, *_window_attrs(attrs))
    return [Tensor(shape, ins[0].etype)]


def _group_conv(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = group_conv_shape(ins[0].shape, ins[1].shape, *_window_attrs(attrs))
    return [Tensor(shape, ins[0].etype)]


SPECS = specs_of({"Convolution": _conv, "GroupConvolution": _group_conv,
                  "ConvolutionBackpropData": _backprop(False),
                  "GroupConvolutionBackpropData": _backprop(True)})
