"""DeformableConvolution-1/8: a convolution whose sampling points move by learnt offsets
(and, from version 8, are weighed by a mask).

All inputs are 4-D: data ``[N, C, H, W]``, offsets ``[N, 2 * dg * kh * kw, oh, ow]``,
filters ``[C_out, C / group, kh, kw]`` and the mask ``[N, dg * kh * kw, oh, ow]``. The
output is Convolution's ``[N, C_out, oh, ow]`` (``convolution.conv_shape``); ``group`` and
``deformable_group`` (``dg``) are 1 or more, ``group`` divides ``C`` and ``C_out``, ``dg``
the offset and mask channels, and the offsets and mask must fit the batch and the output's
spatial dims.

>>> from ovgather.shapes import PartialShape as P
>>> shapes = [P.parse(s) for s in ("[1,4,8,8]", "[1,18,6,6]", "[2,4,3,3]")]
>>> print(deformable_shape(shapes, group=1, deformable_group=1, strides=(1, 1),
...                        dilations=(1, 1), pads=((0, 0), (0, 0)), mode="explicit"))
[1,2,6,6]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import conv_shape, divided, pad_mode
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["deformable_shape", "SPECS"]

NAMES = ("data", "offsets", "filters", "mask")


def _fail(rule: str, shapes: list[PartialShape]) -> ShapeInferenceError:
    return ShapeInferenceError(f"{rule}, but got {', '.join(str(s) for s in shapes)}")


def _divisible(d: Dimension, k: int) -> bool:
    return divided(d, k) is not None


def _window_channels(filters: PartialShape, dg: int, per_point: int) -> Dimension:
    """The offset (2 per point) or mask (1 per point) channels the filters ask for."""
    return filters.dims[2] * filters.dims[3] * (per_point * dg)


def _check_extra(extra: PartialShape, filters: PartialShape, dg: int, per_point: int,
                 name: str, shapes) -> None:
    if extra.dims is None:
        return
    if filters.dims is not None and not extra.dims[1].compatible(
            _window_channels(filters, dg, per_point)):
        raise _fail(f"the {name} channels must be {per_point} per kernel point and "
                    f"deformable group", shapes)
    if not _divisible(extra.dims[1], dg):
        raise _fail(f"the {name} channels must divide by the deformable group {dg}", shapes)


def _spatial_fits(extra: PartialShape, out: PartialShape, name: str, shapes) -> None:
    if extra.dims is not None and out.dims is not None and not all(
            a.compatible(b) for a, b in zip(out.dims[2:], extra.dims[2:], strict=True)):
        raise _fail(f"the {name} spatial dims must be the output's", shapes)


def deformable_shape(shapes: list[PartialShape], group: int, deformable_group: int,
                     strides, dilations, pads, mode: str) -> PartialShape:
    data, offsets, filters = shapes[:3]
    if all(s.dims is None for s in (data, offsets, filters)):
        return PartialShape.dynamic()
    for shape, name in zip(shapes, NAMES, strict=False):
        if shape.rank not in (None, 4):
            raise _fail(f"the {name} must be 4-D", shapes)
    if group < 1 or deformable_group < 1:
        raise _fail(f"group and deformable_group must be 1 or more ({group}, "
                    f"{deformable_group})", shapes)
    if len(shapes) > 3 and shapes[3].dims is not None:
        _check_extra(shapes[3], filters, deformable_group, 1, "mask", shapes)
        if data.dims is not None and not shapes[3].dims[0].compatible(data.dims[0]):
            raise _fail("the mask must have the data's batch", shapes)
    base = conv_shape(data.merge(PartialShape.dynamic(4)) if data.dims is None else
                      PartialShape.of((data.dims[0], DYNAMIC) + data.dims[2:]),
                      filters, strides, dilations, pads[0], pads[1], mode)
    batch = base.dims[0]
    if data.dims is not None and not _divisible(data.dims[1], group):
        raise _fail(f"the data channels must divide by the group {group}", shapes)
    if offsets.dims is not None:
        _check_extra(offsets, filters, deformable_group, 2, "offsets", shapes)
        batch = batch.merge(offsets.dims[0])
        if batch is None:
            raise _fail("the offsets must have the data's batch", shapes)
    channels = DYNAMIC
    if filters.dims is not None:
        if not _divisible(filters.dims[0], group):
            raise _fail(f"the output channels must divide by the group {group}", shapes)
        if data.dims is not None and not data.dims[1].compatible(filters.dims[1] * group):
            raise _fail("the data channels must be the filter channels times the group",
                        shapes)
        channels = filters.dims[0]
    out = PartialShape.of((batch, channels) + base.dims[2:])
    _spatial_fits(offsets, out, "offsets", shapes)
    if len(shapes) > 3:
        _spatial_fits(shapes[3], out, "mask", shapes)
    return out


def _deformable_convolution(ins: list[Tensor], attrs: Attrs,
                            trace: Trace | None = None) -> list[Tensor]:
    shape = deformable_shape([t.shape for t in ins], attrs.int("group", 1),
                             attrs.int("deformable_group", 1), attrs.ints("strides"),
                             attrs.ints("dilations"),
                             (attrs.ints("pads_begin"), attrs.ints("pads_end")), pad_mode(attrs))
    return [Tensor(shape, ins[0].etype)]


SPECS = specs_of({"DeformableConvolution": _deformable_convolution})
