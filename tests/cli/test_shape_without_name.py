"""``--shape '[?,1,28,28]'`` without a name: the shape of a model's one input; a model of
several inputs refuses it with one ``error:`` line naming them (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ovgather.cli import main
from ovgather.cli.common import parse_shape_options, shape_overrides
from ovgather.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
ONE_INPUT = str(ROOT / "ir_samples" / "gather_nd8_bd3.xml")  # data [1,64,64,320], a Const


def _two_inputs(folder: Path) -> str:
    """``a`` + ``b`` → Add → Result."""
    dims = "<dim>2</dim><dim>3</dim>"
    params = "".join(
        f'<layer id="{i}" name="{n}" type="Parameter" version="opset1"><data shape="2,3" '
        f'element_type="f32"/><output><port id="0" precision="FP32">{dims}</port></output>'
        f'</layer>' for i, n in enumerate("ab"))
    xml = (f'<?xml version="1.0"?>\n<net name="two" version="11"><layers>{params}'
           f'<layer id="2" name="sum" type="Add" version="opset1"><input>'
           f'<port id="0" precision="FP32">{dims}</port><port id="1" precision="FP32">{dims}'
           f'</port></input><output><port id="2" precision="FP32">{dims}</port></output></layer>'
           f'<layer id="3" name="out" type="Result" version="opset1"><input>'
           f'<port id="0" precision="FP32">{dims}</port></input></layer></layers><edges>'
           f'<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>'
           f'<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>'
           f'<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/></edges></net>\n')
    (folder / "two.xml").write_text(xml)
    (folder / "two.bin").write_bytes(b"")
    return str(folder / "two.xml")


def test_a_shape_alone_parses_as_the_one_inputs():
    from ovgather.cli.common import UNNAMED

    assert parse_shape_options(["[?,1,28,28]"]) == {UNNAMED: "[?,1,28,28]"}
    assert parse_shape_options([" [1..8, 3] "]) == {UNNAMED: "[1..8, 3]"}
    with pytest.raises(UsageError, match="only alone"):
        parse_shape_options(["[1,2],x=[3]"])
    with pytest.raises(UsageError, match="only alone"):
        parse_shape_options(["[1,2]", "[3]"])


def test_commands_that_cannot_name_it_ask_for_the_name():
    with pytest.raises(UsageError, match="needs the input's name"):
        shape_overrides(["[1,2]"])


def test_check_takes_a_shape_without_a_name(capsys):
    code = main(["check", ONE_INPUT, "--shape", "[1,64,64,?]", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    changed = json.loads(out)["models"][0]["reshape"]["changed"]
    assert [(row["name"], row["after"]) for row in changed] == [("data", ["[1,64,64,?]"])]


def test_infer_takes_it_as_if_it_were_named(capsys):
    assert main(["infer", ONE_INPUT, "--shape", "[1,64,64,?]", "--json"]) == 0
    layers = json.loads(capsys.readouterr().out)["models"][0]["layers"]
    assert next(lr for lr in layers if lr["name"] == "data")["inferred"] == ["[1,64,64,?]"]
    main(["infer", ONE_INPUT, "--shape", "[1,64,64,100]"])
    unnamed = capsys.readouterr().out
    main(["infer", ONE_INPUT, "--shape", "data=[1,64,64,100]"])
    assert unnamed == capsys.readouterr().out and "[1,64,64,100]" in unnamed


def test_reshape_takes_it_too(tmp_path, capsys):
    code = main(["reshape", ONE_INPUT, "--shape", "[1,64,64,400]", "--dry-run",
                 "--no-runtime-proof"])
    out, err = capsys.readouterr()
    assert code == 0 and "input data: [1,64,64,320] -> [1,64,64,400]" in out, (out, err)


@pytest.mark.parametrize("command", ["check", "infer", "reshape"])
def test_several_inputs_refuse_it_with_one_error_line(command, tmp_path):
    model = _two_inputs(tmp_path)
    extra = ["--dry-run", "--no-runtime-proof"] if command == "reshape" else []
    done = subprocess.run([sys.executable, "-m", "ovgather", command, model, "--shape",
                           "[2,3]", *extra], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "'a', 'b'" in lines[0] and "has no input name" in lines[0]
    assert "--shape 'a=[2,3]'" in lines[0]  # how to name it


def test_one_model_of_several_inputs_fails_alone(tmp_path, capsys):
    """Over several MODELs the shape goes to each one-input model; the others are
    errors for that model only."""
    code = main(["check", ONE_INPUT, _two_inputs(tmp_path), "--shape", "[1,64,64,?]"])
    out, err = capsys.readouterr()
    assert code == 2 and "gather_nd8_bd3.xml: OK" in out
    assert [line for line in err.splitlines() if line.startswith("error: ")] == [
        line for line in err.splitlines() if "has no input name" in line] != []
