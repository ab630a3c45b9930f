"""Pictures of real models: blocks by name scope, the whole model always, overlays, search.

Models are built with OpenVINO's opset API (a PyTorch-, an ONNX- and a Model-Optimizer-
named one, an SSD-like detector with PriorBox and DetectionOutput, a YOLO-like one) or
taken from ir_corpus/; the pages are opened in headless Chromium.
"""

from __future__ import annotations

import html
import json
import re
import struct
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from browser import page_dom, with_probe
from openvino import opset8

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.views.show.groups import group, scope_path
from ovgather.views.show.outline import _constants

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "ir_corpus" / "llama_deep" / "pytorch_dynamic.xml"


def _conv_stage(x, scope: str, sep: str, channels: int = 4):
    w = opset8.constant(np.ones((channels, x.get_output_partial_shape(0)[1].get_length(), 3, 3),
                                np.float32))
    conv = opset8.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    conv.set_friendly_name(f"{scope}{sep}conv")
    bias = opset8.add(conv, opset8.constant(np.zeros((1, channels, 1, 1), np.float32)))
    bias.set_friendly_name(f"{scope}{sep}bias")
    relu = opset8.relu(bias)
    relu.set_friendly_name(f"{scope}{sep}relu")
    return relu


def _named(tmp: Path, scopes: list[str], sep: str = "/") -> Path:
    x = opset8.parameter([1, 3, 16, 16], np.float32, name="data")
    y = x
    for s in scopes:
        y = _conv_stage(y, s, sep)
    model = ov.Model([opset8.result(y)], [x], "named")
    ov.save_model(model, str(tmp / "m.xml"), compress_to_fp16=False)
    return tmp / "m.xml"


def _tree(path: Path):
    G = read_ir(path)
    import networkx as nx
    order = list(nx.topological_sort(G))
    folded = _constants(G, order, {})
    drawn = [n for n in order if n not in folded]
    return G, group(G, drawn, lambda u, p: "?")


def _block_of(G, tree, name: str) -> str:
    n = next(n for n in G if G.nodes[n]["name"] == name)
    b = tree.block_of[n]
    while tree.blocks[b].kind != "scope":
        b = tree.blocks[b].parent
    return tree.blocks[b].key


@pytest.mark.parametrize("naming", ["pytorch", "onnx", "omz"])
def test_each_layer_is_in_the_block_its_name_scope_names(naming: str, tmp_path: Path) -> None:
    if naming == "pytorch":
        scopes = [f"__module.backbone.stages.{i}.conv/aten::_convolution" for i in range(3)]
        stage = "__module.backbone.stages.{i}.conv"
    elif naming == "onnx":
        scopes = [f"/backbone/stages.{i}/conv" for i in range(3)]
        stage = "/backbone/stages.{i}/conv"
    else:
        scopes = [f"stage{i}/unit" for i in range(3)]
        stage = "stage{i}/unit"
    G, tree = _tree(_named(tmp_path, scopes))
    for i, s in enumerate(scopes):
        for op in ("conv", "bias", "relu"):
            assert _block_of(G, tree, f"{s}/{op}") == stage.format(i=i)
    assert scope_path(f"{scopes[1]}/relu")[-1] == stage.format(i=1)


def test_identical_decoder_layers_are_one_block_with_a_count() -> None:
    G, tree = _tree(LLAMA)
    repeats = [b for b in tree.blocks if b.kind == "repeat" and b.parent != -2]
    assert repeats and max(b.repeat for b in repeats) >= 40
    assert "×" in repeats[0].label


def _probe_json(dom: str) -> dict:
    return json.loads(html.unescape(re.search(r'data-probe="([^"]*)"', dom).group(1)))


