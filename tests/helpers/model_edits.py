"""Variants of a real IR made with the editing API, for the ``compare`` tests: a plain
read/write round trip, and the same model with one output doubled (a Multiply by 2 inserted
after the layer feeding that output)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov

import ovgather as og
from ovgather.graph import consumers, producer

#: ir_samples and ir_corpus models compare runs: dynamic dims, Loop and If bodies, two
#: transformers (the PyTorch and ONNX exports of four are in tests/cli/test_compare_proof.py)
MODELS = ["ir_samples/mixed_ops.xml", "ir_samples/dynamic_gathers.xml",
          "ir_samples/loop_gather.xml", "ir_samples/if_gather.xml",
          "ir_corpus/gpt2/onnx_static.xml", "ir_corpus/bert/onnx_dynamic.xml"]


def round_trip(path: Path, out: Path) -> Path:
    """``path`` read by ``read_ir`` and written again by ``write_ir``."""
    og.write_ir(og.read_ir(path), out)
    return out


def float_outputs(path: Path) -> list[tuple[int, set[str]]]:
    """The position and tensor names of each floating-point output, as OpenVINO reads
    the model."""
    model = ov.Core().read_model(str(path))
    return [(k, set(o.get_names())) for k, o in enumerate(model.outputs)
            if o.get_element_type().is_real()]


def doubled(path: Path, out: Path, which: int = 0) -> tuple[Path, set[str]]:
    """``path`` with its ``which``-th floating-point output multiplied by 2 (only where
    a Result reads it: the layers computing other outputs from it read it unchanged); the
    written IR and the names OpenVINO gives that output in the original."""
    k, names = float_outputs(path)[which]
    G = og.read_ir(path)
    model = ov.Core().read_model(str(path))
    result = model.get_results()[k]
    source = result.input_value(0)
    layer = og.find_layers(G, type=source.get_node().get_type_name())
    src = next(n for n in layer if G.nodes[n]["name"] == source.get_node().get_friendly_name())
    port = G.nodes[src]["outputs"][source.get_index()]
    dtype = source.get_element_type().to_dtype()
    two = og.add_const(G, np.array(2, dtype=dtype), name="two")
    mul = og.add_layer(G, "Multiply", "opset1", inputs=[(src, port["id"]), (two, 0)],
                       outputs=[{"precision": port["precision"], "dims": port["dims"]}])
    readers = {c for c, _ in consumers(G, src, port["id"]) if c != mul}
    og.insert_after(G, src, port["id"], mul,  # the other readers keep the original tensor
                    keep=[c for c in readers if G.nodes[c]["type"] != "Result"])
    assert producer(G, *_result_input(G, names)) == (mul, G.nodes[mul]["outputs"][0]["id"])
    og.write_ir(G, out)
    return out, names


def _result_input(G, names: set[str]) -> tuple[str, int]:
    """The Result reading the port that now carries ``names``, and its input port."""
    for n, t in G.nodes(data="type"):
        if t == "Result":
            src = producer(G, n, G.nodes[n]["inputs"][0]["id"])
            if src and set(og.graph.output_port(G, *src)["names"]) & names:
                return n, G.nodes[n]["inputs"][0]["id"]
    raise AssertionError(f"no Result reads {names}")


def onnx_with_weight_changed(source: Path, initializer: str, index: tuple[int, ...],
                             delta: float, out: Path) -> Path:
    """A copy of the ONNX model ``source`` at ``out`` whose initializer ``initializer`` has
    ``delta`` added at ``index``: the fault the ``--ref onnxruntime`` tests locate."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source))
    weight = next(t for t in model.graph.initializer if t.name == initializer)
    values = numpy_helper.to_array(weight).copy()
    values[index] += delta
    weight.CopyFrom(numpy_helper.from_array(values, initializer))
    onnx.save(model, str(out))
    return out
