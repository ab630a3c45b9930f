"""``compare`` runs OpenVINO in the runtime worker: a model that crashes the CPU plugin
(SIGSEGV) on the user's arrays is a reported result (exit 1, the model and the inputs
named), the other model still runs, and with ``--all-layers`` the layers before the crash
are still compared. Also: both files named by their shortest distinct path suffixes, and
what proves nothing (an empty output, layers ONNX Runtime never ran, int64 at the i32
edge) is ``nothing proven``, not ``ok``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from model_edits import doubled

import ovgather as og
from ovgather.cli import main
from ovgather.comparison.guards import distinct_names
from ovgather.comparison.layers import LayerComparison, LayersReport


def _gathering(path: Path, clamp: bool) -> Path:
    """y = GatherND(data, Convert(pos)) and r = Relu(data): positions given as floats,
    so that ovgather cannot tell they index; ``clamp`` keeps them in the table."""
    data = ops.parameter([4, 3], np.float32, name="data")
    pos = ops.parameter([2, 1], np.float32, name="pos")
    for p, n in ((data, "data"), (pos, "pos")):
        p.output(0).set_names({n})
    index = ops.convert(ops.clamp(pos, 0, 3) if clamp else pos, "i64")
    y, r = ops.gather_nd(data, index), ops.relu(data)
    y.output(0).set_names({"y"})
    r.output(0).set_names({"r"})
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([y, r], [data, pos], path.stem), str(path))
    return path


@pytest.fixture(scope="module")
def crashing(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("crash")
    a, b = _gathering(root / "a.xml", False), _gathering(root / "b.xml", True)
    np.save(root / "pos.npy", np.array([[1e12], [0]], np.float32))
    return a, b, root / "pos.npy"


@pytest.mark.parametrize("order", ["A crashes", "B crashes"])
def test_a_model_that_crashes_the_plugin_is_a_reported_result(order, crashing, capsys):
    a, b, pos = crashing
    first, second = (a, b) if order == "A crashes" else (b, a)
    which = "A" if order == "A crashes" else "B"
    argv = ["compare", str(first), str(second), "--input", f"pos={pos}"]
    assert main([*argv, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    [crash] = doc["crashed"]
    assert crash["model"] == which and crash["signal"] == "SIGSEGV"
    assert crash["stage"] == "running" and "pos[2,1] (given)" in crash["inputs"]
    assert doc["summary"]["crashed"] == 2
    other = "shape_b" if which == "A" else "shape"
    assert {o["name"]: o[other] for o in doc["outputs"]} == {"y": "[2,3]", "r": "[4,3]"}
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"crashed: model {which} ({a.name}) crashed (SIGSEGV) while running on " \
           "inputs data[4,3] (random normal), pos[2,1] (given)" in out


def test_all_layers_still_compares_the_layers_before_the_crash(crashing, capsys):
    a, b, pos = crashing
    assert main(["compare", str(a), str(b), "--input", f"pos={pos}", "--all-layers",
                 "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    status = {lc["a"]: lc["status"] for lc in doc["layers"] if lc["a"]}
    by_type = {lc["type"]: lc for lc in doc["layers"] if lc["a"]}
    assert by_type["Relu"]["status"] == "ok"
    assert by_type["GatherND"]["status"] == "crashed"
    assert "model A (a.xml) crashed (SIGSEGV)" in by_type["GatherND"]["message"]
    assert doc["layer_summary"]["crashed"] == 1, status
    # without the crashing array, the same models compare clean
    assert main(["compare", str(a), str(b), "--all-layers"]) == 0
    capsys.readouterr()


def test_the_same_name_in_two_folders_is_told_apart(tmp_path, capsys):
    rng = np.random.default_rng(11)
    for _ in range(6):
        depth = int(rng.integers(1, 4))
        common = [f"c{k}" for k in range(int(rng.integers(0, 3)))]
        left = [f"l{rng.integers(100)}" for _ in range(depth)]
        right = [*left[:-1], f"r{rng.integers(100)}"]
        pa, pb = (str(Path(*common, *p, "model.xml")) for p in (left, right))
        na, nb = distinct_names(pa, pb)
        assert na != nb and pa.endswith(na) and pb.endswith(nb)
        assert na == f"{left[-1]}/model.xml" and nb == f"{right[-1]}/model.xml"
    assert distinct_names("x/a.xml", "y/b.xml") == ("a.xml", "b.xml")
    sample = Path(__file__).resolve().parents[2] / "ir_samples/mixed_ops.xml"
    a = tmp_path / "zoo" / "a" / "model.xml"
    a.parent.mkdir(parents=True)
    (tmp_path / "zoo" / "b").mkdir()
    og.write_ir(og.read_ir(sample), a)
    b, _ = doubled(sample, tmp_path / "zoo" / "b" / "model.xml")
    assert main(["compare", str(a), str(b), "--all-layers"]) == 1
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "first divergent" in ln)
    assert "of a/model.xml)" in line and "of b/model.xml)" in line, line
    renamed = og.read_ir(sample)
    og.rename_input(renamed, "ge_ids", "positions")
    og.write_ir(renamed, tmp_path / "zoo" / "b" / "model.xml")
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "of a/model.xml has none in b/model.xml" in err, err


def _model(path: Path, shape, body, dtype=np.float32) -> Path:
    x = ops.parameter(shape, dtype, name="x")
    x.output(0).set_names({"x"})
    y = body(x)
    y.output(0).set_names({"y"})
    ov.save_model(ov.Model([y], [x], path.stem), str(path))
    return path


@pytest.mark.parametrize("seed", range(3))
def test_an_empty_output_proves_nothing(seed, tmp_path, capsys):
    """x * 2 against x * 3 on an x with a zero-size dim: "1 ok" before."""
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4)))]
    shape[int(rng.integers(len(shape)))] = 0
    a = _model(tmp_path / "a.xml", shape, lambda x: ops.multiply(x, ops.constant(
        np.float32(2))))
    b = _model(tmp_path / "b.xml", shape, lambda x: ops.multiply(x, ops.constant(
        np.float32(3))))
    assert main(["compare", str(a), str(b), "--json"]) == 1
    [out] = json.loads(capsys.readouterr().out)["outputs"]
    assert out["status"] == "nothing proven" and "empty" in out["message"]
    assert main(["compare", str(a), str(b), "--allow-unproven"]) == 0
    capsys.readouterr()


def test_int64_at_the_edge_of_i32_proves_nothing(tmp_path, capsys):
    """x * 3e9 in i64 is computed in i32 by the CPU plugin: 1 * 3e9 saturates to
    2147483647 in both models, equal and wrong."""
    def body(x):
        return ops.multiply(x, ops.constant(np.array(3_000_000_000, np.int64)))
    a = _model(tmp_path / "a.xml", [3], body, np.int64)
    np.save(tmp_path / "x.npy", np.array([1, 2, -3], np.int64))
    argv = ["compare", str(a), str(a), "--input", f"x={tmp_path / 'x.npy'}"]
    assert main([*argv, "--json"]) == 1
    [out] = json.loads(capsys.readouterr().out)["outputs"]
    assert out["status"] == "nothing proven"
    assert "i32 range's edge (2147483647 in A)" in out["message"]
    assert main([*argv, "--allow-unproven"]) == 0
    capsys.readouterr()


def test_layers_nothing_compared_prove_nothing():
    """Every layer ``not run`` (ONNX Runtime refused the model): exit 0 before."""
    from ovgather.comparison.outputs import CompareReport

    outputs = CompareReport("a.onnx", "b.xml", 0, 1e-5, 1e-5)
    report = LayersReport(outputs, layers=[LayerComparison("n", "n", 0, "t", "not run",
                                                           message="the runtime failed")])
    assert not report.ok and "nothing compared" in report.unproven
    assert report.to_dict()["layers_unproven"] == report.unproven
    outputs.allow_unproven = True
    assert report.ok
    assert LayersReport(outputs, layers=[]).unproven is None


def test_ref_onnxruntime_refusing_the_model_proves_nothing(tmp_path, capsys):
    """A Relu with an attribute ONNX Runtime rejects (OpenVINO reads it): every layer
    ``not run``, "no layer output differs" and exit 0 before."""
    pytest.importorskip("onnxruntime")
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["h"], name="relu", bogus=1),
             helper.make_node("Neg", ["h"], ["y"], name="neg")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [2, 3])])
    path = tmp_path / "refused.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    argv = ["compare", str(path), str(path), "--all-layers", "--ref", "onnxruntime"]
    assert main([*argv, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {lc["status"] for lc in doc["layers"]} == {"not run"}
    assert "nothing compared" in doc["layers_unproven"]
    assert main(argv) == 1
    assert "nothing proven: no layer output was compared" in capsys.readouterr().out
    assert main([*argv, "--allow-unproven"]) == 0
    capsys.readouterr()
