"""BinaryConvolution-1 against OpenVINO on seeded random data and filters (static, interval,
dynamic, dynamic rank; channels that agree or not), strides, dilations, pads and every
auto_pad."""

from __future__ import annotations

import openvino as ov
import openvino.opset1 as ov1
from op_diff import Case, agree_with_openvino, ints, ov_param, tensor, window_interval
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.dims import PAD_MODES


def _case(data: str, filters: str, strides, pads_begin, pads_end, dilations, mode) -> Case:
    """The BinaryConvolution (xnor-popcount) of ``data`` by u1 ``filters``."""
    attrs = {"strides": ints(strides), "dilations": ints(dilations),
             "pads_begin": ints(pads_begin), "pads_end": ints(pads_end), "auto_pad": mode,
             "mode": "xnor-popcount", "pad_value": "0"}
    return Case(lambda: ov1.binary_convolution(
        ov_param(data), ov_param(filters, ov.Type.u1), strides, pads_begin, pads_end, dilations,
        "xnor-popcount", 0.0, mode),
        "BinaryConvolution", 1, [tensor(data), tensor(filters, "u1")], attrs,
        label=f"{data} {filters} {attrs}")


def binary_convolution_case(rng) -> Case:
    n = rng.choice((1, 2, 2, 3))
    channels = rng.choice(("1", "3", "?"))
    data = random_shape(rng, n + 2, [random_dim(rng), channels])
    filters = random_shape(rng, n + 2, [random_dim(rng), channels,
                                        *[str(rng.randint(1, 3)) for _ in range(n)]])
    if rng.random() < 0.06:
        data = random_shape(rng)

    def values(lo, hi):
        return [rng.randint(lo, hi) for _ in range(n if rng.random() > 0.04 else n + 1)]

    strides, dilations, pads_begin, pads_end = values(1, 2), values(1, 2), values(0, 1), \
        values(0, 1)
    mode = rng.choice(PAD_MODES)
    return _case(data, filters, strides, pads_begin, pads_end, dilations, mode)


def test_binary_convolution_infers_what_openvino_infers():
    agree_with_openvino("binary_convolution", binary_convolution_case, 1500)


def interval_binary_case(rng) -> Case:
    """Data dims whose lower bounds sit below, at and above the padded dilated kernel."""
    n = rng.choice((1, 2, 3))
    kernel = [rng.randint(1, 4) for _ in range(n)]
    strides = [rng.randint(1, 3) for _ in range(n)]
    dilations = [rng.randint(1, 3) for _ in range(n)]
    pb, pe = [rng.randint(0, 2) for _ in range(n)], [rng.randint(0, 2) for _ in range(n)]
    mode = rng.choice(PAD_MODES)
    pads = [0 if mode == "valid" else b + e for b, e in zip(pb, pe, strict=True)]
    dims = [window_interval(rng, k, d, p) for k, d, p in zip(kernel, dilations, pads, strict=True)]
    data = "[" + ",".join(["?", "3"] + dims) + "]"
    filters = "[" + ",".join(["5", "3"] + [str(k) for k in kernel]) + "]"
    return _case(data, filters, strides, pb, pe, dilations, mode)


def test_interval_dims_around_the_dilated_kernel_infer_what_openvino_infers():
    agree_with_openvino("interval-binary_convolution", interval_binary_case, 600)
