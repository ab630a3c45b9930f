"""Write the small OpenVINO IRs committed in ``ir_samples/``.

Run ``python tools/make_samples.py [--out DIR] [--only NAME ...] [--list]``.

Every sample is built with the openvino Python API (or converted from an ONNX or
PyTorch model with ``openvino.convert_model``) and saved with
``openvino.save_model(..., compress_to_fp16=False)``. The files must come out byte for
byte the same on every run, so that ``tests/project/test_samples.py`` can prove the committed
samples are what this script makes. That is why every friendly name and every tensor
name is set here, why names OpenVINO or a frontend generates from a global counter are
renumbered per model (:func:`_canonical_names`), and why conversion rt_info that
records paths is dropped.

The ONNX models are built in memory with ``onnx.helper`` (``convert_model`` takes
only a path for ONNX, so they pass through a fixed-name temporary file). The PyTorch
samples need ``torch`` (``pip install torch==2.13.0``) only to be regenerated; without
torch they are skipped and the committed files stay as they are.

Three ``wrong_*`` samples declare wrong GatherND output dims on purpose, for the
checker demo: each is the saved XML of a correct sample with one layer's output dims
(and its consumers' input dims) edited as text by :func:`declare_wrong_dims`.
``dynamic_rank`` is read by OpenVINO but not compiled: its CPU plugin refuses
dynamic ranks.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset1, opset5, opset6, opset7, opset8

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "ir_samples"
SEED = 20260422

# --------------------------------------------------------------------------------------
# Naming helpers: nothing is left to OpenVINO's global name counter.


def _name(node: ov.Node, name: str) -> ov.Node:
    """Give ``node`` a friendly name and its outputs tensor names derived from it."""
    node.set_friendly_name(name)
    outputs = node.outputs()
    for port, out in enumerate(outputs):
        out.get_tensor().set_names({name if len(outputs) == 1 else f"{name}:{port}"})
    return node


def _param(name: str, shape: str, dtype: ov.Type = ov.Type.f32) -> ov.Node:
    """A Parameter whose shape is given in OpenVINO's text (``"[?,2..8,4]"``)."""
    return _name(opset8.parameter(ov.PartialShape(shape), dtype, name=name), name)


def _const(name: str, value: np.ndarray | Sequence, dtype: type | None = None) -> ov.Node:
    """A named Constant from a NumPy array (or a list, with an explicit dtype)."""
    array = np.asarray(value, dtype=dtype)
    return _name(opset8.constant(array), name)


def _model(name: str, outputs: dict[str, ov.Node], params: list[ov.Node]) -> ov.Model:
    """Build a model with one named Result per entry of ``outputs``."""
    results = []
    for result_name, node in outputs.items():
        result = opset8.result(node)
        result.set_friendly_name(result_name)
        results.append(result)
    return ov.Model(results, params, name)


_AUTO_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9]*)_\d+$")


def _canonical_names(model: ov.Model) -> ov.Model:
    """Renumber counter-made names (``Concat_3337``) by position in the model.

    OpenVINO and its frontends name new nodes ``<Type>_<global counter>``; the counter
    depends on everything built before in the process, so ``--only`` would change the
    files. A name of that form becomes ``<Type>_<index in get_ordered_ops()>``. Result
    nodes get ``out<k>`` names and the tensors they read get a name if they have none,
    since the serializer would otherwise derive one from the counter.
    """
    result_index = 0
    for index, op in enumerate(model.get_ordered_ops()):
        if op.get_type_name() == "Result":
            _name_result(op, result_index)
            result_index += 1
            continue
        match = _AUTO_NAME.match(op.get_friendly_name())
        if match:
            op.set_friendly_name(f"{match.group(1)}_{index}")
    return model


def _name_result(result: ov.Node, index: int) -> None:
    """Name a Result (and the tensor it reads) when the frontend left counter names."""
    tensor = result.input_value(0).get_tensor()
    if not tensor.get_names():
        tensor.set_names({f"out{index}"})
    if _AUTO_NAME.match(result.get_friendly_name()) or "/sink_port_" in result.get_friendly_name():
        result.set_friendly_name(f"{sorted(tensor.get_names())[0]}/result")


def _drop_conversion_rt_info(model: ov.Model) -> ov.Model:
    """Remove ``conversion_parameters`` (it records the input path and framework)."""
    rt_info = model.get_rt_info()
    if "conversion_parameters" in list(rt_info.keys()):
        del rt_info["conversion_parameters"]
    return model


def _rng(salt: int) -> np.random.Generator:
    """A generator seeded per sample, so samples do not depend on each other."""
    return np.random.default_rng([SEED, salt])


def _valid_indices(rng: np.random.Generator, shape: Sequence[int],
                   bounds: Sequence[int]) -> np.ndarray:
    """Random int32 index tuples of ``shape``; column ``c`` lies in ``[0, bounds[c])``."""
    columns = [rng.integers(0, bound, size=tuple(shape[:-1])) for bound in bounds]
    return np.stack(columns, axis=-1).astype(np.int32)


