"""Pooling over regions of interest: ROIPooling-1, PSROIPooling-1, DeformablePSROIPooling-1,
ROIAlign-3/9 and ROIAlignRotated-15.

Each takes 4-D feature maps ``[N, C, H, W]`` and 2-D ROIs ``[num_rois, k]`` (``k`` is 5 for
ROIPooling, PSROIPooling and ROIAlignRotated: a batch index and the box; 4 for ROIAlign,
whose batch indices are a third, 1-D input of ``num_rois`` elements). The output is
``[num_rois, channels, pooled_h, pooled_w]``: the feature channels, or PSROIPooling's
``output_dim`` with ``group_size`` for both pooled dims.

ROIPooling wants positive pooled sizes, a positive, normal spatial scale and the method
``max`` or ``bilinear``; PSROIPooling the mode ``average`` (channels
``output_dim * group_size²``) or ``bilinear`` (channels ``output_dim * bins_x * bins_y``,
each bin count positive), a positive group size and the same scale. DeformablePSROIPooling
(optional 4-D offsets) checks only a positive ``output_dim`` and ``group_size`` and the
input ranks. ROIAlign checks no attribute value but its modes.

>>> from ovgather.shapes import PartialShape as P
>>> str(roi_shape(P.parse("[1,3,8,8]"), P.parse("[?,5]"), 5, 2, 4))
'[?,3,2,4]'
"""

from __future__ import annotations

import math

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["roi_shape", "SPECS"]

ALIGN_MODES = ("avg", "max")
ALIGNED_MODES = ("asymmetric", "half_pixel_for_nn", "half_pixel")


def _rank(shape: PartialShape, rank: int, name: str) -> None:
    if shape.rank not in (None, rank):
        raise ShapeInferenceError(f"the {name} must be {rank}-D, but got {shape}")


def _rois(rois: PartialShape, k: int) -> Dimension:
    """The number of ROIs, after checking their shape ``[num_rois, k]``."""
    _rank(rois, 2, "ROIs")
    if rois.dims is None:
        return DYNAMIC
    if not rois.dims[1].compatible(Dimension.static(k)):
        raise ShapeInferenceError(f"each ROI must have {k} numbers, but got {rois}")
    return rois.dims[0]


def roi_shape(feats: PartialShape, rois: PartialShape, k: int, pooled_h: int, pooled_w: int,
              channels: Dimension | None = None) -> PartialShape:
    _rank(feats, 4, "feature maps")
    n = _rois(rois, k)
    if channels is None:
        channels = DYNAMIC if feats.dims is None else feats.dims[1]
    return PartialShape.of((n, channels, Dimension.static(pooled_h), Dimension.static(pooled_w)))


def _scale(attrs: Attrs) -> None:
    text = attrs.text("spatial_scale", "")
    try:
        scale = float(text)
    except ValueError:
        scale = math.nan
    if not (math.isfinite(scale) and scale >= 2.2250738585072014e-308):
        raise ShapeInferenceError(f"spatial_scale must be a positive number, but got '{text}'")


def _one_of(attrs: Attrs, name: str, allowed: tuple[str, ...], default: str) -> str:
    value = attrs.text(name, default)
    if value not in allowed:
        raise ShapeInferenceError(f"{name} must be one of {', '.join(allowed)}, but got "
                                  f"'{value}'")
    return value


def _roi_pooling(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    _rank(ins[0].shape, 4, "feature maps")
    _rois(ins[1].shape, 5)
    h, w = attrs.int("pooled_h"), attrs.int("pooled_w")
    if h < 1 or w < 1:
        raise ShapeInferenceError(f"pooled_h and pooled_w must be positive, but got {h}, {w}")
    _scale(attrs)
    _one_of(attrs, "method", ("max", "bilinear"), "max")
    return [Tensor(roi_shape(ins[0].shape, ins[1].shape, 5, h, w), ins[0].etype)]


def _psroi_pooling(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    mode = _one_of(attrs, "mode", ("average", "bilinear"), "average")
    group, dim = attrs.int("group_size", 1), attrs.int("output_dim")
    if group < 1:
        raise ShapeInferenceError(f"group_size must be positive, but got {group}")
    bins = attrs.int("spatial_bins_x", 1), attrs.int("spatial_bins_y", 1)
    if mode == "bilinear" and min(bins) < 1:
        raise ShapeInferenceError(f"the spatial bins must be positive, but got {bins}")
    _scale(attrs)
    feats = ins[0].shape
    _rank(feats, 4, "feature maps")
    area = group * group if mode == "average" else bins[0] * bins[1]
    if feats.dims is not None and not feats.dims[1].compatible(Dimension.static(area * dim)):
        raise ShapeInferenceError(
            f"the feature channels must be output_dim times {area}, but got {feats}")
    shape = roi_shape(feats, ins[1].shape, 5, group, group, Dimension.static(dim))
    return [Tensor(shape, ins[0].etype)]


def _deformable_psroi_pooling(ins: list[Tensor], attrs: Attrs,
                              trace: Trace | None = None) -> list[Tensor]:
    _rank(ins[0].shape, 4, "feature maps")
    _rank(ins[1].shape, 2, "ROIs")
    if len(ins) > 2:
        _rank(ins[2].shape, 4, "offsets")
    dim, group = attrs.int("output_dim"), attrs.int("group_size", 1)
    if dim < 1 or group < 1:
        raise ShapeInferenceError(
            f"output_dim and group_size must be positive, but got {dim} and {group}")
    n = DYNAMIC if ins[1].shape.dims is None else ins[1].shape.dims[0]
    shape = PartialShape.of((n, Dimension.static(dim), Dimension.static(group),
                             Dimension.static(group)))
    return [Tensor(shape, ins[0].etype)]


def _roi_align(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    rotated = attrs.version == 15
    if not rotated:
        _one_of(attrs, "mode", ALIGN_MODES, "avg")
        if attrs.version >= 9:
            _one_of(attrs, "aligned_mode", ALIGNED_MODES, "asymmetric")
    feats, rois, indices = (t.shape for t in ins[:3])
    _rank(feats, 4, "feature maps")
    _rank(rois, 2, "ROIs")
    _rank(indices, 1, "batch indices")
    shape = roi_shape(feats, rois, 5 if rotated else 4, attrs.int("pooled_h"),
                      attrs.int("pooled_w"))
    if indices.dims is not None:
        n = shape.dims[0].merge(indices.dims[0])
        if n is None:
            raise ShapeInferenceError(
                f"there must be one batch index per ROI, but got {rois} and {indices}")
        shape = PartialShape.of((n,) + shape.dims[1:])
    return [Tensor(shape, ins[0].etype)]


SPECS = specs_of({"ROIPooling": _roi_pooling, "PSROIPooling": _psroi_pooling,
                  "DeformablePSROIPooling": _deformable_psroi_pooling,
                  "ROIAlign": _roi_align, "ROIAlignRotated": _roi_align})
