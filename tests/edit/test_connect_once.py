"""``connect`` into an input port that already has an edge is an error (an input port
takes one edge: the graph would be read with one of the two, silently); once the old
edge is removed the new one is what OpenVINO reads."""

from __future__ import annotations

import networkx as nx
import numpy as np
import openvino as ov
import pytest

from ovgather.edit import add_layer, connect
from ovgather.errors import OvgatherError, RewriteError
from ovgather.ir import write_ir


def _two_inputs():
    """x, y -> Relu(x) -> Result; y is read by nothing."""
    G = nx.MultiDiGraph(name="m", ir_version=11)
    ins = [add_layer(G, "Parameter", "opset1", data={"shape": "2,3", "element_type": "f32"},
                     outputs=[{"precision": "FP32", "dims": (2, 3), "names": [name]}],
                     name=name) for name in ("x", "y")]
    relu = add_layer(G, "Relu", "opset1", inputs=[(ins[0], 0)],
                     outputs=[{"precision": "FP32", "dims": (2, 3), "names": ["r"]}],
                     name="r")
    add_layer(G, "Result", "opset1", inputs=[(relu, 1)], name="out")
    return G, ins, relu


def test_connect_into_a_fed_input_is_an_error_naming_the_edge_there() -> None:
    G, (x, y), relu = _two_inputs()
    edges = sorted(G.edges(keys=True))
    with pytest.raises(RewriteError, match="fed already") as err:
        connect(G, (y, 0), (relu, 0))
    assert isinstance(err.value, OvgatherError)
    assert f"layer {x!r}" in str(err.value)
    assert sorted(G.edges(keys=True)) == edges  # nothing added


def test_connect_after_removing_the_edge_is_read_by_openvino(tmp_path) -> None:
    G, (x, y), relu = _two_inputs()
    G.remove_edge(x, relu, key=(0, 0))
    connect(G, (y, 0), (relu, 0))
    write_ir(G, tmp_path / "m.xml")
    model = ov.Core().compile_model(ov.Core().read_model(tmp_path / "m.xml"), "CPU",
                                    {"INFERENCE_PRECISION_HINT": "f32"})
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((2, 3)).astype(np.float32),
             "y": rng.standard_normal((2, 3)).astype(np.float32)}
    got = model(feeds)[0]
    np.testing.assert_array_equal(got, np.maximum(feeds["y"], 0))