# --------------------------------------------------------------------------------------
# 1. The three GatherND-8 layers of the OpenVINO spec, as opset8 and as opset5.

SPEC_LAYERS = {
    # name: (data shape, indices shape, batch_dims)
    "bd0": ((1000, 256, 10, 15), (25, 125, 3), 0),
    "bd2": ((30, 2, 100, 35), (30, 2, 3, 1), 2),
    "bd3": ((1, 64, 64, 320), (1, 64, 64, 1, 1), 3),
}


def spec_gather_nd(key: str, version: int) -> ov.Model:
    """One spec layer: data is a Parameter, indices a seeded valid Const."""
    data_shape, indices_shape, batch_dims = SPEC_LAYERS[key]
    k = indices_shape[-1]
    bounds = data_shape[batch_dims:batch_dims + k]
    indices = _valid_indices(_rng(batch_dims), indices_shape, bounds)
    data = _param("data", str(list(data_shape)).replace(" ", ""))
    ids = _const("indices", indices)
    opset = opset8 if version == 8 else opset5
    gather = _name(opset.gather_nd(data, ids, batch_dims), f"gather_nd{version}_{key}")
    return _model(f"gather_nd{version}_{key}", {"output": gather}, [data])


# --------------------------------------------------------------------------------------
# 2. The five examples of the ONNX GatherND operator page.

ONNX_EXAMPLES = [
    # (data, indices, batch_dims, expected output) from onnx.ai GatherND-13
    ([[0, 1], [2, 3]], [[0, 0], [1, 1]], 0, [0, 3]),
    ([[0, 1], [2, 3]], [[1], [0]], 0, [[2, 3], [0, 1]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[0, 1], [1, 0]], 0, [[2, 3], [4, 5]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[[0, 1]], [[1, 0]]], 0, [[[2, 3]], [[4, 5]]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[1], [0]], 1, [[2, 3], [4, 5]]),
]


def onnx_examples() -> ov.Model:
    """Five GatherND-8 layers; data are int32 Parameters, indices int64 Consts.

    Feed ``exN_data`` with the example's data and output ``exN_output`` is the
    example's expected output (``ONNX_EXAMPLES`` keeps both).
    """
    params, outputs = [], {}
    for number, (data, indices, batch_dims, _) in enumerate(ONNX_EXAMPLES, start=1):
        shape = str(list(np.shape(data))).replace(" ", "")
        param = _param(f"ex{number}_data", shape, ov.Type.i32)
        ids = _const(f"ex{number}_indices", indices, np.int64)
        gather = _name(opset8.gather_nd(param, ids, batch_dims), f"ex{number}_gather_nd")
        params.append(param)
        outputs[f"ex{number}_output"] = gather
    return _model("onnx_examples", outputs, params)


# --------------------------------------------------------------------------------------
# 3. Dynamic and interval input dims feeding every gather.


def dynamic_gathers() -> ov.Model:
    """``?``, ``2..8``, ``1..`` and ``..16`` dims into GatherND-5/8, GatherElements, Gather-8.

    Also a scalar Const index, with which Gather drops the axis.
    """
    data = _param("data", "[?,2..8,10,1..,4]")
    nd_indices = _param("nd_indices", "[..16,2..8,5,2]", ov.Type.i64)
    ge_indices = _param("ge_indices", "[3,?,10,2..,..16]", ov.Type.i32)
    g_indices = _param("g_indices", "[..16,1..]", ov.Type.i32)
    axis = _const("gather_axis", 1, np.int64)
    scalar = _const("scalar_index", 1, np.int32)
    outputs = {
        "nd5_out": _name(opset5.gather_nd(data, nd_indices, 2), "gather_nd5_bd2"),
        "nd8_out": _name(opset8.gather_nd(data, nd_indices, 2), "gather_nd8_bd2"),
        "ge_out": _name(opset6.gather_elements(data, ge_indices, -1), "gather_elements_axis_m1"),
        "g_out": _name(opset8.gather(data, g_indices, axis, 1), "gather8_axis1_bd1"),
        "g_scalar_out": _name(opset8.gather(data, scalar, _const("scalar_axis", 2, np.int64), 0),
                              "gather8_scalar_index"),
    }
    return _model("dynamic_gathers", outputs, [data, nd_indices, ge_indices, g_indices])


def dynamic_rank() -> ov.Model:
    """Dynamic rank: OpenVINO reads it, its CPU plugin refuses to compile it.

    A ``[...]`` data input into GatherND-8 and Gather-8 gives ``[...]`` outputs (ports
    without ``<dim>``); into GatherElements it gives the indices shape. A static-rank
    data with an indices last dim ``?`` also gives ``[...]`` from GatherND.
    """
    any_rank = _param("any_rank", "[...]")
    data = _param("data", "[2,3..5,7]")
    nd_indices = _param("nd_indices", "[4,2]", ov.Type.i32)
    open_tuple = _param("open_tuple", "[4,?]", ov.Type.i32)
    ge_indices = _param("ge_indices", "[2,?,1..3]", ov.Type.i32)
    axis = _const("gather_axis", 1, np.int64)
    outputs = {
        "nd_any_out": _name(opset8.gather_nd(any_rank, nd_indices, 0), "gather_nd8_any_rank"),
        "g_any_out": _name(opset8.gather(any_rank, nd_indices, axis, 0), "gather8_any_rank"),
        "ge_any_out": _name(opset6.gather_elements(any_rank, ge_indices, 2),
                            "gather_elements_any_rank"),
        "nd_open_out": _name(opset5.gather_nd(data, open_tuple, 1), "gather_nd5_open_tuple"),
    }
    return _model("dynamic_rank", outputs, [any_rank, data, nd_indices, open_tuple, ge_indices])


