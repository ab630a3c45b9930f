"""``compare A.onnx B --all-layers --ref onnxruntime``: A run by ONNX Runtime, B (the IR
OpenVINO's ONNX frontend makes of A, or A itself read by OpenVINO) by the CPU plugin.

Oracles: ONNX Runtime's own list of A's node outputs (``OnnxRuntimeLayers``, the other side
of the seam) for what must pair, and the graph of the IR for the layer a changed weight
must be found at (``layer_faults``)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import openvino as ov
import pytest
from layer_faults import faults, perturbed

import ovgather as og
from ovgather.cli import main
from ovgather.runtime.onnxruntime_runner import OnnxRuntimeLayers

DATA = Path(__file__).resolve().parents[1] / "data" / "onnx_ref"
#: the issue's bar: the share of A's non-constant node outputs that must pair
MIN_PAIRED = 0.9


@pytest.fixture(scope="module")
def irs(tmp_path_factory) -> dict[str, Path]:
    """Each model's IR as OpenVINO's ONNX frontend reads it, f32 weights."""
    folder = tmp_path_factory.mktemp("irs")
    out = {}
    for name in ("conv_net", "gpt2", "distilbert"):
        xml = folder / f"{name}.xml"
        ov.save_model(ov.Core().read_model(str(DATA / f"{name}.onnx")), str(xml),
                      compress_to_fp16=False)
        out[name] = xml
    return out


def _layers(argv: list[str], capsys) -> tuple[int, dict]:
    code = main(["compare", *argv, "--all-layers", "--ref", "onnxruntime", "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("name", "b"), [("conv_net", "ir"), ("conv_net", "onnx"),
                                         ("gpt2", "ir")])
def test_the_same_model_pairs_its_node_outputs_and_none_differs(name, b, irs, capsys):
    a = DATA / f"{name}.onnx"
    code, doc = _layers([str(a), str(irs[name] if b == "ir" else a)], capsys)
    assert code == 0 and doc["ref"] == "onnxruntime" and doc["first_divergent"] is None
    live = [o for o in OnnxRuntimeLayers(a).outputs() if not o.constant]
    paired = {(e["a"], e["port"]) for e in doc["layers"] if e["a"] and e["b"]}
    assert len(paired & {(o.layer, o.port) for o in live}) >= MIN_PAIRED * len(live)
    assert [e for e in doc["layers"] if e["status"] in ("differs", "not run")] == []
    assert all(e["line_a"] is None for e in doc["layers"])  # A is no XML file


@pytest.mark.parametrize("name", ["conv_net", "distilbert"])
def test_an_ir_with_one_weight_changed_is_located(name, irs, tmp_path, capsys):
    xml = irs[name]
    G = og.read_ir(str(xml))
    order = {G.nodes[n]["name"]: k for k, n in enumerate(G)}
    fault = min(faults(G), key=lambda f: order[f.reader])  # the earliest: most after it
    code, doc = _layers([str(DATA / f"{name}.onnx"), str(perturbed(xml, fault, tmp_path))],
                        capsys)
    # the reader itself, or, where the ONNX graph has no node for it (a Conv's bias split
    # off as an Add: the IR's Convolution is only in B), the first paired layer after it
    reader = next(n for n in G if G.nodes[n]["name"] == fault.reader)
    reached = {G.nodes[n]["name"] for n in (reader, *nx.descendants(G, reader))}
    expected = next(e for e in doc["layers"] if e["a"] and e["b"] in reached)
    first = doc["first_divergent"]
    assert code == 1 and first is not None and first["b"] == expected["b"]
    assert first["line_b"] == next(a["line"] for _, a in G.nodes(data=True)
                                   if a["name"] == first["b"])
    k = next(i for i, e in enumerate(doc["layers"]) if e["status"] == "differs")
    assert all(e["status"] in ("ok", "only in B") for e in doc["layers"][:k])


def test_ref_onnxruntime_needs_an_onnx_a_and_all_layers(irs, capsys):
    assert main(["compare", str(irs["conv_net"]), str(irs["conv_net"]), "--all-layers",
                 "--ref", "onnxruntime"]) == 2
    assert "ONNX Runtime runs an .onnx model as A" in capsys.readouterr().err
    onnx = str(DATA / "conv_net.onnx")
    assert main(["compare", onnx, onnx, "--ref", "onnxruntime"]) == 2
    assert "--all-layers" in capsys.readouterr().err
