"""Convolutions: Convolution-1, GroupConvolution-1 and their BackpropData-1 forms.

Data is ``[N, C, spatial...]`` (3-D to 5-D); Convolution's filters are ``[C_out, C, k...]``,
GroupConvolution's ``[G, C_out/G, C/G, k...]``. Each spatial dim of the output is

    floor((data + pads_begin + pads_end - dilated kernel) / stride) + 1

with ``dilated kernel = (k - 1) * dilation + 1``, or ``ceil(data / stride)`` when
``auto_pad`` is ``same_upper``/``same_lower`` (``valid`` drops the pads). The window
arithmetic, which BinaryConvolution, DeformableConvolution and the poolings share, is in
``core/dims.py``, with OpenVINO's interval rules for dims that are intervals.

>>> from ovgather.shapes import PartialShape as P
>>> str(conv_shape(P.parse("[1,3,2..10,?]"), P.parse("[8,3,3,3]"), (2, 1), (1, 1), (0, 0),
...                (0, 0)))
'[1,8,1..4,1..]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import (
    check_window,
    conv_shape,
    dilated,
    divided,
    pad_mode,
    prepare_window,
    shifted,
    spatial_rank,
    value_dims,
    window_dims,
)
from .core.spec import Attrs, Trace, specs_of
from .core.values import INT_TYPES, Tensor, computed_shape_bounds

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["group_conv_shape", "backprop_shape", "SPECS"]

ONE = Dimension.static(1)


# -- the interval arithmetic of a window ---------------------------------------------------


# -- the shape rule ----------------------------------------------------------------------------


def _window_attrs(attrs: Attrs):
    return (attrs.ints("strides"), attrs.ints("dilations"), attrs.ints("pads_begin"),
            attrs.ints("pads_end"), pad_mode(attrs))


def group_conv_shape(data: PartialShape, filters: PartialShape, strides: tuple[int, ...],
                     dilations: tuple[int, ...], pads_begin: tuple[int, ...],
                     pads_end: tuple[int, ...], mode: str = "explicit") -> PartialShape:
    """GroupConvolution-1: ``[N, G * C_out/G, spatial...]``, the data channels ``G * C/G``.

    >>> from ovgather.shapes import PartialShape as P
    >>> str(group_conv_shape(P.parse("[1,?,8]"), P.parse("[4,2,3,3]"), (1,), (1,), (0,), (0,)))
    '[1,8,6]'
    """
    n, strides, dilations, pads_begin, pads_end = prepare_window(
        data, filters, 3, strides, dilations, pads_begin, pads_end)
    if n is None:
        return PartialShape.dynamic()
    batch = data.dims[0] if data.dims is not None else DYNAMIC
    channels = _group_channels(data, filters, 2, 1)
    return PartialShape.of((batch, channels) + window_dims(
        data, filters, n, strides, dilations, pads_begin, pads_end, mode))


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
    n = spatial_rank(data, filters, extra, ())
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
    check_window(n, strides, dilations, pads_begin, pads_end)
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


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """The batch, then each spatial dim ``(H+pb+pe-k)//s+1`` (the channels are the
    filters', static)."""
    from .core.symbolic import Sym, window
    data, filters = ins[0].dims, facts.inputs[1].shape.dims
    if data is None or filters is None or facts.op not in ("Convolution", "GroupConvolution"):
        return None
    kernel = [d.lo for d in filters[-(len(data) - 2):]]
    n = len(kernel)
    strides, dilations, pads_begin, pads_end, mode = _window_attrs(attrs)
    spatial = [window(d, kernel[i], strides[i], dilations[i] if dilations else 1,
                      (pads_begin[i] if pads_begin else 0, pads_end[i] if pads_end else 0), mode)
               for i, d in enumerate(data[2:2 + n])]
    return [Sym([data[0], None, *spatial])]


SPECS = specs_of({"Convolution": _conv, "GroupConvolution": _group_conv,
                  "ConvolutionBackpropData": _backprop(False),
                  "GroupConvolutionBackpropData": _backprop(True)}, symbolic=_symbolic)
