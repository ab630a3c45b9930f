"""`explain` covers every layer, not only gathers: one layer of every op type (and
version) in the sample and corpus IRs is explained through the CLI, text and --json, and
names the layer, its rule in words and the shape check infers; a layer ovgather has no
rule for (unchecked, or an extension's) is explained too, and a mismatch says which dims
differ."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from ovgather import read_ir
from ovgather.cli import explain as explain_command
from ovgather.cli import main
from ovgather.graph import gather_types
from ovgather.infer import check

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
IRS = sorted({*SAMPLES.glob("*.xml"), *SAMPLES.rglob("*.xml"),
              *(ROOT / "ir_corpus").rglob("*.xml")})


def _first_of_each_op() -> tuple[dict[str, object], list[tuple[str, str, str]]]:
    """Each IR read once; the first layer of each (type, version): (path, id, name)."""
    graphs, picked, seen = {}, [], set()
    for path in IRS:
        G = read_ir(path)
        graphs[str(path)] = G
        for node, attrs in G.nodes(data=True):
            key = (attrs["type"], attrs.get("version"))
            if key not in seen:
                seen.add(key)
                picked.append((str(path), node, attrs["name"]))
    return graphs, picked


def _argument(G, node: str, name: str) -> str:
    """What names the layer: its name when unique (a layer may be *named* another's id)."""
    return name if [n for n, nm in G.nodes(data="name") if nm == name] == [node] else node


GRAPHS, LAYERS = _first_of_each_op()


@pytest.fixture
def read_once(monkeypatch):
    """explain's CLI takes the graph already read (one read per IR for the whole file)."""
    monkeypatch.setattr(explain_command, "load", lambda model, debug=False: GRAPHS[model])


def _flat(text: str) -> str:
    """``text`` without whitespace: the CLI wraps long lines (and long names) at 100."""
    return re.sub(r"\s+", "", text)


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def test_the_irs_hold_many_op_types():
    types = {GRAPHS[p].nodes[n]["type"] for p, n, _ in LAYERS}
    assert len(LAYERS) >= 60 and {"Parameter", "Const", "Result", "Loop", "If", "GatherND",
                                  "Convolution", "Reshape"} <= types


@pytest.mark.parametrize("path,node,name", LAYERS,
                         ids=[f"{GRAPHS[p].nodes[n]['type']}/{GRAPHS[p].nodes[n]['version']}"
                              for p, n, _ in LAYERS])
def test_explain_names_the_layer_its_rule_and_its_inferred_shape(path, node, name, capsys,
                                                                read_once):
    layer = _argument(GRAPHS[path], node, name)
    code, text = _run(["explain", path, "--layer", layer], capsys)
    assert code == 0, text
    json_code, out = _run(["explain", path, "--layer", layer, "--json"], capsys)
    doc = json.loads(out)
    assert json_code == 0
    assert doc["layer"]["id"] == node and doc["layer"]["name"] == name
    assert doc["layer"]["status"] == "ok"
    flat = _flat(text)
    assert _flat(f"'{name}' (id {node})") in flat
    assert doc["rule"]
    gather = doc["layer"]["type"] in gather_types()
    if gather:  # its text walks the rule, step by step (and stays as it was)
        assert doc["steps"] and all(_flat(s["rule"]) in flat for s in doc["steps"])
    else:
        assert _flat(doc["rule"]) in flat
    shapes = [v for v in doc["outputs"].values() if v is not None]
    inferred = doc["layer"]["inferred"]
    assert shapes and set(inferred) <= set(shapes)
    for shape in [*inferred, *shapes]:
        assert shape in flat
    assert [p["shape"] for p in doc["output_ports"]] == inferred
    assert doc["mismatch"] == []
    for p in doc["input_ports"]:  # each input: its shape, and its value where check has one
        assert p["shape"] in flat
        if not gather and doc["layer"]["type"] not in ("Loop", "If", "TensorIterator"):
            assert p["value"] is None or _flat(p["value"]) in flat


# ---- layers check says something about ------------------------------------------------


def _variant(tmp_path: Path, name: str, old: str, new: str) -> str:
    text = (SAMPLES / "mixed_ops.xml").read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / f"{name}.xml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    shutil.copy(SAMPLES / "mixed_ops.bin", tmp_path / f"{name}.bin")
    return str(path)


SOFTMAX = 'name="probs" type="SoftMax" version="opset8"'


@pytest.mark.parametrize("op_type,version,status", [
    ("GroupedMatMul", "opset17", "unchecked"),  # in an opset; ovgather has no rule
    ("MyCustomOp", "extension", "unknown"),  # an extension's op
])
def test_a_layer_without_a_rule_gets_its_inputs_attributes_and_a_line_saying_so(
        op_type, version, status, tmp_path, capsys):
    path = _variant(tmp_path, op_type, SOFTMAX,
                    f'name="probs" type="{op_type}" version="{version}"')
    code, text = _run(["explain", path, "--layer", "probs"], capsys)
    assert code == 0
    assert f"{op_type} 'probs' (id 29)" in text
    assert f"ovgather has no shape rule for {op_type}" in text
    assert "  0   [1..8,3..192] f32 from joined:2" in text and "  axis = 1" in text
    assert f"check status: {status}" in text
    code, out = _run(["explain", path, "--layer", "probs", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["layer"]["status"] == status and doc["layer"]["op_version"] is None
    assert doc["attributes"] == {"axis": "1"} and doc["rule_source"] is None
    assert doc["input_ports"][0]["shape"] == "[1..8,3..192]"
    assert doc["outputs"] == {"output 0": "[?,?]"}


def test_a_mismatch_says_which_declared_dims_differ(tmp_path, capsys):
    path = _variant(tmp_path, "turn", '''names="turn">
					<dim>-1</dim>
					<dim>4</dim>''', '''names="turn">
					<dim>-1</dim>
					<dim>5</dim>''')
    code, text = _run(["explain", path, "--layer", "turn"], capsys)
    assert code == 1
    assert ("mismatch: output port 2 declares [?,5,2], but the rule gives [1..8,4,2] "
            "(dim 1: the IR declares 5, the rule gives 4)") in " ".join(text.split())
    assert "  1   [3] i64 from perm:0 = [0,2,1]" in text  # the permutation's value
    doc = json.loads(_run(["explain", path, "--layer", "turn", "--json"], capsys)[1])
    assert doc["mismatch"] == [{"port": 2, "declared": "[?,5,2]", "inferred": "[1..8,4,2]",
                                "why": "dim 1: the IR declares 5, the rule gives 4"}]
    assert doc["outputs"] == {"Transpose-1": "[1..8,4,2]"}


def test_an_invalid_layer_names_the_rule_it_breaks(tmp_path, capsys):
    path = _variant(tmp_path, "axis", SOFTMAX + '>\n\t\t\t<data axis="1" />',
                    SOFTMAX + '>\n\t\t\t<data axis="5" />')
    code, text = _run(["explain", path, "--layer", "probs"], capsys)
    assert code == 1
    assert "FAIL  the axis must lie in [-2, 1], but got 5" in text
    assert "check status: invalid" in text
    doc = json.loads(_run(["explain", path, "--layer", "probs", "--json"], capsys)[1])
    assert doc["failed_rule"] == "the axis must lie in [-2, 1], but got 5"
    assert doc["outputs"] == {"Softmax-8": None}


def test_values_check_infers_are_shown_for_inputs_and_outputs(capsys):
    path = str(SAMPLES / "mixed_ops.xml")
    code, text = _run(["explain", path, "--layer", "target"], capsys)
    assert code == 0
    assert "  0   [1] i64 from x_batch:3 = [1..8]" in text  # a value with bounds
    assert "Concat-1             [2]   (value [1..8,-1])" in text
    doc = json.loads(_run(["explain", path, "--layer", "x_shape", "--json"], capsys)[1])
    assert doc["output_ports"][0]["value"] == "[1..8,3,8]"
    assert doc["rule_source"] == "ops/reshape.py"


def test_the_gather_json_has_the_parts_every_layer_has(capsys):
    doc = json.loads(_run(["explain", str(SAMPLES / "gather_nd8_bd3.xml"), "--layer",
                           "gather_nd8_bd3", "--json"], capsys)[1])
    assert doc["rule"] == "GatherND-8 keeps the batch dims: I[:b] + I[b:-1] + D[b+k:]"
    assert doc["attributes"] == {"batch_dims": "3"}
    assert [p["shape"] for p in doc["input_ports"]] == ["[1,64,64,320]", "[1,64,64,1,1]"]
    assert [p["shape"] for p in doc["output_ports"]] == ["[1,64,64,1]"]


def test_the_layers_of_a_body_are_explained_too(capsys):
    path = str(SAMPLES / "loop_gather.xml")
    body = [lr for lr in check(read_ir(path)).layers if "/" in lr.id]
    assert body
    for lr in body:
        code, out = _run(["explain", path, "--layer", lr.id, "--json"], capsys)
        doc = json.loads(out)
        assert code == 0 and doc["layer"]["id"] == lr.id
        assert doc["rule"] and set(lr.inferred) <= set(doc["outputs"].values())
