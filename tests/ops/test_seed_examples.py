"""Every example in the operator documents the project started from (ONNX GatherND-11/12/13,
com.microsoft GatherND, ONNX GatherElements, OpenVINO GatherND-8) is a test of its output shape.

The expected shapes are taken from the documents: where a document gives
``output_shape`` we use it, otherwise the shape of the documented output values (so
``output = [[2,3],[0,1]]`` expects ``[2,2]``). Each example is also checked against
OpenVINO: the ONNX examples through OpenVINO's ONNX frontend on a one-node ONNX model,
the OpenVINO ones by building the op.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from onnx import TensorProto, helper
from ov_oracle import ov_gather_elements, ov_gather_nd

from ovgather.errors import UnsupportedOpError
from ovgather.ops import gather_elements_shape, gather_nd_shape, onnx_gather_nd_shape


def shape_text(values) -> str:
    """The shape of documented output values, in OpenVINO's text."""
    return "[" + ",".join(str(n) for n in np.shape(values)) + "]"


# ONNX GatherND-11/12/13 (seed 000) and the function-style gathernd (seed 001), examples
# 1–5: (data, indices, batch_dims, output values).
ONNX_GATHER_ND = [
    ([[0, 1], [2, 3]], [[0, 0], [1, 1]], 0, [0, 3]),
    ([[0, 1], [2, 3]], [[1], [0]], 0, [[2, 3], [0, 1]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[0, 1], [1, 0]], 0, [[2, 3], [4, 5]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[[0, 1]], [[1, 0]]], 0, [[[2, 3]], [[4, 5]]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[1], [0]], 1, [[2, 3], [4, 5]]),
]
# the output_shape the function-style document (seed 001) states for examples 1–5
ONNX_DOCUMENTED_SHAPES = ["[2]", "[2,2]", "[2,2]", "[2,1,2]", "[2,2]"]

# com.microsoft GatherND-1 (seed 002), examples 1–4: (data, indices, output values)
MICROSOFT_GATHER_ND = [
    ([[0, 1], [2, 3]], [[0, 0], [1, 1]], [0, 3]),
    ([[0, 1], [2, 3]], [[1], [0]], [[2, 3], [0, 1]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[0, 1], [1, 0]], [[2, 3], [4, 5]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[[0, 1]], [[1, 0]]], [[[2, 3]], [[4, 5]]]),
]

# ONNX GatherElements-11/13 (seed 003): examples 1, 2 and the negative-indices example
GATHER_ELEMENTS = [
    ([[1, 2], [3, 4]], [[0, 0], [1, 0]], 1, [[1, 1], [4, 3]]),
    ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 0], [2, 0, 0]], 0, [[4, 8, 3], [7, 2, 3]]),
    ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[-1, -2, 0], [-2, 0, 0]], 0, [[7, 5, 3], [4, 2, 3]]),
]

# OpenVINO GatherND-8 (seed 004), examples 1–7: (data shape, indices shape, batch_dims,
# output shape), the shapes as the document states them or as its values have them.
OPENVINO_GATHER_ND_8 = [
    ("[2,2]", "[2,2]", 0, shape_text([1, 3])),
    ("[2,2]", "[2,1]", 0, shape_text([[3, 4], [1, 2]])),
    ("[2,2]", "[2,1,1]", 0, shape_text([[[3, 4]], [[1, 2]]])),
    ("[2,2]", "[2,1]", 1, "[2]"),
    ("[2,3,4]", "[2,1]", 1, "[2,4]"),
    ("[2,3,4]", "[2,3,1,1]", 2, "[2,3,1]"),
    ("[1,2,2,4]", "[1,2,2,1]", 3, "[1,2,2]"),
]

# the three <layer> examples of seed 004: (data dims, indices dims, batch_dims, output dims)
OPENVINO_XML_LAYERS = [
    ("[1000,256,10,15]", "[25,125,3]", 0, "[25,125,15]"),
    ("[30,2,100,35]", "[30,2,3,1]", 2, "[30,2,3,35]"),
    ("[1,64,64,320]", "[1,64,64,1,1]", 3, "[1,64,64,1]"),  # HITNet
]


