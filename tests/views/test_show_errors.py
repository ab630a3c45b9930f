"""``show A --errors REPORT.json``: A's picture coloured by each layer's error, from the
JSON document of ``compare A B --all-layers --json``.

The reports here are written by hand (and one from a real run: ONNX Runtime on a copy of
an ONNX model with one weight changed against OpenVINO on the original); the expected
colours follow from the documented scale: ok green, a shade a decade of ``max_rel``
(0, ≤1e-6, ≤1e-5, ≤1e-4, more), differs red (≤1e-3, ≤1e-2, ≤1e-1, more), grey when not
compared.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from browser import page_dom
from dot_text import dot_nodes, label_lines
from model_edits import onnx_with_weight_changed

from ovgather.cli import main
from ovgather.cli.models import load
from ovgather.errors import UsageError
from ovgather.ir import read_ir
from ovgather.runtime.onnxruntime_runner import OnnxRuntimeLayers
from ovgather.views.show import write_picture
from ovgather.views.show.errors import FIRST_DIVERGENT, NOT_COMPARED, layer_errors

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "ir_samples" / "mixed_ops.xml"
BERT = ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"
CONV = ROOT / "tests" / "data" / "onnx_ref" / "conv_net.onnx"
GREENS = ["#41ab5d", "#74c476", "#a1d99b", "#c7e9c0", "#e5f5e0"]
REDS = ["#fcbba1", "#fc9272", "#fb6a4a", "#de2d26"]


def expected_fill(status: str, max_rel: float | None) -> str:
    """The colour the docs promise, from the decade of ``max_rel``."""
    if status == "ok":
        bounds, colours = [0.0, 1e-6, 1e-5, 1e-4], GREENS
    elif status == "differs":
        bounds, colours = [1e-3, 1e-2, 1e-1], REDS
    else:
        return NOT_COMPARED
    # the last shade has no upper bound
    return next((c for b, c in zip(bounds, colours[:-1], strict=True) if max_rel <= b),
                colours[-1])


def entry(a: str | None, status: str, max_rel: float | None = None, port: int = 0,
          b: str | None = "same", tensor: str | None = None) -> dict:
    compared = status in ("ok", "differs")
    return {"a": a, "b": (a if b == "same" else b), "port": port,
            "tensor": tensor if tensor is not None else a, "status": status,
            "max_abs": (max_rel * 2 if compared else None), "max_rel": max_rel}


#: mixed_ops.xml's compute layers, each with what a hand-made report says of it
MIXED_ERRORS = [
    entry("x_shape", "ok", 0.0), entry("ids_to_i32", "ok", 0.0),
    entry("first_rows_nd5", "ok", 3e-7), entry("flatten", "ok", 2e-6),
    entry("pick_cols_g8", "only in A", b=None), entry("x_batch", "not run"),
    entry("fc_matmul", "ok", 5e-5), entry("target", "ok", 0.0),
    entry("fc_add", "differs", 4e-3), entry("cols_flat", "ok", 7e-4),
    entry("to_cube", "differs", 0.05), entry("pick_rows_nd8", "differs", 0.3),
    entry("turn", "differs", 0.3), entry(None, "only in B", b="extra_in_b"),
    entry("joined", "differs", 2e-4), entry("probs", "differs", 0.9),
]


def report(layers: list[dict], first: str | None) -> dict:
    return {"ok": first is None, "layers": layers,
            "first_divergent": None if first is None else {"a": first, "b": first}}


def write_report(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def fills_by_name(G, text: str) -> dict[str, tuple[str, str]]:
    nodes = dot_nodes(text)
    return {G.nodes[n]["name"]: nodes[n] for n in G if n in nodes}


def test_each_layer_is_filled_by_its_error_on_a_log_scale(tmp_path: Path) -> None:
    G = read_ir(MIXED)
    out = tmp_path / "m.dot"
    drawing = write_picture(G, out, "dot", errors=report(MIXED_ERRORS, "fc_add"))
    drawn = fills_by_name(G, out.read_text())
    for e in MIXED_ERRORS:
        if e["a"] is not None:
            assert drawn[e["a"]][1] == expected_fill(e["status"], e["max_rel"]), e
    # the report has nothing of these: grey (the Parameters, a Result)
    assert drawn["x"][1] == drawn["ids"][1] == NOT_COMPARED
    assert drawing.errors.layers[next(n for n in G if G.nodes[n]["name"] == "probs")
                                 ].status == "differs"


def test_a_layer_takes_the_colour_of_its_worst_port(tmp_path: Path) -> None:
    G = read_ir(MIXED)
    doc = report([entry("fc_add", "ok", 1e-7, port=0),
                  entry("fc_add", "differs", 0.02, port=1, tensor="fc_add:1"),
                  entry("probs", "ok", 1e-7, port=0),
                  entry("probs", "ok", 3e-5, port=1, tensor="probs:1"),
                  entry("turn", "not run", port=0),
                  entry("turn", "ok", 0.0, port=1, tensor="turn:1")], "fc_add")
    drawn = fills_by_name(G, write_picture(G, tmp_path / "p.dot", errors=doc).dot)
    assert drawn["fc_add"][1] == expected_fill("differs", 0.02)
    assert drawn["probs"][1] == expected_fill("ok", 3e-5)
    assert drawn["turn"][1] == expected_fill("ok", 0.0)
    assert "differs: max_rel 0.02, max_abs 0.04" in label_lines(drawn["fc_add"][0])


def test_the_first_divergent_layer_is_outlined_and_named_in_the_legend(tmp_path: Path) -> None:
    G = read_ir(MIXED)
    text = write_picture(G, tmp_path / "f.dot", errors=report(MIXED_ERRORS, "to_cube")).dot
    lines = text.splitlines()
    line = next(t for t in lines if 'label="to_cube' in t)
    assert f'penwidth=4, color="{FIRST_DIVERGENT}"' in line and "first divergent" in line
    outlined = [t for t in lines if f'color="{FIRST_DIVERGENT}"' in t and "penwidth=4" in t]
    assert len(outlined) == 1
    legend = next(t for t in lines if t.lstrip().startswith("legend"))
    assert "first divergent: to_cube" in legend and "not compared" in legend
    assert all(c in legend for c in GREENS + REDS)
    # no divergence: nothing outlined, the legend says none
    calm = write_picture(G, tmp_path / "c.dot", errors=report(MIXED_ERRORS[:4], None)).dot
    assert "penwidth=4" not in calm and "first divergent: none" in calm


def test_a_differing_layer_is_never_folded_collapsed_or_left_out(tmp_path: Path) -> None:
    """A 400-layer BERT drawn in 30 nodes: the one layer that differs, deep in the last
    block, is still a node of its own, red."""
    G = read_ir(BERT)
    ops = ov.Core().read_model(str(BERT)).get_ordered_ops()
    late = [op.get_friendly_name() for op in ops if op.get_type_name() == "MatMul"][-2]
    doc = report([entry(late, "differs", 0.2)], late)
    out = tmp_path / "bert.dot"
    assert main(["show", str(BERT), "--max-layers", "30", "--errors", str(
        write_report(tmp_path / "r.json", doc)), "-o", str(out)]) == 0
    drawn = fills_by_name(G, out.read_text())
    assert drawn[late][1] == expected_fill("differs", 0.2)
    without = fills_by_name(G, write_picture(G, tmp_path / "plain.dot", max_layers=30).dot)
    assert late not in without, "the bound leaves it out when nothing differs"


def test_layers_of_an_onnx_model_match_by_tensor_name(tmp_path: Path) -> None:
    """An ONNX node without a name is reported under its output's name; OpenVINO names the
    layer otherwise, and the report's tensor finds it."""
    G = load(str(CONV))
    by_tensor = {t: n for n in G for p in G.nodes[n]["outputs"] for t in p.get("names") or ()}
    doc = report([entry("relu_node", "ok", 1e-7, tensor="r1"),
                  entry("c2", "differs", 0.01, tensor="c2")], "c2")
    view = layer_errors(G, doc)
    assert view.layers[by_tensor["r1"]].status == "ok"
    assert view.first == by_tensor["c2"] and view.layers[by_tensor["c2"]].first


