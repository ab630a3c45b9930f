"""Matrix inversion: Inverse-14 keeps the shape of its ``[..., M, M]`` input.

The input has rank 2 or more and its last two dims, when both are static, are equal (no
other check, and no merge: OpenVINO keeps ``[2..4,3]`` and ``[2,4..]`` as they are).

>>> from ovgather.shapes import PartialShape as P
>>> str(inverse_shape(P.parse("[2..4,3]")))
'[2..4,3]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["inverse_shape", "SPECS"]


def inverse_shape(shape: PartialShape) -> PartialShape:
    dims = shape.dims
    if dims is None:
        return shape
    if len(dims) < 2:
        raise ShapeInferenceError(f"Inverse needs a matrix (rank 2 or more), but got {shape}")
    if dims[-1].is_static and dims[-2].is_static and dims[-1] != dims[-2]:
        raise ShapeInferenceError(f"Inverse needs square matrices, but got {shape}")
    return shape


def _inverse(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    return [Tensor(inverse_shape(ins[0].shape), ins[0].etype)]


SPECS = specs_of({"Inverse": _inverse})
