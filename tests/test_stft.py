"""STFT-15 against OpenVINO on seeded random signals and windows, frame sizes and steps as
constants (in and out of range) and parameters, frames transposed or not."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset15 as ov15
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape


def _scalar(rng, values):
    if rng.random() < 0.8:
        value = rng.choice(values)
        return (lambda: ov1.constant(np.array(value, np.int64))), const(value)
    shape = rng.choice(("[]", "[...]", "[1]"))
    return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")


def stft_case(rng) -> Case:
    signal = random_shape(rng) if rng.random() < 0.1 else \
        f"[{random_dim(rng)},{rng.choice(('16', '10..16', '?', '8..', '3', random_dim(rng)))}]"
    window = rng.choice(("[4]", "[8]", "[?]", "[...]", "[0]", "[4,1]"))
    (size_build, size), (step_build, step) = _scalar(rng, (4, 8, 16, 0, 20)), \
        _scalar(rng, (1, 2, 3, 0))
    transpose = rng.random() < 0.5
    return Case(lambda: ov15.stft(ov_param(signal), ov_param(window), size_build(),
                                  step_build(), transpose),
                "STFT", 15, [tensor(signal), tensor(window), size, step],
                {"transpose_frames": str(transpose).lower()},
                label=f"{signal} {window} {size!r} {step!r} {transpose}")


def test_stft_infers_what_openvino_infers():
    agree_with_openvino("stft", stft_case, 1500)
