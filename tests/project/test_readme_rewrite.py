"""The README's "Rewrite a model in Python" snippet runs and does what it says.

The snippet is taken verbatim from README.md (the first ```python block under the heading
"Rewrite a model in Python"). It runs in a folder holding a copy of ``ir_samples/``; the
path it writes to is redirected into that folder, and OpenVINO then judges the result
against the sample it came from.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import openvino as ov

from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^#+ [^\n]*rewrite a model in python[^\n]*\n(.*?)```python\n(.*?)```",
                      text, flags=re.IGNORECASE | re.MULTILINE | re.DOTALL)
    assert match, "README.md lost its 'Rewrite a model in Python' example"
    return match.group(2)


def _written_path(snippet: str) -> str:
    match = re.search(r'write_ir\(g, "([^"]+)"\)', snippet)
    assert match, "the README example no longer writes the model it rewrites"
    return match.group(1)


def _read_path(snippet: str) -> str:
    match = re.search(r'read_ir\("([^"]+)"\)', snippet)
    assert match, "the README example no longer reads a sample"
    return match.group(1)


def test_readme_rewrite_snippet_converts_and_keeps_outputs(tmp_path, monkeypatch, capsys):
    snippet = readme_snippet()
    source, written = _read_path(snippet), _written_path(snippet)
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    code = snippet.replace(written, "rewritten.xml")
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    assert "['2']" in capsys.readouterr().out
    assert [c["to"] for c in namespace["changes"]] == ["opset5"]

    core = ov.Core()
    before, after = core.read_model(source), core.read_model("rewritten.xml")
    versions = {op.get_type_info().version_id for op in after.get_ordered_ops()
                if op.get_type_name() == "GatherND"}
    assert versions == {"opset5"}
    rng = np.random.default_rng(5)
    feeds = {next(iter(p.get_names())): rng.standard_normal(p.get_shape()).astype(np.float32)
             for p in before.inputs}
    want = core.compile_model(before, "CPU", cpu_config())(feeds)[0]
    compiled = core.compile_model(after, "CPU", cpu_config())
    assert compiled.outputs[0].get_names() == before.outputs[0].get_names()
    assert np.array_equal(compiled(feeds)[0], want)


def test_readme_api_block_runs_and_its_comments_match_openvino(tmp_path, monkeypatch):
    """The README's Python API block runs, and the shapes its comments claim are
    the ones OpenVINO's own GatherND-5 / GatherND-8 infer."""
    import openvino.opset5 as ov5
    import openvino.opset8 as ov8

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Python API[^\n]*\n\n```python\n(.*?)```", text,
                      flags=re.MULTILINE | re.DOTALL)
    assert match, "README.md lost its Python API block"
    block = match.group(1)
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    monkeypatch.chdir(tmp_path)
    written = _written_path(block)
    namespace: dict = {}
    exec(compile(block.replace(written, "out.xml"), "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["report"].summary["mismatch"] == 0
    assert Path("out.xml").exists() and Path("out.bin").exists()

    claims = re.findall(r'gather_nd_shape\("([^"]+)", "([^"]+)", batch_dims=(\d), '
                        r'version=(\d)\)\s+# (\S+)', block)
    assert len(claims) == 2
    for data, indices, b, version, claimed in claims:
        opset = ov5 if version == "5" else ov8
        node = opset.gather_nd(ov8.parameter(ov.PartialShape(data), np.float32),
                               ov8.parameter(ov.PartialShape(indices), np.int32), int(b))
        assert claimed == str(node.get_output_partial_shape(0)).replace(" ", "")
