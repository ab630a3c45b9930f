"""Body runs in the shape walk (``infer/bodies.py``): a body run again on the inputs it
already had is not walked again, so time stays linear in the file however deep Loops
nest."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import pytest
from graph_view import ov_ops
from ov_oracle import random_dim, rng_for

from ovgather.errors import IRStructureError
from ovgather.infer import check
from ovgather.infer.bodies import Body
from ovgather.ir import parse_ir, read_ir


def _port(pid: int, precision: str, dims: list[int]) -> str:
    inner = "".join(f"<dim>{d}</dim>" for d in dims)
    return f'<port id="{pid}" precision="{precision}">{inner}</port>'


def _parameter(i: int, name: str, etype: str, precision: str, dims: list[int]) -> str:
    return (f'<layer id="{i}" name="{name}" type="Parameter" version="opset1">'
            f'<data shape="{",".join(map(str, dims))}" element_type="{etype}"/>'
            f'<output>{_port(0, precision, dims)}</output></layer>')


def _result(i: int, name: str, precision: str, dims: list[int]) -> str:
    return (f'<layer id="{i}" name="{name}" type="Result" version="opset1">'
            f'<input>{_port(0, precision, dims)}</input></layer>')


def _edge(a: int, ap: int, b: int, bp: int) -> str:
    return f'<edge from-layer="{a}" from-port="{ap}" to-layer="{b}" to-port="{bp}"/>'


def _loop(i: int, level: int) -> str:
    """A Loop whose body doubles its carried value (a back edge that does not fit its
    [1] Parameter: the body runs twice) and, below level 0, holds the next such Loop."""
    layers = (_parameter(0, f"carried{level}", "f32", "FP32", [1])
              + _parameter(1, f"invariant{level}", "f32", "FP32", [1])
              + _parameter(2, f"trip{level}", "i64", "I64", [])
              + _parameter(3, f"cond{level}", "boolean", "BOOL", [])
              + f'<layer id="4" name="double{level}" type="Concat" version="opset1">'
              f'<data axis="0"/><input>{_port(0, "FP32", [1])}{_port(1, "FP32", [1])}'
              f'</input><output>{_port(2, "FP32", [2])}</output></layer>'
              + _result(5, f"next{level}", "FP32", [2])
              + _result(6, f"go_on{level}", "BOOL", []))
    edges = _edge(0, 0, 4, 0) + _edge(0, 0, 4, 1) + _edge(4, 2, 5, 0) + _edge(3, 0, 6, 0)
    if level > 0:
        layers += _loop(7, level - 1) + _result(8, f"inner{level}", "FP32", [-1])
        edges += (_edge(2, 0, 7, 0) + _edge(3, 0, 7, 1) + _edge(1, 0, 7, 2)
                  + _edge(1, 0, 7, 3) + _edge(7, 4, 8, 0))
    port_map = ('<port_map><input external_port_id="2" internal_layer_id="0"/>'
                '<input external_port_id="3" internal_layer_id="1"/>'
                '<input external_port_id="0" internal_layer_id="2"/>'
                '<input external_port_id="1" internal_layer_id="3"/>'
                '<output external_port_id="4" internal_layer_id="5"/>'
                '<output external_port_id="-1" internal_layer_id="6" '
                'purpose="execution_condition"/></port_map>'
                '<back_edges><edge from-layer="5" to-layer="0"/></back_edges>')
    return (f'<layer id="{i}" name="loop{level}" type="Loop" version="opset5">{port_map}'
            f'<input>{_port(0, "I64", [])}{_port(1, "BOOL", [])}{_port(2, "FP32", [1])}'
            f'{_port(3, "FP32", [1])}</input><output>{_port(4, "FP32", [-1])}</output>'
            f'<body><layers>{layers}</layers><edges>{edges}</edges></body></layer>\n')


def nested_loops(depth: int) -> str:
    return ('<?xml version="1.0"?>\n<net name="nested" version="11"><layers>\n'
            + _parameter(0, "trip", "i64", "I64", []) + _parameter(1, "cond", "boolean", "BOOL", [])
            + _parameter(2, "x", "f32", "FP32", [1]) + _loop(3, depth)
            + _result(4, "out", "FP32", [-1]) + '</layers><edges>'
            + _edge(0, 0, 3, 0) + _edge(1, 0, 3, 1) + _edge(2, 0, 3, 2) + _edge(2, 0, 3, 3)
            + _edge(3, 4, 4, 0) + '</edges></net>\n')


def _body_walks(depth: int, monkeypatch: pytest.MonkeyPatch) -> int:
    walks = []
    real = Body._walk
    monkeypatch.setattr(Body, "_walk", lambda self, params: walks.append(1) or real(self, params))
    report = check(parse_ir(nested_loops(depth)))
    assert report.ok
    return len(walks)


def test_nested_loops_walk_each_body_a_bounded_number_of_times(monkeypatch):
    shallow, deep = _body_walks(5, monkeypatch), _body_walks(20, monkeypatch)
    assert deep <= shallow * 20 / 5 + 4, (shallow, deep)


def test_thirty_nested_loops_are_checked_within_thirty_seconds(tmp_path: Path):
    model = tmp_path / "nested.xml"
    model.write_text(nested_loops(30))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ovgather", "check", "--json", str(model)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert time.perf_counter() - start < 30
    assert '"mismatch": 0' in done.stdout and '"invalid": 0' in done.stdout


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_nested_loops_give_openvinos_output_shape(tmp_path: Path, depth: int):
    model = tmp_path / "nested.xml"
    model.write_text(nested_loops(depth))
    expected = str(ov.Core().read_model(str(model)).output(0).get_partial_shape())
    report = check(parse_ir(nested_loops(depth)))
    top = next(lr for lr in report.layers if lr.name == f"loop{depth}")
    assert top.inferred == [expected]


# -- Loops with back edges, against read_model port by port -----------------------------------
def _shape(rng, rank: int) -> str:
    return "[" + ",".join(random_dim(rng) for _ in range(rank)) + "]"


def _back_edge_body(rng, p, q, it):
    """The value a back edge carries from ``p`` (the Parameter it feeds), ``q`` (an
    invariant input) and ``it`` (the iteration number): one that keeps, grows, replaces
    or narrows ``p``'s shape."""
    kind = rng.choice(("keep", "replace", "add", "concat", "slice", "pad"))
    if kind == "keep":
        return o8.relu(p)
    if kind == "replace":
        return o8.relu(q)
    if kind == "add":
        return o8.add(p, q)
    if kind == "concat":
        return o8.concat([p, q], 0)
    if kind == "slice":  # loop11's: the first it + 1 elements of a constant
        x = o8.constant(np.arange(1, 6, dtype=np.float32).reshape([5] + [1] * (rng.randint(0, 1))))
        end = o8.unsqueeze(o8.add(it, o8.constant(np.int64(1))), o8.constant(np.int64(0)))
        return o8.add(p, o8.slice(x, o8.constant(np.array([0])), end, o8.constant(np.array([1]))))
    pads = o8.constant(np.array([rng.randint(0, 1)], dtype=np.int64))
    return o8.pad(p, pads, o8.constant(np.array([0], dtype=np.int64)), "constant")


