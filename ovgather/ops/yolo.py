"""YOLO heads: RegionYolo-1 and ReorgYolo-2, both over ``[N, C, H, W]``.

RegionYolo with ``do_softmax`` flattens the dims ``axis`` to ``end_axis`` (either may count
from the end) into one; without it, the channels become
``(classes + coords + 1) * len(mask)``. ReorgYolo moves ``stride × stride`` blocks into
the channels: ``[N, C * s², H / s, W / s]``, a static ``C`` at least ``s²``, ``H`` and ``W``
holding a multiple of ``s`` (OpenVINO's division, see ``core/dims.py``).

>>> from ovgather.shapes import PartialShape as P
>>> str(reorg_shape(P.parse("[1,?,3..9,8]"), 2))
'[1,?,2..4,4]'
"""

from __future__ import annotations

import math

from ..errors import ShapeInferenceError
from ..shapes import Dimension, PartialShape
from .core.dims import divided
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["reorg_shape", "SPECS"]


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeInferenceError(f"the axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    return axis + rank if axis < 0 else axis


def _region_yolo(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    data = ins[0].shape
    if data.rank not in (None, 4):
        raise ShapeInferenceError(f"the data must be 4-D, but got {data}")
    if data.dims is None:
        return [Tensor(data, ins[0].etype)]
    dims = data.dims
    if attrs.bool("do_softmax", True):
        axis = _axis(attrs.int("axis", 1), 4)
        end = _axis(attrs.int("end_axis", 3), 4)
        merged = math.prod(dims[axis + 1:end + 1], start=dims[axis])
        out = dims[:axis] + (merged,) + dims[max(end, axis) + 1:]
    else:
        channels = (attrs.int("classes") + attrs.int("coords") + 1) * len(attrs.ints("mask"))
        out = dims[:1] + (Dimension.static(max(channels, 0)),) + dims[2:]
    return [Tensor(PartialShape.of(tuple(out)), ins[0].etype)]


def reorg_shape(data: PartialShape, stride: int) -> PartialShape:
    dims = data.dims
    if dims is None:
        return data
    if len(dims) != 4:
        raise ShapeInferenceError(f"the data must be [N, C, H, W], but got {data}")
    if stride < 0:
        raise ShapeInferenceError(f"the stride must be positive, but got {stride}")
    if dims[1].is_static and dims[1].lo < stride * stride:
        raise ShapeInferenceError(f"the channels must be at least stride² ({stride * stride}), "
                                  f"but got {dims[1]}")
    spatial = [divided(d, stride) for d in dims[2:]]
    if None in spatial:
        raise ShapeInferenceError(
            f"H and W must hold a multiple of the stride {stride}, but got {data}")
    return PartialShape.of((dims[0], dims[1] * (stride * stride), *spatial))


def _reorg_yolo(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    strides = attrs.ints("stride")
    if not strides:
        raise ShapeInferenceError("the attribute 'stride' is required, but it is missing")
    return [Tensor(reorg_shape(ins[0].shape, strides[0]), ins[0].etype)]


SPECS = specs_of({"RegionYolo": _region_yolo, "ReorgYolo": _reorg_yolo})