def gather_versions() -> ov.Model:
    """Gather-1, Gather-7 (batch_dims, negative axis) and Gather-8 (negative indices).

    The three versions share one shape rule, ``D[:axis] + I[b:] + D[axis+1:]``; Gather-1
    has no batch_dims, and only Gather-8 allows negative index values (a Const here).
    """
    data = _param("data", "[2..4,5,?,3]")
    indices = _param("indices", "[2..4,1..6]", ov.Type.i64)
    negative = _const("negative_indices", [[-1, 0], [-5, 4]], np.int32)
    outputs = {
        "g1_out": _name(opset1.gather(data, indices, _const("axis_1", 2, np.int64)),
                        "gather1_axis2"),
        "g7_out": _name(opset7.gather(data, indices, _const("axis_7", -3, np.int64), 1),
                        "gather7_axis_m3_bd1"),
        "g8_out": _name(opset8.gather(data, negative, _const("axis_8", 1, np.int32), 0),
                        "gather8_negative_indices"),
    }
    return _model("gather_versions", outputs, [data, indices])


# --------------------------------------------------------------------------------------
# 4. Gathers among ordinary ops, with a Reshape target computed at run time.


def mixed_ops() -> ov.Model:
    """Reshape, MatMul, Add, ShapeOf→Gather→Concat→Reshape, Transpose, Convert, Softmax."""
    rng = _rng(4)
    x = _param("x", "[1..8,3,8]")
    ids = _param("ids", "[?,2,1]", ov.Type.i64)
    ge_ids = _param("ge_ids", "[?,24]", ov.Type.i32)
    flat = _name(opset8.reshape(x, _const("flat_shape", [0, -1], np.int64), True), "flatten")
    weights = _const("fc_weights", rng.standard_normal((24, 16)).astype(np.float32))
    bias = _const("fc_bias", rng.standard_normal(16).astype(np.float32))
    fc = _name(opset8.matmul(flat, weights, False, False), "fc_matmul")
    fc = _name(opset8.add(fc, bias), "fc_add")
    cube = _name(opset8.reshape(fc, _const("cube_shape", [0, 4, 4], np.int64), True), "to_cube")
    ids32 = _name(opset8.convert(ids, ov.Type.i32), "ids_to_i32")
    picked = _name(opset8.gather_nd(cube, ids32, 1), "pick_rows_nd8")
    turned = _name(opset8.transpose(picked, _const("perm", [0, 2, 1], np.int64)), "turn")
    batch = _batch_of(x)
    target = _name(opset8.concat([batch, _const("minus_one", [-1], np.int64)], 0), "target")
    rows = _name(opset8.reshape(turned, target, False), "rows_flat")
    cols = _name(opset8.gather(x, _const("col_ids", [2, 0], np.int32),
                               _const("cols_axis", 1, np.int64), 0), "pick_cols_g8")
    cols = _name(opset8.reshape(cols, target, False), "cols_flat")
    firsts = _name(opset5.gather_nd(x, _const("first_ids", [[0], [2]], np.int32), 0),
                   "first_rows_nd5")
    joined = _name(opset8.concat([rows, cols], 1), "joined")
    probs = _name(opset8.softmax(joined, 1), "probs")
    ranked = _name(opset6.gather_elements(probs, ge_ids, 1), "ranked_ge")
    return _model("mixed_ops", {"ranked": ranked, "firsts": firsts}, [x, ids, ge_ids])


