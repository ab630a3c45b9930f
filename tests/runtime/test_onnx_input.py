"""ONNX models in: `check model.onnx` shows what OpenVINO will make of each GatherND.

Models are built with ``onnx.helper``: GatherND-11, -12 and -13 with batch_dims (static
and dynamic batch), the seeds' examples (000_*.txt: ONNX examples 1-5; 004_*.txt: the
GatherND-8 spec layers including HITNet's batch_dims 3) and com.microsoft GatherND. For
each, the GatherND-8 shapes ovgather reports equal those of the model OpenVINO gets with
``convert_model`` followed by ``save_model`` and ``read_model``.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper

from ovgather.cli import main
from ovgather.infer import check
from ovgather.runtime.interop import load_model

# (name, opset, domain, data shape, indices shape, batch_dims or None)
CASES = [
    ("seed000_ex1", 11, "", [2, 2], [2, 2], None),
    ("seed000_ex2", 11, "", [2, 2], [2, 1], None),
    ("seed000_ex3", 12, "", [2, 2, 2], [2, 2], 0),
    ("seed000_ex4", 13, "", [2, 2, 2], [2, 1, 2], 0),
    ("seed000_ex5", 12, "", [2, 2, 2], [2, 1], 1),
    ("seed004_bd0", 13, "", [1000, 256, 10, 15], [25, 125, 3], 0),
    ("seed004_bd2", 13, "", [30, 2, 100, 35], [30, 2, 3, 1], 2),
    ("seed004_hitnet_bd3", 13, "", [1, 64, 64, 320], [1, 64, 64, 1, 1], 3),
    ("v12_bd1_dynamic", 12, "", ["N", 3, 5], ["N", 2, 1], 1),
    ("v13_bd2_dynamic", 13, "", ["N", "M", 4, 5], ["N", "M", 6, 1], 2),
    ("v13_bd1_broadcast", 13, "", [1, 3, 4], [5, 1], 1),
    ("v13_bd3_dynamic_hitnet", 13, "", ["B", 64, 64, 320], ["B", 64, 64, 1, 1], 3),
    ("v11_dynamic_rankless_k", 11, "", ["N", 4, 6], ["N", "K"], None),
    ("com_microsoft", 1, "com.microsoft", ["N", 3, 4], ["N", 2], None),
]


def make_onnx(path: Path, opset: int, domain: str, data: list, indices: list,
              batch_dims: int | None) -> Path:
    attrs = {} if batch_dims is None else {"batch_dims": batch_dims}
    node = helper.make_node("GatherND", ["data", "indices"], ["output"], name="gather_nd",
                            domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "gather_nd",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, data),
         helper.make_tensor_value_info("indices", TensorProto.INT64, indices)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)])
    imports = [helper.make_opsetid("", opset if not domain else 13)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    onnx.save(helper.make_model(graph, opset_imports=imports), path)
    return path


def openvino_gather_nd_shapes(path: Path, tmp: Path) -> dict[str, str]:
    """GatherND layer name → output shape text in the IR OpenVINO makes of the model."""
    xml = tmp / "converted.xml"
    ov.save_model(ov.convert_model(str(path)), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    return {op.get_friendly_name(): str(op.get_output_partial_shape(0))
            for op in model.get_ops() if op.get_type_name() == "GatherND"}


@pytest.mark.parametrize("name,opset,domain,data,indices,bd", CASES, ids=[c[0] for c in CASES])
def test_check_of_an_onnx_model_gives_openvinos_gather_nd8_shapes(
        name, opset, domain, data, indices, bd, tmp_path):
    path = make_onnx(tmp_path / f"{name}.onnx", opset, domain, data, indices, bd)
    theirs = openvino_gather_nd_shapes(path, tmp_path)
    G = load_model(path)
    gnd = {G.nodes[n]["name"]: G.nodes[n] for n in G if G.nodes[n]["type"] == "GatherND"}
    assert set(gnd) == set(theirs) and theirs
    assert all(a["version"] == "opset8" and a["data"].get("batch_dims", "0") == str(bd or 0)
               for a in gnd.values())
    report = check(G)
    ours = {lr.name: lr.inferred[0] for lr in report.layers if lr.type == "GatherND"}
    assert ours == theirs
    assert report.ok, [lr.to_dict() for lr in report.problems() if lr.status != "unchecked"]


def test_seed_hitnet_onnx_keeps_the_batch_dims(tmp_path):
    """ONNX GatherND-13 with batch_dims 3 is GatherND-8 in OpenVINO: [1,64,64,1], not [4096,1]."""
    path = make_onnx(tmp_path / "hitnet.onnx", 13, "", [1, 64, 64, 320], [1, 64, 64, 1, 1], 3)
    report = check(load_model(path))
    assert [lr.inferred for lr in report.layers if lr.type == "GatherND"] == [["[1,64,64,1]"]]


def test_cli_check_reads_onnx_models(tmp_path, capsys):
    path = make_onnx(tmp_path / "m.onnx", 13, "", ["N", "M", 4, 5], ["N", "M", 6, 1], 2)
    theirs = openvino_gather_nd_shapes(path, tmp_path)
    code = main(["check", str(path), "--json", "--all"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    layers = out["models"][0]["layers"]
    ours = {row["name"]: row["inferred"][0] for row in layers if row["type"] == "GatherND"}
    assert ours == theirs


def test_cli_check_of_a_broken_onnx_file_is_exit_2(tmp_path, capsys):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "broken.onnx" in err and len(err.splitlines()) == 1


def test_explain_and_show_take_onnx_models_too(tmp_path, capsys):
    path = make_onnx(tmp_path / "h.onnx", 13, "", [1, 64, 64, 320], [1, 64, 64, 1, 1], 3)
    G = load_model(path)
    name = next(G.nodes[n]["name"] for n in G if G.nodes[n]["type"] == "GatherND")
    assert main(["explain", str(path), "--layer", name, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outputs"]["GatherND-8"] == "[1,64,64,1]"
    assert out["outputs"]["GatherND-5"] == "[4096,1]"
    assert main(["show", str(path), "-o", str(tmp_path / "h.dot")]) == 0
    assert "[1,64,64,1]" in (tmp_path / "h.dot").read_text()


def test_cli_validate_runs_onnx_models(tmp_path, capsys):
    path = make_onnx(tmp_path / "v.onnx", 13, "", ["N", "M", 4, 5], ["N", "M", 6, 1], 2)
    code = main(["validate", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)["models"][0]
    assert code == 0 and out["path"] == str(path)
    assert out["summary"]["ok"] == out["summary"]["layers"] >= 1


def test_an_onnx_conversion_error_keeps_what_the_frontend_said(tmp_path, capsys):
    """The frontend's message, not its first line (the C++ file it was raised in)."""
    node = helper.make_node("NoSuchOp", ["x"], ["y"])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "unsupported.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error:")
    assert "NoSuchOp" in err and "failed at src/" not in err
