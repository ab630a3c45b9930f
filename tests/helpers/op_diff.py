"""Differential testing of one op against OpenVINO: the same op built both ways.

A case is an OpenVINO builder (returns a node, or raises as OpenVINO's shape inference
does) and the same op for ovgather: its type, the opset, the input tensors and the
attribute texts as an IR writes them. :func:`disagreements` runs the cases and returns
the ones whose output shape text, or valid/invalid verdict, differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import openvino as ov
from ov_oracle import outcome, rng_for, same

from ovgather.errors import ShapeInferenceError
from ovgather.ops.core import registry
from ovgather.ops.core.values import Tensor
from ovgather.shapes import PartialShape


@dataclass
class Case:
    build: Callable[[], object]
    op_type: str
    opset: int
    ins: list[Tensor]
    attrs: dict[str, str] = field(default_factory=dict)
    n_outputs: int = 1
    label: str = ""


def tensor(shape: str, etype: str = "f32") -> Tensor:
    """A Parameter-like input: its shape only."""
    return Tensor(PartialShape.parse(shape), etype)


def const(values, etype: str = "i64") -> Tensor:
    """A Constant input: its shape and exact value."""
    arr = np.asarray(values)
    flat = tuple(int(v) for v in arr.reshape(-1))
    return Tensor(PartialShape(list(arr.shape)), etype, (flat, flat), const=True)


def ints(values: Iterable[int]) -> str:
    """An integer list attribute as the IR writes it."""
    return ",".join(str(v) for v in values)


def theirs(case: Case) -> str:
    return outcome(case.build)


def ours(case: Case) -> str:
    try:
        spec = registry.find(case.op_type, f"opset{case.opset}")
        out = spec.infer(case.ins, case.attrs, case.n_outputs)
        return str(out[0].shape)
    except ShapeInferenceError as err:
        return "error: " + err.message


def disagreements(cases: Iterable[Case]) -> tuple[int, list[tuple[str, str, str]]]:
    """(number of cases, [(label, ovgather, OpenVINO)] for the ones that differ)."""
    n, bad = 0, []
    for case in cases:
        n += 1
        a, b = ours(case), theirs(case)
        if not same(a, b):
            bad.append((case.label, a, b))
    return n, bad


def agree_with_openvino(seed_name: str, make_case, count: int, *args) -> None:
    """``count`` cases from ``make_case(rng, *args)`` (seeded by ``seed_name``), all of
    them inferred as OpenVINO infers them."""
    rng = rng_for(seed_name)
    n, bad = disagreements(make_case(rng, *args) for _ in range(count))
    assert n == count
    assert not bad, bad[:10]


def ov_param(shape: str, etype=ov.Type.f32):
    import openvino.opset1 as ov1

    return ov1.parameter(ov.PartialShape(shape), etype)


def window_interval(rng, kernel: int, dilation: int, pads: int) -> str:
    """An interval spatial dim for a window op whose lower bound lies a little below, at or
    a little above the smallest size that fits the dilated kernel after ``pads``: the ends
    where OpenVINO's interval arithmetic clamps, floors and checks. The upper end is
    bounded or not; sometimes the dim is ``..hi`` (no lower bound) or exactly the edge."""
    need = max((kernel - 1) * dilation + 1 - pads, 0)
    lo = max(0, need + rng.choice((-3, -2, -1, -1, 0, 0, 1, 2)))
    pick = rng.random()
    if pick < 0.1:
        return str(lo)
    if pick < 0.2:
        return f"..{lo + rng.randint(0, 9)}"
    return f"{lo}..{lo + rng.randint(0, 12)}" if pick < 0.75 else f"{lo}.."
