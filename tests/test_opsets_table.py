"""The opset table (``ovgather/ops/opsets.py``) is the installed OpenVINO's, and every spec
serves exactly the opsets that hold its op version."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import openvino as ov
import pytest

from ovgather.errors import UnsupportedOpError
from ovgather.ops import registry
from ovgather.ops.opsets import LAST_OPSET, OPSETS
from ovgather.ops.spec import opset_rows

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("list_opsets", ROOT / "tools" / "list_opsets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_is_what_the_installed_openvino_gives():
    assert (ROOT / "ovgather" / "ops" / "opsets.py").read_text() == _tool().generate()


def _probe(op_type: str, opset: str) -> str:
    """read_model on Parameter -> ``op_type`` (version ``opset``) -> Result: the last line
    of its error, or "ok". Only used where OpenVINO refuses before it builds the op."""
    xml = f"""<?xml version="1.0"?>
<net name="probe" version="11"><layers>
<layer id="0" name="p" type="Parameter" version="opset1"><data shape="2" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="1" name="x" type="{op_type}" version="{opset}"><data/>
<input><port id="0"><dim>2</dim></port></input>
<output><port id="1" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="2" name="r" type="Result" version="opset1"><input><port id="0"><dim>2</dim></port>
</input></layer></layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>"""
    try:
        ov.Core().read_model(xml, ov.Tensor(ov.Type.u8, [0]))
    except RuntimeError as err:
        return str(err).strip().splitlines()[-1]
    return "ok"


def _outside(rows: tuple[tuple[int, int, int], ...]) -> list[int]:
    """The opsets next to the runs of ``rows`` that do not hold the type."""
    held = {n for first, last, _ in rows for n in range(first, last + 1)}
    near = {n for first, last, _ in rows for n in (first - 1, last + 1)}
    return sorted(n for n in near - held if 1 <= n <= LAST_OPSET)


@pytest.mark.parametrize("op_type", sorted(OPSETS))
def test_openvinos_reader_refuses_the_opsets_just_outside_each_run(op_type):
    for n in _outside(OPSETS[op_type]):
        said = _probe(op_type, f"opset{n}")
        assert said == f"Opset opset{n} doesn't contain the operation with type: {op_type}", said


def test_every_spec_serves_one_run_of_its_op_version():
    for op_type in registry.known_types():
        rows = opset_rows(op_type)
        for s in registry.specs(op_type):
            assert (s.since, s.until, s.version) in rows, (op_type, s.name, rows)
        assert len(registry.specs(op_type)) == len(rows), (op_type, rows)


def test_an_opset_without_the_op_is_refused_as_openvino_refuses_it():
    assert registry.find("Gelu", "opset2").version == 2
    assert registry.find("Relu", "opset16") is not None
    for op_type, opset in (("Gelu", "opset1"), ("Relu", "opset17"), ("ShapeOf", "opset18")):
        with pytest.raises(UnsupportedOpError):
            registry.find(op_type, opset)
        assert _probe(op_type, opset) != "ok"
