"""``og.compare``: two models on the CPU plugin, fed alike, outputs compared.

The oracles: OpenVINO's own reading of each model (its inputs and output names), and
arithmetic: an output multiplied by 2 differs from the original by exactly |y| absolute
and 1/2 relative to the doubled one, whatever the inputs were.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from model_edits import MODELS, doubled, round_trip
from onnx import TensorProto, helper

import ovgather as og
from ovgather.comparison.outputs import differences
from ovgather.errors import CompareError, IRError, OvgatherError
from ovgather.graph import output_port, producer

ROOT = Path(__file__).resolve().parents[2]


def _ov_names(path: Path) -> tuple[list[set[str]], list[set[str]]]:
    """Each input's names (friendly and tensor) and each output's tensor names, as
    OpenVINO reads the model."""
    model = ov.Core().read_model(str(path))
    inputs = [{p.get_friendly_name(), *p.output(0).get_names()} for p in model.get_parameters()]
    return inputs, [set(o.get_names()) for o in model.outputs]


def _concrete(shape: str, partial: ov.PartialShape) -> bool:
    dims = [int(d) for d in shape.strip("[]").split(",") if d]
    return partial.rank.is_dynamic or (
        len(dims) == partial.rank.get_length()
        and ov.PartialShape(dims).refines(partial))


@pytest.mark.parametrize("path", MODELS)
def test_a_model_and_its_read_write_round_trip_compare_equal(path, tmp_path):
    a = ROOT / path
    report = og.compare(a, round_trip(a, tmp_path / "rt.xml"), seed=3)
    inputs, outputs = _ov_names(a)
    assert report.ok and report.summary["ok"] == len(outputs)
    assert [o.status for o in report.outputs] == ["ok"] * len(outputs)
    assert all(o.max_abs == 0 and o.matched_by == "name" for o in report.outputs)
    assert all(o.name in names for o, names in zip(report.outputs, outputs, strict=True))
    params = ov.Core().read_model(str(a)).get_parameters()
    for fed, names, param in zip(report.inputs, inputs, params, strict=True):
        assert fed["name"] in names and fed["name_b"] in names
        assert _concrete(fed["shape"], param.get_partial_shape())


@pytest.mark.parametrize("path", MODELS)
def test_a_doubled_output_differs_by_exactly_half_of_the_doubled_and_only_it(path, tmp_path):
    a = ROOT / path
    b, names = doubled(a, tmp_path / "doubled.xml")
    report = og.compare(a, b)
    assert not report.ok
    bad = [o for o in report.outputs if o.status != "ok"]
    assert len(bad) == 1 and bad[0].name in names and bad[0].status == "differs"
    assert bad[0].max_rel == pytest.approx(0.5) and bad[0].max_abs > 0
    assert report.summary["differs"] == 1


def test_tolerances_decide_as_numpy_isclose(tmp_path):
    """|y - 2y| <= atol + rtol * |2y| holds for every y when rtol >= 1/2, for no y != 0 when
    rtol < 1/2 and atol is 0."""
    a = ROOT / "ir_samples/mixed_ops.xml"
    b, _ = doubled(a, tmp_path / "doubled.xml")
    assert og.compare(a, b, rtol=0.5, atol=0).ok
    assert not og.compare(a, b, rtol=0.49, atol=0).ok
    largest = og.compare(a, b, rtol=0, atol=0).outputs[0].max_abs
    assert og.compare(a, b, rtol=0, atol=largest).ok
    assert not og.compare(a, b, rtol=0, atol=largest * 0.99).ok


MIXED = ROOT / "ir_samples/mixed_ops.xml"


def _edited(tmp_path: Path, rename: tuple[str, str] | None = None, drop: str | None = None
            ) -> Path:
    """mixed_ops (outputs ranked_ge, first_rows_nd5) with an output renamed and one dropped
    (its Result removed, and what only it needed)."""
    G = og.read_ir(MIXED)
    if rename:
        og.rename_output(G, *rename)
    if drop:
        og.remove_layer(G, next(n for n in og.find_layers(G, type="Result")
                                if drop in output_port(G, *producer(G, n, 0))["names"]))
        og.cleanup(G)
    og.write_ir(G, tmp_path / "b.xml")
    return tmp_path / "b.xml"


def _pairs(report) -> list[tuple]:
    return [(o.name, o.name_b, o.status, o.matched_by) for o in report.outputs]


def test_outputs_without_a_common_name_pair_by_position(tmp_path):
    report = og.compare(MIXED, _edited(tmp_path, rename=("ranked_ge", "renamed")))
    assert report.ok and _pairs(report) == [
        ("ranked_ge", "renamed", "ok", "position"),
        ("first_rows_nd5", "first_rows_nd5", "ok", "name")]


def test_a_similar_name_pairs_before_the_position_as_polygraphy_does(tmp_path):
    report = og.compare(MIXED, _edited(tmp_path, rename=("ranked_ge", "RANKED_GE:0")))
    assert report.ok and _pairs(report) == [
        ("ranked_ge", "RANKED_GE:0", "ok", "similar name"),
        ("first_rows_nd5", "first_rows_nd5", "ok", "name")]


def test_the_position_pairs_even_when_the_counts_differ(tmp_path):
    """polygraphy falls back on the output at the same position whenever that output has no
    partner of its own: here B's only output, renamed, is A's first."""
    b = _edited(tmp_path, rename=("ranked_ge", "xyz"), drop="first_rows_nd5")
    assert _pairs(og.compare(MIXED, b)) == [
        ("ranked_ge", "xyz", "ok", "position"), ("first_rows_nd5", None, "only in A", None)]


def test_an_output_missing_in_one_model_is_reported_and_fails(tmp_path):
    b = _edited(tmp_path, drop="ranked_ge")
    assert len(ov.Core().read_model(str(b)).outputs) == 1
    there, back = og.compare(MIXED, b), og.compare(b, MIXED)
    assert [(o.name, o.status) for o in there.outputs if o.status != "ok"] == [
        ("ranked_ge", "only in A")]
    assert [(o.name, o.status) for o in back.outputs if o.status != "ok"] == [
        ("ranked_ge", "only in B")]
    assert not there.ok and not back.ok


def test_inputs_that_do_not_pair_by_name_are_an_error_naming_them(tmp_path):
    a = ROOT / "ir_samples/mixed_ops.xml"
    G = og.read_ir(a)
    og.rename_input(G, "ids", "tokens")
    og.write_ir(G, tmp_path / "b.xml")
    with pytest.raises(CompareError, match="'ids'.*'tokens'"):
        og.compare(a, tmp_path / "b.xml")
    with pytest.raises(CompareError, match="'tokens'"):
        og.compare(tmp_path / "b.xml", a)
    with pytest.raises(CompareError, match="inputs"):
        og.compare(a, ROOT / "ir_samples/gather_versions.xml")


def test_a_missing_file_is_an_ir_error():
    with pytest.raises(IRError, match="does not exist"):
        og.compare(ROOT / "ir_samples/mixed_ops.xml", ROOT / "nope.xml")


def test_shapes_reshape_both_models_and_the_rest_gets_validates_sizes(tmp_path):
    a = ROOT / "ir_samples/mixed_ops.xml"
    params = ov.Core().read_model(str(a)).get_parameters()
    partial = {p.get_friendly_name(): p.get_partial_shape() for p in params}
    report = og.compare(a, round_trip(a, tmp_path / "rt.xml"), shapes={"x": "[3,3,8]"})
    assert report.ok
    fed = {i["name"]: i["shape"] for i in report.inputs}
    assert fed["x"] == "[3,3,8]"
    assert all(_concrete(fed[n], partial[n]) for n in partial)
    with pytest.raises(CompareError, match="'nope'"):
        og.compare(a, a, shapes={"nope": "[1]"})
    with pytest.raises(OvgatherError, match="reshape the model to x=\\[1,2\\]"):
        og.compare(a, a, shapes={"x": "[1,2]"})


def _onnx(path: Path, factor: float) -> Path:
    """data -> GatherND(batch_dims=1) -> times ``factor``, with a dynamic batch."""
    nodes = [helper.make_node("GatherND", ["data", "indices"], ["g"], batch_dims=1),
             helper.make_node("Mul", ["g", "k"], ["out"])]
    graph = helper.make_graph(
        nodes, "m",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 3, 5]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, ["N", 2, 1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [helper.make_tensor("k", TensorProto.FLOAT, [], [factor])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_onnx_models_compare_with_their_ir_and_with_each_other(tmp_path):
    one = _onnx(tmp_path / "one.onnx", 1.0)
    ir = tmp_path / "one.xml"
    ov.save_model(ov.convert_model(str(one)), str(ir))
    assert og.compare(one, ir).ok
    two = og.compare(one, _onnx(tmp_path / "two.onnx", 2.0))
    assert [(o.name, o.status) for o in two.outputs] == [("out", "differs")]
    assert two.outputs[0].max_rel == pytest.approx(0.5)


def test_graphs_compare_as_their_files(tmp_path):
    a = ROOT / "ir_samples/if_gather.xml"
    b, names = doubled(a, tmp_path / "doubled.xml")
    report = og.compare(og.read_ir(a), og.read_ir(b))
    assert [o.status for o in report.outputs] == ["differs"]
    assert report.outputs[0].name in names


def test_differences_counts_what_isclose_rejects():
    x = np.array([1.0, np.nan, np.inf, 0.0, 5.0])
    y = np.array([1.0, np.nan, np.inf, 1e-6, 4.0])
    max_abs, max_rel, bad = differences(x, y, 1e-5, 1e-5)
    assert bad == int((~np.isclose(x, y, rtol=1e-5, atol=1e-5, equal_nan=True)).sum()) == 1
    assert (max_abs, max_rel) == (1.0, 1.0)  # 5 vs 4; 0 vs 1e-6, 1e-6 relative to 1e-6
