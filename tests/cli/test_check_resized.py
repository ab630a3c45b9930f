"""``check --shape`` on a static model answers "does it run at these shapes?": dims
declared for the old input shapes are changes, not mismatches; the layers that break come
first; the reshape summary says whether the model runs. OpenVINO's ``Model.reshape`` is
the judge of whether it does."""

from __future__ import annotations

import json
from pathlib import Path

import openvino as ov
import pytest

from ovgather.cli import main

ROOT = Path(__file__).resolve().parents[2]
VIT = ROOT / "ir_corpus" / "vit" / "pytorch_static.xml"  # input [1,3,32,32]
RESNET = ROOT / "ir_corpus" / "resnet" / "pytorch_static.xml"  # input [1,3,64,64]


def _openvino_reshape(path: Path, shape: list[int]) -> ov.Model | str:
    model = ov.Core().read_model(str(path))
    try:
        model.reshape({"pixel_values": ov.PartialShape(shape)})
    except RuntimeError as err:
        return str(err)
    return model


def _check(capsys, path: Path, shape: str) -> tuple[int, dict]:
    code = main(["check", str(path), "--shape", f"pixel_values={shape}", "--json", "--all"])
    return code, json.loads(capsys.readouterr().out)["models"][0]


def test_a_resize_that_breaks_layers_lists_them_first_and_no_mismatch(capsys) -> None:
    assert isinstance(_openvino_reshape(VIT, [1, 3, 48, 48]), str)  # OpenVINO refuses
    code, model = _check(capsys, VIT, "[1,3,48,48]")
    statuses = [lr["status"] for lr in model["layers"]]
    assert code == 1 and statuses[0] == "invalid"
    assert statuses == sorted(statuses, key=lambda s: s != "invalid")
    assert model["summary"]["mismatch"] == 0 and "mismatch" not in statuses
    assert model["reshape"]["runs"] is False
    assert model["reshape"]["changed"]  # the dims that follow the new input are changes
    code = main(["check", str(VIT), "--shape", "pixel_values=[1,3,48,48]"])
    out = capsys.readouterr().out
    assert code == 1 and "the model does not run" in out and "aten::add/Add" in out


@pytest.mark.parametrize("shape", [[1, 3, 120, 120], [2, 3, 64, 64]])
def test_a_resize_every_layer_takes_exits_0(capsys, shape: list[int]) -> None:
    resized = _openvino_reshape(RESNET, shape)
    assert not isinstance(resized, str)  # OpenVINO reshapes it
    code, model = _check(capsys, RESNET, str(shape).replace(" ", ""))
    assert code == 0 and model["reshape"]["runs"] is True
    assert model["summary"]["mismatch"] == model["summary"]["invalid"] == 0
    assert len(model["reshape"]["changed"]) > 1
    by_name = {lr["name"]: lr for lr in model["layers"]}
    for result in resized.get_results():  # what OpenVINO gives each output at that size
        source = result.input_value(0)
        row = by_name[source.get_node().get_friendly_name()]
        assert row["inferred"][source.get_index()] == str(source.get_partial_shape())


def test_a_real_mismatch_stays_one_after_a_resize(capsys, tmp_path: Path) -> None:
    text = RESNET.read_text(encoding="utf-8")
    at = text.index('type="Convolution"')  # the first Convolution declares a wrong channel
    head, rest = text[:at], text[at:]
    out = rest.index("<output>")
    dim = rest.index("<dim>", rest.index("<dim>", out) + 1)
    end = rest.index("</dim>", dim)
    tampered = tmp_path / "m.xml"
    tampered.write_text(head + rest[:dim] + "<dim>999" + rest[end:], encoding="utf-8")
    tampered.with_suffix(".bin").write_bytes(RESNET.with_suffix(".bin").read_bytes())
    code, model = _check(capsys, tampered, "[1,3,120,120]")
    assert code == 1 and model["summary"]["mismatch"] == 1
