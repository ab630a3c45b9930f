"""The editing functions inside a TensorIterator/Loop/If body: a body is a graph of the same
schema, edited with the same functions; OpenVINO runs the written model and computes what
the edit says. A body layer's path given to the outer graph is refused, naming the layer
that holds it, and an edit that breaks the body's port map is refused by ``write_ir``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import pytest

import ovgather as og
from ovgather.errors import OutputError, RewriteError

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "ir_samples" / "loop_gather.xml"
IF = ROOT / "ir_samples" / "if_gather.xml"


def _double_after(body, layer: str) -> str:
    """A Multiply by 2 after output 0 of ``layer`` of ``body``; its id."""
    port = body.nodes[layer]["outputs"][0]["id"]
    two = og.add_const(body, np.array(2, np.float32), name="two")
    mul = og.add_layer(body, "Multiply", "opset1", inputs=[(layer, port), (two, 0)],
                       outputs=[{"precision": "FP32"}])
    og.insert_after(body, layer, port, mul)
    return mul


def _run(path: Path, feed: list[np.ndarray]) -> dict[str, np.ndarray]:
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feed)
    return {o.get_any_name(): result[o] for o in compiled.outputs}


def _body_op(path: Path, owner: str, name: str):
    """The op ``name`` of the body of layer ``owner``, as OpenVINO reads the model."""
    model = ov.Core().read_model(str(path))
    holder = next(op for op in model.get_ops() if op.get_friendly_name() == owner)
    return next(op for op in holder.get_function().get_ops()
                if op.get_friendly_name() == name)


def test_a_multiply_in_a_loop_body_doubles_each_row_the_body_picks(tmp_path):
    G = og.read_ir(LOOP)
    body, layer = og.graph.locate(G, "4/body/6")  # pick_row_g8: the row of this step
    mul = _double_after(body, layer)
    assert og.reinfer(G).ok
    out = tmp_path / "doubled.xml"
    og.write_ir(G, out)
    declared = body.nodes[mul]["outputs"][0]["dims"]
    assert str(list(declared)).replace(" ", "") == str(
        _body_op(out, "row_loop", body.nodes[mul]["name"]).get_output_partial_shape(0))
    rng = np.random.default_rng(0)
    feed = [rng.standard_normal((3, 4)).astype(np.float32),
            rng.standard_normal((1, 4)).astype(np.float32)]
    before, after = _run(LOOP, feed), _run(out, feed)
    np.testing.assert_allclose(after["rows_seen"], 2 * before["rows_seen"], rtol=1e-6)
    np.testing.assert_allclose(after["summed"] - feed[1], 2 * (before["summed"] - feed[1]),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("flag", [True, False])
def test_an_if_branch_edit_changes_that_branch_only(flag, tmp_path):
    G = og.read_ir(IF)
    body, layer = og.graph.locate(G, "2/then_body/2")  # rows_nd8, what then_out returns
    _double_after(body, layer)
    assert og.reinfer(G).ok
    out = tmp_path / "then_doubled.xml"
    og.write_ir(G, out)
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    feed = [x, np.array(flag)]
    before, after = _run(IF, feed)["picked"], _run(out, feed)["picked"]
    np.testing.assert_allclose(after, 2 * before if flag else before, rtol=1e-6)


@pytest.mark.parametrize("edit", [
    lambda G: og.insert_after(G, "4/body/6", 3, "4/body/9"),
    lambda G: og.bypass(G, "4/body/9"),
    lambda G: og.remove_layer(G, "4/body/12"),
    lambda G: og.replace_uses(G, ("4/body/6", 3), ("4/body/9", 2)),
    lambda G: og.set_const(G, "4/body/3", np.array(1)),
    lambda G: og.add_layer(G, "Relu", "opset1", inputs=[("4/body/6", 3)]),
], ids=["insert_after", "bypass", "remove_layer", "replace_uses", "set_const", "add_layer"])
def test_a_body_path_given_to_the_outer_graph_is_refused_naming_its_loop(edit):
    G = og.read_ir(LOOP)
    body = G.nodes["4"]["bodies"]["body"]
    before = (sorted(G.edges(keys=True)), sorted(body.edges(keys=True)), len(G), len(body))
    with pytest.raises(RewriteError, match=r"inside a Loop body.*og\.graph\.locate") as err:
        edit(G)
    assert err.value.layer_name == "row_loop" and err.value.layer_id == "4"
    assert before == (sorted(G.edges(keys=True)), sorted(body.edges(keys=True)), len(G),
                      len(body))  # the error comes before any change


def test_removing_a_result_the_port_map_names_is_refused_when_written(tmp_path):
    """OpenVINO cannot read a Loop whose port map names a body layer that is gone."""
    G = og.read_ir(LOOP)
    body, result = og.graph.locate(G, "4/body/12")  # row_out, the Loop's output 5
    og.remove_layer(body, result)
    with pytest.raises(OutputError, match="row_loop.*port map <output>.*'12' is no layer"):
        og.write_ir(G, tmp_path / "broken.xml")
    assert not (tmp_path / "broken.xml").exists()
