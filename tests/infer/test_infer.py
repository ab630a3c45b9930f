"""The whole-model walk (ovgather.infer) judged by OpenVINO's own reader.

OpenVINO re-infers every output when it reads an IR, so ``read_model`` gives the shapes
a correct IR declares. Every test compares ovgather with it layer by layer (by friendly
name), on the committed samples, on XML edits that contradict a gather layer, on models
OpenVINO rejects, and after ``Model.reshape`` with random overrides.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import pytest
from graph_view import ov_ops
from lxml import etree

from ovgather.cli import main
from ovgather.graph.bodies import locate
from ovgather.infer import check, infer_shapes
from ovgather.ir import parse_ir, read_ir

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
GOOD_SAMPLES = [p for p in SAMPLES if not p.name.startswith("wrong_")]
GATHERS = ("GatherND", "Gather", "GatherElements")
CORE = ov.Core()


def sample_id(path: Path) -> str:
    return str(path.relative_to(ROOT / "ir_samples"))


def ov_shapes(model: ov.Model) -> dict[str, list[str]]:
    """Every op's output shapes by name; ops in bodies by path name, as check lists them."""
    return {
        name: [str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())]
        for name, op in ov_ops(model) if op.get_type_name() != "Result"
    }


def differences(report, expected: dict[str, list[str]], only=None) -> list[tuple]:
    return [
        (lr.name, lr.type, lr.inferred, expected[lr.name])
        for lr in report.layers
        if lr.type != "Result" and (only is None or lr.type in only)
        and lr.inferred != expected.get(lr.name, lr.inferred)
    ]


def test_the_samples_are_there():
    assert len(GOOD_SAMPLES) >= 20
    assert any("onnx" in str(p) for p in GOOD_SAMPLES)
    assert any("pytorch" in str(p) for p in GOOD_SAMPLES)


@pytest.mark.parametrize("path", GOOD_SAMPLES, ids=sample_id)
def test_every_sample_checks_clean_and_matches_openvino_layer_by_layer(path):
    report = check(read_ir(path))
    expected = ov_shapes(CORE.read_model(str(path)))
    assert report.ok, [lr.to_dict() for lr in report.problems()]
    assert report.summary["unchecked"] == 0, [lr.name for lr in report.problems()]
    assert {lr.name for lr in report.layers if lr.type != "Result"} == set(expected)
    assert differences(report, expected) == []
    assert main(["check", str(path)]) == 0


# -- edits that contradict a gather layer ----------------------------------------------
def _path_id(el) -> str:
    """A layer's id as check names it: ``4/body/6`` for layer 6 of the body of layer 4."""
    parts = [el.get("id")]
    body = el.getparent().getparent()  # <layers> → <body> (or <net>)
    while body.tag != "net":
        owner = body.getparent()
        parts[:0] = [owner.get("id"), body.tag]
        body = owner.getparent().getparent()
    return "/".join(parts)


def _gather_layers(root):
    return [el for el in root.iter("layer") if el.get("type") in GATHERS]


def _edit_dims(xml: bytes, layer_id: str, how: str, rng: random.Random) -> bytes | None:
    root = etree.fromstring(xml)
    layer = next(el for el in root.iter("layer") if _path_id(el) == layer_id)
    port = layer.find("output/port")
    dims = port.findall("dim")
    static = [d for d in dims if d.text.strip() != "-1"]
    if how == "change":
        if not static:
            return None
        d = rng.choice(static)
        d.text = str(int(d.text) + rng.randint(1, 5))
    elif how == "add":
        etree.SubElement(port, "dim").text = str(rng.randint(1, 9))
    elif how == "drop":
        if len(dims) < 2:
            return None  # no <dim> at all means "scalar or dynamic rank": not a contradiction
        port.remove(dims[rng.randrange(len(dims))])
    return etree.tostring(root)


def _declared_fits(declared: tuple[int, ...], ov_text: str) -> bool:
    """OpenVINO's own compatibility test of declared dims and its inferred shape."""
    if not declared:
        return True
    return ov.PartialShape(list(declared)).compatible(ov.PartialShape(ov_text))


