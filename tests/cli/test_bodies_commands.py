"""Every command on models whose TensorIterator, Loop and If layers hold gathers in their
bodies: infer_shapes, validate, explain, extract, show, convert and reshape."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o
import pytest
from graph_view import ov_ops

from ovgather.cli import main
from ovgather.errors import RewriteError
from ovgather.graph.bodies import locate
from ovgather.infer import check, infer_shapes
from ovgather.ir import read_ir
from ovgather.passes.convert_gather_nd import convert_gather_nd
from ovgather.passes.reshape import reshape
from ovgather.runtime.core import cpu_config
from ovgather.validate import validate, validate_whole_model
from ovgather.views.explain import explain_layer
from ovgather.views.show import to_dot

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "ir_samples" / "loop_gather.xml"
IF = ROOT / "ir_samples" / "if_gather.xml"
CORE = ov.Core()


def test_infer_shapes_keys_body_layers_by_path_after_their_layer():
    G = read_ir(LOOP)
    shapes = infer_shapes(G)
    keys = list(shapes)
    assert keys.index("4") < keys.index("4/body/6") < keys.index("5")
    assert [str(s) for s in shapes["4/body/6"]] == ["[1,4]"]
    assert {k for k in keys if "/" not in k} == set(G)
    report = {lr.id: lr.inferred for lr in check(G).layers}
    assert {k: [str(s) for s in v] for k, v in shapes.items()} == report
    H, node = locate(G, "4/body/6")
    assert H.nodes[node]["name"] == "pick_row_g8"


@pytest.mark.parametrize("run", [validate, validate_whole_model])
def test_validate_skips_body_gathers_and_says_why(run):
    report = run(read_ir(IF))
    rows = {lv.name: lv for lv in report.layers}
    assert set(rows) == {"pick/then_body/rows_nd8", "pick/else_body/cols_g8"}
    assert all(lv.status == "skipped" and lv.message.startswith("inside an If branch")
               for lv in rows.values())
    assert rows["pick/else_body/cols_g8"].inferred_partial_shape == "[2,2]"
    assert report.nothing_proved and not report.ok  # none could run: nothing proved


def test_validate_layer_option_takes_a_body_path(capsys):
    code = main(["validate", str(LOOP), "--layer", "row_loop/body/pick_row_g8", "--json"])
    model = json.loads(capsys.readouterr().out)["models"][0]
    assert code == 1 and model["summary"]["skipped"] == 1 and model["nothing_proved"]
    assert model["layers"][0]["id"] == "4/body/6"
    assert "inside a Loop body" in model["layers"][0]["message"]


@pytest.mark.parametrize("path", [LOOP, IF], ids=["loop", "if"])
def test_explain_every_body_gather_gives_openvinos_shape(path):
    ops = dict(ov_ops(CORE.read_model(str(path))))
    G = read_ir(path)
    gathers = [lr for lr in check(G).layers if "/" in lr.id and lr.type.startswith("Gather")]
    assert gathers
    for lr in gathers:
        for key in (lr.name, lr.id):
            e = explain_layer(G, key)
            mine = f"{e.layer['type']}-{e.layer['op_version']}"
            assert e.failed_rule is None and e.layer["id"] == lr.id
            assert e.outputs[mine] == str(ops[lr.name].get_output_partial_shape(0))


def test_explain_a_loop_says_how_each_port_feeds_its_body(capsys):
    code = main(["explain", str(LOOP), "--layer", "row_loop"])
    text = capsys.readouterr().out
    assert code == 0
    assert "input port 3 feeds body/acc: [1,4], merged" in text
    assert "output port 5 comes from body/row_out: the iterations' values concatenated" in text
    assert "output 1             [?,4]" in text


@pytest.mark.parametrize("command", [["extract", "-o", "OUT"], ["show", "-o", "OUT"]])
def test_extract_and_show_refuse_a_body_path_with_one_error_line(command, tmp_path, capsys):
    argv = [command[0], str(LOOP), "--layer", "row_loop/body/pick_row_g8",
            *[str(tmp_path / "x.xml") if a == "OUT" else a for a in command[1:]]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inside a Loop body" in err[0] and "'row_loop' (id 4)" in err[0]
    assert not list(tmp_path.iterdir())


def test_extract_next_to_a_loop_runs_on_cpu(tmp_path):
    out = tmp_path / "cut.xml"
    assert main(["extract", str(LOOP), "--layer", "row_loop", "--depth", "1", "-o",
                 str(out)]) == 0
    assert check(read_ir(out)).ok
    feeds = {"table": np.arange(12, dtype=np.float32).reshape(3, 4),
             "acc0": np.ones((1, 4), np.float32)}
    full = CORE.compile_model(CORE.read_model(str(LOOP)), "CPU", cpu_config())(feeds)
    cut = CORE.compile_model(CORE.read_model(str(out)), "CPU", cpu_config())(feeds)
    assert [np.array_equal(a, b) for a, b in zip(full.to_tuple(), cut.to_tuple(),
                                                   strict=True)] == [True, True]


def test_show_draws_a_loop_as_one_node_with_its_body_size():
    text = to_dot(read_ir(LOOP))
    assert "row_loop\\nLoop-5  id 4\\nbody: 13 layers" in text
    assert "pick_row_g8" not in text


def test_convert_rewrites_a_gather_nd_in_a_branch_and_runs_the_same(tmp_path):
    out = tmp_path / "v5.xml"
    assert main(["convert", str(IF), "--to", "opset5", "-o", str(out)]) == 0
    G = read_ir(out)
    H, node = locate(G, "2/then_body/2")
    assert (H.nodes[node]["type"], H.nodes[node]["version"]) == ("GatherND", "opset5")
    x = np.random.default_rng(7).standard_normal((2, 3)).astype(np.float32)
    before = CORE.compile_model(CORE.read_model(str(IF)), "CPU", cpu_config())
    after = CORE.compile_model(CORE.read_model(str(out)), "CPU", cpu_config())
    for flag in (True, False):
        feeds = {"x": x, "flag": np.array(flag)}
        assert np.array_equal(before(feeds)[0], after(feeds)[0])
    assert convert_gather_nd(read_ir(out), to="opset5") == []


def _if_with_batch_dims(tmp_path: Path) -> Path:
    x = o.parameter([2, 3, 4], np.float32, name="x")
    flag = o.parameter([], ov.Type.boolean, name="flag")
    tx, ex = o.parameter([2, 3, 4], np.float32), o.parameter([2, 3, 4], np.float32)
    ids = o.constant(np.zeros((2, 3, 1), np.int64))
    then = o.gather_nd(tx, ids, 2)
    then.set_friendly_name("gnd_b2")
    then_body = ov.Model([o.result(then)], [tx], "then")
    else_body = ov.Model([o.result(o.reduce_sum(ex, o.constant(np.int64(2)), False))], [ex],
                         "else")
    op = o.if_op(flag)
    op.set_friendly_name("pick")
    op.set_then_body(then_body)
    op.set_else_body(else_body)
    op.set_input(x.output(0), tx, ex)
    out = op.set_output(then_body.get_results()[0], else_body.get_results()[0])
    path = tmp_path / "b2.xml"
    ov.save_model(ov.Model([out], [x, flag], "b2"), str(path), compress_to_fp16=False)
    return path


def test_convert_refuses_a_gather_nd_with_batch_dims_in_a_body(tmp_path, capsys):
    path = _if_with_batch_dims(tmp_path)
    G = read_ir(path)
    with pytest.raises(RewriteError, match="batch_dims is at most 1") as err:
        convert_gather_nd(G, to="opset5")
    assert err.value.layer_name == "pick/then_body/gnd_b2" and err.value.line
    assert main(["convert", str(path), "--to", "opset5", "-o", str(tmp_path / "o.xml")]) == 1
    assert "inside an If branch" in capsys.readouterr().err
    assert not (tmp_path / "o.xml").exists()


def test_reshape_writes_the_body_parameters_a_loop_feeds(tmp_path):
    G = read_ir(LOOP)
    reshape(G, {"table": "[5,4]"})
    H, node = locate(G, "4/body/0")
    assert (H.nodes[node]["data"]["shape"], H.nodes[node]["outputs"][0]["dims"]) == \
        ("5,4", (5, 4))
    model = CORE.read_model(str(LOOP))
    model.reshape({"table": ov.PartialShape([5, 4])})
    body = next(op for op in model.get_ordered_ops() if op.get_type_name() == "Loop")
    assert str(body.get_function().get_parameters()[0].get_partial_shape()) == "[5,4]"
    assert check(G).ok


@pytest.mark.parametrize("path,shape,body_layer", [
    (LOOP, "table=[?,4]", "4/body/"), (IF, "x=[?,3]", "2/then_body/")], ids=["loop", "if"])
def test_check_shape_lists_the_body_layers_it_changes(path, shape, body_layer, capsys):
    assert main(["check", str(path), "--shape", shape, "--json"]) == 0
    effect = json.loads(capsys.readouterr().out)["models"][0]["reshape"]
    assert any(row["id"].startswith(body_layer) for row in effect["changed"]), effect
    assert main(["check", str(path), "--shape", shape]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "--shape changes" in out
