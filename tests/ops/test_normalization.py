"""GroupNormalization-12, HardSigmoid-1 and Inverse-14 against OpenVINO on seeded shapes."""

from __future__ import annotations

import openvino.opset1 as ov1
import openvino.opset12 as ov12
import openvino.opset14 as ov14
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim, random_shape


def group_norm_case(rng) -> Case:
    data = random_shape(rng)
    channel = data[1:-1].split(",")[1] if data.count(",") >= 1 else random_dim(rng)
    scale, bias = (rng.choice((f"[{channel}]", f"[{random_dim(rng)}]", "[...]", "[]", "[6,1]"))
                   for _ in range(2))
    groups = rng.choice((1, 2, 3, 4, 0))
    return Case(lambda: ov12.group_normalization(ov_param(data), ov_param(scale),
                                                 ov_param(bias), groups, 1e-5),
                "GroupNormalization", 12, [tensor(data), tensor(scale), tensor(bias)],
                {"num_groups": str(groups), "epsilon": "1e-05"},
                label=f"{data} {scale} {bias} {groups}")


def hard_sigmoid_case(rng) -> Case:
    data = random_shape(rng)
    alpha, beta = (rng.choice(("[]", "[]", "[1]", "[?]", "[...]", "[2]")) for _ in range(2))
    return Case(lambda: ov1.hard_sigmoid(ov_param(data), ov_param(alpha), ov_param(beta)),
                "HardSigmoid", 1, [tensor(data), tensor(alpha), tensor(beta)],
                label=f"{data} {alpha} {beta}")


def inverse_case(rng) -> Case:
    data = random_shape(rng)
    return Case(lambda: ov14.inverse(ov_param(data), False), "Inverse", 14, [tensor(data)],
                {"adjoint": "false"}, label=data)


def test_group_normalization_infers_what_openvino_infers():
    agree_with_openvino("group_norm", group_norm_case, 1000)


def test_hard_sigmoid_infers_what_openvino_infers():
    agree_with_openvino("hard_sigmoid", hard_sigmoid_case, 500)


def test_inverse_infers_what_openvino_infers():
    agree_with_openvino("inverse", inverse_case, 500)
