"""``ovgather diff``: exit codes, the one ``error:`` line, the JSON against its schema, the
text limits, and the report object (``equal``, ``to_dict``, the bounded HTML table)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import jsonschema
import pytest

import ovgather as og
from ovgather.cli import main
from ovgather.comparison.diff_report import HTML_ROWS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schema" / "diff.json").read_text(encoding="utf-8"))
SAMPLES = ROOT / "ir_samples"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_equal_models_exit_0(capsys):
    code, out, err = run(capsys, SAMPLES / "mixed_ops.xml", SAMPLES / "mixed_ops.xml")
    assert code == 0 and not err
    assert out.splitlines()[0] == "mixed_ops.xml -> mixed_ops.xml: no difference"


def test_different_models_exit_1_and_name_what_differs(capsys):
    code, out, _ = run(capsys, SAMPLES / "mixed_ops.xml", SAMPLES / "wrong_mixed_ops_nd8_dim.xml")
    assert code == 1
    assert "changed  pick_rows_nd8 (GatherND) | output 0 dims" in out
    assert "output 0 dims: [?,2,4] -> [?,2,5]" in out


@pytest.mark.parametrize("pair", [
    ("mixed_ops.xml", "wrong_mixed_ops_nd8_dim.xml"), ("gather_nd8_bd3.xml", "gather_nd5_bd3.xml"),
    ("loop_gather.xml", "if_gather.xml"), ("mixed_ops.xml", "mixed_ops.xml")])
def test_the_json_follows_its_schema(capsys, pair):
    code, out, _ = run(capsys, SAMPLES / pair[0], SAMPLES / pair[1], "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert code == (0 if doc["equal"] else 1)


def test_the_json_of_two_exports_follows_its_schema(capsys):
    code, out, _ = run(capsys, ROOT / "ir_corpus/llama/pytorch_dynamic.xml",
                       ROOT / "ir_corpus/llama/onnx_dynamic.xml", "--json")
    assert code == 1
    jsonschema.validate(json.loads(out), SCHEMA)


def test_a_missing_or_broken_model_is_one_error_line_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, SAMPLES / "mixed_ops.xml", tmp_path / "nope.xml")
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith("error: ") and "nope.xml" in err
    (tmp_path / "bad.xml").write_text("<net><layers>")
    code, out, err = run(capsys, tmp_path / "bad.xml", SAMPLES / "mixed_ops.xml", "--json")
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith("error: ") and "bad.xml" in err
    code, out, err = run(capsys, SAMPLES / "mixed_ops.bin", SAMPLES / "mixed_ops.xml")
    assert code == 2 and "mixed_ops.xml" in err


def test_a_bin_that_does_not_hold_the_weights_is_an_error_naming_it(capsys, tmp_path):
    shutil.copy(SAMPLES / "mixed_ops.xml", tmp_path / "m.xml")
    (tmp_path / "m.bin").write_bytes(b"\0")
    code, _, err = run(capsys, SAMPLES / "mixed_ops.xml", tmp_path / "m.xml")
    assert code == 2 and err.startswith("error: ") and "m.bin" in err


def _renamed(tmp_path: Path) -> Path:
    G = og.read_ir(ROOT / "ir_corpus/bert/pytorch_dynamic.xml")
    for k, n in enumerate(G):
        G.nodes[n]["name"] = f"layer_{k}"
    og.write_ir(G, tmp_path / "renamed.xml")
    return tmp_path / "renamed.xml"


def test_the_text_is_bounded_and_all_lists_everything(capsys, tmp_path):
    other = _renamed(tmp_path)
    code, out, _ = run(capsys, ROOT / "ir_corpus/bert/pytorch_dynamic.xml", other)
    assert code == 1
    assert " … and " in out and "--all or --json lists them" in out
    code, every, _ = run(capsys, ROOT / "ir_corpus/bert/pytorch_dynamic.xml", other, "--all")
    assert "… and" not in every
    assert sum(line.startswith(" renamed ") for line in every.splitlines()) == \
        og.diff(ROOT / "ir_corpus/bert/pytorch_dynamic.xml", other).summary["renamed"]


def test_the_report_object(tmp_path):
    report = og.diff(SAMPLES / "mixed_ops.xml", SAMPLES / "wrong_mixed_ops_nd8_dim.xml")
    assert not report.equal
    assert json.loads(json.dumps(report.to_dict())) == report.to_dict()
    html = report._repr_html_()
    assert "pick_rows_nd8" in html and "<table>" in html
    assert og.diff(og.read_ir(SAMPLES / "mixed_ops.xml"), SAMPLES / "mixed_ops.xml").equal
    big = og.diff(ROOT / "ir_corpus/bert/pytorch_dynamic.xml", _renamed(tmp_path))
    html = big._repr_html_()
    assert html.count("<tr>") == HTML_ROWS + 1  # the head row and HTML_ROWS rows
    assert "more rows" in html
    with pytest.raises(og.OvgatherError, match="two IR paths or graphs"):
        og.diff(SAMPLES / "mixed_ops.xml", 42)


def test_a_replaced_block_is_one_replacement():
    """Two layers in a row replaced by one: one replacement, nothing else."""
    G0 = og.read_ir(SAMPLES / "mixed_ops.xml")
    G1 = og.read_ir(SAMPLES / "mixed_ops.xml")
    # a chain a -> b of single-input layers, each read only by the next
    chain = next((a, b) for a in G1 for b in G1.successors(a)
                 if G1.out_degree(a) == 1 and len(G1.nodes[b]["inputs"]) >= 1
                 and G1.nodes[a]["type"] not in ("Const", "Parameter")
                 and G1.nodes[b]["type"] not in ("Result",) and G1.in_degree(a) >= 1
                 and len(list(G1.successors(b))) >= 1)
    a, b = chain
    src = og.graph.producer(G1, a, G1.nodes[a]["inputs"][0]["id"])
    port = G1.nodes[b]["outputs"][0]
    fused = og.add_layer(G1, "FusedThing", "extension", inputs=[src],
                         outputs=[{"precision": port["precision"], "dims": port["dims"]}],
                         name="fused")
    og.replace_layer(G1, b, fused)
    report = og.diff(G0, G1)
    assert len(report.replaced) == 1
    (r,) = report.replaced
    assert {x["id"] for x in r["removed"]} >= {a, b} - set(G1)
    assert [x["name"] for x in r["added"]] == [G1.nodes[fused]["name"]]
    assert not [d for d in report.layers if d.status in ("added", "removed")]


def test_layer_order_and_ids_do_not_count(tmp_path):
    """The same model with its layers renumbered in another order: no difference."""
    G = og.read_ir(SAMPLES / "dynamic_gathers.xml")
    nodes = list(G)
    ids = [str(k) for k in range(len(nodes))]
    random.Random(3).shuffle(ids)
    import networkx as nx

    H = nx.relabel_nodes(G, dict(zip(nodes, ids, strict=True)))
    og.write_ir(H, tmp_path / "renumbered.xml")
    assert og.diff(SAMPLES / "dynamic_gathers.xml", tmp_path / "renumbered.xml").equal
