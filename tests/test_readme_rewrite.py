"""The README's "Rewrite a model in Python" snippet runs and does what it says.

The snippet is taken from README.md (the first ```python block under a heading that
contains "rewrite a model in python"); ``SNIPPET`` below is the same text, used until
the README carries the section. It runs in a folder holding ``model.xml``, a GatherND-8
model with batch_dims 2 built by OpenVINO; OpenVINO then judges ``model_v5.xml``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as ov8

ROOT = Path(__file__).resolve().parents[1]

SNIPPET = '''\
import ovgather as og

g = og.read_ir("model.xml")
print(og.find_layers(g, type="GatherND", version="opset8"))   # ['2']
changes = og.convert_gather_nd(g, to="opset5")   # GatherND-8 -> GatherND-5 + Reshape
report = og.check(g)                             # the rewritten graph is self-consistent
assert report.summary["mismatch"] == report.summary["invalid"] == 0
og.write_ir(g, "model_v5.xml")                   # OpenVINO reads it: same outputs, same names
'''


def readme_snippet() -> str:
    """The snippet from README.md, or ``SNIPPET`` while the README lacks the section."""
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    match = re.search(r"^#+ [^\n]*rewrite a model in python[^\n]*\n(.*?)```python\n(.*?)```",
                      text, flags=re.IGNORECASE | re.MULTILINE | re.DOTALL)
    return match.group(2) if match else SNIPPET


def _model() -> ov.Model:
    data = ov8.parameter(ov.PartialShape([-1, 3, 4, 5]), np.float32, name="data")
    ids = ov8.parameter(ov.PartialShape([-1, 3, 2, 1]), np.int32, name="ids")
    gnd = ov8.gather_nd(data, ids, 2)
    gnd.get_output_tensor(0).set_names({"picked"})
    return ov.Model([ov8.result(gnd)], [data, ids], "readme")


def test_readme_rewrite_snippet_converts_and_keeps_outputs(tmp_path, monkeypatch, capsys):
    ov.save_model(_model(), tmp_path / "model.xml")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(readme_snippet(), "README.md", "exec"), namespace)  # noqa: S102
    assert "['2']" in capsys.readouterr().out
    assert [c["to"] for c in namespace["changes"]] == ["opset5"]

    core = ov.Core()
    before, after = core.read_model("model.xml"), core.read_model("model_v5.xml")
    versions = {op.get_type_info().version_id for op in after.get_ordered_ops()
                if op.get_type_name() == "GatherND"}
    assert versions == {"opset5"}
    rng = np.random.default_rng(5)
    feeds = {"data": rng.standard_normal((2, 3, 4, 5)).astype(np.float32),
             "ids": rng.integers(0, 4, (2, 3, 2, 1)).astype(np.int32)}
    want = core.compile_model(before, "CPU")(feeds)[0]
    compiled = core.compile_model(after, "CPU")
    assert compiled.outputs[0].get_names() == {"picked"}
    assert np.array_equal(compiled(feeds)[0], want)