def ssd_head() -> ov.Model:
    """An SSD-style detector head at batch 1 (no gather, so no sample of its own: the
    batch-reshape survey, tools/reshape_survey.py, builds it): a strided Convolution, location and
    confidence Convolutions flattened with ``[1,-1]`` Reshapes, a PriorBox sized by
    ShapeOf of the feature map and the image, and DetectionOutput-8, which stacks every
    image's ``keep_top_k`` boxes in one ``[1,1,N*10,7]`` output (column 0: the image)."""
    rng = _rng(9)
    image = _param("image", "[1,3,32,32]")

    def conv(x: ov.Node, out: int, size: int, stride: int, scale: float, name: str) -> ov.Node:
        w = _const(f"{name}/weights",
                   (rng.standard_normal((out, x.get_output_partial_shape(0)[1].get_length(),
                                         size, size)) * scale).astype(np.float32))
        return _name(opset8.convolution(x, w, [stride, stride], [0, 0], [0, 0], [1, 1]), name)

    def flat(x: ov.Node, name: str) -> ov.Node:
        moved = opset8.transpose(x, _const(f"{name}/order", [0, 2, 3, 1], np.int64))
        return _name(opset8.reshape(moved, _const(f"{name}/target", [1, -1], np.int64), False),
                     name)

    feat = _name(opset8.relu(conv(image, 8, 4, 4, 1.0, "features")), "features/relu")
    priors, classes = 2, 3
    loc = flat(conv(feat, priors * 4, 1, 1, 0.1, "loc"), "loc_flat")
    scores = flat(conv(feat, priors * classes, 1, 1, 1.0, "conf"), "conf_flat")
    per_class = opset8.reshape(scores, _const("conf/classes", [1, -1, classes], np.int64), False)
    conf = _name(opset8.reshape(opset8.softmax(per_class, 2),
                                _const("conf/target", [1, -1], np.int64), False), "conf_softmax")

    def sizes(x: ov.Node, name: str) -> ov.Node:
        return _name(opset8.strided_slice(opset8.shape_of(x), [2], [4], [1], [0], [0]), name)

    boxes = opset8.prior_box(sizes(feat, "feature_size"), sizes(image, "image_size"), {
        "min_size": [8.0], "max_size": [16.0], "aspect_ratio": [], "flip": False,
        "clip": True, "step": 4.0, "offset": 0.5, "variance": [0.1, 0.1, 0.2, 0.2],
        "scale_all_sizes": True})
    boxes = _name(opset8.unsqueeze(boxes, _const("priors/axis", [0], np.int64)), "priors")
    detections = _name(opset8.detection_output(loc, conf, boxes, {
        "background_label_id": 0, "top_k": 20, "variance_encoded_in_target": False,
        "keep_top_k": [10], "code_type": "caffe.PriorBoxParameter.CENTER_SIZE",
        "share_location": True, "nms_threshold": 0.45, "confidence_threshold": 0.01,
        "clip_after_nms": False, "clip_before_nms": False, "decrease_label_id": False,
        "normalized": True, "input_height": 1, "input_width": 1, "objectness_score": 0.0}),
        "detections")
    return _model("ssd_head", {"detections": detections}, [image])


# --------------------------------------------------------------------------------------
# 4b. Gathers inside the bodies of a Loop and an If.


def loop_gather() -> ov.Model:
    """A Loop of 3 iterations whose body gathers a row per step (a Gather-8 on the
    current iteration number, unsqueezed to [1] so that the rows concatenate into
    [3,4]) and carries a running sum on a back edge."""
    table = _param("table", "[3,4]")
    acc0 = _param("acc0", "[1,4]")
    rows, acc = _param("rows", "[3,4]"), _param("acc", "[1,4]")
    step = _param("step", "[]", ov.Type.i64)
    at = _name(opset8.unsqueeze(step, _const("step_axis", 0, np.int64)), "step_as_index")
    row = _name(opset8.gather(rows, at, _const("row_axis", 0, np.int64), 0), "pick_row_g8")
    total = _name(opset8.add(acc, row), "running_sum")
    more = _name(opset8.less(step, _const("last_step", 2, np.int64)), "more")
    body = ov.Model([_named_result(total, "sum_out"), _named_result(more, "more_out"),
                     _named_result(row, "row_out")], [rows, acc, step], "loop_body")
    loop = _name(opset8.loop(_const("trips", 3, np.int64), _const("go", True)), "row_loop")
    loop.set_function(body)
    loop.set_special_body_ports([2, 1])
    loop.set_invariant_input(rows, table.output(0))
    loop.set_merged_input(acc, acc0.output(0), total.output(0))
    summed = loop.get_iter_value(total.output(0), -1)
    picked = loop.get_concatenated_slices(row.output(0), 0, 1, 1, -1, 0)
    return _model("loop_gather", {"summed": summed, "rows_seen": picked},
                  [table, acc0])


def _named_result(node: ov.Node, name: str) -> ov.Node:
    return _name(opset8.result(node), name)


def if_gather() -> ov.Model:
    """An If on a boolean input: the then body gathers rows with GatherND-8, the else
    body columns with Gather-8; the branches' shapes merge into [2,2..3]."""
    x = _param("x", "[2,3]")
    flag = _param("flag", "[]", ov.Type.boolean)
    tx, ex = _param("then_x", "[2,3]"), _param("else_x", "[2,3]")
    then = _name(opset8.gather_nd(tx, _const("row_ids", [[1], [0]], np.int64), 0), "rows_nd8")
    other = _name(opset8.gather(ex, _const("col_ids", [2, 0], np.int64),
                                _const("col_axis", 1, np.int64), 0), "cols_g8")
    then_body = ov.Model([_named_result(then, "then_out")], [tx], "then_body")
    else_body = ov.Model([_named_result(other, "else_out")], [ex], "else_body")
    op = _name(opset8.if_op(flag), "pick")
    op.set_then_body(then_body)
    op.set_else_body(else_body)
    op.set_input(x.output(0), tx, ex)
    out = op.set_output(then_body.get_results()[0], else_body.get_results()[0])
    return _model("if_gather", {"picked": out}, [x, flag])


