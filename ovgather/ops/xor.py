"""Xor-1: opset1's name for LogicalXor, the element-wise exclusive or of two boolean
tensors, broadcast as ``auto_broadcast`` says (``numpy`` by default, ``none``: one shape).

>>> from ovgather.shapes import PartialShape as P
>>> print(xor_shape(P.parse("[2,?]"), P.parse("[1..3,3]"), "numpy"))
[2,3]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.dims import broadcast_shapes
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["xor_shape", "SPECS"]


def xor_shape(a: PartialShape, b: PartialShape, mode: str) -> PartialShape:
    if mode == "none":
        merged = a.merge(b)
        if merged is None:
            raise ShapeInferenceError(
                f"with auto_broadcast none the shapes must be one, but got {a} and {b}")
        return merged
    if mode != "numpy":
        raise ShapeInferenceError(f"auto_broadcast must be numpy or none, but got '{mode}'")
    return broadcast_shapes(a, b)


def _xor(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    etypes = {t.etype for t in ins[:2]} - {"dynamic"}
    if etypes - {"boolean"}:
        raise ShapeInferenceError(f"the operands must be boolean, but got {sorted(etypes)}")
    mode = attrs.text("auto_broadcast", "numpy").lower()
    return [Tensor(xor_shape(ins[0].shape, ins[1].shape, mode), "boolean")]


SPECS = specs_of({"Xor": _xor})
