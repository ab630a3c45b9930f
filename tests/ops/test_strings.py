"""StringTensorPack-15 and StringTensorUnpack-15 against OpenVINO, every output, on seeded
random shapes (begins and ends that agree or clash, symbols of several ranks; string and
non-string data)."""

from __future__ import annotations

import openvino as ov
import openvino.opset15 as ov15
from op_diff import Case, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import dims_of, random_shape


def pack_case(rng) -> Case:
    begins = random_shape(rng)
    ends = begins if rng.random() < 0.4 else random_shape(rng, None, dims_of(begins))
    symbols = rng.choice(("[10]", "[?]", "[...]", "[2,5]", "[]"))
    return Case(lambda: ov15.string_tensor_pack(ov_param(begins, ov.Type.i32),
                                                ov_param(ends, ov.Type.i32),
                                                ov_param(symbols, ov.Type.u8)),
                "StringTensorPack", 15,
                [tensor(begins, "i32"), tensor(ends, "i32"), tensor(symbols, "u8")],
                label=f"{begins} {ends} {symbols}")


def unpack_case(rng) -> Case:
    data, etype = random_shape(rng), rng.choice(("string", "string", "string", "u8"))
    return Case(lambda: ov15.string_tensor_unpack(ov_param(data, getattr(ov.Type, etype))),
                "StringTensorUnpack", 15, [tensor(data, etype)], label=f"{data} {etype}")


def test_string_tensor_pack_infers_what_openvino_infers():
    agree_on_every_output("string_pack", pack_case, 1000)


def test_string_tensor_unpack_infers_what_openvino_infers():
    agree_on_every_output("string_unpack", unpack_case, 600)
