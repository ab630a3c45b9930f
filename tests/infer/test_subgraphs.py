"""TensorIterator, Loop and If: bodies read as graphs, inferred, checked and written back.

Models are built with OpenVINO's Python API (and one through the ONNX frontend), saved
with ``openvino.save_model`` and read by both sides. Every output of every layer, at the
top level and inside bodies, must have the shape text and element type OpenVINO's
``read_model`` gives (the bodies through ``get_function()``/``get_then_body()``/
``get_else_body()``); a contradiction planted in a body is reported with its body path;
``write_ir`` of a read model gives the same outputs on the CPU.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o
import pytest

from ovgather.cli import main
from ovgather.infer import check
from ovgather.infer.walk import _walk
from ovgather.ir import read_ir, write_ir
from ovgather.runtime.core import cpu_config

SEEDS = range(6)
F32 = np.float32


def _param(shape, name, dtype=F32):
    return o.parameter(ov.PartialShape(shape), dtype, name=name)


def _model(outputs, params, name):
    return ov.Model([x if isinstance(x, ov.Output) else x.output(0) for x in outputs],
                    params, name)


# -- model builders --------------------------------------------------------------------------
def ti_model(rng: np.random.Generator) -> ov.Model:
    """A TensorIterator: a sliced input (either direction), an invariant input, a merged
    input with its back edge, a concatenated and a last-iteration output."""
    seq, width = int(rng.integers(2, 6)), int(rng.integers(1, 5))
    dyn = bool(rng.integers(0, 2))
    X = _param([-1 if dyn else 2, seq, width], "X")
    H = _param([-1 if dyn else 2, width], "H")
    W = _param([1, width], "W")
    bx, bh, bw = _param([2, 1, width], "bx"), _param([2, width], "bh"), _param([1, width], "bw")
    step = o.add(o.squeeze(bx, o.constant(np.int64([1]))), o.multiply(bh, bw), name="step")
    relu = o.relu(step, name="relu")
    out = o.unsqueeze(relu, o.constant(np.int64([1])), name="out")
    body = _model([relu, out], [bx, bh, bw], "ti_body")
    ti = o.tensor_iterator()
    ti.set_body(body)
    if rng.integers(0, 2):
        ti.set_sliced_input(bx, X.output(0), 0, 1, 1, -1, 1)
    else:  # backwards over the sequence: start -1, stride -1, end 0
        ti.set_sliced_input(bx, X.output(0), -1, -1, 1, 0, 1)
    ti.set_merged_input(bh, H.output(0), relu.output(0))
    ti.set_invariant_input(bw, W.output(0))
    last = ti.get_iter_value(relu.output(0), -1)
    concat = ti.get_concatenated_slices(out.output(0), 0, 1, 1, -1, 1)
    return _model([last, concat], [X, H, W], "ti")


def loop_model(rng: np.random.Generator) -> ov.Model:
    """A Loop: trip count constant or a Parameter, condition constant or computed in the
    body, a back edge that keeps or grows its shape, a concatenated output."""
    trips = int(rng.integers(1, 5))
    known_trips = bool(rng.integers(0, 2))
    computed_cond = bool(rng.integers(0, 2))
    grows = bool(rng.integers(0, 2))
    X = _param([2, 3], "X")
    params = [X]
    if known_trips:
        tc = o.constant(np.int64(trips))
    else:
        tc = _param([], "trips", np.int64)
        params.append(tc)
    cond = o.constant(True)
    bx, bi = _param([2, 3], "bx"), _param([], "bi", np.int64)
    one = o.constant(np.ones([2, 3], F32))
    if grows:  # the back edge carries [2, 3 * k]: the Parameter becomes [2,?]
        nxt = o.concat([bx, one], axis=1, name="grow")
    else:
        nxt = o.add(bx, one, name="add")
    if computed_cond:
        bcond = o.less(bi, o.constant(np.int64(trips)), name="cond")
    else:
        bcond = o.constant(True, name="cond")
    # the first column: one shape in every iteration, so the slices concatenate
    gathered = o.gather(nxt, o.constant(np.int64([0])), o.constant(np.int64(1)), name="gath")
    body = _model([nxt, bcond, gathered], [bx, bi], "loop_body")
    loop = o.loop(tc, cond)
    loop.set_function(body)
    loop.set_special_body_ports([1, 1])
    loop.set_merged_input(bx, X.output(0), nxt.output(0))
    last = loop.get_iter_value(nxt.output(0), -1)
    concat = loop.get_concatenated_slices(gathered.output(0), 0, 1, 1, -1, 1)
    return _model([last, concat], params, "loop")


def loop_sliced_model(rng: np.random.Generator) -> ov.Model:
    """A Loop over a sliced input with a scalar per iteration and an invariant input;
    the execution condition a constant (true or false)."""
    n = int(rng.integers(1, 5))
    start = bool(rng.integers(0, 3))
    X = _param([n, 4], "X")
    Y = _param([4], "Y")
    bx, by = _param([1, 4], "bx"), _param([4], "by")
    prod = o.multiply(bx, by, name="prod")
    s = o.reduce_sum(prod, o.constant(np.int64([0, 1])), False, name="dot")
    body = _model([s, o.constant(True), prod], [bx, by], "loop_body")
    loop = o.loop(o.constant(np.int64(n)), o.constant(start))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_sliced_input(bx, X.output(0), 0, 1, 1, -1, 0)
    loop.set_invariant_input(by, Y.output(0))
    concat = loop.get_concatenated_slices(s.output(0), 0, 1, 1, -1, 0)
    last = loop.get_iter_value(prod.output(0), -1)
    return _model([concat, last], [X, Y], "loop_sliced")


def if_model(rng: np.random.Generator) -> ov.Model:
    """An If whose condition is a constant (either branch) or a Parameter; the branches
    give different shapes."""
    kind = int(rng.integers(0, 3))
    a, b = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    X = _param([2, -1], "X")
    params = [X]
    if kind == 2:
        cond = _param([], "cond", bool)
        params.append(cond)
    else:
        cond = o.constant(bool(kind))
    tx, ex = _param([2, -1], "tx"), _param([2, -1], "ex")
    then = o.tile(tx, o.constant(np.int64([1, a])), name="then_tile")
    other = o.concat([o.gather(ex, o.constant(np.int64([0] * b)), o.constant(np.int64(1))),
                      o.constant(np.zeros([2, 2], F32))], 1, name="else_cat")
    sq = o.reduce_sum(other, o.constant(np.int64([0])), False, name="else_sum")
    total = o.reduce_sum(then, o.constant(np.int64([0, 1])), False, name="then_sum")
    then_model = _model([then, total], [tx], "then")
    else_model = _model([other, sq], [ex], "else")
    op = o.if_op(cond)
    op.set_then_body(then_model)
    op.set_else_body(else_model)
    op.set_input(X.output(0), tx, ex)
    out0 = op.set_output(then_model.get_results()[0], else_model.get_results()[0])
    out1 = op.set_output(then_model.get_results()[1], else_model.get_results()[1])
    return _model([out0, out1], params, "if")


def _nested(inner_builder):
    def nested_model(rng: np.random.Generator) -> ov.Model:
        """An If whose branches are each a whole TensorIterator or Loop model of the same
        draw (bodies inside bodies; the same output ranks, which the CPU plugin needs);
        the condition is constant (either branch) or a Parameter."""
        draw = int(rng.integers(1 << 30))
        inner = inner_builder(np.random.default_rng(draw))
        else_model = inner_builder(np.random.default_rng(draw))
        kind = int(rng.integers(0, 3))
        params = [_param(p.get_partial_shape(), "outer_" + p.get_friendly_name(),
                         p.get_element_type()) for p in inner.get_parameters()]
        cond = _param([], "cond", bool) if kind == 2 else o.constant(bool(kind))
        else_params = else_model.get_parameters()
        op = o.if_op(cond)
        op.set_then_body(inner)
        op.set_else_body(else_model)
        for p, then_p, else_p in zip(params, inner.get_parameters(), else_params, strict=True):
            op.set_input(p.output(0), then_p, else_p)
        outs = [op.set_output(a, b) for a, b in
                zip(inner.get_results(), else_model.get_results(), strict=True)]
        return _model(outs, params + ([cond] if kind == 2 else []), "nested")
    nested_model.__name__ = f"if_of_{inner_builder.__name__}"
    return nested_model


BUILDERS = [ti_model, loop_model, loop_sliced_model, if_model, _nested(ti_model),
            _nested(loop_model)]
CASES = [(b, s) for b in BUILDERS for s in SEEDS]


def _ids(case):
    return f"{case[0].__name__}-{case[1]}" if isinstance(case, tuple) else str(case)


def _saved(tmp_path: Path, model: ov.Model, name: str = "m") -> Path:
    path = tmp_path / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


# -- OpenVINO's view, by layer path ----------------------------------------------------------
def _ov_outputs(model: ov.Model, prefix: str = "") -> dict[str, list[tuple[str, str]]]:
    """``{path name: [(shape text, element type), ...]}`` of every op, into bodies."""
    out = {}
    for op in model.get_ordered_ops():
        name = prefix + op.get_friendly_name()
        out[name] = [(str(x.get_partial_shape()), x.get_element_type().get_type_name())
                     for x in op.outputs()]
        kind = op.get_type_name()
        if kind in ("TensorIterator", "Loop"):
            out.update(_ov_outputs(op.get_function(), f"{name}/body/"))
        elif kind == "If":
            out.update(_ov_outputs(op.get_then_body(), f"{name}/then_body/"))
            out.update(_ov_outputs(op.get_else_body(), f"{name}/else_body/"))
    return out


def _assert_same_as_openvino(path: Path) -> int:
    theirs = _ov_outputs(ov.Core().read_model(str(path)))
    G = read_ir(path)
    report = check(G)
    assert report.ok, [lr.to_dict() for lr in report.problems()]
    ours = {lr.name: lr for lr in report.layers}
    assert set(ours) == set(theirs)
    for name, lr in ours.items():
        if lr.type == "Result":
            continue
        assert lr.status == "ok", lr.to_dict()
        assert lr.inferred == [s for s, _ in theirs[name]], name
    # element types of the top-level layers, as the walk carries them
    types = {G.nodes[n]["name"]: [t.etype for t in ts] for n, _, ts, _ in _walk(G, None)}
    for name, etypes in types.items():
        if G.nodes[next(n for n in G if G.nodes[n]["name"] == name)]["type"] != "Result":
            assert etypes == [t for _, t in theirs[name]], name
    return len(ours)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_every_port_into_bodies_matches_openvino(tmp_path: Path, case) -> None:
    builder, seed = case
    path = _saved(tmp_path, builder(np.random.default_rng(seed)))
    assert _assert_same_as_openvino(path) > 6


def test_loop_back_edge_that_grows_makes_the_parameter_dynamic(tmp_path: Path) -> None:
    """The back edge carries [2,6] into a [2,3] Parameter: OpenVINO loosens it to [2,?]
    and runs the body again; so does ovgather."""
    seed = next(s for s in range(50) if _loop_flags(s)[2])
    path = _saved(tmp_path, loop_model(np.random.default_rng(seed)))
    report = check(read_ir(path))
    bx = next(lr for lr in report.layers if lr.name.endswith("/body/bx"))
    assert bx.inferred == ["[2,?]"]
    _assert_same_as_openvino(path)


def _loop_flags(seed: int) -> tuple[bool, bool, bool]:
    rng = np.random.default_rng(seed)
    rng.integers(1, 5)
    return bool(rng.integers(0, 2)), bool(rng.integers(0, 2)), bool(rng.integers(0, 2))


def test_if_with_unknown_condition_merges_the_branches(tmp_path: Path) -> None:
    seed = next(s for s in range(50) if _if_kind(s) == 2)
    path = _saved(tmp_path, if_model(np.random.default_rng(seed)))
    layer = next(lr for lr in check(read_ir(path)).layers if lr.type == "If")
    assert layer.inferred == ["[2,?]", "[?]"]  # a scalar and a [?] branch give [?]
    _assert_same_as_openvino(path)


def _if_kind(seed: int) -> int:
    return int(np.random.default_rng(seed).integers(0, 3))


# -- reading -------------------------------------------------------------------------------
def test_bodies_are_graphs_with_structured_port_maps(tmp_path: Path) -> None:
    path = _saved(tmp_path, loop_model(np.random.default_rng(1)))
    G = read_ir(path)
    node = next(a for _, a in G.nodes(data=True) if a["type"] == "Loop")
    body = node["bodies"]["body"]
    assert {a["type"] for _, a in body.nodes(data=True)} >= {"Parameter", "Result"}
    assert "extra_xml" not in node
    entries = node["port_maps"]["body"]["inputs"] + node["port_maps"]["body"]["outputs"]
    assert all(isinstance(e["external_port_id"], int) for e in entries)
    assert all(e["internal_layer_id"] in body for e in entries)
    purposes = {e.get("purpose") for e in entries}
    assert {"current_iteration", "execution_condition"} <= purposes
    (edge,) = node["back_edges"]["body"]
    assert body.nodes[edge["from-layer"]]["type"] == "Result"
    assert body.nodes[edge["to-layer"]]["type"] == "Parameter"


def test_body_layers_keep_their_real_xml_lines(tmp_path: Path) -> None:
    path = _saved(tmp_path, if_model(np.random.default_rng(3)))
    lines = path.read_text().splitlines()
    G = read_ir(path)
    node = next(a for _, a in G.nodes(data=True) if a["type"] == "If")
    for body in node["bodies"].values():
        for n, attrs in body.nodes(data=True):
            assert f'<layer id="{n}" name="{attrs["name"]}"' in lines[attrs["line"] - 1]


def test_an_error_inside_a_body_names_file_line_and_layer(tmp_path: Path) -> None:
    path = _saved(tmp_path, loop_model(np.random.default_rng(0)))
    text = path.read_text()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if 'name="bx"' in line and "<layer" in line)
    dim = next(i for i in range(at, len(lines)) if "<dim>" in lines[i])
    lines[dim] = lines[dim].replace("<dim>2</dim>", "<dim>x2</dim>")
    path.write_text("\n".join(lines))
    from ovgather.errors import IRStructureError
    with pytest.raises(IRStructureError) as err:
        read_ir(path)
    assert err.value.line == dim + 1 and err.value.layer_name == "bx"
    assert str(path) in str(err.value)


# -- checking ------------------------------------------------------------------------------
def _plant(path: Path, layer: str, old: str, new: str) -> None:
    """Change the first ``old`` after the tag of ``layer`` (a body layer's name)."""
    text = path.read_text()
    at = text.index(f'name="{layer}"')
    end = text.index(old, at)
    path.write_text(text[:end] + new + text[end + len(old):])


@pytest.mark.parametrize("builder,layer", [(loop_model, "gath"), (ti_model, "relu"),
                                           (if_model, "else_cat")])
def test_a_contradiction_in_a_body_is_a_mismatch_with_its_path(tmp_path: Path, capsys,
                                                               builder, layer) -> None:
    path = _saved(tmp_path, builder(np.random.default_rng(0)))
    # the output port of the layer: its last <dim>, a static one
    text = path.read_text()
    at = text.index(f'name="{layer}"')
    out = text.index("<output>", at)
    end = text.index("</output>", out)
    dims = [m.start() + out for m in re.finditer("<dim>", text[out:end])]
    close = text.index("</dim>", dims[-1])
    assert text[dims[-1] + 5:close] != "-1"
    path.write_text(text[:dims[-1]] + "<dim>97" + text[close:])
    assert main(["check", str(path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    (bad,) = doc["models"][0]["layers"]
    assert bad["status"] == "mismatch" and bad["name"].endswith(f"/{layer}")
    assert "/body/" in bad["name"] or "_body/" in bad["name"]
    assert bad["id"].count("/") == 2 and "97" in bad["declared"][0]
    assert bad["line"] == text[:at].count("\n") + 1
    assert main(["check", str(path)]) == 1
    assert f"/{layer}" in capsys.readouterr().out


@pytest.mark.parametrize("builder", BUILDERS)
def test_check_exits_0_and_lists_body_layers(tmp_path: Path, capsys, builder) -> None:
    path = _saved(tmp_path, builder(np.random.default_rng(2)))
    assert main(["check", str(path), "--json", "--all"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = [lr["name"] for lr in doc["models"][0]["layers"]]
    assert any("body/" in n for n in names)
    assert doc["models"][0]["summary"]["layers"] == len(names)


def test_a_custom_op_inside_a_body_is_unknown_as_openvino_cannot_read_it(tmp_path: Path
                                                                        ) -> None:
    path = _saved(tmp_path, loop_model(np.random.default_rng(0)))
    _plant(path, "gath", 'type="Gather" version="opset8"', 'type="MyGather" version="custom"')
    report = check(read_ir(path))
    (lr,) = [lr for lr in report.layers if lr.name.endswith("/gath")]
    assert lr.status == "unknown" and lr.type == "MyGather"
    assert not report.ok
    with pytest.raises(RuntimeError, match="MyGather"):
        ov.Core().read_model(str(path))


def test_an_invalid_body_makes_the_layer_invalid(tmp_path: Path) -> None:
    """A port map that names an input the layer does not have is a broken rule."""
    path = _saved(tmp_path, if_model(np.random.default_rng(0)))
    G = read_ir(path)
    node = next(a for _, a in G.nodes(data=True) if a["type"] == "If")
    node["port_maps"]["then_body"]["inputs"][0]["external_port_id"] = 9
    node["data"] = {}
    report = check(G)
    lr = next(lr for lr in report.layers if lr.type == "If")
    if lr.status == "ok":  # the constant condition took the other branch
        node["port_maps"]["else_body"]["inputs"][0]["external_port_id"] = 9
        lr = next(lr for lr in check(G).layers if lr.type == "If")
    assert lr.status == "invalid" and "input" in lr.message


# -- writing -------------------------------------------------------------------------------
def _run(path: Path, inputs: dict) -> list[np.ndarray]:
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(path)), "CPU", cpu_config())
    return [np.asarray(v) for v in compiled(inputs).values()]


def _inputs(model: ov.Model, rng: np.random.Generator) -> dict:
    out = {}
    for p in model.get_parameters():
        shape = [d.get_length() if d.is_static else 3 for d in p.get_partial_shape()]
        name = p.get_friendly_name()
        if p.get_element_type() == ov.Type.boolean:
            out[name] = np.array(bool(rng.integers(0, 2)))
        elif p.get_element_type() == ov.Type.i64:
            out[name] = np.array(rng.integers(1, 4), dtype=np.int64)
        else:
            out[name] = rng.standard_normal(shape).astype(F32)
    return out


@pytest.mark.parametrize("case", CASES[::2], ids=_ids)
def test_written_model_runs_the_same_on_cpu(tmp_path: Path, case) -> None:
    builder, seed = case
    model = builder(np.random.default_rng(seed))
    src = _saved(tmp_path, model)
    out = tmp_path / "out.xml"
    write_ir(read_ir(src), out)
    inputs = _inputs(model, np.random.default_rng(seed + 100))
    for a, b in zip(_run(src, inputs), _run(out, inputs), strict=True):
        np.testing.assert_array_equal(a, b)
    _assert_same_as_openvino(out)
    first, again = read_ir(src), read_ir(out)
    for (_, a), (_, b) in zip(first.nodes(data=True), again.nodes(data=True), strict=True):
        assert a.get("port_maps") == b.get("port_maps")
        assert a.get("back_edges") == b.get("back_edges")
        for name, body in (a.get("bodies") or {}).items():
            assert [x["data"] for _, x in body.nodes(data=True)] == \
                [x["data"] for _, x in b["bodies"][name].nodes(data=True)]


def test_a_body_edited_in_python_is_written_as_edited(tmp_path: Path) -> None:
    """Relu -> Sigmoid in the TensorIterator's body: OpenVINO runs the edited body."""
    model = ti_model(np.random.default_rng(0))
    src = _saved(tmp_path, model)
    G = read_ir(src)
    node = next(a for _, a in G.nodes(data=True) if a["type"] == "TensorIterator")
    body = node["bodies"]["body"]
    relu = next(n for n, a in body.nodes(data=True) if a["name"] == "relu")
    body.nodes[relu]["type"] = "Sigmoid"
    out = tmp_path / "edited.xml"
    write_ir(G, out)
    inputs = _inputs(model, np.random.default_rng(7))
    before, after = _run(src, inputs), _run(out, inputs)
    assert (after[0] > 0).all() and (after[0] < 1).all()
    assert not np.array_equal(before[0], after[0])
    ops = ov.Core().read_model(str(out)).get_ordered_ops()
    ti = next(op for op in ops if op.get_type_name() == "TensorIterator")
    assert "Sigmoid" in {op.get_type_name() for op in ti.get_function().get_ordered_ops()}


# -- through a frontend ----------------------------------------------------------------------
def _onnx_loop_if(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    # Loop body: (iter, cond, acc) -> (cond, acc + x, acc * 2 scan)
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["acc_in", "two"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    then = helper.make_graph([helper.make_node("Relu", ["final"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])])
    other = helper.make_graph([helper.make_node("Neg", ["final"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x0"], ["final", "scans"], body=body),
         helper.make_node("If", ["flag"], ["picked"], then_branch=then, else_branch=other)],
        "g",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("x0", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("scans", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("picked", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def test_onnx_loop_and_if_through_the_frontend(tmp_path: Path) -> None:
    src = tmp_path / "loop_if.onnx"
    _onnx_loop_if(src)
    model = ov.convert_model(str(src))
    path = _saved(tmp_path, model)
    G = read_ir(path)
    assert {a["type"] for _, a in G.nodes(data=True)} >= {"Loop", "If"}
    assert _assert_same_as_openvino(path) > 10
    out = tmp_path / "out.xml"
    write_ir(G, out)
    rng = np.random.default_rng(5)
    for flag in (True, False):
        inputs = {"M": np.array(3, np.int64), "flag": np.array(flag),
                  "x0": rng.standard_normal([2, 3]).astype(F32),
                  "x": rng.standard_normal([2, 3]).astype(F32)}
        for a, b in zip(_run(path, inputs), _run(out, inputs), strict=True):
            np.testing.assert_array_equal(a, b)
