"""The HTML page of ``ovgather show --format html``, opened in headless Chromium.

Chromium runs with every host name unresolvable, so the page must work offline; what
the page's script did is read from the DOM it leaves (``--dump-dom``), and a probe
script appended by the test measures what a person would see (outline widths, the
view box after a wheel turn and a drag). Expected layers come from OpenVINO's own graph.
"""

from __future__ import annotations

import html
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import openvino as ov
import pytest
from browser import page_dom, with_probe

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.views.show import STATUS_COLOURS

ROOT = Path(__file__).resolve().parents[2]
SWIN = ROOT / "ir_corpus" / "swin" / "pytorch_static.xml"
BERT = ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"
WRONG = sorted((ROOT / "ir_samples").glob("wrong_*.xml"))


def _page(model: Path, out: Path, *options: str) -> Path:
    assert main(["show", str(model), "-o", str(out), *options]) == 0
    return out


def _ids(model: Path) -> dict[str, str]:
    G = read_ir(model)
    return {G.nodes[n]["name"]: n for n in G}


def _hit(dom: str) -> list[str]:
    """The DOT ids of the nodes the page outlines as the current match."""
    return re.findall(r'<g id="([nb]\d+)" class="[^"]*\bog-hit\b', dom)


def _found(dom: str) -> str | None:
    m = re.search(r'<body[^>]*\bdata-found="([^"]*)"', dom)
    return None if m is None else html.unescape(m.group(1))


@pytest.fixture(scope="module")
def big_ir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "tools"))
    from gen_models import big_ir

    return big_ir(1000, tmp_path_factory.mktemp("big") / "big.xml", seed=5)


def test_the_page_needs_nothing_from_outside(tmp_path: Path) -> None:
    text = _page(BERT, tmp_path / "bert.html").read_text()
    assert not re.search(r"<link\b|@import|url\(|\bsrc\s*=", text, re.I)
    assert all(h.startswith("#") for h in re.findall(r'\bhref="([^"]*)"', text))
    assert text.count("<svg") == 1 and text.count("<script") == 2


@pytest.mark.parametrize("which", ["swin", "big-unbounded"])
def test_the_page_of_a_thousand_layer_ir_loads_within_5_seconds(which: str, big_ir: Path,
                                                                tmp_path: Path) -> None:
    model, options = (SWIN, ()) if which == "swin" else (big_ir, ("--max-layers", "0"))
    ops = ov.Core().read_model(str(model)).get_ops()
    assert len(ops) >= (780 if which == "swin" else 1000)
    dom, seconds = page_dom(_page(model, tmp_path / "m.html", *options))
    assert seconds < 5, seconds  # Chromium's start included
    assert re.search(r'<body[^>]*\bdata-ready="[\d.]+"', dom)  # the script ran to its end
    counts = dict(re.findall(r'data-status="(\w+)"[^>]*>\w+ (\d+)<', dom))
    assert set(counts) == set(STATUS_COLOURS)
    assert sum(map(int, counts.values())) == len(ops)  # every layer is in the index


def test_search_marks_a_drawn_layer(tmp_path: Path) -> None:
    page = _page(BERT, tmp_path / "bert.html")
    name = "__module.model.encoder.layer.1.attention.self.query/aten::linear/MatMul"
    dom, _ = page_dom(page, "find=" + name)
    assert _found(dom) == name
    assert _hit(dom) == ["n" + _ids(BERT)[name]]


def test_search_for_a_folded_weight_marks_the_layer_that_reads_it(tmp_path: Path) -> None:
    model = ov.Core().read_model(str(BERT))
    weight = next(op for op in model.get_ops() if op.get_type_name() == "Constant"
                  and op.get_friendly_name().endswith("layer.1.output.dense.weight_compressed"))
    reader = weight
    while reader.get_type_name() in ("Constant", "Convert"):  # Const -> Convert -> MatMul
        reader = next(iter(reader.output(0).get_target_inputs())).get_node()
    dom, _ = page_dom(_page(BERT, tmp_path / "bert.html"), "find=" + weight.get_friendly_name())
    assert _found(dom) == weight.get_friendly_name()
    assert _hit(dom) == ["n" + _ids(BERT)[reader.get_friendly_name()]]


def _mismatched(model: Path) -> dict[str, tuple[str, str]]:
    """Layers whose declared output dims contradict OpenVINO's inferred shape:
    name -> (OpenVINO's shape, the declared dims)."""
    declared = {}
    for layer in ET.parse(model).getroot().iter("layer"):
        ports = layer.find("output")
        if ports is not None:
            declared[layer.get("name")] = [
                [int(d.text) for d in port.iter("dim")] for port in ports.iter("port")]
    out = {}
    for op in ov.Core().read_model(str(model)).get_ops():
        for i, dims in enumerate(declared.get(op.get_friendly_name(), [])):
            theirs = op.get_output_partial_shape(i)
            if not ov.PartialShape(dims).compatible(theirs):
                out[op.get_friendly_name()] = (str(theirs), str(ov.PartialShape(dims)))
    return out


