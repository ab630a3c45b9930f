"""Normalization with its own checks: GroupNormalization-12.

The output is the data's shape (``[N, C, ...]``, rank 2 or more); ``scale`` and ``bias``
are 1-D with ``C`` elements and one shape (compatible, not merged into the output), and
``num_groups`` is positive and divides a static ``C`` without exceeding it.

>>> from ovgather.shapes import PartialShape as P
>>> str(group_norm_shape(P.parse("[2,?,4]"), P.parse("[6]"), P.parse("[6]"), 3))
'[2,?,4]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["group_norm_shape", "SPECS"]


def group_norm_shape(data: PartialShape, scale: PartialShape, bias: PartialShape,
                     groups: int) -> PartialShape:
    dims = data.dims
    if dims is not None and len(dims) < 2:
        raise ShapeInferenceError(f"the data must have rank 2 or more, but got {data}")
    for name, shape in (("scale", scale), ("bias", bias)):
        if shape.dims is None:
            continue
        if len(shape.dims) != 1:
            raise ShapeInferenceError(f"the {name} input must be 1-D, but got {shape}")
        if dims is not None and not shape.dims[0].compatible(dims[1]):
            raise ShapeInferenceError(
                f"the {name} input must have one element per channel ({dims[1]}), but got "
                f"{shape}")
    if not scale.compatible(bias):
        raise ShapeInferenceError(f"scale and bias must have one shape, but got {scale} and {bias}")
    if groups <= 0:
        raise ShapeInferenceError(f"num_groups must be positive, but got {groups}")
    if dims is not None and dims[1].is_static and (dims[1].lo % groups or groups > dims[1].lo):
        raise ShapeInferenceError(
            f"num_groups must divide the channels and not exceed them, but got {groups} groups "
            f"of {dims[1]}")
    return data


def _group_norm(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = group_norm_shape(ins[0].shape, ins[1].shape, ins[2].shape,
                             attrs.int("num_groups"))
    return [Tensor(shape, ins[0].etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """The data's dims."""
    from .core.symbolic import Sym
    return [Sym(ins[0].dims)]


SPECS = specs_of({"GroupNormalization": _group_norm}, symbolic=_symbolic)
