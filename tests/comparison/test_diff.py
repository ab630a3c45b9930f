"""``og.diff`` against every rewrite ovgather makes: the report lists exactly what the
rewrite changed and nothing else.

The oracle: a rewrite in memory keeps the ids of the layers it leaves, so the true pairing
is "the same id", the true removed and added layers are the ids of one graph only, and
a kept layer has changed when its dict, its weights or a paired producer differ. The
report must pair every kept layer with itself, list exactly the others as removed, added
or replaced, and exactly the changed ones as changed or renamed.
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pytest

import ovgather as og
from ovgather.comparison.diff_match import Side
from ovgather.comparison.diff_report import DiffReport

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(glob.glob(str(ROOT / "ir_samples" / "*.xml")))
CORPUS = [str(ROOT / "ir_corpus" / p) for p in
          ("bert/pytorch_dynamic.xml", "llama_kv/pytorch_stateful.xml",
           "t5/onnx_legacy_dynamic.xml", "resnet/onnx_dynamic.xml")]
COMPARED = ("name", "type", "version", "data", "layer_attrs", "inputs", "outputs", "rt_info")


def _sources(S: Side, n: str) -> list:
    return [None if p is None else tuple(p) for p in S.ins[n]]


def expected(G0, G1) -> tuple[set[str], set[str], set[str]]:
    """(removed, added, changed) by id."""
    A, B = Side(G0), Side(G1)
    removed, added = set(G0) - set(G1), set(G1) - set(G0)
    changed = set()
    for n in set(G0) & set(G1):
        a, b = G0.nodes[n], G1.nodes[n]
        if any(a.get(k) != b.get(k) for k in COMPARED):
            changed.add(n)
        elif a.get("type") in ("Const", "Constant") and A.content(n) != B.content(n):
            changed.add(n)
        elif any(pa != pb and pa is not None and pb is not None and pa[0] in G1 and pb[0] in G0
                 for pa, pb in zip(_sources(A, n), _sources(B, n), strict=False)):
            changed.add(n)
    return removed, added, changed


def check_exact(G0, G1) -> DiffReport:
    report = og.diff(G0, G1)
    removed, added, changed = expected(G0, G1)
    kept = set(G0) & set(G1)
    wrong = {a: b for a, b in report.pairs.items() if a != b}
    assert not wrong, f"false pairs: {wrong}"
    assert set(report.pairs) == kept, f"unpaired kept layers: {kept - set(report.pairs)}"
    got_removed = {d.a["id"] for d in report.layers if d.status == "removed"}
    got_added = {d.b["id"] for d in report.layers if d.status == "added"}
    for r in report.replaced:
        got_removed |= {x["id"] for x in r["removed"]}
        got_added |= {x["id"] for x in r["added"]}
    assert got_removed == removed
    assert got_added == added
    got_changed = {d.a["id"] for d in report.layers if d.status in ("changed", "renamed")}
    assert got_changed == changed
    for d in report.layers:
        if d.status in ("changed", "renamed"):
            assert d.changes
    assert report.equal == (not (removed or added or changed) and not report.inputs
                            and not report.outputs and not report.model)
    return report


def _changes(report: DiffReport, node: str) -> list[dict]:
    return next(d.changes for d in report.layers if d.a and d.a["id"] == node)


@pytest.mark.parametrize("path", [*SAMPLES, *CORPUS[:2]], ids=lambda p: Path(p).name)
def test_a_model_and_its_round_trip_have_no_difference(path, tmp_path):
    assert og.diff(path, path).equal
    og.write_ir(og.read_ir(path), tmp_path / "rt.xml")
    report = og.diff(path, tmp_path / "rt.xml")
    assert report.equal, report.to_dict()
    assert report.summary["paired"] == report.summary["layers_a"]


GATHERS = [p for p in SAMPLES if "gather_nd" in p or "gather_versions" in p
           or "dynamic_gathers" in p or "mixed_ops" in p]


@pytest.mark.parametrize("path", GATHERS, ids=lambda p: Path(p).name)
@pytest.mark.parametrize("to", ["opset5", "opset8"])
def test_convert_gather_nd_lists_exactly_its_changes(path, to):
    G0, G1 = og.read_ir(path), og.read_ir(path)
    records = og.convert_gather_nd(G1, to=to)
    report = check_exact(G0, G1)
    inserted = {x["id"] for r in records for x in r.get("inserted", ())}
    assert inserted <= set(G1) - set(G0)
    assert report.equal == (not records)


@pytest.mark.parametrize("path,shape", [
    ("ir_samples/mixed_ops.xml", {"x": "[4,3,8]"}),
    ("ir_samples/loop_gather.xml", {"table": "[5,4]"}),
    ("ir_corpus/bert/pytorch_dynamic.xml", {"input_ids": "[2,16]"}),
])
def test_reshape_lists_exactly_its_changes(path, shape):
    G0 = og.read_ir(ROOT / path)
    G1 = og.read_ir(ROOT / path)
    og.reshape(G1, shape)
    report = check_exact(G0, G1)
    assert not report.equal
    assert any(e["status"] == "changed" for e in report.inputs)


def _float_layer(G) -> str:
    """A non-Const layer with one float output read by someone."""
    for n in G:
        attrs = G.nodes[n]
        if attrs["type"] not in ("Const", "Parameter", "Result") and len(
                attrs["outputs"]) == 1 and attrs["outputs"][0]["precision"] == "FP32" \
                and G.out_degree(n) and attrs["inputs"]:
            return n
    raise AssertionError("no float layer")


EDITED = ["ir_samples/mixed_ops.xml", "ir_samples/dynamic_gathers.xml",
          "ir_corpus/bert/pytorch_dynamic.xml", "ir_corpus/resnet/onnx_dynamic.xml"]


def _edits(G) -> dict:
    """name -> a function applying one edit to G (returns what it made)."""
    def insert(G):
        src = _float_layer(G)
        port = G.nodes[src]["outputs"][0]
        two = og.add_const(G, np.array(2, dtype=np.float32), name="two")
        mul = og.add_layer(G, "Multiply", "opset1", inputs=[(src, port["id"]), (two, 0)],
                           outputs=[{"precision": "FP32", "dims": port["dims"]}])
        og.insert_after(G, src, port["id"], mul)
        return mul

    def bypass(G):
        return og.bypass(G, _float_layer(G))

    def replace(G):
        old = _float_layer(G)
        src = og.graph.producer(G, old, G.nodes[old]["inputs"][0]["id"])
        port = G.nodes[old]["outputs"][0]
        new = og.add_layer(G, "Relu", "opset1", inputs=[src],
                           outputs=[{"precision": "FP32", "dims": port["dims"]}])
        og.replace_layer(G, old, new)
        return new

    def remove(G):
        result = next(n for n in G if G.nodes[n]["type"] == "Result")
        return og.remove_layer(G, result)

    def set_const(G):
        const = max((n for n in G if G.nodes[n]["type"] == "Const"
                     and G.nodes[n]["data"]["element_type"] == "f32"),
                    key=lambda n: og.const_value(G, n).size, default=None)
        if const is None:
            const = next(n for n in G if G.nodes[n]["type"] == "Const")
        value = np.array(og.const_value(G, const))
        og.set_const(G, const, value + 1 if value.dtype.kind == "f" else value * 2 + 1)
        return const

    def rename_input(G):
        param = next(n for n in G if G.nodes[n]["type"] == "Parameter")
        return og.rename_input(G, G.nodes[param]["name"], "renamed_input")

    def rename_output(G):
        result = next(n for n in G if G.nodes[n]["type"] == "Result")
        return og.rename_output(G, G.nodes[result]["name"], "renamed_output")

    return {"insert_after": insert, "bypass": bypass, "replace_layer": replace,
            "remove_layer": remove, "set_const": set_const, "rename_input": rename_input,
            "rename_output": rename_output}


@pytest.mark.parametrize("path", EDITED, ids=lambda p: Path(p).parent.name + "/" + Path(p).name)
@pytest.mark.parametrize("edit", list(_edits(None)))
def test_every_edit_verb_lists_exactly_its_changes(path, edit, tmp_path):
    G0, G1 = og.read_ir(ROOT / path), og.read_ir(ROOT / path)
    made = _edits(G1)[edit](G1)
    report = check_exact(G0, G1)
    assert not report.equal
    if edit == "set_const":
        (weights,) = [c for c in _changes(report, made) if c["what"] == "weights"]
        assert weights["max_abs"] and weights["max_abs"] > 0
    if edit == "rename_input":
        (entry,) = report.inputs
        assert entry["b"] == "renamed_input"
    if edit == "rename_output":
        assert [e["b"] for e in report.outputs] == ["renamed_output"]
    if edit == "replace_layer":  # the old layer went, the Relu came in its place
        assert report.replaced or any(d.status == "added" for d in report.layers)
    # the same through files: the written model, diffed from the original file
    og.write_ir(G1, tmp_path / "edited.xml")
    again = og.diff(ROOT / path, tmp_path / "edited.xml")
    assert again.to_dict()["layers"] == report.to_dict()["layers"]
