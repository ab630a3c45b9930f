"""Body runs in the shape walk (``infer/bodies.py``): a body run again on the inputs it
already had is not walked again, so time stays linear in the file however deep Loops
nest."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import openvino as ov
import pytest

from ovgather.infer import check
from ovgather.infer.bodies import Body
from ovgather.ir import parse_ir


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
