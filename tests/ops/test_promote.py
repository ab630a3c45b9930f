"""ConvertPromoteTypes-14 against OpenVINO, every output (shapes and the common element
type): seeded random pairs of element types, scalar and non-scalar shapes, and every
combination of promote_unsafe and pytorch_scalar_promotion."""

from __future__ import annotations

import openvino as ov
import openvino.opset14 as ov14
from op_diff import Case, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import random_shape

from ovgather.errors import ShapeInferenceError
from ovgather.ops.core import registry

TYPES = ("boolean", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f16", "bf16", "f32",
         "f64", "u1", "u4", "i4", "f8e4m3", "f8e5m2", "dynamic")


def promote_case(rng) -> Case:
    a, b = rng.choice(TYPES), rng.choice(TYPES)
    sa = "[]" if rng.random() < 0.3 else random_shape(rng)
    sb = "[]" if rng.random() < 0.3 else random_shape(rng)
    unsafe, pytorch = rng.random() < 0.5, rng.random() < 0.5
    target = rng.choice(("f32", "i64"))
    attrs = {"promote_unsafe": str(unsafe).lower(),
             "pytorch_scalar_promotion": str(pytorch).lower(),
             "u64_integer_promotion_target": target}
    return Case(lambda: ov14.convert_promote_types(
        ov_param(sa, getattr(ov.Type, a)), ov_param(sb, getattr(ov.Type, b)), unsafe, pytorch,
        target), "ConvertPromoteTypes", 14, [tensor(sa, a), tensor(sb, b)], attrs, 2,
        label=f"{sa}:{a} {sb}:{b} {attrs}")


def test_convert_promote_types_infers_what_openvino_infers():
    agree_on_every_output("convert_promote", promote_case, 1500)


def test_convert_promote_types_gives_openvinos_element_type():
    from ov_oracle import rng_for

    rng = rng_for("convert_promote_types")
    bad = []
    for _ in range(1500):
        case = promote_case(rng)
        try:
            node = case.build()
        except RuntimeError:
            continue  # the verdicts are compared above
        try:
            ours = registry.find(case.op_type, "opset14").infer(case.ins, case.attrs, 2)[0].etype
        except ShapeInferenceError as err:
            ours = err.message
        if ours != node.get_output_element_type(0).get_type_name():
            bad.append((case.label, ours, node.get_output_element_type(0).get_type_name()))
    assert not bad, bad[:10]