def _batch_of(x: ov.Node) -> ov.Node:
    """ShapeOf(x) → Gather index 0: the batch size as a 1-element i64 tensor."""
    shape = _name(opset8.shape_of(x, ov.Type.i64), "x_shape")
    return _name(opset8.gather(shape, _const("batch_pos", [0], np.int64),
                               _const("batch_axis", 0, np.int64), 0), "x_batch")


# --------------------------------------------------------------------------------------
# 6a. ONNX models converted by the ONNX frontend.


_BROADCAST = "ShapeOf/Slice/Maximum/Concat/Broadcast on data and indices before GatherND-8"


def _onnx_gather_nd(opset: int, data_shape: list, indices_shape: list, batch_dims: int,
                    domain: str = "") -> ov.Model:
    """A one-node ONNX GatherND model, converted with ``openvino.convert_model``."""
    from onnx import TensorProto, helper

    attrs = {"batch_dims": batch_dims} if batch_dims else {}
    node = helper.make_node("GatherND", ["data", "indices"], ["output"], name="gather_nd",
                            domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "gather_nd",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, data_shape),
         helper.make_tensor_value_info("indices", TensorProto.INT64, indices_shape)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)])
    imports = [helper.make_opsetid("", opset)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    onnx_model = helper.make_model(graph, opset_imports=imports, producer_name="ovgather")
    return _convert_onnx(onnx_model)


def _convert_onnx(onnx_model) -> ov.Model:
    """Save the ONNX model to a fixed-name temp file and convert it."""
    import onnx

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        onnx.save(onnx_model, path)
        model = ov.convert_model(path)
    return _drop_conversion_rt_info(_canonical_names(model))


ONNX_SAMPLES: dict[str, tuple] = {
    # name: (opset, data shape, indices shape, batch_dims, domain, what it shows)
    "gathernd11_static": (11, [2, 3, 4], [5, 2], 0, "", "a plain GatherND-8"),
    "gathernd12_bd1_static": (12, [4, 3, 5], [4, 2, 1], 1, "", "a plain GatherND-8"),
    "gathernd12_bd1_dynamic": (12, ["N", 3, 5], ["N", 2, 1], 1, "", _BROADCAST),
    "gathernd13_bd2_static": (13, [2, 3, 4, 5], [2, 3, 6, 1], 2, "", "a plain GatherND-8"),
    "gathernd13_bd2_dynamic": (13, ["N", "M", 4, 5], ["N", "M", 6, 1], 2, "", _BROADCAST),
    "gathernd13_bd1_broadcast": (13, [1, 3, 4], [5, 1], 1, "",
                                 "batch 1 vs 5 broadcast ORT-style: " + _BROADCAST),
    "com_microsoft_gathernd": (13, ["N", 3, 4], ["N", 2], 0, "com.microsoft",
                               "the alias to the same GatherND-8 translator"),
}


# --------------------------------------------------------------------------------------
# 6b. PyTorch models converted by the PyTorch frontend (need torch to regenerate).


def _torch_modules():
    """The PyTorch sample modules; defined lazily because torch is optional."""
    import torch

    class BoolMask(torch.nn.Module):
        def forward(self, x, mask, rows):
            return x[mask], x[rows]

    class TorchGather(torch.nn.Module):
        def forward(self, x, index):
            return torch.gather(x, 1, index), torch.gather(x, -1, index.flip(1))

    class AdvancedIndexing(torch.nn.Module):
        def forward(self, x, i, j):
            return x[i], x[:, j], x[i, j]

    class Embedding(torch.nn.Module):
        def __init__(self):
            super().__init__()
            weight = _rng(6).standard_normal((10, 4)).astype(np.float32)
            self.emb = torch.nn.Embedding.from_pretrained(torch.from_numpy(weight))

        def forward(self, ids):
            return self.emb(ids)

    class ShapeSubgraph(torch.nn.Module):
        def forward(self, x, index):
            y = x.reshape(x.shape[0], -1, 4)
            picked = torch.gather(y, 2, index)
            order = torch.arange(y.shape[1] - 1, -1, -1)
            flipped = y[:, order]
            return picked.reshape(x.shape[0], -1), flipped[y[..., 0] > 0]

    return {"BoolMask": BoolMask, "TorchGather": TorchGather,
            "AdvancedIndexing": AdvancedIndexing, "Embedding": Embedding,
            "ShapeSubgraph": ShapeSubgraph}


def _torch_sample(module_name: str, inputs: list[tuple[str, str, str]]) -> ov.Model:
    """Convert one module with example inputs and explicit (possibly dynamic) shapes.

    ``inputs`` lists (name, shape text, dtype): the example tensors are random data of
    the shape with every dynamic dim set to 2.
    """
    import torch

    torch.manual_seed(0)
    module = _torch_modules()[module_name]()
    examples, specs = [], []
    for name, shape_text, dtype in inputs:
        shape = ov.PartialShape(shape_text)
        sizes = [d.get_length() if d.is_static else 2 for d in shape]
        examples.append(_torch_example(torch, dtype, sizes))
        specs.append((name, shape))
    with warnings.catch_warnings():  # torch.jit.trace deprecation, nothing to act on
        warnings.simplefilter("ignore", DeprecationWarning)
        model = ov.convert_model(module.eval(), example_input=tuple(examples),
                                 input=[shape for _, shape in specs])
    for param, (name, _) in zip(model.get_parameters(), specs, strict=True):
        _name(param, name)
    return _drop_conversion_rt_info(_canonical_names(model))


def _torch_example(torch, dtype: str, sizes: list[int]):
    """A small example tensor of one dtype; index tensors hold 0/1 so any dim fits."""
    generator = torch.Generator().manual_seed(len(sizes))
    if dtype == "bool":
        return torch.rand(sizes, generator=generator) > 0.5
    if dtype == "long":
        return torch.randint(0, 2, sizes, generator=generator)
    return torch.rand(sizes, generator=generator)


TORCH_SAMPLES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "bool_mask": ("BoolMask", [("x", "[?,5]", "float"), ("mask", "[?,5]", "bool"),
                               ("rows", "[?]", "bool")]),
    "torch_gather": ("TorchGather", [("x", "[4,6]", "float"), ("index", "[4,3]", "long")]),
    "advanced_indexing": ("AdvancedIndexing", [("x", "[5,7]", "float"), ("i", "[3]", "long"),
                                               ("j", "[3]", "long")]),
    "embedding": ("Embedding", [("ids", "[?,?]", "long")]),
    "shape_subgraph": ("ShapeSubgraph", [("x", "[?,3,8]", "float"),
                                         ("index", "[?,6,2]", "long")]),
}