def test_a_real_divergence_from_onnx_runtime_is_drawn_from_its_first_reader(
        tmp_path: Path) -> None:
    """ONNX Runtime on a copy with one weight of the second Conv changed against OpenVINO
    on the original: the report is made here as compare --all-layers --json makes it, and
    the picture shows the layers before the Conv green, the Conv outlined and red."""
    changed = onnx_with_weight_changed(CONV, "w2", (0, 0, 0, 0), 1.0, tmp_path / "changed.onnx")
    layers = OnnxRuntimeLayers(changed)
    wanted = [o for o in layers.outputs() if not o.constant]
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)}
    ours = layers.run(feeds, wanted)
    ov_model = ov.Core().read_model(str(CONV))
    ports = {t: out for op in ov_model.get_ordered_ops() for out in op.outputs()
             for t in out.get_names()}
    names = [next(iter(o.tensor_names)) for o in wanted]
    ov_model.add_outputs([ports[n] for n in names])
    result = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)
    theirs = {t: v for port, v in result.items() for t in port.get_names()}
    rows, first = [], None
    for out, name in zip(wanted, names, strict=True):
        diff = np.abs(ours[out].astype(np.float64) - theirs[name])
        rel = float((diff / np.maximum(np.abs(theirs[name]), 1e-6)).max())
        status = "ok" if np.allclose(ours[out], theirs[name], rtol=1e-5, atol=1e-5) \
            else "differs"
        first = first or (out.layer if status == "differs" else None)
        rows.append({"a": out.layer, "b": name, "port": out.port, "tensor": name,
                     "status": status, "max_abs": float(diff.max()), "max_rel": rel})
    assert first == "c2"
    out = tmp_path / "conv.dot"
    assert main(["show", str(changed), "--errors", str(write_report(
        tmp_path / "r.json", report(rows, first))), "-o", str(out)]) == 0
    G = load(str(changed))
    by_tensor = {t: n for n in G for p in G.nodes[n]["outputs"] for t in p.get("names") or ()}
    nodes = dot_nodes(out.read_text())
    for row in rows:
        if row["tensor"] in by_tensor and by_tensor[row["tensor"]] in nodes:
            fill = nodes[by_tensor[row["tensor"]]][1]
            assert fill == expected_fill(row["status"], row["max_rel"]), row
    assert "first divergent" in nodes[by_tensor["c2"]][0]
    assert nodes[by_tensor["bn"]][1] in GREENS and nodes[by_tensor["c2"]][1] in REDS