def _loop_model(rng) -> ov.Model:
    """A Loop whose body Parameter ``p`` is fed by a back edge, with ``p``'s shape and
    the back edge's value seen inside the body and the Loop's outputs seen after it."""
    rank = rng.choice((1, 1, 2, 3))
    x = o8.parameter(ov.PartialShape(_shape(rng, rank)), ov.Type.f32, name="x")
    y = o8.parameter(ov.PartialShape(_shape(rng, rank)), ov.Type.f32, name="y")
    p = o8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="p")
    q = o8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="q")
    it = o8.parameter(ov.PartialShape([]), ov.Type.i64, name="it")
    value = _back_edge_body(rng, p, q, it)
    seen = o8.relu(p, name="seen_p")
    cond = o8.constant(np.array(rng.random() < 0.8), name="cond")
    results = [o8.result(value), o8.result(cond), o8.result(seen)]
    body = ov.Model(results, [p, q, it], "body")
    params = [x, y]
    if rng.random() < 0.5:
        trips = o8.constant(np.int64(rng.randint(0, 4)), name="trips")
    else:
        trips = o8.parameter(ov.PartialShape([]), ov.Type.i64, name="trips")
        params.append(trips)
    loop = o8.loop(trips, o8.constant(np.array(rng.random() < 0.9)))
    loop.set_friendly_name("loop")
    loop.set_function(body)
    loop.set_special_body_ports([2, 1])
    loop.set_merged_input(p, x.output(0), results[0].output(0))
    loop.set_invariant_input(q, y.output(0))
    outs = [loop.get_iter_value(results[0].output(0), -1),
            loop.get_iter_value(results[2].output(0), -1)]
    if rng.random() < 0.5:
        outs.append(loop.get_concatenated_slices(results[2].output(0), 0, 1, 1, -1, 0))
    after = [o8.relu(v, name=f"after{i}") for i, v in enumerate(outs)]
    return ov.Model([o8.result(a) for a in after], params, "m")


