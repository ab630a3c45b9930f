"""``compare_layers`` and ``compare --all-layers``: how outputs pair up, the chunks a memory
budget makes, and what a user reads.

Oracles: hand-made layer records for the pairing rules; for runs, OpenVINO's own reading of
the model (its layer outputs) and the graph of a perturbed copy (``layer_faults``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from layer_faults import faults, perturbed

import ovgather as og
from ovgather.cli import main
from ovgather.comparison.layers import compare_layers, pair_layers
from ovgather.runtime.layer_outputs import LayerOutput

ROOT = Path(__file__).resolve().parents[2]
RESNET = ROOT / "ir_corpus/resnet/pytorch_static.xml"


def out(layer: str, port: int = 0, names: tuple[str, ...] = (), constant: bool = False,
        kind: str = "Add") -> LayerOutput:
    return LayerOutput(layer, port, frozenset(names), None, kind, constant)


def test_tensor_names_pair_first_then_layer_name_and_port():
    a = [out("x", names=("t1",)), out("y", names=("t2",)), out("z", 1)]
    b = [out("renamed", names=("t1",)), out("x", names=("other",)), out("y"), out("z", 1)]
    got = pair_layers(a, b)
    assert [(p[0].layer if p[0] else None, p[1].layer if p[1] else None) for p in got] == [
        ("x", "renamed"), (None, "x"), ("y", "y"), ("z", "z")]


def test_each_output_of_b_pairs_once_and_the_lonely_are_listed_in_place():
    a = [out("p", names=("t",)), out("q", names=("t",)), out("r")]
    b = [out("p", names=("t",)), out("new"), out("r"), out("tail")]
    got = [(x.layer if x else None, y.layer if y else None) for x, y in pair_layers(a, b)]
    assert got == [("p", "p"), (None, "new"), ("q", None), ("r", "r"), (None, "tail")]


def test_constants_are_neither_compared_nor_listed():
    a = [out("w", kind="Const", constant=True), out("conv", names=("c",))]
    b = [out("w", kind="Const", constant=True), out("w16", constant=True),
         out("conv", names=("c",))]
    assert [(x.layer, y.layer) for x, y in pair_layers(a, b)] == [("conv", "conv")]


@pytest.fixture(scope="module")
def resnet_one_chunk():
    return compare_layers(RESNET, RESNET)


def test_a_small_memory_budget_runs_more_chunks_to_the_same_verdicts(resnet_one_chunk):
    whole = resnet_one_chunk
    budget = whole.peak_bytes - 1  # one chunk of everything no longer fits
    small = compare_layers(RESNET, RESNET, memory_budget=budget)
    assert whole.chunks == 1 and small.chunks > 1 and small.peak_bytes <= budget
    assert small.compiles == 2 * small.chunks and whole.compiles == 2
    assert [(lc.a, lc.status, lc.max_abs) for lc in small.layers] == \
        [(lc.a, lc.status, lc.max_abs) for lc in whole.layers]


def test_the_cli_names_the_first_divergent_layer_with_its_lines(tmp_path, capsys):
    G = og.read_ir(str(RESNET))
    fault = faults(G)[1]
    b = perturbed(RESNET, fault, tmp_path)
    line = next(a["line"] for _, a in G.nodes(data=True) if a["name"] == fault.reader)
    assert main(["compare", str(RESNET), str(b), "--all-layers"]) == 1
    text = capsys.readouterr().out
    assert (f"first divergent: {fault.reader} (line {line} of {RESNET.name}) / "
            f"{fault.reader} (line {line} of model.xml)") in " ".join(text.split())
    assert "the worst after it:" in text
    assert main(["compare", str(RESNET), str(b), "--all-layers", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["first_divergent"]["a"] == fault.reader == doc["first_divergent"]["b"]
    assert doc["layer_summary"]["differs"] >= 1 and len(doc["growth"]) <= 5
    differs = [e for e in doc["layers"] if e["status"] == "differs"]
    assert differs[0]["a"] == fault.reader and differs[0]["max_abs"] > 1e-2


def test_a_model_against_itself_exits_0_from_the_cli(capsys):
    assert main(["compare", str(RESNET), str(RESNET), "--all-layers"]) == 0
    assert "no layer output differs" in capsys.readouterr().out


def test_an_output_over_the_budget_alone_is_not_run_and_says_so(resnet_one_chunk):
    from ovgather.runtime.layer_runs import OpenVinoLayers

    whole = resnet_one_chunk
    fed = {n: list(a.shape) for n, a in whole.outputs.arrays.items()}
    sizes = {o: n for o, n in OpenVinoLayers(RESNET).output_bytes(fed).items()
             if not o.constant}  # OpenVINO's shape inference at the sizes fed
    largest = max(sizes.values())
    fixed = whole.peak_bytes - 2 * sum(sizes.values())  # one chunk held every output
    small = compare_layers(RESNET, RESNET, memory_budget=fixed + 2 * largest - 1)
    over = {(lc.a, lc.port) for lc in small.layers if lc.status == "not run"}
    assert over == {(o.layer, o.port) for o, n in sizes.items() if n == largest}
    assert all("over the memory budget" in lc.message for lc in small.layers
               if lc.status == "not run")
    assert small.ok and small.summary["ok"] == len(small.layers) - len(over)


def _read(layer: str, kind: str, *sources) -> LayerOutput:
    return LayerOutput(layer, 0, frozenset(), None, kind, False, tuple(sources))


def test_layers_the_reader_named_by_a_counter_pair_by_what_they_read():
    """OpenVINO's reader names the layers it makes (an IR v10's conversions) by a counter
    that runs on between reads: ``Convert_32`` in A is ``Convert_57`` in B. They pair when
    each input reads partners, one after another along a chain; a leftover that reads
    something else, or is of another type, stays alone."""
    a = [_read("mm", "MatMul", ("", 0), None), _read("Convert_32", "Convert", ("mm", 0)),
         _read("Add_33", "Add", ("Convert_32", 0), None), _read("Relu_9", "Relu", ("", 1))]
    b = [_read("mm", "MatMul", ("", 0), None), _read("Convert_57", "Convert", ("mm", 0)),
         _read("Add_58", "Add", ("Convert_57", 0), None), _read("Relu_60", "Relu", ("", 0)),
         _read("Sigmoid_61", "Sigmoid", ("", 1))]
    got = [(x.layer if x else None, y.layer if y else None) for x, y in pair_layers(a, b)]
    assert got == [("mm", "mm"), ("Convert_32", "Convert_57"), ("Add_33", "Add_58"),
                   (None, "Relu_60"), (None, "Sigmoid_61"), ("Relu_9", None)]


def _v10_f16(folder: Path, bias: float = 1.0) -> Path:
    """An IR v10 whose input and weights are f16: OpenVINO's reader puts a Convert of its
    own after the input and renames the last layer, both by its counter."""
    import re

    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops

    folder.mkdir(parents=True, exist_ok=True)
    x = ops.parameter([1, 8], np.float16, name="data")
    w = ops.constant(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float16))
    h = ops.add(ops.matmul(x, w, False, False), ops.constant(np.full((1, 4), bias, np.float16)))
    y = ops.relu(ops.multiply(ops.sigmoid(h), h))
    v11 = folder / "v11.xml"
    ov.save_model(ov.Model([y.output(0)], [x], "m"), v11, compress_to_fp16=False)
    v10 = folder / "model.xml"
    v10.write_text(re.sub(r'(<net name="[^"]*" version=)"11"', r'\1"10"', v11.read_text(),
                          count=1))
    v10.with_suffix(".bin").write_bytes(v11.with_suffix(".bin").read_bytes())
    return v10


def test_an_ir_v10_against_itself_pairs_the_layers_its_reader_made(tmp_path):
    xml = _v10_f16(tmp_path / "a")
    report = compare_layers(xml, xml)
    assert report.ok and all(lc.status == "ok" for lc in report.layers)
    made = [lc for lc in report.layers if lc.line_a is None]  # not in the file: the reader's
    assert made and all(lc.a != lc.b for lc in made)  # its counter ran on between reads
    changed = compare_layers(xml, _v10_f16(tmp_path / "b", bias=3.0))
    made = {lc.type: lc.status for lc in changed.layers if lc.line_a is None}
    assert made == {"Convert": "ok", "Relu": "differs"}  # before the bias, and after it
