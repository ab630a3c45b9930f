"""Convolution-1 and GroupConvolution-1 against OpenVINO on seeded random shapes.

Static, dynamic and interval dims, dynamic ranks, all four auto_pad modes, negative pads,
dilations and strides, and broken inputs (ranks, channels, attribute lengths, zeros):
the inferred text and the valid/invalid verdict must be OpenVINO's.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import pytest
from op_diff import Case, agree_with_openvino, const, ints, ov_param, tensor, window_interval
from ov_oracle import random_dim

from ovgather.ops.core.dims import PAD_MODES

CASES = 1500


def _dims(rng, n):
    return [random_dim(rng) for _ in range(n)]


def _shape(dims):
    return "[...]" if dims is None else "[" + ",".join(dims) + "]"


def _window(rng, n):
    def values(lo, hi):
        k = n if rng.random() > 0.03 else rng.choice((0, n + 1))
        return [rng.randint(lo, hi) for _ in range(k)]

    strides = values(1, 3) if rng.random() > 0.03 else [0] * n
    dilations = values(1, 3) if rng.random() > 0.03 else [0] * n
    return strides, dilations, values(-3, 2), values(-3, 2), rng.choice(PAD_MODES)


def conv_case(rng, group: bool) -> Case:
    n = rng.choice((1, 2, 3, 3, 2, 0, 4))
    data = ["1" if rng.random() < 0.3 else random_dim(rng), random_dim(rng)] + _dims(rng, n)
    if group:
        g = rng.choice(("1", "2", "3", "?", "1..4"))
        filters = [g, random_dim(rng), rng.choice(("1", "2", "3", "?", data[1]))]
    else:
        filters = [random_dim(rng), data[1] if rng.random() < 0.8 else random_dim(rng)]
    filters += [rng.choice(("1", "2", "3", "?", "1..3", "0")) for _ in range(n)]
    if rng.random() < 0.05:
        filters.append("1")
    data_text = _shape(None if rng.random() < 0.1 else data)
    filters_text = _shape(None if rng.random() < 0.1 else filters)
    strides, dilations, pb, pe, mode = _window(rng, n)
    make = ov1.group_convolution if group else ov1.convolution
    return Case(
        lambda: make(ov_param(data_text), ov_param(filters_text), strides, pb, pe, dilations,
                     mode),
        "GroupConvolution" if group else "Convolution", rng.choice((1, 8, 16)),
        [tensor(data_text), tensor(filters_text)],
        {"strides": ints(strides), "dilations": ints(dilations), "pads_begin": ints(pb),
         "pads_end": ints(pe), "auto_pad": mode},
        label=f"{data_text} * {filters_text} s={strides} d={dilations} pads={pb},{pe} {mode}")


@pytest.mark.parametrize("group", [False, True], ids=["Convolution-1", "GroupConvolution-1"])
def test_convolutions_infer_what_openvino_infers(group):
    agree_with_openvino(f"conv{group}", conv_case, CASES, group)


def backprop_case(rng, group: bool) -> Case:
    n = rng.choice((1, 2, 3, 2, 0, 4))
    data = ["1" if rng.random() < 0.3 else random_dim(rng), random_dim(rng)] + _dims(rng, n)
    if group:
        filters = [rng.choice(("1", "2", "?", "1..4")), rng.choice(("1", "2", "?", data[1])),
                   random_dim(rng)]
    else:
        filters = [data[1] if rng.random() < 0.8 else random_dim(rng), random_dim(rng)]
    filters += [rng.choice(("1", "2", "3", "?", "1..3", "0")) for _ in range(n)]
    data_text = _shape(None if rng.random() < 0.1 else data)
    filters_text = _shape(None if rng.random() < 0.1 else filters)
    strides, dilations, pb, pe, mode = _window(rng, n)
    pb, pe = [abs(p) for p in pb], [abs(p) for p in pe]
    out_pad = [rng.randint(0, 1) for _ in range(n if rng.random() > 0.05 else n + 1)]
    ins = [tensor(data_text), tensor(filters_text)]
    pick = rng.random()
    out_build = None
    if pick < 0.3:
        values = [rng.randint(1, 9) for _ in range(n if rng.random() > 0.05 else n + 1)]
        if values:
            ins.append(const(values))
            out_build = lambda: ov1.constant(np.array(values, np.int64))  # noqa: E731
    elif pick < 0.45:
        shape, etype = rng.choice((f"[{n}]", "[?]", "[]")), rng.choice(("i64", "i32", "f32"))
        ins.append(tensor(shape, etype))
        out_build = lambda: ov_param(shape, getattr(ov.Type, etype))  # noqa: E731
    make = ov1.group_convolution_backprop_data if group else ov1.convolution_backprop_data

    def build():
        out = out_build() if out_build is not None else None
        return make(ov_param(data_text), ov_param(filters_text), strides, out, pb, pe,
                    dilations, mode, out_pad)

    attrs = {"strides": ints(strides), "dilations": ints(dilations), "pads_begin": ints(pb),
             "pads_end": ints(pe), "auto_pad": mode, "output_padding": ints(out_pad)}
    op = "GroupConvolutionBackpropData" if group else "ConvolutionBackpropData"
    return Case(build, op, rng.choice((1, 16)), ins, attrs,
                label=f"{data_text} * {filters_text} {ins[2:]} {attrs}")


@pytest.mark.parametrize("group", [False, True], ids=["ConvolutionBackpropData-1",
                                                      "GroupConvolutionBackpropData-1"])
def test_backprop_convolutions_infer_what_openvino_infers(group):
    agree_with_openvino(f"backprop{group}", backprop_case, CASES, group)


def _interval_window(rng, n: int):
    """Kernel sizes, strides, dilations, pads and a mode, and data dims whose lower
    bounds sit below, at and above the dilated kernel after padding."""
    kernel = [rng.randint(1, 4) for _ in range(n)]
    strides = [rng.randint(1, 3) for _ in range(n)]
    dilations = [rng.randint(1, 3) for _ in range(n)]
    pb = [rng.choice((0, 0, 1, 2, -1)) for _ in range(n)]
    pe = [rng.choice((0, 0, 1, 2, -1)) for _ in range(n)]
    mode = rng.choice(PAD_MODES)
    pads = [0 if mode == "valid" else b + e for b, e in zip(pb, pe, strict=True)]
    dims = [window_interval(rng, k, d, p) for k, d, p in zip(kernel, dilations, pads,
                                                             strict=True)]
    return kernel, strides, dilations, pb, pe, mode, dims


def interval_conv_case(rng, op: str) -> Case:
    n = rng.choice((1, 2, 3))
    kernel, strides, dilations, pb, pe, mode, dims = _interval_window(rng, n)
    k = [str(x) for x in kernel]
    data = "[" + ",".join([rng.choice(("1", "?", "2..3")), "4"] + dims) + "]"
    filters = {"Convolution": ["6", "4"], "GroupConvolution": ["2", "3", "2"],
               "ConvolutionBackpropData": ["4", "6"],
               "GroupConvolutionBackpropData": ["2", "2", "3"]}[op] + k
    filters = "[" + ",".join(filters) + "]"
    attrs = {"strides": ints(strides), "dilations": ints(dilations), "pads_begin": ints(pb),
             "pads_end": ints(pe), "auto_pad": mode}
    if op.endswith("BackpropData"):
        pb, pe = [abs(p) for p in pb], [abs(p) for p in pe]
        attrs.update(pads_begin=ints(pb), pads_end=ints(pe), output_padding=ints([0] * n))
    make = {"Convolution": lambda d, f: ov1.convolution(d, f, strides, pb, pe, dilations, mode),
            "GroupConvolution": lambda d, f: ov1.group_convolution(d, f, strides, pb, pe,
                                                                   dilations, mode),
            "ConvolutionBackpropData": lambda d, f: ov1.convolution_backprop_data(
                d, f, strides, None, pb, pe, dilations, mode),
            "GroupConvolutionBackpropData": lambda d, f: ov1.group_convolution_backprop_data(
                d, f, strides, None, pb, pe, dilations, mode)}[op]
    return Case(lambda: make(ov_param(data), ov_param(filters)), op, 1,
                [tensor(data), tensor(filters)], attrs, label=f"{op} {data} * {filters} {attrs}")


WINDOW_OPS = ["Convolution", "GroupConvolution", "ConvolutionBackpropData",
              "GroupConvolutionBackpropData"]


@pytest.mark.parametrize("op", WINDOW_OPS)
def test_interval_dims_around_the_dilated_kernel_infer_what_openvino_infers(op):
    """Lower bounds below, at and above the padded dilated kernel: the clamp at 0, the
    floor of the stride, the fit check (only for exact dims) must all be OpenVINO's."""
    agree_with_openvino(f"interval-{op}", interval_conv_case, 600, op)
