"""``ovgather validate``: every sample and a generated zoo agree with the CPU runtime,
and a wrong reference or a wrong shape rule is caught (exit 1, the layer named)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ovgather.validate.gathers as validate_module
import ovgather.validate.whole_model as whole_model_module
from ovgather import reference
from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.ops.core.inputs import pick_sizes
from ovgather.validate import validate, validate_whole_model

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ir_samples").rglob("*.xml"))


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> Path:
    from bench_validate import save_zoo

    return save_zoo(240, tmp_path_factory.mktemp("zoo") / "zoo.xml", seed=7)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


#: samples whose gathers all sit inside bodies: none can run alone, so nothing is proved
ONLY_IN_BODIES = {"ir_samples/if_gather.xml", "ir_samples/loop_gather.xml"}


@pytest.mark.parametrize("sample", SAMPLES)
def test_validate_exits_0_on_every_sample(sample, capsys, monkeypatch):
    """... unless nothing could be proved (every gather inside a body): exit 1 then."""
    monkeypatch.chdir(ROOT)
    code, out, err = _run(capsys, "validate", sample, "--json")
    assert code == (1 if sample in ONLY_IN_BODIES else 0), out + err
    model = json.loads(out)["models"][0]
    assert model["nothing_proved"] == (sample in ONLY_IN_BODIES)
    assert model["summary"]["layers"] > 0
    assert model["summary"]["mismatch"] == model["summary"]["error"] == 0


def test_validate_compares_values_and_shapes_of_every_sample_layer():
    G = read_ir(ROOT / "ir_samples" / "mixed_ops.xml")
    report = validate(G, seed=3)
    assert report.ok and len(report.layers) == 5
    for lv in report.layers:
        assert lv.runtime_shape == lv.inferred_shape
        assert lv.runtime_partial_shape == lv.inferred_partial_shape
        assert lv.max_error == 0.0


def test_generated_zoo_covers_the_issue_and_validates(zoo):
    G = read_ir(zoo)
    kinds = {(a["type"], a["version"], a["data"].get("batch_dims"), a["data"].get("axis"))
             for _, a in G.nodes(data=True) if a["type"].startswith("Gather")}
    assert {("GatherND", v, str(b), None) for v in ("opset5", "opset8") for b in range(4)} <= kinds
    assert {("GatherElements", "opset6", None, str(a)) for a in range(-4, 4)} <= kinds
    assert any(t == "Gather" and v == "opset8" and b not in (None, "0") for t, v, b, _ in kinds)
    shapes = " ".join(a["data"].get("shape", "") for _, a in G.nodes(data=True)
                      if a["type"] == "Parameter")
    types = {a["data"].get("element_type") for _, a in G.nodes(data=True)
             if a["type"] == "Parameter"}
    assert "?" in shapes and ".." in shapes
    assert {"f32", "f16", "i32", "u8", "i64"} <= types
    report = validate(G, seed=11)
    assert report.ok, [f"{lv.name}: {lv.message}" for lv in report.problems()][:5]
    assert report.summary["ok"] == 240


def test_validate_cli_exits_0_on_the_zoo_and_prints_a_summary(zoo, capsys):
    code, out, _ = _run(capsys, "validate", str(zoo), "--seed", "5")
    assert code == 0
    assert "240 gather layers: 240 ok" in out


def test_an_off_by_one_reference_makes_validate_exit_1_and_name_the_layer(capsys, monkeypatch):
    def off_by_one(op_type, version, data, indices, *, batch_dims=0, axis=0):
        if op_type == "GatherND":  # a broken copy: every positive index one too small
            return reference.gather_nd(data, np.where(indices > 0, indices - 1, indices),
                                        batch_dims, version)
        return reference.for_layer(op_type, version, data, indices, batch_dims=batch_dims,
                                   axis=axis)

    monkeypatch.setattr(validate_module, "for_layer", off_by_one)
    code, out, _ = _run(capsys, "validate", str(ROOT / "ir_samples" / "gather_nd8_bd2.xml"))
    assert code == 1
    assert "mismatch" in out and "gather_nd8_bd2" in out and "largest error" in out


def test_a_wrong_shape_rule_makes_validate_exit_1(capsys, monkeypatch):
    import dataclasses

    from ovgather.ops.core import registry
    from ovgather.ops.core.values import Tensor
    from ovgather.shapes import PartialShape

    right, find = registry.spec("GatherElements", 6), registry.find

    def wrong(ins, attrs, trace):  # drops the last dim
        out = right.rule(ins, attrs, trace)[0]
        dims = out.shape.dims
        return [Tensor(PartialShape.of(dims[:-1]) if dims else out.shape, out.etype)]

    def find_wrong(op_type, opset):
        found = find(op_type, opset)
        return dataclasses.replace(found, rule=wrong) if found is right else found

    monkeypatch.setattr(registry, "find", find_wrong)
    code, out, _ = _run(capsys, "validate", str(ROOT / "ir_samples" / "mixed_ops.xml"), "--json")
    assert code == 1
    bad = [lv for lv in json.loads(out)["models"][0]["layers"] if lv["status"] == "mismatch"]
    assert [lv["name"] for lv in bad] == ["ranked_ge"]
    assert "output shape" in bad[0]["message"]


def test_layer_option_selects_layers_and_rejects_unknown_names(capsys):
    path = str(ROOT / "ir_samples" / "mixed_ops.xml")
    code, out, _ = _run(capsys, "validate", path, "--layer", "ranked_ge", "--json")
    assert code == 0
    assert [lv["name"] for lv in json.loads(out)["models"][0]["layers"]] == ["ranked_ge"]
    code, out, err = _run(capsys, "validate", path, "--layer", "nope")
    assert code == 2 and out == ""
    assert err.startswith("error:") and "nope" in err and "mixed_ops.xml" in err


def test_bad_input_exits_2_with_one_error_line(capsys, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<net")
    code, out, err = _run(capsys, "validate", str(bad))
    assert code == 2 and out == "" and err.count("\n") == 1 and "bad.xml" in err


def test_same_seed_same_inputs_and_report():
    G = read_ir(ROOT / "ir_samples" / "dynamic_gathers.xml")
    a, b = validate(G, seed=4).to_json(), validate(G, seed=4).to_json()
    assert a == b


def test_picked_sizes_lie_inside_the_bounds_and_share_batch_dims():
    from ovgather.shapes import PartialShape

    rng = np.random.default_rng(0)
    for _ in range(50):
        d, i = pick_sizes(rng, "GatherND", PartialShape.parse("[?,2..4,3,1..]"),
                          PartialShape.parse("[1..8,2..,5,?]"), batch_dims=2)
        assert d[:2] == i[:2] and 2 <= d[1] <= 4 and d[2] == 3 and i[2] == 5
        assert 1 <= i[-1] <= 2  # the tuple fits the 2 non-batch data dims


def test_whole_model_compares_real_output_shapes(capsys):
    for name in ("mixed_ops.xml", "dynamic_gathers.xml", "onnx/gathernd13_bd2_dynamic.xml",
                 "pytorch/bool_mask.xml"):
        report = validate_whole_model(read_ir(ROOT / "ir_samples" / name), seed=2)
        assert report.ok and report.layers, name
        assert all(lv.runtime_shape for lv in report.layers)
    code, out, _ = _run(capsys, "validate", str(ROOT / "ir_samples" / "mixed_ops.xml"),
                        "--whole-model", "--json")
    assert code == 0 and json.loads(out)["models"][0]["mode"] == "whole-model"


def test_whole_model_catches_a_wrong_inference(monkeypatch):
    from ovgather.shapes import PartialShape

    G = read_ir(ROOT / "ir_samples" / "gather_nd8_bd2.xml")
    real = whole_model_module.infer_shapes

    def shifted(G, shapes=None):
        out = real(G, shapes)
        node = next(n for n, t in G.nodes(data="type") if t == "GatherND")
        dims = [d.lo + 1 for d in out[node][0]]
        out[node] = [PartialShape(dims)]
        return out

    monkeypatch.setattr(whole_model_module, "infer_shapes", shifted)
    report = validate_whole_model(G)
    assert not report.ok and report.problems()[0].name == "gather_nd8_bd2"


def test_whole_model_gives_a_dynamic_rank_input_a_rank(tmp_path):
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset6 as o6

    data = o1.parameter(ov.PartialShape.dynamic(), np.float32, name="any")
    idx = o1.parameter(ov.PartialShape("[2,?,1..3]"), np.int32, name="idx")
    node = o6.gather_elements(data, idx, 2)
    node.set_friendly_name("ge_any_rank")
    path = tmp_path / "any.xml"
    ov.save_model(ov.Model([node], [data, idx]), str(path))
    report = validate_whole_model(read_ir(path), seed=1)
    assert report.ok and report.layers[0].runtime_shape.count(",") == 2


def test_whole_model_the_runtime_runs_at_no_size_skips_every_gather(capsys):
    # dynamic_rank's GatherND-5 takes partial shapes no concrete input can meet, so the CPU
    # runtime refuses the whole model at every size tried: each gather is skipped with
    # OpenVINO's reason; nothing is proved, so the verdict fails (exit 1)
    path = str(ROOT / "ir_samples" / "dynamic_rank.xml")
    code, out, err = _run(capsys, "validate", path, "--whole-model", "--json")
    layers = json.loads(out)["models"][0]["layers"]
    assert code == 1 and not err and json.loads(out)["models"][0]["nothing_proved"]
    assert len(layers) == 4 and {lv["status"] for lv in layers} == {"skipped"}
    assert all("none of the input sizes tried" in lv["message"] for lv in layers)
    assert all("Check" in lv["message"] for lv in layers)  # the runtime's own words


def test_progress_bar_only_on_a_terminal_and_never_on_stdout(zoo, capsys, monkeypatch):
    monkeypatch.setenv("OVGATHER_PROGRESS_DELAY", "0")
    code, out, err = _run(capsys, "validate", str(zoo), "--json")
    assert code == 0 and err == ""  # stderr is not a terminal here: no bar
    assert json.loads(out)["models"][0]["summary"]["ok"] == 240
    # the bar on a real terminal: tests/cli/test_cli_newcomer.py runs validate under a pty


def test_a_bad_attribute_is_the_same_invalid_row_in_check_and_validate():
    from ovgather.infer import check

    G = read_ir(ROOT / "ir_samples" / "gather_versions.xml")
    node = next(n for n, name in G.nodes(data="name") if name == "gather7_axis_m3_bd1")
    G.nodes[node]["data"]["batch_dims"] = "x"
    checked = next(lr for lr in check(G).layers if lr.id == node)
    validated = validate(G, layers=[node]).layers[0]
    assert checked.status == validated.status == "invalid"
    assert validated.message == checked.message
    assert "the attribute 'batch_dims' must be an integer, but got 'x'" in validated.message


def test_validate_runtime_and_reference_name_no_gather_op_type():
    import ast

    from ovgather.ops.core import registry

    family = set(registry.family("gather"))
    modules = [*(ROOT / "ovgather" / "validate").glob("*.py"),
               *(ROOT / "ovgather" / "runtime").glob("*.py"),
               ROOT / "ovgather" / "ops" / "reference.py"]
    for module in modules:
        tree = ast.parse(module.read_text())
        named = [n.value for n in ast.walk(tree)
                 if isinstance(n, ast.Constant) and n.value in family]
        assert not named, (module, named)


@pytest.mark.parametrize("whole_model", [False, True])
def test_a_model_without_gather_layers_proves_nothing_and_fails(capsys, whole_model):
    """Plain validate proves the gather family; on a CNN without one it proved nothing,
    which is not a pass (exit 1, and the line says what would prove the model)."""
    path = str(ROOT / "ir_corpus" / "resnet" / "pytorch_static.xml")
    argv = ["validate", path, *(["--whole-model"] if whole_model else [])]
    code, out, _ = _run(capsys, *argv)
    assert code == 1
    assert "nothing proved" in out and "--all-layers" in out
    code, out, _ = _run(capsys, *argv, "--json")
    model = json.loads(out)["models"][0]
    assert code == 1 and model["nothing_proved"] and model["layers"] == []


@pytest.mark.parametrize("value", [2**31 - 1, -2**31, 2**40, -(2**35)])
def test_int64_values_at_or_past_the_i32_edge_are_not_proven(tmp_path, capsys, value):
    """The CPU plugin computes i64 in i32, saturating: a gather of such values is neither
    ok nor a mismatch of ovgather's, but not proven, with the reason."""
    import openvino as ov
    import openvino.opset8 as o8

    rng = np.random.default_rng(abs(value) % 97)
    table = rng.integers(-50, 50, size=(4, 3)).astype(np.int64)
    table[:, rng.integers(0, 3)] = value  # every row holds it: whatever is gathered
    idx = o8.parameter([2], ov.Type.i64, name="idx")
    out = o8.gather(o8.constant(table), idx, o8.constant(np.int64(0)))
    ov.save_model(ov.Model([out], [idx], "g64"), str(tmp_path / "g64.xml"))
    code, out_text, _ = _run(capsys, "validate", str(tmp_path / "g64.xml"), "--json")
    (layer,) = json.loads(out_text)["models"][0]["layers"]
    assert layer["status"] == "skipped" and "i32 range's edge" in layer["message"]
    assert code == 1  # nothing else proved