TORCH_NOTES = {
    "bool_mask": "x[mask] and x[rows] with boolean masks: NonZero → Transpose → GatherND-8",
    "torch_gather": "torch.gather on dims 1 and -1: GatherElements",
    "advanced_indexing": "x[i], x[:, j], x[i, j] with integer tensors: Gather-8",
    "embedding": "nn.Embedding(10, 4): Gather-8 on the weight",
    "shape_subgraph": "x.reshape(x.shape[0], -1, 4), torch.gather, y[:, arange(...)] and a "
                      "mask, with dynamic batch: gathers behind ShapeOf/Reshape subgraphs",
}


# --------------------------------------------------------------------------------------
# 5. Wrong on purpose: a correct sample's XML with one GatherND's output dims edited.


@dataclass(frozen=True)
class WrongDims:
    """Which layer of which sample gets which declared output dims."""

    source: str
    layer: str
    dims: tuple[int, ...]
    why: str = ""


WRONG_SAMPLES = {
    # HITNet: GatherND-8 declaring the GatherND-5 layout [4096,1] instead of [1,64,64,1].
    "wrong_gather_nd8_bd3_v5_layout": WrongDims(
        "gather_nd8_bd3", "gather_nd8_bd3", (4096, 1),
        "the GatherND-5 layout; OpenVINO infers [1,64,64,1]"),
    # One wrong dim: GatherND-5 bd=2 declaring [60,3,34] instead of [60,3,35].
    "wrong_gather_nd5_bd2_one_dim": WrongDims(
        "gather_nd5_bd2", "gather_nd5_bd2", (60, 3, 34),
        "one wrong dim; OpenVINO infers [60,3,35]"),
    # In a bigger model: the consumers' input ports follow, only this layer contradicts.
    "wrong_mixed_ops_nd8_dim": WrongDims(
        "mixed_ops", "pick_rows_nd8", (-1, 2, 5),
        "last dim 5; OpenVINO infers [1..8,2,4]"),
}


def declare_wrong_dims(xml_text: str, wrong: WrongDims) -> str:
    """Replace the dims of ``wrong.layer``'s output port and of the ports it feeds.

    An edit of the text, not a re-serialisation, so every other byte stays as OpenVINO
    wrote it. The consumers' input ports follow, as in a stale IR written by a tool that
    believed the wrong shape.
    """
    layer_id, out_port = _output_port_of(xml_text, wrong.layer)
    dims = "".join(f"\t\t\t\t\t<dim>{d}</dim>\n" for d in wrong.dims)
    xml_text = _replace_port_dims(xml_text, layer_id, "output", out_port, dims)
    for to_layer, to_port in _consumers(xml_text, layer_id, out_port):
        xml_text = _replace_port_dims(xml_text, to_layer, "input", to_port, dims)
    return xml_text


def _layer_block(xml_text: str, layer_id: str) -> re.Match:
    """The ``<layer id=...> ... </layer>`` text of one layer."""
    pattern = rf'<layer id="{layer_id}" .*?</layer>'
    match = re.search(pattern, xml_text, flags=re.S)
    if match is None:
        raise ValueError(f"layer id {layer_id} not found")
    return match


