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
