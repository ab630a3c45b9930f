"""Split-1 and VariadicSplit-1 against OpenVINO, every output port: random static,
dynamic and interval data, axes and lengths known or not, valid and invalid lengths
(a -1 taking the rest, two -1s, a -2, lengths that do not add up)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
from op_diff import const, ov_param, tensor
from ov_oracle import random_shape, rng_for

from ovgather.errors import ShapeInferenceError
from ovgather.ops.core import registry


def _theirs(build) -> list[str] | str:
    try:
        node = build()
    except RuntimeError:
        return "error"
    return [str(node.get_output_partial_shape(i)) for i in range(node.get_output_size())]


def _ours(op: str, ins, attrs: dict, n: int) -> list[str] | str:
    try:
        return [str(t.shape) for t in registry.find(op, "opset1").infer(ins, attrs, n)]
    except ShapeInferenceError:
        return "error"


def _node(values):
    return ov1.constant(np.array(values, np.int64))


def _split_case(rng):
    data = random_shape(rng, rng.choice((1, 2, 3)) if rng.random() < 0.92 else None)
    rank = data.count(",") + 1 if data not in ("[]", "[...]") else 1
    axis = rng.randint(-rank - 1, rank)
    axis_known = rng.random() < 0.85
    axis_build = (lambda: _node(axis)) if axis_known else (lambda: ov_param("[]", ov.Type.i64))
    axis_in = const(axis) if axis_known else tensor("[]", "i64")
    if rng.random() < 0.5:
        n = rng.choice((1, 2, 3, 4))
        return ((lambda: ov1.split(ov_param(data), axis_build(), n)), "Split",
                [tensor(data), axis_in], {"num_splits": str(n)}, n, data)
    lengths = [rng.choice((0, 1, 2, 3, 4, -1, -1)) for _ in range(rng.choice((1, 2, 3)))]
    if rng.random() < 0.05:
        lengths[0] = -2
    known = rng.random() < 0.85
    lengths_build = ((lambda: _node(lengths)) if known
                     else (lambda: ov_param(f"[{len(lengths)}]", ov.Type.i64)))
    lengths_in = const(lengths) if known else tensor(f"[{len(lengths)}]", "i64")
    return ((lambda: ov1.variadic_split(ov_param(data), axis_build(), lengths_build())),
            "VariadicSplit", [tensor(data), axis_in, lengths_in], {}, len(lengths),
            f"{data} axis={axis} lengths={lengths if known else '?'}")


def test_split_and_variadic_split_infer_what_openvino_infers():
    rng = rng_for("split")
    bad = []
    for _ in range(2000):
        build, op, ins, attrs, n, label = _split_case(rng)
        theirs, ours = _theirs(build), _ours(op, ins, attrs, n)
        if theirs != ours:
            bad.append((op, label, ours, theirs))
    assert not bad, bad[:10]
