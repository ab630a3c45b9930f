"""Shapes read from value bounds that other layers compute, against OpenVINO.

Broadcast, Tile, the backprop convolutions' output shape, the adaptive poolings' sizes,
and the shapes, sizes and counts of RandomUniform, Multinomial, Eye, Interpolate,
EmbeddingSegmentsSum, OneHot, TopK, ISTFT, SegmentMax, PriorBox, SparseFillEmptyRows and
Col2Im read a shape from an input. A Const's -1 there is ``?``, but a computed element whose
bounds may go below 0 makes OpenVINO refuse the model. wav2vec2's feature extractor
computes its attention mask length as ``len // 20 - 1``: audio shorter than 20 samples
gives -1, so ``Model.reshape`` to ``[?,1..1600]`` is refused at the mask's Broadcast.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset8 as ov8
import openvino.opset10 as ov10
import openvino.opset11 as ov11
import openvino.opset13 as o
import openvino.opset15 as ov15
import openvino.opset16 as ov16
import pytest

from ovgather.infer import check
from ovgather.ir import read_ir

ROOT = Path(__file__).resolve().parents[2]
CORE = ov.Core()


def _openvino(path: Path, shapes: dict[str, str]) -> dict[str, list[str]] | str:
    """The model reshaped by OpenVINO: each layer's output shapes, or its error."""
    model = CORE.read_model(str(path))
    try:
        model.reshape({k: ov.PartialShape(v) for k, v in shapes.items()})
    except RuntimeError as err:
        return str(err)
    return {op.get_friendly_name(): [str(op.get_output_partial_shape(i))
                                     for i in range(op.get_output_size())]
            for op in model.get_ops() if op.get_type_name() != "Result"}


def _same_as_openvino(path: Path, shapes: dict[str, str]) -> None:
    theirs = _openvino(path, shapes)
    assert isinstance(theirs, dict), theirs
    report = check(read_ir(path), shapes)
    assert [lr.name for lr in report.layers if lr.status == "invalid"] == []
    diffs = [(lr.name, lr.inferred, theirs[lr.name]) for lr in report.layers
             if lr.name in theirs and lr.inferred != theirs[lr.name]]
    assert diffs == []


def test_wav2vec2_audio_shorter_than_the_mask_stride_is_refused_at_the_mask_broadcast():
    path = ROOT / "ir_corpus/wav2vec2/onnx_dynamic.xml"
    shapes = {"input_values": "[?,1..1600]"}
    theirs = _openvino(path, shapes)
    assert isinstance(theirs, str) and "lower than zero" in theirs
    report = check(read_ir(path), shapes)
    invalid = [(lr.name, lr.type) for lr in report.layers if lr.status == "invalid"]
    assert invalid == [("node_expand", "Broadcast")]
    assert not report.ok


def test_wav2vec2_audio_of_400_samples_and_more_stays_clean_and_equals_openvino():
    _same_as_openvino(ROOT / "ir_corpus/wav2vec2/onnx_dynamic.xml",
                      {"input_values": "[?,400..1600]"})


def test_wav2vec2_from_pytorch_takes_short_audio_as_openvino_does():
    """The PyTorch export computes no mask length: OpenVINO takes ``[?,1..1600]``."""
    _same_as_openvino(ROOT / "ir_corpus/wav2vec2/pytorch_dynamic.xml",
                      {"input_values": "[?,1..1600]"})


def _f32(shape):
    return o.constant(np.ones(shape, np.float32))


def _i64(values):
    return o.constant(np.array(values, np.int64))


def _scalar(t):
    return o.squeeze(t, _i64([0]))


def _pair(t):
    """``[4, t]``: a size whose second element is computed."""
    return o.concat([_i64([4]), t], 0)