@pytest.mark.parametrize("fmt", ["svg", "png", "html"])
def test_every_format_is_written(fmt: str, tmp_path: Path) -> None:
    doc = write_report(tmp_path / "r.json", report(MIXED_ERRORS, "fc_add"))
    out = tmp_path / f"m.{fmt}"
    assert main(["show", str(MIXED), "--errors", str(doc), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in data
    if fmt == "svg":
        assert REDS[1].encode() in data and b"first divergent" in data


def test_the_page_opens_on_the_first_divergent_layer(tmp_path: Path) -> None:
    doc = write_report(tmp_path / "r.json", report(MIXED_ERRORS, "fc_add"))
    page = tmp_path / "m.html"
    assert main(["show", str(MIXED), "--errors", str(doc), "-o", str(page)]) == 0
    dom, _ = page_dom(page)
    info = re.search(r'<span id="info">([^<]*)</span>', dom).group(1)
    differs = sum(e["status"] == "differs" for e in MIXED_ERRORS)
    assert info.startswith(f"{differs} layers differ, first fc_add")
    buttons = dict(re.findall(r'data-status="([^"]+)"[^>]*>[^<]*?(\d+)</button>', dom))
    assert buttons["differs"] == str(differs) and buttons["only in A"] == "1"


def test_show_prints_what_it_coloured(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = write_report(tmp_path / "r.json", report(
        [*MIXED_ERRORS, entry("not_in_mixed", "ok", 0.0)], "fc_add"))
    assert main(["show", str(MIXED), "--errors", str(doc), "-o", str(tmp_path / "m.dot")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # say() wraps long lines
    compared = sum(e["status"] in ("ok", "differs") for e in MIXED_ERRORS)
    differs = sum(e["status"] == "differs" for e in MIXED_ERRORS)
    assert f"{compared} layers compared, {differs} differ" in out
    assert "first divergent: fc_add" in out and "1 layers of the report are not in" in out


@pytest.mark.parametrize("content, why", [
    ("not json {", "not JSON"),
    (json.dumps({"outputs": []}), 'no "layers" list'),
    (json.dumps({"layers": [{"a": "fc_add", "status": "bad"}]}), "has status 'bad'"),
    (json.dumps({"layers": [{"a": "fc_add", "status": "ok", "max_rel": "x"}]}),
     'non-number "max_rel"'),
    (json.dumps(report([entry("other_model_layer", "ok", 0.0)], None)),
     "no layer of the model is named in the report"),
])
def test_a_report_that_cannot_be_used_is_one_error_line(
        content: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = tmp_path / "r.json"
    doc.write_text(content, encoding="utf-8")
    assert main(["show", str(MIXED), "--errors", str(doc), "-o", str(tmp_path / "m.dot")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1
    err = " ".join(err.split())
    assert why in err and str(doc) in err
    assert not (tmp_path / "m.dot").exists()
    with pytest.raises(UsageError):
        write_picture(read_ir(MIXED), tmp_path / "n.dot", errors=doc)


def test_a_missing_report_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "none.json"
    assert main(["show", str(MIXED), "--errors", str(missing), "-o", str(tmp_path / "m.dot")]
                ) == 2
    assert "cannot be read" in capsys.readouterr().err


def test_without_errors_the_picture_is_unchanged(tmp_path: Path) -> None:
    G = read_ir(MIXED)
    shutil.copy(MIXED, tmp_path / "m.xml")
    plain = write_picture(G, tmp_path / "a.dot").dot
    assert "not compared" not in plain and "first divergent" not in plain


# -- malformed reports, made by a seeded generator -------------------------------------------
#: JSON values of every type, some of them of the right type with a wrong value
_WRONG = [None, True, False, 0, -1, 10**400, 1.5, float("nan"), "x", "", "differs", [],
          [1, "a"], {}, {"a": 1}, {"status": "ok"}, ["fc_add"], {"a": {"b": 1}}]


def _malformed(rng) -> dict:
    """A valid report of MIXED with one to three values put in the wrong places: the
    document's fields, first_divergent's, an entry's or an entry itself."""
    doc = report([dict(e) for e in MIXED_ERRORS], "fc_add")
    for _ in range(rng.randint(1, 3)):
        where = rng.random()
        if where < 0.2:
            doc[rng.choice(["layers", "first_divergent"])] = rng.choice(_WRONG)
        elif where < 0.4 and isinstance(doc.get("first_divergent"), dict):
            doc["first_divergent"][rng.choice(["a", "b", "tensor"])] = rng.choice(_WRONG)
        elif isinstance(doc.get("layers"), list) and doc["layers"]:
            i = rng.randrange(len(doc["layers"]))
            if isinstance(doc["layers"][i], dict) and rng.random() < 0.8:
                key = rng.choice(["a", "b", "port", "tensor", "status", "max_abs", "max_rel"])
                doc["layers"][i][key] = rng.choice(_WRONG)
            else:
                doc["layers"][i] = rng.choice(_WRONG)
    return doc


def _show_errors(doc: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = main(["show", str(MIXED), "--errors", str(doc), "-o", str(tmp_path / "m.dot")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("seed", range(6))
def test_every_malformed_report_is_one_error_line_naming_what_is_wrong(
        seed: int, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import random

    rng = random.Random(seed)
    errors = 0
    for _ in range(40):
        doc = write_report(tmp_path / "r.json", _malformed(rng))
        code, err = _show_errors(doc, tmp_path, capsys)
        assert "internal error" not in err and "Traceback" not in err, err
        assert code in (0, 2), err
        if code == 2:
            errors += 1
            assert err.startswith("error: ") and err.count("\n") == 1, err
            assert str(doc) in err and "--errors" in err, err
    assert errors >= 20  # most of them break the format


@pytest.mark.parametrize(("content", "why"), [
    ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    ('{"layers": ' * 100_000 + "[]" + "}" * 100_000, "nested deeper"),
    (json.dumps(report([entry("fc_add", "differs", 0.5)], "fc_add")).replace(
        '"max_rel": 0.5', '"max_rel": 1' + "0" * 400), '"max_rel" too large'),
    (json.dumps({"layers": [{"a": "fc_add", "status": ["ok"]}]}), "has status a list"),
    (json.dumps({"layers": [{"a": "fc_add", "status": "ok", "port": "0"}]}), '"port" that is text'),
    (json.dumps({"layers": [], "first_divergent": {"a": ["fc_add"]}}),
     'the "a" of "first_divergent" is a list'),
    (json.dumps({"layers": [], "first_divergent": {"a": "fc_add", "b": {"x": 1}}}),
     'the "b" of "first_divergent" is an object'),
    (json.dumps({"layers": [7]}), '"layers"[0] must be an object, not a number'),
])
def test_a_report_of_wrong_json_types_or_depth_says_what_is_wrong(
        content: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = tmp_path / "r.json"
    doc.write_text(content, encoding="utf-8")
    code, err = _show_errors(doc, tmp_path, capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert why in err and str(doc) in err


def test_a_report_that_is_no_utf8_is_one_error_line(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    doc = tmp_path / "r.json"
    doc.write_bytes(b'{"layers": [{"a": "caf\xe9"}]}')
    code, err = _show_errors(doc, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "is not JSON" in err and str(doc) in err
