"""Differential testing of every output port of a multi-output op (``op_diff`` compares
the first one): the shape texts of all ports, joined by ``;``, and the verdict."""

from __future__ import annotations

from op_diff import Case
from ov_oracle import rng_for, same

from ovgather.errors import ShapeInferenceError
from ovgather.ops.core import registry


def theirs(case: Case) -> str:
    try:
        node = case.build()
    except (RuntimeError, ValueError, TypeError, OverflowError) as err:
        return f"error: {err}".splitlines()[0]
    return ";".join(str(node.get_output_partial_shape(i)) for i in range(node.get_output_size()))


def ours(case: Case) -> str:
    try:
        spec = registry.find(case.op_type, f"opset{case.opset}")
        outs = spec.infer(case.ins, case.attrs, case.n_outputs)
        return ";".join(str(t.shape) for t in outs)
    except ShapeInferenceError as err:
        return "error: " + err.message


def agree_on_every_output(seed_name: str, make_case, count: int, *args) -> None:
    """``count`` seeded cases, each port of each inferred as OpenVINO infers it."""
    rng = rng_for(seed_name)
    bad = []
    for _ in range(count):
        case = make_case(rng, *args)
        a, b = ours(case), theirs(case)
        if not same(a, b):
            bad.append((case.label, a, b))
    assert not bad, bad[:10]
