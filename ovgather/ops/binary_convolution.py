"""BinaryConvolution-1: a convolution of binarized data and filters (``mode``
``xnor-popcount``) over 4-D data, shaped as Convolution-1
(``convolution.conv_shape``).

>>> from ovgather.shapes import PartialShape as P
>>> str(conv_shape(P.parse("[1,3,8,8]"), P.parse("[4,3,3,3]"), (1, 1), (1, 1), (0, 0), (0, 0)))
'[1,4,6,6]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from .core.dims import conv_shape, pad_mode
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["SPECS"]


def _binary_convolution(ins: list[Tensor], attrs: Attrs,
                        trace: Trace | None = None) -> list[Tensor]:
    mode = attrs.text("mode", "xnor-popcount").lower()
    if mode != "xnor-popcount":
        raise ShapeInferenceError(f"mode must be xnor-popcount, but got '{mode}'")
    if ins[0].shape.rank not in (None, 4):
        raise ShapeInferenceError(f"the data must be 4-D, but got {ins[0].shape}")
    shape = conv_shape(ins[0].shape, ins[1].shape, attrs.ints("strides"),
                       attrs.ints("dilations"), attrs.ints("pads_begin"),
                       attrs.ints("pads_end"), pad_mode(attrs))
    return [Tensor(shape, ins[0].etype)]


SPECS = specs_of({"BinaryConvolution": _binary_convolution})
