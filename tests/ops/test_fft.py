"""DFT-7, IDFT-7, RDFT-9 and IRDFT-9 against OpenVINO: seeded random data shapes, axes as
constants (negative, repeated, out of range) and parameters, signal sizes as constants
(with -1), parameters and value bounds (ShapeOf of interval shapes)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset7 as ov7
import openvino.opset9 as ov9
import pytest
from int_inputs import one_of
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim

BUILD = {"DFT": ov7.dft, "IDFT": ov7.idft, "RDFT": ov9.rdft, "IRDFT": ov9.irdft}


def _node(values):
    return ov1.constant(np.array(values, np.int64))


def _sizes(rng, n: int):
    values = [rng.choice((-1, 1, 2, 3, 4, 8, -1)) for _ in range(n)]
    if rng.random() < 0.05:
        values.append(2)
    return one_of(rng, values, (f"[{n}]", "[?]", "[...]", "[]"), n)


def fft_case(rng, op: str) -> Case:
    rank = rng.choice((1, 2, 3, 3, 4, 4, 5, None))
    complex_input = op != "RDFT"
    dims = [rng.choice(("1", "2", "4", "5", "8", "?", random_dim(rng)))
            for _ in range((rank or 0) - complex_input)]
    if complex_input and rank:
        dims.append(rng.choice(("2", "2", "2", "?", "3", "1..2")))
    data = "[...]" if rank is None else "[" + ",".join(dims) + "]"
    width = (rank or 3) - complex_input
    n = rng.randint(1, max(width, 1) + (rng.random() < 0.05))
    if rng.random() < 0.75:
        axes_values = rng.sample(range(-width, width), min(n, 2 * width)) if width else [0]
        if rng.random() < 0.05:
            axes_values = [0, 0]
        if rng.random() < 0.05:
            axes_values = [width]
        axes = const(axes_values)
        axes_build = lambda: _node(axes_values)  # noqa: E731
        n = len(axes_values)
    else:
        shape = rng.choice((f"[{n}]", "[?]", "[...]", "[1,1]"))
        axes, axes_build = tensor(shape, "i64"), lambda: ov_param(shape, ov.Type.i64)
    with_sizes = rng.random() < 0.6
    sizes_build, sizes = _sizes(rng, n) if with_sizes else (None, None)

    def build():
        extra = [sizes_build()] if with_sizes else []
        return BUILD[op](ov_param(data), axes_build(), *extra)

    ins = [tensor(data), axes] + ([sizes] if with_sizes else [])
    return Case(build, op, 9, ins, label=f"{op} {data} {axes!r} {sizes!r}")


@pytest.mark.parametrize("op", list(BUILD))
def test_fft_infers_what_openvino_infers(op):
    agree_with_openvino(f"fft_{op}", fft_case, 1200, op)