_COUNT_PROBE = """
const P = window.ovgatherPage;
const out = {layers: P.layers.length, ids: P.layers.map(r => r[0]),
             shown: document.querySelectorAll("g.node").length,
             closed: document.querySelectorAll("g.block.closed").length};
const rendered = performance.getEntriesByName("og-rendered")[0];
out.rendered = rendered ? rendered.startTime : null;
const name = P.layers[P.layers.length >> 1][1];
P.search(name);
out.found = document.body.dataset.found === name;
out.hit = document.querySelectorAll(".og-hit").length;
document.body.dataset.probe = JSON.stringify(out);
"""


def _every_layer_in_the_page(model: Path, tmp_path: Path) -> dict:
    page = tmp_path / "m.html"
    assert main(["show", str(model), "-o", str(page)]) == 0
    dom, _ = page_dom(with_probe(page, _COUNT_PROBE, tmp_path / "p.html"), budget_ms=5000)
    probe = _probe_json(dom)
    ids = sorted(n for n in read_ir(model))
    assert sorted(probe["ids"]) == ids  # every layer of the model is in the page's data
    assert probe["found"] and probe["hit"] == 1  # and search reaches one
    return probe


_MODELS = sorted([*(ROOT / "ir_samples").glob("*.xml"), *(ROOT / "ir_corpus").glob("*/*.xml")])


@pytest.mark.parametrize("model", _MODELS, ids=[f"{p.parent.name}/{p.name}" for p in _MODELS])
def test_every_layer_of_every_sample_and_corpus_ir_is_in_its_page(model: Path,
                                                                  tmp_path: Path) -> None:
    _every_layer_in_the_page(model, tmp_path)


def test_the_5k_llama_opens_collapsed_and_every_layer_is_reachable(tmp_path: Path) -> None:
    probe = _every_layer_in_the_page(LLAMA, tmp_path)
    assert probe["layers"] == 4945 and probe["closed"] >= 1 and probe["shown"] < 300
    assert probe["rendered"] < 2000  # Chromium's own mark, from navigation start


_OPEN_PROBE = """
const P = window.ovgatherPage;
const closed = Array.from(document.querySelectorAll("g.block.closed")).map(g => +g.id.slice(1));
const count = () => document.querySelectorAll("g.node, g.block.closed").length;
const before = count();
P.open(closed[closed.length - 1]);
const m = performance.getEntriesByName("og-open")[0];
document.body.dataset.probe = JSON.stringify({before: before, ms: m.duration,
  after: count()});
"""


def test_opening_a_block_draws_its_layers_at_once(tmp_path: Path) -> None:
    page = tmp_path / "m.html"
    assert main(["show", str(LLAMA), "-o", str(page)]) == 0
    dom, _ = page_dom(with_probe(page, _OPEN_PROBE, tmp_path / "p.html"))
    probe = _probe_json(dom)
    assert probe["after"] > probe["before"] and probe["ms"] < 300


def _ssd(tmp: Path) -> Path:
    x = opset8.parameter([1, 3, 64, 64], np.float32, name="data")
    feats, y = [], x
    for i in range(30):  # a backbone of 30 stages, OMZ names
        y = _conv_stage(y, f"conv{i}", "/")
        if i % 10 == 9:
            feats.append(y)
    locs, confs, priors = [], [], []
    for i, f in enumerate(feats):
        loc = opset8.reshape(_conv_stage(f, f"conv{i}_mbox_loc", "/", 4),
                             opset8.constant(np.array([1, -1], np.int64)), False)
        conf = opset8.reshape(_conv_stage(f, f"conv{i}_mbox_conf", "/", 2),
                              opset8.constant(np.array([1, -1], np.int64)), False)
        pb = opset8.prior_box(opset8.constant(np.array([64, 64], np.int64)),
                              opset8.constant(np.array([64, 64], np.int64)),
                              {"min_size": [8.0], "aspect_ratio": [1.0], "flip": False,
                               "clip": False, "step": 1.0, "offset": 0.5,
                               "variance": [0.1, 0.1, 0.2, 0.2]})
        pb.set_friendly_name(f"conv{i}_mbox_priorbox")
        locs.append(loc)
        confs.append(conf)
        priors.append(opset8.reshape(pb, opset8.constant(np.array([1, 2, -1], np.int64)), False))
    det = opset8.detection_output(opset8.concat(locs, 1), opset8.concat(confs, 1),
                                  opset8.concat(priors, 2),
                                  {"num_classes": 2, "background_label_id": 0, "top_k": 10,
                                   "keep_top_k": [10], "code_type": "caffe.PriorBoxParameter."
                                   "CENTER_SIZE", "nms_threshold": 0.45,
                                   "confidence_threshold": 0.01, "share_location": True,
                                   "normalized": True})
    det.set_friendly_name("detection_out")
    model = ov.Model([opset8.result(det)], [x], "ssd")
    ov.save_model(model, str(tmp / "ssd.xml"), compress_to_fp16=False)
    return tmp / "ssd.xml"


