"""String tensors: StringTensorUnpack-15 and StringTensorPack-15.

Unpack turns a tensor of strings into the begins and ends of each string (both of the
input's shape) and their bytes, ``[?]`` (``[0]`` for a tensor with no element). Pack does
the reverse: begins and ends of one shape (their merge is the output) and 1-D bytes.

>>> from ovgather.shapes import PartialShape as P
>>> print(pack_shape(P.parse("[2..4]"), P.parse("[3..6]"), P.parse("[4]")))
[3..4]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["pack_shape", "SPECS"]


def pack_shape(begins: PartialShape, ends: PartialShape, symbols: PartialShape) -> PartialShape:
    out = begins.merge(ends)
    if out is None:
        raise ShapeInferenceError(
            f"begins and ends must have one shape, but got {begins} and {ends}")
    if symbols.rank not in (None, 1):
        raise ShapeInferenceError(f"the symbols must be 1-D, but got {symbols}")
    return out


def _pack(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    return [Tensor(pack_shape(*(t.shape for t in ins[:3])), "string")]


def _unpack(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    if ins[0].etype not in ("string", "dynamic"):
        raise ShapeInferenceError(f"the data must hold strings, but holds {ins[0].etype}")
    shape = ins[0].shape
    empty = shape.dims is not None and any(d.hi == 0 for d in shape.dims)
    symbols = PartialShape([0]) if empty else PartialShape.dynamic(1)
    return [Tensor(shape, "i32"), Tensor(shape, "i32"), Tensor(symbols, "u8")]


SPECS = specs_of({"StringTensorPack": _pack, "StringTensorUnpack": _unpack})
