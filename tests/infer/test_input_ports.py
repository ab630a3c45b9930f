"""Declared input-port dims are checked like output-port dims: an input that declares what
its producer does not give is a ``mismatch`` naming both layers and their lines (OpenVINO's
reader ignores input-port dims, so such an IR says two things of one tensor)."""

from __future__ import annotations

import shutil
from pathlib import Path

import openvino as ov

from ovgather.infer import check
from ovgather.ir import read_ir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "mixed_ops.xml"
RESULT_INPUT = '''<layer id="32" name="firsts" type="Result" version="opset1" output_names="first_rows_nd5">
			<input>
				<port id="0" precision="FP32">
					<dim>2</dim>
					<dim>3</dim>
					<dim>8</dim>
				</port>'''  # noqa: E501


def _tampered(tmp_path: Path, dims: str) -> Path:
    text = SAMPLE.read_text(encoding="utf-8")
    assert RESULT_INPUT in text
    path = tmp_path / "m.xml"
    path.write_text(text.replace(RESULT_INPUT, RESULT_INPUT.split("<dim>")[0] + dims
                                 + "\n\t\t\t\t</port>"), encoding="utf-8")
    shutil.copy(SAMPLE.with_suffix(".bin"), path.with_suffix(".bin"))
    return path


def _lines(path: Path) -> dict[str, int]:
    return {name: i for i, line in enumerate(path.read_text().splitlines(), 1)
            for name in ("firsts", "first_rows_nd5") if f'name="{name}"' in line}


def test_an_input_port_that_contradicts_its_producer_is_a_mismatch_naming_both(tmp_path):
    path = _tampered(tmp_path, "<dim>1</dim>")
    real = ov.Core().read_model(str(path))  # OpenVINO reads it, ignoring the input's dims
    (out,) = [r for r in real.get_results() if r.get_friendly_name() == "firsts"]
    assert str(out.get_input_partial_shape(0)) != "[1]"
    report = check(read_ir(path))
    (row,) = report.problems()
    lines = _lines(path)
    assert (row.name, row.status, row.line) == ("firsts", "mismatch", lines["firsts"])
    assert "input 0" in row.message and "declares [1]" in row.message
    assert f"first_rows_nd5 (id 4, line {lines['first_rows_nd5']})" in row.message
    assert str(out.get_input_partial_shape(0)) in row.message  # OpenVINO's shape, named
    assert not report.ok


def test_an_input_port_that_agrees_or_declares_nothing_is_ok(tmp_path):
    assert check(read_ir(_tampered(tmp_path, "<dim>2</dim><dim>-1</dim><dim>8</dim>"))).ok
    assert check(read_ir(_tampered(tmp_path, ""))).ok  # no <dim>: nothing declared