def _tensor_iterator_model(rng) -> ov.Model:
    """A TensorIterator over the rows of ``z`` whose body Parameter ``p`` is fed by a back
    edge, seen inside and after the body as in :func:`_loop_model`."""
    rank = rng.choice((1, 1, 2, 3))
    x = o8.parameter(ov.PartialShape(_shape(rng, rank)), ov.Type.f32, name="x")
    y = o8.parameter(ov.PartialShape(_shape(rng, rank)), ov.Type.f32, name="y")
    z = o8.parameter(ov.PartialShape([rng.choice((1, 3)), 1]), ov.Type.i64, name="z")
    p = o8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="p")
    q = o8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="q")
    row = o8.parameter(ov.PartialShape([1, 1]), ov.Type.i64, name="row")
    it = o8.squeeze(row, o8.constant(np.array([0, 1])))
    results = [o8.result(_back_edge_body(rng, p, q, it)), o8.result(o8.relu(p, name="seen_p"))]
    body = ov.Model(results, [p, q, row], "body")
    ti = o8.tensor_iterator()
    ti.set_friendly_name("ti")
    ti.set_body(body)
    ti.set_sliced_input(row, z.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(p, x.output(0), results[0].output(0))
    ti.set_invariant_input(q, y.output(0))
    outs = [ti.get_iter_value(results[0].output(0), -1),
            ti.get_iter_value(results[1].output(0), -1)]
    after = [o8.relu(v, name=f"after{i}") for i, v in enumerate(outs)]
    return ov.Model([o8.result(a) for a in after], [x, y, z], "m")


def _ports_differ(path: Path) -> list[tuple[str, list[str], list[str]]]:
    """Every layer, in the bodies too, whose output shapes ovgather and read_model see
    differently (a tighter shape is a difference too)."""
    theirs = {name: [str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())]
              for name, op in ov_ops(ov.Core().read_model(str(path)))
              if op.get_type_name() != "Result"}
    report = check(read_ir(path))
    assert report.ok, [lr.to_dict() for lr in report.problems()]
    assert {lr.name for lr in report.layers} >= set(theirs)
    return [(lr.name, lr.inferred, theirs[lr.name]) for lr in report.layers
            if lr.name in theirs and lr.inferred != theirs[lr.name]]


@pytest.mark.parametrize("make", [_loop_model, _tensor_iterator_model],
                         ids=["Loop", "TensorIterator"])
def test_back_edges_give_every_port_read_model_gives(tmp_path: Path, make):
    rng = rng_for(f"back_edges{make.__name__}")
    made, bad = 0, []
    while made < 150:
        try:
            model = make(rng)
        except RuntimeError:  # shapes OpenVINO refuses (Add or Concat of misfits)
            continue
        made += 1
        path = tmp_path / f"loop{made}.xml"
        ov.save_model(model, str(path), compress_to_fp16=False)
        bad += [(made, *d) for d in _ports_differ(path)]
    assert not bad, bad[:10]


def _onnx_loop11(tmp_path: Path) -> Path:
    """ONNX's ``loop11`` node test (a running sum whose back edge grows from ``[1]``),
    converted by OpenVINO and saved as IR."""
    import onnx
    from onnx.backend.test.case import node as onnx_nodes
    from onnx.backend.test.case.node import loop

    if not any(c.name == "test_loop11" for c in onnx_nodes._NodeTestCases):
        loop.Loop.export_loop_11()  # registers the case with its model
    case = next(c for c in onnx_nodes._NodeTestCases if c.name == "test_loop11")
    onnx.save(case.model, str(tmp_path / "loop11.onnx"))
    path = tmp_path / "loop11.xml"
    ov.save_model(ov.convert_model(str(tmp_path / "loop11.onnx")), str(path),
                  compress_to_fp16=False)
    return path


def test_onnx_loop11_gives_every_port_read_model_gives(tmp_path: Path):
    assert _ports_differ(_onnx_loop11(tmp_path)) == []


def test_a_body_parameter_in_another_case_is_read_as_openvino_reads_it(tmp_path: Path):
    path = _onnx_loop11(tmp_path)
    xml = path.read_text()
    assert xml.count('name="y_in" type="Parameter"') == 1
    path.write_text(xml.replace('name="y_in" type="Parameter"', 'name="y_in" type="parameter"'))
    assert _ports_differ(path) == []
    path.write_text(xml.replace('name="y_in" type="Parameter"', 'name="y_in" type="PARAMETER"'))
    assert _ports_differ(path) == []


def test_a_body_parameter_in_another_case_is_read_a_result_refused_as_openvino_does(
        tmp_path: Path):
    path = _onnx_loop11(tmp_path)
    xml = path.read_text().replace('name="y_in" type="Parameter"', 'name="y_in" type="PARAMETER"')
    out = re.search(r'<output external_port_id="\d+" internal_layer_id="(\d+)"', xml)[1]
    xml, n = re.subn(rf'(<layer id="{out}" name="[^"]*" type=")Result"', r'\1result"', xml)
    assert n == 1
    path.write_text(xml)
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(path))
    with pytest.raises(IRStructureError, match="naming a Result of the body"):
        read_ir(path)