def _assert_only_real_contradictions(G, report, expected):
    for lr in report.layers:
        if lr.type == "Result":
            continue
        H, node = locate(G, lr.id)
        ports = H.nodes[node]["outputs"]
        pairs = zip(ports, expected[lr.name], strict=True)
        fits = all(_declared_fits(p["dims"], t) for p, t in pairs)
        assert lr.status == ("ok" if fits else "mismatch"), (lr.to_dict(), expected[lr.name])
        assert lr.inferred == expected[lr.name]


EDIT_CASES = [(p, how) for p in GOOD_SAMPLES for how in ("change", "add", "drop")]


@pytest.mark.parametrize("path,how", EDIT_CASES, ids=[f"{sample_id(p)}-{h}" for p, h in EDIT_CASES])
def test_an_edit_that_contradicts_a_gather_makes_exactly_that_layer_mismatch(path, how, tmp_path):
    rng = random.Random(f"{path.name}{how}")
    xml = path.read_bytes()
    bin_bytes = path.with_suffix(".bin").read_bytes()
    edited_any = False
    for layer in _gather_layers(etree.fromstring(xml)):
        layer_id = _path_id(layer)
        new = _edit_dims(xml, layer_id, how, rng)
        if new is None:
            continue
        out = tmp_path / f"{layer_id.replace('/', '_')}.xml"
        out.write_bytes(new)
        out.with_suffix(".bin").write_bytes(bin_bytes)
        expected = ov_shapes(CORE.read_model(str(out)))
        G = read_ir(out)
        report = check(G)
        _assert_only_real_contradictions(G, report, expected)
        edited = next(lr for lr in report.layers if lr.id == layer_id)
        if edited.status == "ok":  # e.g. a dynamic-rank output fits any declared dims
            H, node = locate(G, edited.id)
            assert _declared_fits(H.nodes[node]["outputs"][0]["dims"],
                                  expected[edited.name][0])
            continue
        assert edited.status == "mismatch"
        assert [lr.id for lr in report.problems()] == [edited.id]
        assert main(["check", str(out)]) == 1
        edited_any = True
    if not edited_any:
        pytest.skip("no gather layer whose dims this edit can contradict")


def _swap_version(xml: bytes) -> tuple[bytes, list[str]]:
    root = etree.fromstring(xml)
    swapped = []
    for el in root.iter("layer"):
        if el.get("type") == "GatherND":
            data = el.find("data")
            bd = int(data.get("batch_dims", "0")) if data is not None else 0
            if bd > 1:
                el.set("version", {"opset5": "opset8", "opset8": "opset5"}[el.get("version")])
                swapped.append(el.get("id"))
    return etree.tostring(root), swapped


SWAP = [p for p in GOOD_SAMPLES if _swap_version(p.read_bytes())[1]]


@pytest.mark.parametrize("path", SWAP, ids=sample_id)
def test_swapping_the_gather_nd_5_and_8_layouts_is_a_mismatch(path, tmp_path):
    new, swapped = _swap_version(path.read_bytes())
    out = tmp_path / "swapped.xml"
    out.write_bytes(new)
    out.with_suffix(".bin").write_bytes(path.with_suffix(".bin").read_bytes())
    expected = ov_shapes(CORE.read_model(str(out)))
    G = read_ir(out)
    report = check(G)
    _assert_only_real_contradictions(G, report, expected)
    statuses = {lr.id: lr.status for lr in report.layers}
    assert all(statuses[i] == "mismatch" for i in swapped)
    assert main(["check", str(out)]) == 1


def test_the_wrong_samples_mismatch_where_openvino_disagrees():
    for path in [p for p in SAMPLES if p.name.startswith("wrong_")]:
        G = read_ir(path)
        report = check(G)
        _assert_only_real_contradictions(G, report, ov_shapes(CORE.read_model(str(path))))
        assert not report.ok