_OUTLINE_PROBE = """
const hit = document.querySelector("g.node.og-hit rect");
const bad = document.querySelector("g.node.mismatch rect");
const ok = document.querySelector("g.node.ok:not(.og-hit):not(.og-match) rect");
const width = el => el ? parseFloat(getComputedStyle(el).strokeWidth) : 0;
document.body.dataset.probe = JSON.stringify({hit: width(hit), bad: width(bad), ok: width(ok),
  fill: bad ? bad.getAttribute("fill") : ""});
"""


@pytest.mark.parametrize("model", WRONG, ids=[p.name for p in WRONG])
def test_a_mismatch_is_outlined_and_hovering_it_shows_both_shapes(model: Path,
                                                                  tmp_path: Path) -> None:
    wrong = _mismatched(model)
    assert len(wrong) == 1
    (name, (inferred, declared)), = wrong.items()
    page = with_probe(_page(model, tmp_path / "w.html"), _OUTLINE_PROBE, tmp_path / "p.html")
    dom, _ = page_dom(page)
    node = "n" + _ids(model)[name]
    group = re.search(rf'<g id="{node}" class="node mismatch">(.*?)</g>', dom, re.S)
    assert group, "the mismatched layer is not drawn with the mismatch class"
    hover = html.unescape(re.search(r"<title>(.*?)</title>", group.group(1), re.S).group(1))
    assert f"inferred: {inferred}" in hover and f"declared: {declared}" in hover
    probe = json.loads(html.unescape(re.search(r'data-probe="([^"]*)"', dom).group(1)))
    assert probe["fill"] == STATUS_COLOURS["mismatch"]
    assert probe["bad"] >= 3 * probe["ok"] > 0  # a thick outline, not the usual one
    dom, _ = page_dom(page, "status=mismatch")  # the mismatch button's walk
    assert _hit(dom) == [node] and _found(dom) == name


_VIEW_PROBE = """
const svg = document.querySelector("#view svg"), view = document.getElementById("view");
const box = () => svg.getAttribute("viewBox").split(/[ ,]+/).map(Number);
const r = view.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
const seen = [box()];
view.dispatchEvent(new WheelEvent("wheel", {deltaY: -400, clientX: x, clientY: y,
                                            bubbles: true, cancelable: true}));
seen.push(box());
const at = (type, dx) => view.dispatchEvent(new PointerEvent(type, {pointerId: 7,
  clientX: x + dx, clientY: y, bubbles: true}));
at("pointerdown", 0); at("pointermove", 120); at("pointerup", 120);
seen.push(box());
document.body.dataset.probe = JSON.stringify(seen);
"""


def test_the_wheel_zooms_and_a_drag_pans(tmp_path: Path) -> None:
    page = with_probe(_page(BERT, tmp_path / "b.html"), _VIEW_PROBE, tmp_path / "p.html")
    dom, _ = page_dom(page)
    start, zoomed, panned = json.loads(html.unescape(
        re.search(r'data-probe="([^"]*)"', dom).group(1)))
    assert zoomed[2] == pytest.approx(start[2] * 0.5488, rel=1e-3)  # exp(-400 * 0.0015)
    assert zoomed[3] == pytest.approx(start[3] * 0.5488, rel=1e-3)
    assert panned[2:] == pytest.approx(zoomed[2:]) and panned[0] < zoomed[0]
    assert panned[1] == pytest.approx(zoomed[1])  # a drag to the right moves only along x


def _within(model: ov.Model, name: str, depth: int) -> set[str]:
    """OpenVINO's ops at most ``depth`` edges from ``name``, edges followed both ways."""
    ops = {op.get_friendly_name(): op for op in model.get_ops()}
    seen, ring = {name}, {name}
    for _ in range(depth):
        nxt = set()
        for n in ring:
            op = ops[n]
            nxt |= {i.get_source_output().get_node().get_friendly_name() for i in op.inputs()}
            nxt |= {t.get_node().get_friendly_name() for o in op.outputs()
                    for t in o.get_target_inputs()}
        ring = nxt - seen
        seen |= ring
    return seen


def test_a_neighbourhood_page_draws_every_layer_near_it_consts_included(tmp_path: Path) -> None:
    model_path = ROOT / "ir_samples" / "mixed_ops.xml"
    near = _within(ov.Core().read_model(str(model_path)), "pick_rows_nd8", 2)
    page = _page(model_path, tmp_path / "n.html", "--layer", "pick_rows_nd8", "--depth", "2")
    ids = _ids(model_path)
    dom, _ = page_dom(page, "find=pick_rows_nd8")
    drawn = set(re.findall(r'<g id="n(\d+)" class="node', dom))
    assert drawn == {ids[n] for n in near}
    assert _hit(dom) == ["n" + ids["pick_rows_nd8"]]
    far = next(n for n in ids if n not in near)
    dom, _ = page_dom(page, "find=" + far)
    assert _found(dom) == far and _hit(dom) == []  # found in the index, not drawn
