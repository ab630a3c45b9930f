"""A layer OpenVINO's reader refuses (a type in no opset, a real op in an opset that lacks
it) is ``unknown``: every verdict on its model fails, naming the layer and its line, as
``read_model`` refuses the very same file. An op OpenVINO reads but ovgather has no rule
for stays ``unchecked`` and passes."""

from __future__ import annotations

import json
from pathlib import Path

import openvino as ov
import pytest

from ovgather.cli import main
from ovgather.ops.core.releases import RELEASES

_LAYER_LINE = 3  # the line of the layer named "odd" in the IR below


def _ir(op_type: str, version: str, dims: str = "2,3") -> str:
    port = "".join(f"<dim>{d}</dim>" for d in dims.split(","))
    return f"""<?xml version="1.0"?><net name="m" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="{dims}" element_type="f32"/><output><port id="0" precision="FP32" names="x">{port}</port></output></layer>
<layer id="1" name="odd" type="{op_type}" version="{version}"><input><port id="0" precision="FP32">{port}</port></input><output><port id="1" precision="FP32" names="y">{port}</port></output></layer>
<layer id="2" name="r" type="Result" version="opset1"><input><port id="0" precision="FP32">{port}</port></input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/><edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>
"""  # noqa: E501 - one layer a line, so that the line of "odd" is known


UNREAD = {
    "opset17_op": ("SuperReLU", "opset17"),  # a type no opset holds, in the newest opset
    "made_up_op": ("MyCustomOp", "opset1"),
    "wrong_version": ("Relu", "opset17"),  # a real op, in an opset that lacks it
    "wrong_version_known_rule": ("GatherND", "opset4"),  # the same, for an op with a rule
}


@pytest.fixture(params=sorted(UNREAD))
def unread_ir(request, tmp_path: Path) -> Path:
    path = tmp_path / f"{request.param}.xml"
    path.write_text(_ir(*UNREAD[request.param]))
    with pytest.raises(RuntimeError, match=UNREAD[request.param][0]):
        ov.Core().read_model(str(path))  # the judge: OpenVINO refuses the file
    return path


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main([*argv])
    return code, capsys.readouterr().out


def test_check_fails_naming_the_layer_openvino_cannot_read(unread_ir: Path, capsys) -> None:
    code, out = _run(capsys, "check", str(unread_ir))
    assert code == 1
    assert "PROBLEMS" in out and "1 unknown" in out
    assert "cannot read this model: it refuses odd" in out and f"line {_LAYER_LINE}" in out
    code, out = _run(capsys, "check", str(unread_ir), "--json")
    model = json.loads(out)["models"][0]
    assert code == 1 and model["summary"]["unknown"] == 1
    (row,) = [r for r in model["layers"] if r["status"] == "unknown"]
    assert (row["name"], row["line"]) == ("odd", _LAYER_LINE)
    assert model["summary"]["unchecked"] == 0 and model["summary"]["invalid"] == 0


@pytest.mark.parametrize("release", list(RELEASES))
def test_no_target_release_claims_to_read_it(unread_ir: Path, release: str, capsys) -> None:
    code, out = _run(capsys, "check", str(unread_ir), "--target-runtime", release, "--json")
    problems = json.loads(out)["models"][0]["target_runtime"]["problems"]
    assert code == 1
    (p,) = problems
    assert (p["name"], p["line"], p["stage"]) == ("odd", _LAYER_LINE, "read")
    assert f"OpenVINO {release} cannot read this layer" in p["reasons"][0]
    code, out = _run(capsys, "check", str(unread_ir), "--target-runtime", release)
    assert "reads every layer" not in out


@pytest.mark.parametrize("mode", [[], ["--all-layers"], ["--whole-model"]])
def test_every_validate_mode_fails_naming_the_layer(unread_ir: Path, mode: list[str],
                                                    capsys) -> None:
    code, out = _run(capsys, "validate", str(unread_ir), *mode)
    assert code == 1
    assert "cannot read this model: it refuses odd" in out and f"line {_LAYER_LINE}" in out
    code, out = _run(capsys, "validate", str(unread_ir), *mode, "--json")
    (unread,) = json.loads(out)["models"][0]["unread"]
    assert code == 1 and (unread["name"], unread["line"]) == ("odd", _LAYER_LINE)


def test_an_op_openvino_reads_without_an_ovgather_rule_stays_unchecked(tmp_path: Path,
                                                                       capsys) -> None:
    path = tmp_path / "bgr.xml"
    text = _ir("BGRtoNV12", "opset17", "1,4,4,3").replace(
        '<port id="1" precision="FP32" names="y"><dim>1</dim><dim>4</dim><dim>4</dim><dim>3',
        '<port id="1" precision="FP32" names="y"><dim>1</dim><dim>6</dim><dim>4</dim><dim>1')
    path.write_text(text.replace('<input><port id="0" precision="FP32"><dim>1</dim><dim>4</dim>'
                                 '<dim>4</dim><dim>3</dim></port></input></layer>\n</layers>',
                                 '<input><port id="0" precision="FP32"><dim>1</dim><dim>6</dim>'
                                 '<dim>4</dim><dim>1</dim></port></input></layer>\n</layers>'))
    model = ov.Core().read_model(str(path))  # OpenVINO reads it
    assert str(model.output(0).get_partial_shape()) == "[1,6,4,1]"
    code, out = _run(capsys, "check", str(path), "--json")
    summary = json.loads(out)["models"][0]["summary"]
    assert code == 0 and summary["unchecked"] == 1 and summary["unknown"] == 0
    code, out = _run(capsys, "check", str(path), "--target-runtime", "2026.4")
    assert code == 0 and "reads every layer" in out
