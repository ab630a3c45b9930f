"""Every ```python example of docs/api.md runs and its assertions hold.

Each block runs on its own (a user copies one at a time), in a fresh namespace, in a
folder holding a copy of ``ir_samples/`` (and ``ir_corpus/``, linked: the examples only read
it), so the files it writes land there. A block followed by a ```text block prints exactly
that text.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api.md"


def _python_blocks() -> list[tuple[str, str | None]]:
    """Each ```python block, with the ```text block right after it (what it prints), if any."""
    text = API.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^```python\n(.*?)^```\n(?:\n```text\n(.*?)^```$)?", text,
                        flags=re.M | re.S)]


PRINTS = _python_blocks()
BLOCKS = [code for code, _ in PRINTS]


def test_the_api_doc_has_an_example_per_part():
    assert len(BLOCKS) >= 6
    text = "\n".join(BLOCKS)
    for name in ("read_ir", "parse_ir", "write_ir", "const_value", "check", "infer_shapes",
                 "CheckReport", "find_layers", "add_const", "add_layer", "insert_after",
                 "replace_uses", "bypass", "cleanup", "set_const", "rename_input",
                 "rename_output", "reinfer", "convert_gather_nd", "reshape"):
        assert f"og.{name}" in text, f"docs/api.md shows no example of og.{name}"


@pytest.mark.parametrize("code,printed", PRINTS,
                         ids=[f"block {i + 1}" for i in range(len(PRINTS))])
def test_api_doc_example_runs(code, printed, tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    (tmp_path / "ir_corpus").symlink_to(ROOT / "ir_corpus")  # read only, never written
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    exec(compile(code, str(API), "exec"), {"__name__": "__api_doc__"})  # noqa: S102
    if printed is not None:
        assert capsys.readouterr().out == printed