def onnx_model_output_shape(node, data, indices, opset: int, domain: str = "") -> str:
    """The output shape OpenVINO's ONNX frontend gives a one-node model on these inputs."""
    data, indices = np.asarray(data, np.float32), np.asarray(indices, np.int64)
    graph = helper.make_graph(
        [node],
        "seed",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, data.shape),
            helper.make_tensor_value_info("indices", TensorProto.INT64, indices.shape),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
    )
    imports = [helper.make_opsetid("", opset if not domain else 13)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    compiled = ov.Core().read_model(model.SerializeToString(), b"")
    return str(compiled.output(0).get_partial_shape())


ONNX_RUNS = [(n, opset) for n in range(5) for opset in (11, 12, 13) if (n, opset) != (4, 11)]


@pytest.mark.parametrize(("example", "opset"), ONNX_RUNS)
def test_onnx_gather_nd_examples(example, opset):
    data, indices, b, output = ONNX_GATHER_ND[example]
    expected = shape_text(output)
    assert expected == ONNX_DOCUMENTED_SHAPES[example]
    ours = onnx_gather_nd_shape(shape_text(data), shape_text(indices), b or None, opset)
    assert str(ours) == expected
    attrs = {"batch_dims": b} if b else {}
    node = helper.make_node("GatherND", ["data", "indices"], ["output"], **attrs)
    assert onnx_model_output_shape(node, data, indices, opset) == expected


def test_onnx_gather_nd_example_5_needs_gather_nd_12():
    data, indices, b, _ = ONNX_GATHER_ND[4]  # batch_dims=1: GatherND-11 has no such attribute
    with pytest.raises(UnsupportedOpError, match="GatherND-11 has no batch_dims"):
        onnx_gather_nd_shape(shape_text(data), shape_text(indices), b, opset=11)


@pytest.mark.parametrize(("data", "indices", "output"), MICROSOFT_GATHER_ND)
def test_com_microsoft_gather_nd_examples(data, indices, output):
    expected = shape_text(output)
    ours = onnx_gather_nd_shape(
        shape_text(data), shape_text(indices), domain="com.microsoft", opset=1
    )
    assert str(ours) == expected
    node = helper.make_node("GatherND", ["data", "indices"], ["output"], domain="com.microsoft")
    assert onnx_model_output_shape(node, data, indices, 1, "com.microsoft") == expected


@pytest.mark.parametrize(("data", "indices", "axis", "output"), GATHER_ELEMENTS)
def test_gather_elements_examples(data, indices, axis, output):
    expected = shape_text(output)
    assert str(gather_elements_shape(shape_text(data), shape_text(indices), axis)) == expected
    assert ov_gather_elements(shape_text(data), shape_text(indices), axis) == expected
    node = helper.make_node("GatherElements", ["data", "indices"], ["output"], axis=axis)
    assert onnx_model_output_shape(node, data, indices, 13) == expected


@pytest.mark.parametrize(("data", "indices", "b", "expected"), OPENVINO_GATHER_ND_8)
def test_openvino_gather_nd_8_examples(data, indices, b, expected):
    assert str(gather_nd_shape(data, indices, b, version=8)) == expected
    assert ov_gather_nd(data, indices, b, 8) == expected


@pytest.mark.parametrize(("data", "indices", "b", "expected"), OPENVINO_XML_LAYERS)
def test_openvino_gather_nd_8_xml_layers(data, indices, b, expected):
    assert str(gather_nd_shape(data, indices, b, version=8)) == expected
    assert ov_gather_nd(data, indices, b, 8) == expected


def test_hitnet_layer_as_gather_nd_5_folds_its_three_batch_dims():
    # the brief: the HITNet layer (batch_dims=3) relabelled opset5 gives [4096,1]
    assert str(gather_nd_shape("[1,64,64,320]", "[1,64,64,1,1]", 3, version=5)) == "[4096,1]"
    assert ov_gather_nd("[1,64,64,320]", "[1,64,64,1,1]", 3, 5) == "[4096,1]"
