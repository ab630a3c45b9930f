"""Every ```python example of docs/api.md runs and its assertions hold.

Each block runs on its own (a user copies one at a time), in a fresh namespace, in a
folder holding a copy of ``ir_samples/``, so the files it writes land there.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api.md"


def _python_blocks() -> list[str]:
    text = API.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


BLOCKS = _python_blocks()


def test_the_api_doc_has_an_example_per_part():
    assert len(BLOCKS) >= 6
    text = "\n".join(BLOCKS)
    for name in ("read_ir", "parse_ir", "write_ir", "const_value", "check", "infer_shapes",
                 "CheckReport", "find_layers", "add_const", "add_layer", "insert_after",
                 "replace_uses", "bypass", "cleanup", "set_const", "rename_input",
                 "rename_output", "reinfer", "convert_gather_nd", "reshape"):
        assert f"og.{name}" in text, f"docs/api.md shows no example of og.{name}"


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block {i + 1}" for i in range(len(BLOCKS))])
def test_api_doc_example_runs(code, tmp_path, monkeypatch):
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(API), "exec"), {"__name__": "__api_doc__"})  # noqa: S102
