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
