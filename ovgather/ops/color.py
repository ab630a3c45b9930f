"""Colour conversions from YUV: NV12toRGB-8, NV12toBGR-8, I420toRGB-8 and I420toBGR-8.

The images are ``[N, H, W, C]``. From one plane (Y over U and V), ``[N, H, W, 1]`` gives
``[N, 2H/3, W, 3]`` (``H`` must hold a multiple of 3). NV12 may come as Y ``[N, H, W, 1]``
and UV ``[N, H/2, W/2, 2]``, I420 as Y, U and V with U and V ``[N, H/2, W/2, 1]``: the
planes must agree. The output height and width must be even.

>>> from ovgather.shapes import PartialShape as P
>>> str(yuv_shape([P.parse("[1,6..9,?,1]")], "NV12"))
'[1,4..6,?,3]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import divided
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["yuv_shape", "SPECS"]

ONE, TWO, THREE = (Dimension.static(n) for n in (1, 2, 3))


def _fail(rule: str, shapes: list[PartialShape]) -> ShapeInferenceError:
    return ShapeInferenceError(f"{rule}, but got {', '.join(str(s) for s in shapes)}")


def _doubled(plane: PartialShape, channels: Dimension, shapes) -> PartialShape:
    """A chroma plane as the Y plane it covers: height and width doubled."""
    dims = plane.dims
    if dims is None:
        return plane
    if len(dims) != 4 or not dims[3].compatible(channels):
        raise _fail(f"the chroma plane must be [N, H, W, {channels}]", shapes)
    return PartialShape.of((dims[0], dims[1] * 2, dims[2] * 2, dims[3]))


def _merge(a: PartialShape, b: PartialShape, rule: str, shapes) -> PartialShape:
    m = a.merge(b)
    if m is None:
        raise _fail(rule, shapes)
    return m


def yuv_shape(shapes: list[PartialShape], kind: str) -> PartialShape:
    """The RGB/BGR image from the planes (``kind``: NV12 or I420)."""
    y = shapes[0]
    if y.rank not in (None, 4):
        raise _fail("the Y plane must be [N, H, W, 1]", shapes)
    if y.dims is not None and not y.dims[3].compatible(ONE):
        raise _fail("the Y plane must have 1 channel", shapes)
    out = list(y.dims if y.dims is not None else (DYNAMIC,) * 4)
    if len(shapes) == 1:
        out[1] = divided(out[1] * 2, 3)
        if out[1] is None:
            raise _fail("the image height must hold a multiple of 3", shapes)
    elif kind == "NV12":
        uv = _doubled(shapes[1], TWO, shapes)
        out[3] = TWO
        out = list(_merge(PartialShape.of(tuple(out)), uv, "Y and UV must agree", shapes).dims)
    else:
        uv = shapes[1].merge(shapes[2])
        if uv is None:
            raise _fail("U and V must agree", shapes)
        uv = _doubled(uv, ONE, shapes)
        out = list(_merge(PartialShape.of(tuple(out)), uv, "Y, U and V must agree",
                          shapes).dims)
    out[3] = THREE
    if divided(out[1], 2) is None or divided(out[2], 2) is None:
        raise _fail("the image height and width must be even", shapes)
    return PartialShape.of(tuple(out))


def _rule(kind: str):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        return [Tensor(yuv_shape([t.shape for t in ins], kind), ins[0].etype)]

    return rule


SPECS = specs_of({"NV12toRGB": _rule("NV12"), "NV12toBGR": _rule("NV12"),
                  "I420toRGB": _rule("I420"), "I420toBGR": _rule("I420")})
