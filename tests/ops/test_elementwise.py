"""Elementwise ops against OpenVINO: BitwiseNot-13 on any shape, integer and boolean inputs
only; Softmax-1/8 and LogSoftmax-5 on any shape, axes in and out of range;
BatchNormInference-1 (data third) and -5 (data first) on channel shapes that fit or not."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset5 as ov5
import openvino.opset8 as ov8
import openvino.opset13 as ov13
import pytest
from op_diff import Case, agree_with_openvino, ov_param, tensor
from op_graphs import assert_like_openvino
from ov_oracle import random_dim, random_shape

TYPES = ("i32", "i64", "u8", "u1", "i4", "boolean", "f32", "f16", "dynamic")


def bitwise_not_case(rng) -> Case:
    shape, etype = random_shape(rng), rng.choice(TYPES)
    return Case(lambda: ov13.bitwise_not(ov_param(shape, getattr(ov.Type, etype))),
                "BitwiseNot", 13, [tensor(shape, etype)], label=f"{shape} {etype}")


def test_bitwise_not_infers_what_openvino_infers():
    agree_with_openvino("bitwise_not", bitwise_not_case, 500)


BUILD = {("Softmax", 1): ov1.softmax, ("Softmax", 8): ov8.softmax,
         ("LogSoftmax", 5): ov5.log_softmax}


def softmax_case(rng, op: str, version: int) -> Case:
    shape, axis = random_shape(rng), rng.randint(-6, 5)
    make = BUILD[op, version]
    return Case(lambda: make(ov_param(shape), axis), op, version, [tensor(shape)],
                {"axis": str(axis)}, label=f"{shape} axis={axis}")


@pytest.mark.parametrize("op,version", list(BUILD), ids=[f"{t}-{v}" for t, v in BUILD])
def test_softmax_axes_are_checked_as_openvino_checks_them(op, version):
    agree_with_openvino(f"{op}{version}", softmax_case, 500, op, version)


BATCH_NORM = {1: ov1.batch_norm_inference, 5: ov5.batch_norm_inference}


def batch_norm_case(rng, version: int) -> Case:
    data = random_shape(rng)
    channel = random_dim(rng) if rng.random() < 0.5 else (data.strip("[]").split(",") + ["?"])[1]
    shapes = [f"[{channel}]" if rng.random() < 0.85 else random_shape(rng) for _ in range(4)]
    order = [shapes[0], shapes[1], data, *shapes[2:]] if version == 1 else [data, *shapes]
    make = BATCH_NORM[version]

    def build():  # the Python builders take data first; the IR order is in ``order``
        x, gamma, beta, mean, var = (ov_param(s) for s in [data, *shapes])
        return make(x, gamma, beta, mean, var, 1e-5)

    return Case(build, "BatchNormInference", version, [tensor(s) for s in order],
                {"epsilon": "1e-05"}, label=f"{order}")


@pytest.mark.parametrize("version", [1, 5])
def test_batch_norm_inference_reads_data_where_each_version_takes_it(version):
    agree_with_openvino(f"batch_norm{version}", batch_norm_case, 500, version)


@pytest.mark.parametrize("version", [1, 5])
def test_batch_norm_inference_saved_by_openvino_is_checked(tmp_path, version):
    rng = np.random.default_rng(version)
    x = ov1.parameter([2, 3, 4, 4], ov.Type.f32, name="x")
    gamma, beta, mean, var = (ov1.constant(rng.random(3, dtype=np.float32) + 0.5)
                              for _ in range(4))
    out = BATCH_NORM[version](x, gamma, beta, mean, var, 1e-5)
    statuses = assert_like_openvino(tmp_path, [out], [x])
    assert set(statuses.values()) == {"ok"}