# -- models OpenVINO rejects ------------------------------------------------------------
def _gather_nd_model(tmp_path: Path, data: str, indices: str, bd: int, version: int) -> Path:
    d = o8.parameter(ov.PartialShape(data), ov.Type.f32, name="data")
    i = o8.parameter(ov.PartialShape(indices), ov.Type.i64, name="ids")
    g = (o8.gather_nd if version == 8 else __import__("openvino.opset5").opset5.gather_nd)(
        d, i, bd)
    g.set_friendly_name("gnd")
    after = o8.relu(g)
    after.set_friendly_name("after")
    other = o8.relu(d)
    other.set_friendly_name("other")
    model = ov.Model([o8.result(after), o8.result(other)], [d, i], "gnd")
    path = tmp_path / "gnd.xml"
    ov.save_model(model, str(path))
    return path


@pytest.mark.parametrize("version", [5, 8])
@pytest.mark.parametrize("new_ids,words", [
    ("3,4,1", "batch"),        # batch dims clash: 3 vs 2
    ("2,4,5", "tuple"),        # tuple of 5 indices > rank 4 - 1 batch dim
    ("2", "batch"),            # batch_dims 1 not below the indices rank 1
])
def test_a_gather_rule_openvino_rejects_is_invalid_and_the_walk_goes_on(
        tmp_path, version, new_ids, words):
    path = _gather_nd_model(tmp_path, "[2,3,4,5]", "[2,4,1]", 1, version)
    text = path.read_text()
    text = re.sub(r'(name="ids" type="Parameter".*?shape=")[^"]*"', rf'\g<1>{new_ids}"', text,
                  count=1, flags=re.S)
    path.write_text(text)
    with pytest.raises(RuntimeError):
        CORE.read_model(str(path))
    report = check(read_ir(path))
    by_name = {lr.name: lr for lr in report.layers}
    assert by_name["gnd"].status == "invalid"
    assert words in by_name["gnd"].message.lower()
    assert by_name["other"].status == "ok" and by_name["other"].inferred == ["[2,3,4,5]"]
    assert by_name["after"].status == "ok"  # fed by the declared dims of the invalid layer
    assert main(["check", str(path)]) == 1


def test_a_bad_batch_dims_attribute_is_invalid_not_a_crash(tmp_path):
    path = _gather_nd_model(tmp_path, "[2,3,4,5]", "[2,4,1]", 1, 8)
    path.write_text(path.read_text().replace('batch_dims="1"', 'batch_dims="x"'))
    lr = next(lr for lr in check(read_ir(path)).layers if lr.name == "gnd")
    assert lr.status == "invalid"
    assert "batch_dims" in lr.message and "'x'" in lr.message


# -- --shape overrides ---------------------------------------------------------------------
def _random_override(shape: ov.PartialShape, rng: random.Random) -> str:
    if shape.rank.is_dynamic:
        return "[" + ",".join(str(rng.randint(1, 4)) for _ in range(rng.randint(1, 4))) + "]"
    dims = []
    for d in shape:
        choice = rng.random()
        if choice < 0.25:
            dims.append("?")
        elif choice < 0.4:
            dims.append(f"{rng.randint(1, 3)}..{rng.randint(4, 9)}")
        elif choice < 0.8 and d.is_static:
            dims.append(str(d.get_length()))
        elif d.is_static or d.get_max_length() == -1:
            dims.append(str(rng.randint(1, 6)))
        else:
            dims.append(str(rng.randint(d.get_min_length(), d.get_max_length())))
    return "[" + ",".join(dims) + "]"


OVERRIDE_CASES = [(p, seed) for p in GOOD_SAMPLES for seed in range(5)]


@pytest.mark.parametrize("path,seed", OVERRIDE_CASES,
                         ids=[f"{sample_id(p)}-{s}" for p, s in OVERRIDE_CASES])
