"""Integer inputs for differential tests, built both ways: a Constant (exact values), a
Parameter (nothing known) or a ShapeOf of an interval shape (value bounds)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
from op_diff import const, ov_param, tensor
from ov_oracle import random_dim

from ovgather.ops.core.values import Tensor, value_of_dims
from ovgather.shapes import PartialShape


def constant(values):
    """(OpenVINO builder, ovgather tensor) of an i64 Constant."""
    return (lambda: ov1.constant(np.array(values, np.int64))), const(values)


def parameter(shape: str, etype: str = "i64"):
    """(builder, tensor) of a Parameter of that shape: no value known."""
    return (lambda: ov_param(shape, getattr(ov.Type, etype))), tensor(shape, etype)


def bounded(n: int, rng):
    """(builder, tensor) of ``n`` values bounded by the dims of a random interval shape."""
    dims = "[" + ",".join(random_dim(rng) for _ in range(n)) + "]"
    bounds = value_of_dims(PartialShape.parse(dims).dims)
    return (lambda: ov3.shape_of(ov_param(dims))), Tensor(PartialShape([n]), "i64", bounds)


def one_of(rng, values, shapes, n: int, p_const: float = 0.5, p_param: float = 0.2):
    """A constant holding ``values``, else a Parameter of one of ``shapes``, else ``n``
    bounded values."""
    pick = rng.random()
    if pick < p_const:
        return constant(values)
    if pick < p_const + p_param:
        return parameter(rng.choice(shapes))
    return bounded(n, rng)