def _output_port_of(xml_text: str, layer_name: str) -> tuple[str, str]:
    """The id and the (single) output port id of the layer named ``layer_name``."""
    match = re.search(rf'<layer id="(\d+)" name="{re.escape(layer_name)}" .*?</layer>',
                      xml_text, flags=re.S)
    if match is None:
        raise ValueError(f"layer {layer_name!r} not found")
    output = re.search(r'<output>\s*<port id="(\d+)"', match.group(0))
    return match.group(1), output.group(1)


def _consumers(xml_text: str, layer_id: str, port: str) -> list[tuple[str, str]]:
    """The (layer id, port id) pairs that an edge from ``layer_id:port`` reaches."""
    pattern = rf'<edge from-layer="{layer_id}" from-port="{port}" to-layer="(\d+)" to-port="(\d+)"'
    return re.findall(pattern, xml_text)


def _replace_port_dims(xml_text: str, layer_id: str, section: str, port: str,
                       dims: str) -> str:
    """Swap the ``<dim>`` lines of one port of one layer for ``dims``.

    A port written without dims (dynamic rank or scalar) is self-closing; it is opened
    up so that the new dims fit inside it.
    """
    block = _layer_block(xml_text, layer_id)
    part = re.search(rf"<{section}>.*?</{section}>", block.group(0), flags=re.S)
    port_re = rf'<port id="{port}"([^>]*?)(/?)>\n((?:\s*<dim>-?\d+</dim>\n)*)'

    def swap(match: re.Match) -> str:
        head = f'<port id="{port}"{match.group(1).rstrip()}>\n{dims}'
        return head + "\t\t\t\t</port>\n" if match.group(2) else head

    new_part, count = re.subn(port_re, swap, part.group(0), count=1)
    if count != 1:
        raise ValueError(f"port {port} of layer {layer_id} not found")
    start = block.start() + part.start()
    return xml_text[:start] + new_part + xml_text[block.start() + part.end():]


# --------------------------------------------------------------------------------------
# The registry and the writer.


@dataclass(frozen=True)
class Sample:
    """One committed IR: where it goes, how it is made, one line on what it shows."""

    name: str
    path: str
    build: Callable[[], ov.Model] | None
    about: str
    needs_torch: bool = False
    wrong: WrongDims | None = None
    compiles: bool = True


def _dims(dims: Sequence) -> str:
    """``[N,3,4]``: dims of an ONNX shape as compact text."""
    return "[" + ",".join(str(d) for d in dims) + "]"


def _registry() -> dict[str, Sample]:
    """Every sample by name, in the order the README lists them."""
    samples = []
    for key, (data, indices, bd) in SPEC_LAYERS.items():
        for version in (8, 5):
            name = f"gather_nd{version}_{key}"
            samples.append(Sample(
                name, f"{name}.xml", lambda k=key, v=version: spec_gather_nd(k, v),
                f"the OpenVINO spec's GatherND-8 example layer (data {_dims(data)}, indices "
                f"{_dims(indices)}, batch_dims {bd}) built as GatherND-{version}"))
    samples += [
        Sample("onnx_examples", "onnx_examples.xml", onnx_examples,
               "ONNX GatherND examples 1-5 as five GatherND-8 layers (data Parameters "
               "exN_data, indices Consts; exN_output is the example's expected output)"),
        Sample("dynamic_gathers", "dynamic_gathers.xml", dynamic_gathers,
               "inputs with ?, 2..8, 1.. and ..16 dims feeding GatherND-5 and GatherND-8 "
               "(bd 2), GatherElements (axis -1), Gather-8 (axis 1, bd 1; and a scalar index)"),
        Sample("dynamic_rank", "dynamic_rank.xml", dynamic_rank,
               "a dynamic-rank [...] input into GatherND-8, Gather-8, GatherElements, and a "
               "GatherND-5 whose index tuple length is ?: ports without `<dim>`; read_model "
               "takes it, the CPU plugin refuses dynamic rank", compiles=False),
        Sample("gather_versions", "gather_versions.xml", gather_versions,
               "Gather-1 (axis 2), Gather-7 (axis -3, batch_dims 1) and Gather-8 with "
               "negative Const indices on interval dims"),
        Sample("mixed_ops", "mixed_ops.xml", mixed_ops,
               "GatherND-5/8, Gather-8, GatherElements among Reshape (special_zero, -1), "
               "MatMul, Add, Convert, Transpose, Concat, Softmax and a "
               "ShapeOf→Gather→Concat→Reshape target computed at run time"),
        Sample("loop_gather", "loop_gather.xml", loop_gather,
               "a Loop (3 iterations) whose body picks a row per step with Gather-8 and "
               "sums on a back edge; check lists its body layers as row_loop/body/…"),
        Sample("if_gather", "if_gather.xml", if_gather,
               "an If on a boolean input: GatherND-8 in then_body, Gather-8 in else_body; "
               "the output merges both branches' shapes"),
    ]
    for name, wrong in WRONG_SAMPLES.items():
        samples.append(Sample(name, f"{name}.xml", None,
                              f"WRONG ON PURPOSE: {wrong.source}.xml with layer {wrong.layer} "
                              f"declaring output dims {_dims(wrong.dims)} ({wrong.why})",
                              wrong=wrong))
    for name, (opset, data, indices, bd, domain, note) in ONNX_SAMPLES.items():
        version = 1 if domain else opset
        samples.append(Sample(
            name, f"onnx/{name}.xml",
            lambda a=(opset, data, indices, bd, domain): _onnx_gather_nd(*a),
            f"convert_model of ONNX {domain or 'ai.onnx'} GatherND-{version}, data "
            f"{_dims(data)}, indices {_dims(indices)}, batch_dims {bd}: {note}"))
    for name, (module, inputs) in TORCH_SAMPLES.items():
        shapes = ", ".join(f"{n} {s} {t}" for n, s, t in inputs)
        samples.append(Sample(
            name, f"pytorch/{name}.xml", lambda m=module, i=inputs: _torch_sample(m, i),
            f"convert_model of PyTorch {TORCH_NOTES[name]} (inputs {shapes})",
            needs_torch=True))
    return {sample.name: sample for sample in samples}


