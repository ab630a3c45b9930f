"""STFT-15 and ISTFT-16 against OpenVINO on seeded random signals (spectra) and windows,
frame sizes and steps as constants (in and out of range) and parameters, frames
transposed or not, centred or not, signal lengths as constants, parameters and bounds."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset15 as ov15
import openvino.opset16 as ov16
from int_inputs import one_of
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


def istft_case(rng) -> Case:
    samples = rng.choice(("3", "5", "9", "?", random_dim(rng)))
    dims = [samples, rng.choice(("4", "?", random_dim(rng))), "2"]
    if rng.random() < 0.5:
        dims.insert(0, random_dim(rng))
    data = random_shape(rng) if rng.random() < 0.1 else "[" + ",".join(dims) + "]"
    window = rng.choice(("[4]", "[8]", "[?]", "[...]", "[0]"))
    (size_build, size), (step_build, step) = _scalar(rng, (4, 8, 16, 0)), \
        _scalar(rng, (1, 2, 3, 0))
    center = rng.random() < 0.5
    extra = [one_of(rng, [rng.choice((10, 32))], ("[]", "[1]", "[2]", "[...]"), 1, 0.4)] \
        if rng.random() < 0.4 else []
    return Case(lambda: ov16.istft(ov_param(data), ov_param(window), size_build(), step_build(),
                                   center, False, *[b() for b, _ in extra]),
                "ISTFT", 16, [tensor(data), tensor(window), size, step] + [t for _, t in extra],
                {"center": str(center).lower(), "normalized": "false"},
                label=f"{data} {window} {size!r} {step!r} {center} {extra}")


def test_istft_infers_what_openvino_infers():
    agree_with_openvino("istft", istft_case, 1500)
