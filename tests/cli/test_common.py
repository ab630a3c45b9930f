"""What every subcommand shares (ovgather/cli/common.py): the ``--shape`` spellings."""

from __future__ import annotations

import pytest

from ovgather.cli.common import parse_shape_options
from ovgather.errors import UsageError


@pytest.mark.parametrize("options,expected", [
    (["data=[1,?,4]"], {"data": "[1,?,4]"}),
    (["data[1,?,4]"], {"data": "[1,?,4]"}),
    (["ids[1..8,3]"], {"ids": "[1..8,3]"}),
    (["data[1,?,4],ids[1..8,3]"], {"data": "[1,?,4]", "ids": "[1..8,3]"}),
    (["data=2,?,4,ids=[3]"], {"data": "2,?,4", "ids": "[3]"}),
    (["a=[1]", "b[2]"], {"a": "[1]", "b": "[2]"}),
    (["aten::x/y=[1, 2]"], {"aten::x/y": "[1, 2]"}),
])
def test_shape_option_spellings(options, expected):
    assert parse_shape_options(options) == expected


@pytest.mark.parametrize("bad", ["data", "data[1,2", "=[1]", "data="])
def test_bad_shape_options_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_shape_options([bad])


@pytest.mark.parametrize("options,expected", [
    (['"d[1]"=[2,3]'], {"d[1]": "[2,3]"}),
    (['"d[1]"[2,3]'], {"d[1]": "[2,3]"}),
    (["'a, b=c'=[4]", "x[1]"], {"a, b=c": "[4]", "x": "[1]"}),
    (['"q\\"uote"=1,2', '"back\\\\slash"[5]'], {'q"uote': "1,2", "back\\slash": "[5]"}),
    (['data[1,?],"d[1]"=[2]'], {"data": "[1,?]", "d[1]": "[2]"}),
])
def test_a_quoted_name_may_hold_brackets_commas_equals_quotes_and_spaces(options, expected):
    assert parse_shape_options(options) == expected


@pytest.mark.parametrize("bad", ['"d[1]=[2]', '"d[1]"', '""=[2]', '"d[1]"x[2]'])
def test_bad_quoted_names_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_shape_options([bad])


def _odd_names_ir(tmp_path):
    import numpy as np
    import openvino as ov
    import openvino.opset8 as o8

    first = o8.parameter([-1, 3], np.float32, name="d[1]")
    second = o8.parameter([-1, 3], np.float32, name="a, b=c")
    model = ov.Model([o8.add(first, second)], [first, second])
    path = tmp_path / "odd.xml"
    ov.save_model(model, str(path))
    return path


def test_check_takes_a_shape_for_parameters_with_odd_names(tmp_path):
    import json
    import subprocess
    import sys

    path = _odd_names_ir(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "ovgather", "infer", "--json", str(path),
         "--shape", '"d[1]"=[2,3]', "--shape", "'a, b=c'[2,3]"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    layers = json.loads(done.stdout)["models"][0]["layers"]
    add = next(layer for layer in layers if layer["type"] == "Add")
    assert add["inferred"] == ["[2,3]"]
