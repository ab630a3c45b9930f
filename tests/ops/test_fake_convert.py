"""FakeConvert-13 against OpenVINO: seeded random data, scale and shift shapes (scales that
broadcast into the data, that would grow it, that clash; shifts of the scale's shape or
not) and both destination types."""

from __future__ import annotations

import openvino.opset13 as ov13
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import dims_of, random_shape

from ovgather.ops.fake_convert import DESTINATIONS


def fake_convert_case(rng) -> Case:
    data = random_shape(rng)
    dims = dims_of(data) or []
    tail = dims[rng.randint(0, len(dims)):]
    scale = (random_shape(rng) if rng.random() < 0.3 else
             "[" + ",".join(d if rng.random() < 0.6 else "1" for d in tail) + "]")
    shift = [scale if rng.random() < 0.8 else random_shape(rng)] if rng.random() < 0.5 else []
    destination = rng.choice(DESTINATIONS)
    return Case(lambda: ov13.fake_convert(ov_param(data), ov_param(scale),
                                          *[ov_param(s) for s in shift],
                                          destination_type=destination),
                "FakeConvert", 13, [tensor(data), tensor(scale)] + [tensor(s) for s in shift],
                {"destination_type": destination}, label=f"{data} {scale} {shift}")


def test_fake_convert_infers_what_openvino_infers():
    agree_with_openvino("fake_convert", fake_convert_case, 1500)
