"""Build the ONNX models of ``tests/data/onnx_ref/``: what ``compare --all-layers --ref
onnxruntime`` and its ONNX Runtime runner are tested on.

Run ``python tools/make_onnx_ref.py [--out DIR] [--only NAME ...]``.

Two kinds:
- exports of corpus architectures (``tools/make_corpus.py``'s configs with random seeded
  weights, a smaller vocabulary and depth so that each file stays under a few hundred KB),
  through torch's dynamo exporter or its TorchScript one (``legacy``), as the corpus's
  ``onnx_*`` IRs were made; ``torch`` and ``transformers`` are needed for these only;
- small graphs written with ``onnx.helper``, each for a case the exports do not hold:
  nodes without names, Constant chains folded by OpenVINO, BatchNormalization after Conv,
  multi-output nodes, an If whose branches read outer tensors, a ``com.microsoft`` op that
  ONNX's shape inference cannot type, initializers listed as graph inputs, and weights in
  an external data file.

Each model carries its inputs in ``metadata_props["ovgather.inputs"]`` (JSON: name ->
``{"shape", "dtype", "high"}``, integer inputs drawn below ``high``), so that a test makes
valid seeded inputs without torch. Tests read the committed files and need no torch.

Requirements (only to regenerate): ``pip install torch==2.13.0 transformers onnx onnxscript``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "data" / "onnx_ref"
SEED = 20261128
OPSET = 17

#: corpus architectures exported: name -> (make_corpus arch, config changes, exporter)
EXPORTS: dict[str, tuple[str, dict, str]] = {
    "bert": ("bert", dict(vocab_size=120, num_hidden_layers=2), "dynamo"),
    "distilbert": ("distilbert", dict(vocab_size=120), "legacy"),
    "gpt2": ("gpt2", dict(vocab_size=120, n_layer=2), "dynamo"),
    "t5": ("t5", dict(vocab_size=120, num_layers=1, num_decoder_layers=1), "legacy"),
    "qwen2": ("qwen2", dict(vocab_size=120), "dynamo"),
    "resnet": ("resnet", dict(), "dynamo"),
}


def _inputs_meta(model: onnx.ModelProto, inputs: dict) -> None:
    entry = model.metadata_props.add()
    entry.key, entry.value = "ovgather.inputs", json.dumps(inputs, sort_keys=True)


def export(name: str, out: Path) -> Path:
    """Export one corpus architecture (needs torch and transformers)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import dataclasses

    import make_corpus as corpus
    import torch

    arch_name, changes, exporter = EXPORTS[name]
    base = corpus.ARCHS[arch_name]
    arch = dataclasses.replace(base, config={**base.config, **changes})
    high = {"input_ids": changes.get("vocab_size", 0), "decoder_input_ids":
            changes.get("vocab_size", 0)}
    arch = dataclasses.replace(arch, inputs=tuple(
        dataclasses.replace(i, high=high.get(i.name) or i.high) for i in arch.inputs))
    module = corpus._Named(corpus.build_model(arch), arch).eval()
    examples = tuple(corpus.example_inputs(arch))
    names = [i.name for i in arch.inputs]
    path = out / f"{name}.onnx"
    with torch.no_grad():
        if exporter == "legacy":
            axes = {i.name: {a: f"{i.name}_{a}" for a in i.dynamic} for i in arch.inputs}
            torch.onnx.export(module, examples, str(path), input_names=names,
                              output_names=list(arch.outputs), opset_version=OPSET,
                              dynamic_axes=axes, dynamo=False)
        else:
            shapes = (tuple({a: torch.export.Dim.DYNAMIC for a in i.dynamic}
                            for i in arch.inputs),)
            torch.onnx.export(module, examples, str(path), input_names=names,
                              output_names=list(arch.outputs), dynamic_shapes=shapes,
                              dynamo=True, external_data=False, verbose=False)
    model = _stripped(onnx.load(str(path)))
    model.producer_name = f"ovgather tools/make_onnx_ref.py ({exporter} export of {arch_name})"
    _inputs_meta(model, {i.name: {"shape": list(i.shape), "dtype": _dtype(i.dtype),
                                  "high": i.high} for i in arch.inputs})
    onnx.save(model, str(path))
    return path