def _yolo(tmp: Path) -> Path:
    x = opset8.parameter([1, 3, 32, 32], np.float32, name="images")
    y, outs = x, []
    for i in range(40):  # /model.i/ scopes, a head of three outputs
        y = _conv_stage(y, f"/model.{i}/cv1", "/")
        if i >= 37:
            outs.append(opset8.reshape(y, opset8.constant(np.array([1, 4, -1], np.int64)),
                                       False))
    head = opset8.concat(outs, 2)
    head.set_friendly_name("/model.40/Concat")
    model = ov.Model([opset8.result(head)], [x], "yolo")
    ov.save_model(model, str(tmp / "yolo.xml"), compress_to_fp16=False)
    return tmp / "yolo.xml"


def _png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


@pytest.mark.parametrize("kind", ["ssd", "yolo"])
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_a_detector_is_drawn_whole_and_bounded(kind: str, fmt: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    model = (_ssd if kind == "ssd" else _yolo)(tmp_path)
    out = tmp_path / f"m.{fmt}"
    assert main(["show", str(model), "-o", str(out), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)
    total = len(read_ir(model))
    assert counts["left_out"] == 0 and counts["collapsed"] > 0
    assert counts["drawn"] + counts["folded"] + counts["collapsed"] == total
    if fmt == "png":
        w, h = _png_size(out)
    else:
        w, h = (float(v) * 4 / 3 for v in re.search(
            r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', out.read_text()).groups())
    assert max(w, h) <= 10_000, (w, h)
    text = out.read_text(errors="replace") if fmt == "svg" else ""
    if kind == "ssd" and fmt == "svg":
        assert "detection_out" in text  # the head is drawn


def test_graphviz_failures_step_down_to_a_layout_it_can_do(tmp_path: Path, monkeypatch,
                                                           capsys) -> None:
    from ovgather.views.show import graphviz

    real = graphviz._run

    def fussy(exe, args, data, path):  # a layout that fails, as some of 2.43 do
        if b"cluster" in data and b"newrank" not in data:
            return real(exe, args, b"digraph { a -> }", path)
        return real(exe, args, data, path)

    monkeypatch.setattr(graphviz, "_run", fussy)
    out = tmp_path / "m.svg"
    assert main(["show", str(_yolo(tmp_path)), "-o", str(out), "--max-layers", "0"]) == 0
    assert "drawn with" in capsys.readouterr().out and out.stat().st_size > 0


def _overlay_page(model: Path, report: dict, tmp_path: Path) -> str:
    rep = tmp_path / "r.json"
    rep.write_text(json.dumps(report))
    page = tmp_path / "o.html"
    assert main(["show", str(model), "-o", str(page), "--overlay", str(rep)]) == 0
    dom, _ = page_dom(page)
    return dom


def _report(kind: str, model: Path, tmp_path: Path, capsys) -> dict:
    if kind == "check":
        main(["check", str(model), "--json"])
    elif kind == "diff":
        main(["diff", str(model), str(model), "--json"])
    elif kind == "stats":
        main(["stats", str(model), "--by", "layer", "--json"])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", ["check", "stats", "compare"])
def test_an_overlay_of_each_report_kind_fills_the_side_table(kind: str, tmp_path: Path,
                                                             capsys) -> None:
    model = ROOT / "ir_samples" / "mixed_ops.xml"
    G = read_ir(model)
    names = [G.nodes[n]["name"] for n in G]
    if kind == "compare":
        report = {"layers": [{"a": n, "b": n, "port": 0, "tensor": None, "status": "ok",
                              "max_abs": 0.0, "max_rel": 1e-7} for n in names],
                  "first_divergent": None}
    else:
        report = _report(kind, model, tmp_path, capsys)
    dom = _overlay_page(model, report, tmp_path)
    rows = re.findall(r'<tr data-layer="\d+">', dom)
    assert len(rows) >= len(names) // 2


def test_a_diff_overlay_colours_the_changed_layers(tmp_path: Path, capsys) -> None:
    model = ROOT / "ir_samples" / "mixed_ops.xml"
    G = read_ir(model)
    name = next(G.nodes[n]["name"] for n in G if G.nodes[n]["type"] != "Const")
    report = {"a": "a.xml", "b": "b.xml", "equal": False, "summary": {},
              "layers": [{"status": "changed", "a": {"id": "1", "name": name, "type": "x"},
                          "b": {"id": "1", "name": name, "type": "x"}, "paired_by": "name",
                          "changes": [{"what": "attribute"}]}]}
    dom = _overlay_page(model, report, tmp_path)
    assert re.search(r'<tr data-layer="\d+"><td>' + re.escape(name) + r"</td><td>changed", dom)


_EVIL = '<img src=x onerror="document.body.dataset.pwned=1">'


def test_no_script_of_a_layer_or_block_name_runs(tmp_path: Path) -> None:
    model = _named(tmp_path, [_EVIL.replace("/", ""), "</script><script>document.body."
                              "dataset.pwned=2</script>".replace("/", "")])
    page = tmp_path / "e.html"
    assert main(["show", str(model), "-o", str(page)]) == 0
    dom, _ = page_dom(page, "find=conv")
    assert "data-pwned" not in dom
    assert "data-found" in dom


def test_a_precision_overlay_colours_by_local_error_and_marks_the_non_finite(
        tmp_path: Path) -> None:
    """``precision --json`` as an overlay: each layer by its local error in the target
    precision, a layer that makes NaN/Inf alone marked non-finite (a report written here
    in the shape precision writes, so no run is needed)."""
    from ovgather.views.show.overlay import overlay_kind, read_overlay

    model = ROOT / "ir_samples" / "mixed_ops.xml"
    G = read_ir(model)
    names = [G.nodes[n]["name"] for n in G if G.nodes[n]["type"] not in ("Const", "Result")]
    rows = [{"name": n, "port": 0, "type": "x", "line": 1, "max_abs": 0.1, "max_rel": 0.1,
             "cosine": 1.0, "nonfinite": i == 0, "local_max_abs": 10.0 ** -i,
             "local_max_rel": 10.0 ** -i, "local_cosine": 1.0, "local_scaled": 0.0,
             "local_nonfinite": i == 0} for i, n in enumerate(names)]
    report = {"model": str(model), "target": "f16", "top_local": [], "layers": rows}
    assert overlay_kind(report) == "precision"
    kind, view, page = read_overlay(G, report)
    by_name = {G.nodes[n]["name"]: e for n, e in view.layers.items()}
    assert kind == "precision" and by_name[names[0]].status == "non-finite"
    assert by_name[names[1]].status == "local error"
    assert by_name[names[0]].colour != by_name[names[-1]].colour
    dom = _overlay_page(model, report, tmp_path)
    assert len(re.findall(r'<tr data-layer="\d+">', dom)) >= len(names) // 2
