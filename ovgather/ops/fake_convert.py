"""FakeConvert-13: data converted to an 8-bit float and back, with a scale (and a shift of
the scale's shape) broadcast onto it.

The output is the numpy broadcast of the data and the scale; the scale may only broadcast
into the data (the output must stay compatible with the data's shape). The destination
type is ``f8e4m3`` or ``f8e5m2``.

>>> from ovgather.shapes import PartialShape as P
>>> str(fake_convert_shape(P.parse("[?,3]"), P.parse("[2,1]")))
'[2,3]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.dims import broadcast_shapes
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["fake_convert_shape", "SPECS"]

DESTINATIONS = ("f8e4m3", "f8e5m2")


def fake_convert_shape(data: PartialShape, scale: PartialShape) -> PartialShape:
    out = broadcast_shapes(data, scale)
    if not data.compatible(out):
        raise ShapeInferenceError(
            f"the scale must broadcast into the data, but got {scale} and {data}")
    return out


def _fake_convert(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    destination = attrs.text("destination_type", "f8e4m3").lower()
    if destination not in DESTINATIONS:
        raise ShapeInferenceError(
            f"destination_type must be f8e4m3 or f8e5m2, but got '{destination}'")
    if len(ins) > 2 and not ins[1].shape.compatible(ins[2].shape):
        raise ShapeInferenceError(f"the scale and the shift must have one shape, but got "
                                  f"{ins[1].shape} and {ins[2].shape}")
    return [Tensor(fake_convert_shape(ins[0].shape, ins[1].shape), ins[0].etype)]


SPECS = specs_of({"FakeConvert": _fake_convert})