def test_shape_overrides_behave_like_model_reshape(path, seed):
    rng = random.Random(f"{path.name}-{seed}")
    model = CORE.read_model(str(path))
    overrides = {p.get_friendly_name(): _random_override(p.get_output_partial_shape(0), rng)
                 for p in model.get_parameters()}
    if not overrides:
        pytest.skip("no Parameter")
    G = read_ir(path)
    try:
        model.reshape({p.output(0): ov.PartialShape(overrides[p.get_friendly_name()])
                       for p in model.get_parameters()})
    except RuntimeError:
        report = check(G, shapes=overrides)  # OpenVINO rejects: reported, not a crash
        assert any(lr.status == "invalid" for lr in report.layers), overrides
        return
    report = check(G, shapes=overrides)
    expected = ov_shapes(model)  # reshape may fold a few shape Consts away
    assert all(lr.name in expected for lr in report.layers if lr.type in GATHERS)
    assert differences(report, expected, only=GATHERS) == [], overrides
    # Other layers may differ on purpose: Model.reshape first runs OpenVINO's SmartReshape,
    # which rewrites some Reshape targets (mixed_ops 'flatten': [0,-1] becomes
    # Concat(batch, 24) baked from the old shape). ovgather infers the IR as written.


def test_an_override_can_name_a_tensor_and_unknown_names_are_usage_errors():
    path = ROOT / "ir_samples" / "gather_nd8_bd2.xml"
    G = read_ir(path)
    shapes = infer_shapes(G, shapes={"data": "[?,?,?,?]"})
    assert all(str(s[0]) for s in shapes.values() if s)
    from ovgather.errors import UsageError

    with pytest.raises(UsageError, match="names none"):
        check(G, shapes={"no_such_input": "[1]"})


def test_in_memory_graph_needs_no_files():
    xml = (ROOT / "ir_samples" / "gather_nd5_bd2.xml").read_bytes()
    bin_bytes = (ROOT / "ir_samples" / "gather_nd5_bd2.bin").read_bytes()
    report = check(parse_ir(xml, bin_bytes))
    assert report.ok and report.summary["layers"] == 4
    assert np.isfinite(report.summary["ok"])


@pytest.mark.parametrize("seed", range(40))
def test_random_models_match_openvino_layer_by_layer(seed, tmp_path):
    from gen_models import random_model

    path = tmp_path / f"random_{seed}.xml"
    ov.save_model(random_model(seed), str(path))
    report = check(read_ir(path))
    assert differences(report, ov_shapes(CORE.read_model(str(path)))) == []
    assert report.ok and report.summary["unchecked"] == 0


@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_the_walk_follows_the_file_when_its_edges_go_forward(path):
    """OpenVINO writes layers in a topological order: the report then lists them as the
    file does, the same from the CLI's LayerGraph and from read_ir's MultiDiGraph."""
    from ovgather.ir import read_layer_graph

    G = read_ir(path)
    top = [lr.id for lr in check(G).layers if "/" not in lr.id]  # body layers follow theirs
    assert top == list(G.nodes)
    assert [lr.id for lr in check(read_layer_graph(path)).layers] == \
        [lr.id for lr in check(G).layers]


def test_a_layer_added_later_and_consumed_earlier_is_walked_before_its_consumer():
    """An edited graph whose edges no longer go forward is walked in a topological order."""
    from ovgather.edit import add_layer
    from ovgather.graph import output_port

    G = read_ir(ROOT / "ir_samples" / "gather_nd8_bd2.xml")
    result = next(n for n, a in G.nodes(data=True) if a["type"] == "Result")
    (src, _, key), = [(u, v, k) for u, v, k in G.in_edges(result, keys=True)]
    dims = output_port(G, src, key[0])["dims"]
    relu = add_layer(G, "Relu", "opset1", inputs=[(src, key[0])],
                     outputs=[{"precision": "FP32", "dims": dims}])
    out_id = G.nodes[relu]["outputs"][0]["id"]
    G.remove_edge(src, result, key)
    G.add_edge(relu, result, key=(out_id, key[1]), from_port=out_id, to_port=key[1])
    assert list(G.nodes).index(relu) > list(G.nodes).index(result)  # an edge goes back
    order = [lr.id for lr in check(G).layers]
    assert order.index(src) < order.index(relu) < order.index(result)
    assert check(G).ok
