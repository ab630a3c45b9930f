"""``check --extension``: the layers of an OpenVINO extension's ops inferred by OpenVINO
itself, the layers after them checked as usual.

The models are tokenizer and detokenizer IRs that ``openvino_tokenizers`` converted from
small BPE and WordPiece tokenizers (``tools/make_tokenizer_irs.py`` wrote
``tests/data/tokenizers/``). The oracle is OpenVINO with the same extension loaded,
reading (and, for ``--shape``, reshaping) the whole model: every layer's output shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import openvino as ov
import pytest

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.runtime.extensions import extension_shapes, load_extensions, resolve_extension

openvino_tokenizers = pytest.importorskip("openvino_tokenizers")

DATA = Path(__file__).resolve().parents[1] / "data" / "tokenizers"
IRS = sorted(DATA.glob("*.xml"))


def _openvino(xml: Path, shapes: dict[str, list[int]] | None = None) -> dict[str, list[str]]:
    core = ov.Core()
    core.add_extension(openvino_tokenizers._ext_path)
    model = core.read_model(str(xml))
    if shapes:
        model.reshape(shapes)
    return {op.get_friendly_name(): [str(o.get_partial_shape()) for o in op.outputs()]
            for op in model.get_ordered_ops() if op.get_type_name() != "Result"}


def _check(capsys, *args: str) -> tuple[int, dict]:
    code = main(["check", *args, "--all", "--json"])
    return code, json.loads(capsys.readouterr().out)["models"][0]


def _extension_layers(xml: Path) -> set[str]:
    G = read_ir(str(xml))
    return {a["name"] for _, a in G.nodes(data=True) if a.get("version") == "extension"}


def test_the_committed_irs_hold_tokenizers_and_detokenizers_with_extension_ops():
    assert {p.stem for p in IRS} == {"bpe_tokenizer", "bpe_detokenizer",
                                     "wordpiece_tokenizer", "wordpiece_detokenizer"}
    assert all(_extension_layers(p) for p in IRS)


@pytest.mark.parametrize("xml", IRS, ids=lambda p: p.stem)
def test_check_with_the_extension_gives_every_layer_openvinos_shape(xml, capsys):
    code, doc = _check(capsys, str(xml), "--extension", "openvino_tokenizers")
    assert code == 0
    statuses = {lr["status"] for lr in doc["layers"]}
    assert statuses == {"ok"}, doc["summary"]
    want = _openvino(xml)
    for lr in doc["layers"]:
        if lr["type"] != "Result":
            assert lr["inferred"] == want[lr["name"]], lr["name"]


def test_extension_layers_follow_a_new_input_shape_as_openvino_reshapes_them(capsys):
    xml = DATA / "bpe_detokenizer.xml"
    code, doc = _check(capsys, str(xml), "--extension", "openvino_tokenizers",
                       "--shape", "Parameter_133=[2]")
    want = _openvino(xml, {"Parameter_133": [2]})
    inferred = {lr["name"]: lr["inferred"] for lr in doc["layers"]}
    for name in _extension_layers(xml):
        assert inferred[name] == want[name], name
    assert inferred["VocabDecoder_146"][0] == "[2]"


def test_a_layer_openvino_rejects_with_the_extension_is_invalid_with_its_message(capsys):
    xml = DATA / "bpe_detokenizer.xml"
    with pytest.raises(RuntimeError):  # OpenVINO itself refuses a scalar of token ids
        _openvino(xml, {"Parameter_133": []})
    code, doc = _check(capsys, str(xml), "--extension", "openvino_tokenizers",
                       "--shape", "Parameter_133=[]")
    assert code == 1
    bad = [lr for lr in doc["layers"] if lr["status"] == "invalid"]
    assert [lr["name"] for lr in bad] == ["VocabDecoder_146"]
    assert "OpenVINO with the extension rejects the layer" in bad[0]["message"]


def test_the_extension_by_library_path_works_as_the_package(capsys):
    xml = DATA / "wordpiece_tokenizer.xml"
    path = resolve_extension("openvino_tokenizers")
    assert Path(path).is_file() and path == str(openvino_tokenizers._ext_path)
    code, doc = _check(capsys, str(xml), "--extension", path)
    assert code == 0 and doc["summary"]["unchecked"] == 0


@pytest.mark.parametrize("spec", ["no_such_extension_package", "/no/such/library.so"])
def test_an_extension_that_cannot_be_found_is_an_error_line(spec, capsys):
    code = main(["check", str(IRS[0]), "--extension", spec])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and spec in err


def test_infer_takes_the_extension_too(capsys):
    xml = DATA / "bpe_tokenizer.xml"
    code = main(["infer", str(xml), "--extension", "openvino_tokenizers", "--json"])
    doc = json.loads(capsys.readouterr().out)["models"][0]
    assert code == 0
    want = _openvino(xml)
    for lr in doc["layers"]:
        if lr["name"] in _extension_layers(xml):
            assert lr["inferred"] == want[lr["name"]]


def test_the_hook_asks_openvino_once_per_layer_kind():
    load_extensions(["openvino_tokenizers"])
    G = read_ir(str(DATA / "bpe_tokenizer.xml"))
    hook = extension_shapes()
    calls = []

    def counted(G, node, ins):
        calls.append(node)
        return hook(G, node, ins)

    from ovgather.infer import check

    G.graph["op_shapes"] = counted
    first = check(G)
    second = check(G)
    assert [lr.inferred for lr in first.layers] == [lr.inferred for lr in second.layers]
    assert all(lr.status == "ok" for lr in first.layers)


@pytest.mark.parametrize("xml", IRS, ids=lambda p: p.stem)
def test_check_without_the_extension_fails_naming_its_op_types(xml, capsys):
    """Passes once unknown ops are a model error (exit 1, each layer named)."""
    code = main(["check", str(xml)])
    out = capsys.readouterr().out
    assert code == 1
    G = read_ir(str(xml))
    for op in {a["type"] for _, a in G.nodes(data=True) if a.get("version") == "extension"}:
        assert op in out


def test_an_extension_does_not_make_a_real_op_in_a_wrong_opset_readable(tmp_path, capsys):
    # the extension provides its own op types; an Add written as opset17 stays unreadable
    sample = Path(__file__).resolve().parents[2] / "ir_samples" / "mixed_ops.xml"
    text = sample.read_text().replace('type="Add" version="opset1"',
                                      'type="Add" version="opset17"', 1)
    xml = tmp_path / "add17.xml"
    xml.write_text(text)
    xml.with_suffix(".bin").write_bytes(sample.with_suffix(".bin").read_bytes())
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(xml))
    code = main(["check", str(xml), "--json", "--extension", "openvino_tokenizers"])
    doc = json.loads(capsys.readouterr().out)["models"][0]
    assert code == 1 and doc["summary"]["unknown"] == 1
    assert [layer["type"] for layer in doc["layers"] if layer["status"] == "unknown"] == ["Add"]
