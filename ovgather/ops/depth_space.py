"""Moving data between depth and space: DepthToSpace-1, SpaceToDepth-1, and
ShuffleChannels-1, which moves channels among their groups and keeps the shape (its axis a
dim of a rank 1 or more input, ``group`` at least 1 and dividing a static channel dim).

With ``k`` spatial dims and block size ``b``, DepthToSpace turns ``[N, C, D1..Dk]`` into
``[N, C / b^k, D1*b, .., Dk*b]`` and SpaceToDepth does the reverse,
``[N, C * b^k, D1/b, .., Dk/b]``. A division is OpenVINO's ``Dimension / b`` (see
``convolution.divided``): a static dim must be a multiple of ``b``, an interval keeps the
multiples it holds, ``?`` stays ``?``.

>>> from ovgather.shapes import PartialShape as P
>>> str(depth_space_shape(P.parse("[1,3..9,2,?]"), 2, to_space=True))
'[1,1..2,4,?]'
>>> str(depth_space_shape(P.parse("[1,3,4,1..5]"), 2, to_space=False))
'[1,12,2,1..2]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import Dimension, PartialShape
from .convolution import divided
from .spec import Attrs, Trace, specs_of
from .values import Tensor

__all__ = ["depth_space_shape", "SPECS"]

MODES = ("blocks_first", "depth_first")


def _divide(d: Dimension, k: int) -> Dimension:
    out = divided(d, k)
    if out is None:
        raise ShapeInferenceError(f"the dim {d} must hold a multiple of {k}, but holds none")
    return out


def depth_space_shape(data: PartialShape, block: int, to_space: bool) -> PartialShape:
    """DepthToSpace (``to_space``) or SpaceToDepth of ``data`` with block size ``block``."""
    dims = data.dims
    if dims is None:
        return data
    if len(dims) < 3:
        raise ShapeInferenceError(f"the data must have rank 3 or more, but got {data}")
    if block <= 0:
        raise ShapeInferenceError(f"the block size must be positive, but got {block}")
    factor = block ** (len(dims) - 2)
    if to_space:
        return PartialShape.of((dims[0], _divide(dims[1], factor))
                               + tuple(d * block for d in dims[2:]))
    return PartialShape.of((dims[0], dims[1] * factor)
                           + tuple(_divide(d, block) for d in dims[2:]))


def _rule(to_space: bool):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        mode = attrs.text("mode", "blocks_first").lower()
        if mode not in MODES:
            raise ShapeInferenceError(f"mode must be blocks_first or depth_first, but got '{mode}'")
        shape = depth_space_shape(ins[0].shape, attrs.int("block_size", 1), to_space)
        return [Tensor(shape, ins[0].etype)]

    return rule


def _shuffle_channels(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    dims, axis, group = ins[0].shape.dims, attrs.int("axis", 1), attrs.int("group", 1)
    if dims is not None:
        if not dims:
            raise ShapeInferenceError("ShuffleChannels needs rank 1 or more, but got []")
        if not -len(dims) <= axis < len(dims):
            raise ShapeInferenceError(
                f"the axis must lie in [{-len(dims)}, {len(dims) - 1}], but got {axis}")
    if group < 1:
        raise ShapeInferenceError(f"group must be 1 or more, but got {group}")
    if dims is not None and dims[axis].is_static and dims[axis].lo % group:
        raise ShapeInferenceError(
            f"the channel dim must be a multiple of group, but got {dims[axis]} and {group}")
    return [Tensor(ins[0].shape, ins[0].etype)]


SPECS = specs_of({"DepthToSpace": _rule(True), "SpaceToDepth": _rule(False),
                  "ShuffleChannels": _shuffle_channels})
