"""The walk's adapters for the gather family: attributes from IR text to the rules in
``gather_nd.py``, ``gather_elements.py`` and ``gather.py``, plus the value of a Gather
on a small shape tensor (``ShapeOf → Gather``), which OpenVINO evaluates so that a
Reshape fed by it keeps precise bounds.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ShapeInferenceError
from .gather import infer_gather
from .gather_elements import infer_gather_elements
from .gather_nd import infer_gather_nd
from .values import Tensor, Value, attr_int, exact_ints, exact_scalar

__all__ = ["RULES"]

Rule = Callable[[list[Tensor], dict[str, str], int, int], list[Tensor]]


def _gather_nd(ins: list[Tensor], data: dict[str, str], version: int, nout: int):
    bd = attr_int(data, "batch_dims", 0)
    if bd < 0:
        raise ShapeInferenceError(
            f"GatherND's batch_dims must be 0 or more (OpenVINO keeps it unsigned, so a "
            f"negative value reads as a huge count), but got batch_dims={bd}"
        )
    shape = infer_gather_nd(ins[0].shape, ins[1].shape, bd, version, ins[1].etype)
    return [Tensor(shape, ins[0].etype)]


def _gather_elements(ins: list[Tensor], data: dict[str, str], version: int, nout: int):
    axis = attr_int(data, "axis")
    shape = infer_gather_elements(ins[0].shape, ins[1].shape, axis, ins[1].etype)
    return [Tensor(shape, ins[0].etype)]


def _gather(ins: list[Tensor], data: dict[str, str], version: int, nout: int):
    bd = attr_int(data, "batch_dims", 0)
    axis = exact_scalar(ins[2]) if len(ins) > 2 else None
    axis_shape = ins[2].shape if len(ins) > 2 else None
    shape = infer_gather(
        ins[0].shape, ins[1].shape, axis, bd, version, ins[1].etype, axis_shape
    )
    value = _gather_value(ins, axis, bd)
    return [Tensor(shape, ins[0].etype, value)]


def _gather_value(ins: list[Tensor], axis: int | None, bd: int) -> Value | None:
    """Gather of a 1-D value by exact indices along axis 0 (negative indices wrap)."""
    if bd != 0 or axis not in (0, -1):
        return None
    if ins[0].shape.dims is None or len(ins[0].shape.dims) != 1:
        return None
    data = ins[0].value
    idx = exact_ints(ins[1]) if data is not None else None
    if data is None or idx is None:
        return None
    n = len(data[0])
    picks = []
    for i in idx:
        if not -n <= i < n:
            return None
        picks.append(i % n)
    return tuple(data[0][i] for i in picks), tuple(data[1][i] for i in picks)


RULES: dict[str, Rule] = {
    "GatherND": _gather_nd,
    "GatherElements": _gather_elements,
    "Gather": _gather,
}