READERS = {
    "Broadcast-3 numpy": lambda t: o.broadcast(_f32([1]), t),
    "Broadcast-3 bidirectional": lambda t: o.broadcast(_f32([1]), t, "bidirectional"),
    "Broadcast-1": lambda t: ov1.broadcast(_f32([1]), t),
    "Tile": lambda t: o.tile(_f32([2]), t),
    "ConvolutionBackpropData": lambda t: ov1.convolution_backprop_data(
        _f32([1, 2, 4]), _f32([2, 3, 3]), [1], t),
    "GroupConvolutionBackpropData": lambda t: ov1.group_convolution_backprop_data(
        _f32([1, 2, 4]), _f32([1, 2, 3, 3]), [1], t),
    "AdaptiveAvgPool": lambda t: ov8.adaptive_avg_pool(_f32([1, 2, 4]), t),
    "AdaptiveMaxPool": lambda t: ov8.adaptive_max_pool(_f32([1, 2, 4]), t),
    "RandomUniform": lambda t: ov8.random_uniform(
        t, o.constant(np.float32(0)), o.constant(np.float32(1)), "f32"),
    "Multinomial": lambda t: o.multinomial(_f32([2, 5]), t, "i64", True, False),
    "Eye num_rows": lambda t: o.eye(_scalar(t), _i64(4), _i64(0), "f32"),
    "Eye batch_shape": lambda t: o.eye(_i64(3), _i64(4), _i64(0), "f32", t),
    "Interpolate-1": lambda t: ov1.interpolate(
        _f32([1, 2, 4, 4]), _pair(t), {"axes": [2, 3], "mode": "nearest"}),
    "Interpolate-4": lambda t: ov10.interpolate(
        _f32([1, 2, 4, 4]), _pair(t), _f32([2]), "nearest", "sizes", axes=_i64([2, 3])),
    "Interpolate-11": lambda t: ov11.interpolate(
        _f32([1, 2, 4, 4]), _pair(t), "nearest", "sizes", axes=_i64([2, 3])),
    "EmbeddingSegmentsSum": lambda t: o.embedding_segments_sum(
        _f32([5, 2]), _i64([0, 1]), _i64([0, 1]), _scalar(t)),
    "OneHot": lambda t: o.one_hot(_i64([0, 1]), _scalar(t), o.constant(np.float32(1)),
                                  o.constant(np.float32(0)), -1),
    "TopK": lambda t: o.topk(_f32([2, 8]), _scalar(t), 1, "max", "value"),
    "ISTFT": lambda t: ov16.istft(_f32([5, 9, 2]), _f32([8]), _i64(8), _i64(2), False, False,
                                  _scalar(t)),
    "SegmentMax": lambda t: ov16.segment_max(_f32([3, 2]), _i64([0, 1, 1]), _scalar(t), "ZERO"),
    "PriorBox": lambda t: o.prior_box(_pair(t), _i64([32, 32]),
                                      {"min_size": [2.0], "aspect_ratio": [1.0], "offset": 0.5}),
    "PriorBoxClustered": lambda t: o.prior_box_clustered(
        _pair(t), _i64([32, 32]), {"width": [2.0], "height": [2.0], "offset": 0.5}),
    "SparseFillEmptyRows": lambda t: ov16.sparse_fill_empty_rows(
        _f32([2]), _pair(t), _i64([[0, 0], [1, 1]]), o.constant(np.float32(0))),
}


def _size(rng: random.Random, x):
    """One shape element computed from ``x``'s length: shifted, or floor-divided and
    shifted, by amounts that make its bounds negative, straddle 0, or stay positive."""
    n = o.shape_of(x)
    if rng.random() < 0.5:
        n = o.divide(n, _i64([rng.choice((2, 3, 20))]))
    return o.add(n, _i64([rng.randint(-4, 2)]))


def _dim(rng: random.Random) -> str:
    lo = rng.randint(0, 8)
    return rng.choice((str(lo), f"{lo}..{lo + rng.randint(1, 40)}", f"{lo}..",
                       f"..{rng.randint(0, 6)}", "?"))


@pytest.mark.parametrize("reader", list(READERS))
def test_a_shape_from_computed_bounds_is_refused_where_openvino_refuses_it(tmp_path, reader):
    """Built on a length that gives a valid size, then reshaped (as ``check --shape``
    does) to lengths whose computed size may be negative: the verdict and every shape
    text must be OpenVINO's."""
    rng = random.Random(f"shape-from-bounds-{reader}")
    for case in range(30):
        x = o.parameter(ov.PartialShape([200]), ov.Type.f32)
        x.set_friendly_name("x")
        out = READERS[reader](_size(rng, x))
        out.set_friendly_name("reader")
        path = tmp_path / f"m{case}.xml"
        ov.save_model(ov.Model([o.result(out)], [x]), str(path), compress_to_fp16=False)
        shapes = {"x": f"[{_dim(rng)}]"}
        theirs = _openvino(path, shapes)
        report = check(read_ir(path), shapes)
        ours = {lr.name: lr for lr in report.layers}["reader"]
        if isinstance(theirs, str):
            assert ours.status == "invalid", (shapes, ours.inferred, theirs)
        else:
            # declared dims stay those of the build: "mismatch", not "invalid"
            assert ours.status != "invalid", (shapes, ours.to_dict())
            assert ours.inferred == theirs["reader"], shapes


def test_col2im_output_size_from_computed_bounds_is_refused_where_openvino_refuses_it(tmp_path):
    """Col2Im's data must hold the blocks of the output size it is built with, so the
    computed size ``ShapeOf(x) - k`` is fixed at the build and the data sized to match."""
    rng = random.Random("shape-from-bounds-Col2Im")
    for case in range(30):
        x = o.parameter(ov.PartialShape([200]), ov.Type.f32)
        x.set_friendly_name("x")
        k = rng.randint(190, 198)
        size = o.concat([_i64([3]), o.subtract(o.shape_of(x), _i64([k]))], 0)
        out = ov15.col2im(_f32([1, 4, 2 * (199 - k)]), size, _i64([2, 2]))
        out.set_friendly_name("reader")
        path = tmp_path / f"m{case}.xml"
        ov.save_model(ov.Model([o.result(out)], [x]), str(path), compress_to_fp16=False)
        lo = rng.randint(185, 205)
        shapes = {"x": f"[{rng.choice((str(lo), f'{lo}..{lo + rng.randint(1, 20)}', '?'))}]"}
        theirs = _openvino(path, shapes)
        ours = {lr.name: lr for lr in check(read_ir(path), shapes).layers}["reader"]
        if isinstance(theirs, str):
            assert ours.status == "invalid", (shapes, ours.inferred, theirs)
        else:
            assert ours.status != "invalid", (shapes, ours.to_dict())
            assert ours.inferred == theirs["reader"], shapes