SAMPLES = _registry()


def torch_available() -> bool:
    """True when torch can be imported (only the PyTorch samples need it)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def generate(out_dir: Path, names: Iterable[str] | None = None) -> list[Path]:
    """Write the chosen samples (all by default) under ``out_dir``; return the xml paths.

    PyTorch samples are skipped when torch is missing. A wrong-on-purpose sample is
    derived from its source sample, built in a scratch directory when not chosen itself.
    """
    chosen = list(SAMPLES) if names is None else list(names)
    unknown = [n for n in chosen if n not in SAMPLES]
    if unknown:
        raise KeyError(f"unknown sample(s): {', '.join(unknown)}")
    has_torch = torch_available()
    written = []
    for name in chosen:
        sample = SAMPLES[name]
        if sample.needs_torch and not has_torch:
            continue
        target = Path(out_dir) / sample.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if sample.wrong is None:
            _save(_built(sample), target)
        else:
            _write_wrong(sample.wrong, target)
        written.append(target)
    return written


def _built(sample: Sample) -> ov.Model:
    """Build a sample's model; name it after the sample (frontends number their names)."""
    model = sample.build()
    model.set_friendly_name(sample.name)
    return model


def _save(model: ov.Model, target: Path) -> None:
    """Save without fp16 compression (weights stay as built)."""
    ov.save_model(model, str(target), compress_to_fp16=False)


def _write_wrong(wrong: WrongDims, target: Path) -> None:
    """Build the source sample in a scratch dir, edit its XML, copy its .bin."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source.xml"
        _save(_built(SAMPLES[wrong.source]), source)
        text = source.read_text(encoding="utf-8")
        target.write_text(declare_wrong_dims(text, wrong), encoding="utf-8")
        shutil.copyfile(source.with_suffix(".bin"), target.with_suffix(".bin"))


def readme_text(out_dir: Path) -> str:
    """The ir_samples/README.md: one line per sample with its layer count."""
    lines = [
        "# ir_samples",
        "",
        "Small OpenVINO IRs (v11, written by openvino "
        f"{ov.__version__.split('-')[0]}) made by `tools/make_samples.py`; "
        "`tests/project/test_samples.py` checks that the script reproduces them byte for byte.",
        "Regenerate with `python tools/make_samples.py` (the `pytorch/` ones need "
        "`pip install torch==2.13.0`).",
        "",
        "| file | layers | gathers | what it shows |",
        "| --- | ---: | --- | --- |",
    ]
    for sample in SAMPLES.values():
        xml = Path(out_dir) / sample.path
        count, gathers = _layer_summary(xml) if xml.exists() else ("?", "?")
        lines.append(f"| `{sample.path}` | {count} | {gathers} | {sample.about} |")
    return "\n".join(lines) + "\n"


def _layer_summary(xml: Path) -> tuple[int, str]:
    """Layer count and the gather layers as ``Type-opsetN × n`` of a saved IR."""
    text = xml.read_text(encoding="utf-8")
    layers = re.findall(r'<layer id="\d+" name="[^"]*" type="([^"]+)" version="([^"]+)"', text)
    counts: dict[str, int] = {}
    for kind, version in layers:
        if kind.startswith("Gather"):
            key = f"{kind}-{version}"
            counts[key] = counts.get(key, 0) + 1
    gathers = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(counts.items()))
    return len(layers), gathers


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write samples (and the README when writing all of them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="samples to write")
    parser.add_argument("--list", action="store_true", help="list the sample names")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(f"{s.name}\t{s.path}" for s in SAMPLES.values()))
        return 0
    try:
        written = generate(args.out, args.only)
    except KeyError as err:
        parser.error(str(err))
    if args.only is None:
        (args.out / "README.md").write_text(readme_text(args.out), encoding="utf-8")
    if not torch_available():
        print("torch not installed: PyTorch samples not regenerated", file=sys.stderr)
    print(f"wrote {len(written)} samples to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
