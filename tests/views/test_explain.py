"""`explain` walks GatherND's rule and every answer it gives is OpenVINO's.

The seeds' examples (ONNX GatherND examples 1-5, the OpenVINO GatherND-8 spec layers
including the HITNet case with batch_dims 3) are checked against the values written in
the seed documents *and* against openvino; random shapes (intervals, dynamic dims and
ranks, bad types) against openvino alone: the same output under GatherND-5 and -8, and
a failed rule exactly when OpenVINO rejects the inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ov_oracle import INDEX_TYPES, ov_gather_nd, random_shape, rng_for  # noqa: E402

from ovgather.cli import main  # noqa: E402
from ovgather.ir import read_ir  # noqa: E402
from ovgather.views.explain import explain_gather_nd, explain_layer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"

# (data, indices, batch_dims, GatherND-8 output, GatherND-5 output), as the seeds say:
# 000_*.txt ONNX GatherND examples 1-5 (output_shape comments; ONNX keeps batch dims
# like GatherND-8, and with b <= 1 GatherND-5 gives the same); 004_*.txt the GatherND-8
# spec layers and examples 6/7 (b = 2 and 3), the v5 column the product of the batch dims.
SEED_CASES = [
    ("[2,2]", "[2,2]", 0, "[2]", "[2]"),
    ("[2,2]", "[2,1]", 0, "[2,2]", "[2,2]"),
    ("[2,2,2]", "[2,2]", 0, "[2,2]", "[2,2]"),
    ("[2,2,2]", "[2,1,2]", 0, "[2,1,2]", "[2,1,2]"),
    ("[2,2,2]", "[2,1]", 1, "[2,2]", "[2,2]"),
    ("[1000,256,10,15]", "[25,125,3]", 0, "[25,125,15]", "[25,125,15]"),
    ("[30,2,100,35]", "[30,2,3,1]", 2, "[30,2,3,35]", "[60,3,35]"),
    ("[1,64,64,320]", "[1,64,64,1,1]", 3, "[1,64,64,1]", "[4096,1]"),  # HITNet
    ("[2,3,4]", "[2,3,1,1]", 2, "[2,3,1]", "[6,1]"),
    ("[1,2,2,4]", "[1,2,2,1]", 3, "[1,2,2]", "[4]"),
]


@pytest.mark.parametrize("data,indices,b,v8,v5", SEED_CASES)
def test_explain_seed_examples_match_the_documents_and_openvino(data, indices, b, v8, v5):
    e = explain_gather_nd(data, indices, b, "i64")
    assert e.failed_rule is None
    assert e.outputs["GatherND-8"] == v8 == ov_gather_nd(data, indices, b, 8)
    assert e.outputs["GatherND-5"] == v5 == ov_gather_nd(data, indices, b, 5)
    assert e.outputs["ONNX GatherND-12/13"] == v8
    assert e.k == indices.strip("[]").split(",")[-1]


def test_explain_hitnet_says_how_the_batch_dims_fold():
    e = explain_gather_nd("[1,64,64,320]", "[1,64,64,1,1]", 3)
    assert [row["merged"] for row in e.batch] == ["1", "64", "64"]
    assert "1 x 64 x 64 = 4096" in e.notes["GatherND-5"]
    assert e.outputs["ONNX GatherND-11"] is None  # GatherND-11 has no batch_dims
    text = e.to_text()
    assert "b = batch_dims = 3" in text and "k = I[-1] = 1" in text and "[4096,1]" in text


@pytest.mark.parametrize("data,indices,b,rule", [
    ("[2,3,4,5]", "[2,1]", 3, "batch_dims must be less than the rank of indices"),
    ("[2,3,4,5]", "[2,1,2]", 2, "the leading batch_dims dims of data and indices must match"),
    ("[2,1,4,5]", "[2,1,5,3]", 2,
     "batch_dims + the index tuple length k must not exceed the rank of data"),
    ("[]", "[2,1,1]", 0, "data must have rank at least 1"),
    ("[2,2,2]", "[]", 0, "indices must have rank at least 1"),
    ("[2,3]", "[2,2]", 2, "batch_dims must be less than the rank of data"),
])
def test_explain_names_the_rule_openvino_breaks(data, indices, b, rule):
    e = explain_gather_nd(data, indices, b, "i64")
    assert e.failed_rule == rule
    assert all(v is None for v in e.outputs.values())
    assert ov_gather_nd(data, indices, b, 8).startswith("error")
    assert ov_gather_nd(data, indices, b, 5).startswith("error")
    assert f"FAIL  {rule}" in e.to_text()


def test_explain_float_indices_fail_the_type_rule():
    e = explain_gather_nd("[2,3]", "[2,1]", 0, "f32")
    assert e.failed_rule == "the indices must be of an integer type"
    assert ov_gather_nd("[2,3]", "[2,1]", 0, 8, "f32").startswith("error")


def _random_case(rng):
    data = random_shape(rng)
    like = data.strip("[]").split(",") if data not in ("[...]", "[]") else None
    indices = random_shape(rng, like=like)
    b = rng.choice((0, 0, 1, 1, 2, 2, 3))
    itype = rng.choice(INDEX_TYPES) if rng.random() < 0.2 else "i64"
    return data, indices, b, itype


def test_explain_agrees_with_openvino_on_random_shapes():
    rng = rng_for("explain_random")
    checked = failed = 0
    for _ in range(400):
        data, indices, b, itype = _random_case(rng)
        e = explain_gather_nd(data, indices, b, itype)
        for version in (5, 8):
            theirs = ov_gather_nd(data, indices, b, version, itype)
            ours = e.outputs[f"GatherND-{version}"]
            case = (data, indices, b, itype, version, e.failed_rule, theirs)
            if theirs.startswith("error"):
                assert ours is None and e.failed_rule, case
                failed += 1
            else:
                assert ours == theirs, case
            checked += 1
    assert checked == 800 and 50 < failed < 700  # both kinds really occur


# ---- layers of real models --------------------------------------------------------------


@pytest.mark.parametrize("sample,layer,version,output", [
    ("gather_nd8_bd3.xml", "gather_nd8_bd3", 8, "[1,64,64,1]"),
    ("gather_nd5_bd3.xml", "gather_nd5_bd3", 5, "[4096,1]"),
    ("gather_nd8_bd2.xml", "gather_nd8_bd2", 8, "[30,2,3,35]"),
    ("gather_nd5_bd2.xml", "gather_nd5_bd2", 5, "[60,3,35]"),
])
def test_explain_layer_of_the_hitnet_and_spec_samples(sample, layer, version, output):
    e = explain_layer(read_ir(SAMPLES / sample), layer)
    assert e.layer["op_version"] == version and e.layer["name"] == layer
    assert e.outputs[f"GatherND-{version}"] == output
    assert e.layer["declared"] == [output]


def test_cli_explain_json_for_the_hitnet_layer(capsys):
    code = main(["explain", str(SAMPLES / "gather_nd8_bd3.xml"), "--layer", "gather_nd8_bd3",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["batch_dims"] == 3 and out["k"] == "1"
    assert out["outputs"]["GatherND-8"] == "[1,64,64,1]"
    assert out["outputs"]["GatherND-5"] == "[4096,1]"
    assert out["failed_rule"] is None


def test_cli_explain_text_exits_1_when_the_ir_declares_the_other_layout(capsys):
    code = main(["explain", str(SAMPLES / "wrong_gather_nd8_bd3_v5_layout.xml"),
                 "--layer", "gather_nd8_bd3"])
    text = capsys.readouterr().out
    assert code == 1
    assert "declared by the IR: [4096,1]" in text and "[1,64,64,1]" in text


def test_cli_explain_a_layer_that_is_no_gather_gives_its_rule_in_words(capsys):
    G = read_ir(SAMPLES / "mixed_ops.xml")
    name = next(G.nodes[n]["name"] for n in G if G.nodes[n]["type"] == "MatMul")
    code = main(["explain", str(SAMPLES / "mixed_ops.xml"), "--layer", name])
    text = capsys.readouterr().out
    assert code == 0
    assert f"MatMul '{name}'" in text and "MatMul-1 (ops/reduce.py): " in text
    assert "MatMul-1             [1..8,16]" in text


def _sample_gathers():
    out = []
    for path in sorted(SAMPLES.rglob("*.xml")):
        G = read_ir(path)
        out += [(path, G.nodes[n]["name"]) for n in G
                if G.nodes[n]["type"] in ("GatherND", "Gather", "GatherElements")]
    return out


GATHERS = _sample_gathers()


@pytest.mark.parametrize("path,layer", GATHERS,
                         ids=[f"{p.relative_to(SAMPLES)}:{n}" for p, n in GATHERS])
def test_explain_every_sample_gather_gives_openvinos_shape(path, layer):
    import openvino as ov

    ops = {op.get_friendly_name(): op for op in ov.Core().read_model(str(path)).get_ops()}
    e = explain_layer(read_ir(path), layer)
    mine = f"{e.layer['type']}-{e.layer['op_version']}"
    assert e.failed_rule is None
    assert e.outputs[mine] == str(ops[layer].get_output_partial_shape(0))


@pytest.mark.parametrize("spelling", ["x=[4,3,8]", "x[4,3,8]"])
def test_cli_explain_takes_shape_overrides_in_both_spellings(spelling, capsys):
    code = main(["explain", str(SAMPLES / "mixed_ops.xml"), "--layer", "pick_rows_nd8",
                 "--shape", spelling, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["inputs"]["data"] == "[4,4,4]"
    assert out["outputs"]["GatherND-8"] == "[4,2,4]"
