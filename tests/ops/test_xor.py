"""Xor-1 against OpenVINO (built through the IR reader: its Python API has none) on seeded
random shapes, numpy and none broadcasting, boolean and other operands."""

from __future__ import annotations

from ir_build import build_op
from op_diff import Case, agree_with_openvino, tensor
from ov_oracle import dims_of, random_shape


def xor_case(rng) -> Case:
    a = random_shape(rng)
    b = random_shape(rng, None, list(reversed(dims_of(a) or [])))
    if rng.random() < 0.3:
        b = a
    mode = rng.choice(("numpy", "numpy", "none"))
    etype = "boolean" if rng.random() < 0.9 else "f32"
    return Case(lambda: build_op("Xor", 1, [a, b], {"auto_broadcast": mode}, etype=etype),
                "Xor", 1, [tensor(a, etype), tensor(b, etype)], {"auto_broadcast": mode},
                label=f"{a} {b} {mode} {etype}")


def test_xor_infers_what_openvino_infers():
    agree_with_openvino("xor", xor_case, 800)