def _stripped(model: onnx.ModelProto) -> onnx.ModelProto:
    """Drop what the exporters record for debugging (each node's stack trace, source
    module and doc string): two thirds of a small export's bytes, no part of the graph."""
    graphs = [model.graph]
    while graphs:
        graph = graphs.pop()
        for node in graph.node:
            node.doc_string = ""
            del node.metadata_props[:]
            for attr in node.attribute:
                graphs += [attr.g] if attr.HasField("g") else []
                graphs += list(attr.graphs)
        for info in (*graph.value_info, *graph.input, *graph.output):
            info.doc_string = ""
            del info.metadata_props[:]
    return model


def _dtype(short: str) -> str:
    return {"f32": "float32", "i32": "int32"}.get(short, "int64")


# --------------------------------------------------------------------------------------
# Hand-built graphs


def _const(name: str, array: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def _save(model: onnx.ModelProto, path: Path, inputs: dict, **kwargs) -> Path:
    model.producer_name = "ovgather tools/make_onnx_ref.py"
    _inputs_meta(model, inputs)
    onnx.checker.check_model(model)
    onnx.save(model, str(path), **kwargs)
    return path


def conv_net(out: Path) -> Path:
    """Conv -> BatchNormalization -> Relu -> MaxPool -> Conv -> GlobalAveragePool ->
    Flatten -> Gemm -> Softmax, nodes without names, a Constant -> Mul bias folded."""
    rng = np.random.default_rng(SEED)
    f32 = np.float32
    inits = [
        _const("w1", rng.standard_normal((8, 3, 3, 3)).astype(f32) * 0.3),
        _const("bias_half", rng.standard_normal(8).astype(f32)),
        _const("bn_scale", rng.uniform(0.5, 1.5, 8).astype(f32)),
        _const("bn_bias", rng.standard_normal(8).astype(f32)),
        _const("bn_mean", rng.standard_normal(8).astype(f32) * 0.1),
        _const("bn_var", rng.uniform(0.5, 2, 8).astype(f32)),
        _const("w2", rng.standard_normal((16, 8, 3, 3)).astype(f32) * 0.2),
        _const("fc_w", rng.standard_normal((10, 16)).astype(f32) * 0.3),
        _const("fc_b", rng.standard_normal(10).astype(f32)),
    ]
    nodes = [
        helper.make_node("Constant", [], ["two"], value=_const("v", np.array(2, f32))),
        helper.make_node("Mul", ["bias_half", "two"], ["b1"]),
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean",
                                                "bn_var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Sigmoid", ["c2"], ["s2"]),
        helper.make_node("Mul", ["c2", "s2"], ["silu"]),
        helper.make_node("GlobalAveragePool", ["silu"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], transB=1),
        helper.make_node("Softmax", ["fc"], ["probs"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "conv_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return _save(model, out / "conv_net.onnx",
                 {"x": {"shape": [1, 3, 16, 16], "dtype": "float32", "high": 0}})


def shapes_and_branches(out: Path) -> Path:
    """Shape -> Gather -> Concat -> Reshape (integer tensors compared too), Split and
    TopK (several outputs), an If whose branches read outer tensors, Where, Cast, and a
    ``com.microsoft`` Gelu that ONNX's shape inference has no schema for."""
    f32, i64 = np.float32, np.int64
    rng = np.random.default_rng(SEED + 1)
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["h", "gelu"], ["then_out"], name="then_add")], "then", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["h", "gelu"], ["else_out"], name="else_sub")], "else", [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, None)])
    inits = [
        _const("w", rng.standard_normal((8, 8)).astype(f32) * 0.4),
        _const("zero_i", np.array([0], i64)),
        _const("minus_one", np.array([-1], i64)),
        _const("split_sizes", np.array([4, 4], i64)),
        _const("k", np.array([4], i64)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="proj"),
        helper.make_node("Gelu", ["h"], ["gelu"], name="gelu", domain="com.microsoft"),
        helper.make_node("ReduceSum", ["x"], ["total"], name="total", keepdims=0),
        helper.make_node("Greater", ["total", "zero_f"], ["positive"], name="positive"),
        helper.make_node("Constant", [], ["zero_f"], name="zero_f",
                         value=_const("z", np.array(0, f32))),
        helper.make_node("If", ["positive"], ["branch"], name="branch",
                         then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Shape", ["branch"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero_i"], ["rows"], name="rows", axis=0),
        helper.make_node("Concat", ["rows", "minus_one"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["branch", "target"], ["flat"], name="flat"),
        helper.make_node("Split", ["flat", "split_sizes"], ["left", "right"], name="split",
                         axis=1),
        helper.make_node("TopK", ["right", "k"], ["top_v", "top_i"], name="topk", axis=1),
        helper.make_node("Cast", ["top_i"], ["top_f"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Greater", ["left", "top_v"], ["bigger"], name="bigger"),
        helper.make_node("Where", ["bigger", "left", "top_f"], ["picked"], name="picked"),
    ]
    # ONNX asks for nodes in topological order; zero_f is written after its reader on
    # purpose: the runner must sort
    graph = helper.make_graph(
        nodes, "shapes_and_branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info("picked", TensorProto.FLOAT, ["n", 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    path = out / "shapes_and_branches.onnx"
    model.producer_name = "ovgather tools/make_onnx_ref.py"
    _inputs_meta(model, {"x": {"shape": [3, 8], "dtype": "float32", "high": 0}})
    onnx.save(model, str(path))  # unsorted on purpose: the checker would refuse it
    return path


def initializer_inputs(out: Path) -> Path:
    """An IR version 3 graph (as old exporters wrote) listing its initializers as graph
    inputs too; OpenVINO's frontend keeps them constants. Weights in an external file."""
    f32 = np.float32
    rng = np.random.default_rng(SEED + 2)
    inits = [_const("w1", rng.standard_normal((6, 12)).astype(f32) * 0.4),
             _const("b1", rng.standard_normal(12).astype(f32)),
             _const("w2", rng.standard_normal((12, 4)).astype(f32) * 0.4)]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["mm1"], name="fc1"),
        helper.make_node("Add", ["mm1", "b1"], ["a1"], name="fc1_bias"),
        helper.make_node("Tanh", ["a1"], ["t1"], name="act"),
        helper.make_node("Transpose", ["w2"], ["w2t"], name="w2_t", perm=[1, 0]),
        helper.make_node("Transpose", ["w2t"], ["w2tt"], name="w2_tt", perm=[1, 0]),
        helper.make_node("MatMul", ["t1", "w2tt"], ["y"], name="fc2"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])]
    inputs += [helper.make_tensor_value_info(t.name, TensorProto.FLOAT, list(t.dims))
               for t in inits]
    graph = helper.make_graph(
        nodes, "initializer_inputs", inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 3
    return _save(model, out / "initializer_inputs.onnx",
                 {"x": {"shape": [2, 6], "dtype": "float32", "high": 0}},
                 save_as_external_data=True, all_tensors_to_one_file=True,
                 location="initializer_inputs.weights", size_threshold=0)


HAND_BUILT: dict[str, Callable[[Path], Path]] = {
    "conv_net": conv_net,
    "shapes_and_branches": shapes_and_branches,
    "initializer_inputs": initializer_inputs,
}


def generate(out: Path, only: Sequence[str] = ()) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in HAND_BUILT.items():
        if not only or name in only:
            written.append(build(out))
    for name in EXPORTS:
        if not only or name in only:
            written.append(export(name, out))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", nargs="*", default=())
    args = parser.parse_args(argv)
    for path in generate(args.out, args.only):
        print(f"{path.relative_to(args.out)}  {path.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
