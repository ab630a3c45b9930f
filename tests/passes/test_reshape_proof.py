"""``reshape``'s runtime proof: exit 0 only when each row of a batch of the written model
equals the original run on that row alone (OpenVINO CPU, f32); a model whose rows mix is
refused (exit 1, the output or the layer named, nothing written) or fixed and verified.

The judge of every verdict here is OpenVINO run independently of ovgather
(``reshape_survey.rows_differ``: the written file against the original, row by row, on
inputs of its own), and OpenVINO's own ``Model.reshape`` of the original for the models
ovgather refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from proof_models import batch_mixer, moe_block, row_pick
from reshape_survey import ROOT, rows_differ

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.runtime import from_openvino
from ovgather.runtime.core import cpu_config
from ovgather.shapes import PartialShape
from ovgather.validate.rows import proof_sizes, prove_rows, row_inputs
from ovgather.validate.sizes import parameter_shapes

CPU = {"INFERENCE_PRECISION_HINT": "f32"}
BART = ROOT / "ir_corpus" / "bart" / "onnx_static.xml"
MIXTRAL = ROOT / "ir_corpus" / "mixtral" / "pytorch_dynamic.xml"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("proof")
    out = {}
    for make in (moe_block, batch_mixer):
        path = folder / f"{make.__name__}.xml"
        ov.save_model(make(), str(path), compress_to_fp16=False)
        out[make.__name__] = path
    return out


def _reshape(capsys, xml: Path, out: Path, shapes: dict[str, str], *flags: str
             ) -> tuple[int, dict]:
    args = ["reshape", str(xml), "-o", str(out), "--json", *flags]
    for name, shape in shapes.items():
        args += ["--shape", f"{name}={shape}"]
    code = main(args)
    return code, json.loads(capsys.readouterr().out)


def _batched(xml: Path, batch: str) -> dict[str, str]:
    model = ov.Core().read_model(str(xml))
    return {i.get_any_name(): "[" + ",".join([batch] + [str(d) for d in list(
        i.get_partial_shape())[1:]]) + "]" for i in model.inputs}


def _openvino_runs_rows(xml: Path, batch: int) -> bool:
    """OpenVINO's own reshape of the original runs at ``batch`` with each row equal to
    that row alone (False also when the run fails)."""
    core = ov.Core()
    model = core.read_model(str(xml))
    model.reshape({i.get_any_name(): [batch, *list(i.get_partial_shape().to_shape())[1:]]
                   for i in model.inputs})
    many, one = core.compile_model(model, "CPU", CPU), core.compile_model(str(xml), "CPU", CPU)
    x = np.random.default_rng(1).standard_normal(
        [batch, *one.inputs[0].get_partial_shape().to_shape()[1:]]).astype(np.float32)
    try:
        got = many(x)[0]
    except RuntimeError:
        return False
    want = np.concatenate([one(x[r:r + 1])[0] for r in range(batch)])
    return bool(np.allclose(got, want, rtol=1e-4, atol=1e-5))


@pytest.mark.parametrize("batch", ["3", "?"])
def test_moe_scatter_into_a_buffer_of_the_traced_token_count_is_refused(built, batch,
                                                                         tmp_path, capsys):
    xml = built["moe_block"]
    assert not _openvino_runs_rows(xml, 3)  # the class is real: OpenVINO's reshape fails
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, xml, out, {"hidden_states": f"[{batch},4,8]"})
    assert code == 1 and not out.exists() and doc["output"] is None
    first = doc["blocked"][0]
    assert (first["type"], first["name"]) == ("ScatterNDUpdate", "moe/expert0/index_add")
    assert "--fix" in first["hint"]


@pytest.mark.parametrize("batch", ["3", "?"])
def test_moe_fix_fills_the_buffer_to_the_token_count_and_the_rows_verify(built, batch,
                                                                          tmp_path, capsys):
    xml = built["moe_block"]
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, xml, out, {"hidden_states": f"[{batch},4,8]"}, "--fix")
    assert code == 0, doc
    assert [f["name"] for f in doc["fixes"]] == ["moe/expert0/index_add"]
    proof = doc["runtime_proof"]
    assert proof["ran"] and proof["differs"] is None and proof["precision"] == "f32"
    assert proof["batches"] == ([3] if batch == "3" else [2, 3])
    assert rows_differ(xml, out, (3,) if batch == "3" else (1, 2, 3)) is None


def test_moe_buffer_that_is_no_repeated_value_is_refused_with_fix_naming_the_scatter(
        tmp_path, capsys):
    xml = tmp_path / "moe_bias.xml"
    ov.save_model(moe_block(bias=True), str(xml), compress_to_fp16=False)
    assert not _openvino_runs_rows(xml, 3)
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, xml, out, {"hidden_states": "[3,4,8]"}, "--fix")
    assert code == 1 and not out.exists()
    first = doc["blocked"][0]
    assert (first["type"], first["name"]) == ("ScatterNDUpdate", "moe/expert0/index_add")
    assert first["hint"].startswith("no fix covers this layer")


def test_a_model_that_mixes_rows_is_refused_by_the_proof_naming_the_output(built, tmp_path,
                                                                           capsys):
    xml = built["batch_mixer"]
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, xml, out, {"x": "[3,4]"})
    assert code == 1 and not out.exists() and doc["output"] is None
    assert doc["runtime_proof"]["differs"]["output"] == "y"
    assert doc["runtime_proof"]["differs"]["batch"] == 3
    # without the proof the same reshape is written, and OpenVINO shows its rows differ
    code, doc = _reshape(capsys, xml, out, {"x": "[3,4]"}, "--no-runtime-proof")
    assert code == 0 and rows_differ(xml, out, (3,)) is not None


def test_the_proof_names_the_layer_of_a_run_that_fails(built):
    xml = built["moe_block"]
    model = ov.Core().read_model(str(xml))
    model.reshape({"hidden_states": [3, 4, 8]})
    G = from_openvino(model)  # what a reshape that only rewrote the dims would write
    proof = prove_rows(str(xml), parameter_shapes(read_ir(str(xml))), G)
    assert proof.ran and not proof.ok
    assert proof.differs["why"].startswith("ScatterNDUpdate 'moe/expert0/index_add'")


def _padded_rows_differ(original: Path, written: Path) -> float:
    """How far row r of ``written`` run on a batch of 3 is from ``original`` run on row r
    alone, when the rows' attention masks pad different numbers of positions."""
    core = ov.Core()
    one = core.compile_model(str(original), "CPU", cpu_config())
    many = core.compile_model(str(written), "CPU", cpu_config())
    rng = np.random.default_rng(7)
    feed = {"input_ids": rng.integers(0, 300, (3, 12)),
            "decoder_input_ids": rng.integers(0, 300, (3, 5)),
            "attention_mask": np.ones((3, 12), np.int64)}
    feed["attention_mask"][1, -2:] = 0
    feed["attention_mask"][2, -5:] = 0
    got = many(feed)[0]
    return max(float(np.abs(one({k: v[r:r + 1] for k, v in feed.items()})[0]
                             - got[r:r + 1]).max()) for r in range(3))


@pytest.mark.parametrize("batch", ["3", "?"])
def test_onnx_encoder_decoder_whose_rows_share_one_mask_is_fixed_and_proved(batch, tmp_path,
                                                                           capsys):
    # The static BART export gathers its attention mask with a GatherND whose constant
    # indices pick row 0 (advanced indexing traced at batch 1): reshaped as written, every
    # row is masked with row 0's mask, which all-ones masks hide and padded masks show.
    # --fix makes the gather pick each row's own; OpenVINO, on masks of its own, agrees.
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, BART, out, _batched(BART, batch), "--fix")
    assert code == 0 and out.exists(), doc
    assert doc["runtime_proof"]["ran"] and doc["runtime_proof"]["differs"] is None
    picks = [fx for fx in doc["fixes"] if fx["type"] == "GatherND"]
    assert [fx["name"] for fx in picks] == ["node_GatherND_35"]
    if batch == "3":
        assert _padded_rows_differ(BART, out) < 1e-4


def _row_pick_feed(model: ov.Model, batch: int, seed: int) -> dict[str, np.ndarray]:
    """Rows that differ: masks of ones with a different padding per row, random values."""
    rng = np.random.default_rng(seed)
    feed = {}
    for p in model.inputs:
        shape = [batch, *list(p.get_partial_shape().to_shape())[1:]]
        if p.get_element_type() == ov.Type.i64:
            value = np.ones(shape, np.int64)
            for r in range(batch):
                value[r, shape[1] - r:] = 0
        else:
            value = rng.standard_normal(shape).astype(np.float32)
        feed[p.get_any_name()] = value
    return feed


def _rows_match(original: Path, written: Path, batch: int, seed: int) -> float:
    """The largest difference between row r of ``written`` on a batch and ``original``
    on row r alone (OpenVINO CPU, f32, inputs of this test's own)."""
    core = ov.Core()
    one = core.compile_model(str(original), "CPU", cpu_config())
    many = core.compile_model(str(written), "CPU", cpu_config())
    feed = _row_pick_feed(core.read_model(str(original)), batch, seed)
    got = many(feed)[0]
    return max(float(np.abs(one({k: v[r:r + 1] for k, v in feed.items()})[0]
                             - got[r:r + 1]).max()) for r in range(batch))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("inner,features", [(0, False), (2, False), (1, True), (0, True)])
def test_a_gather_that_picks_row_0_is_named_refused_and_fixed(inner, features, seed,
                                                              tmp_path, capsys):
    # Every shape rule holds at batch 3, so only the proof sees the rows read row 0.
    # Without --fix: a warning names the gather and the proof refuses; with --fix the
    # gather picks each row's own, at a static batch and a dynamic one.
    original = tmp_path / "pick.xml"
    model = row_pick(seq=5 + seed, inner=inner, features=features, seed=seed)
    ov.save_model(model, str(original), compress_to_fp16=False)
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, original, out, _batched(original, "3"), "--runtime-proof")
    assert code == 1 and not out.exists(), doc
    assert any("'pick'" in w and "--fix" in w for w in doc["warnings"]), doc["warnings"]
    proof = doc["runtime_proof"]
    if features:  # the gathered rows keep the batch of the indices, 1: nothing to compare
        assert proof["differs"] is None and "no output was compared" in proof["nothing_proven"]
    else:
        assert proof["differs"]["output"] == "y"
    for batch in ("3", "?"):
        code, doc = _reshape(capsys, original, out, _batched(original, batch), "--fix")
        assert code == 0, doc
        assert [fx["name"] for fx in doc["fixes"]] == ["pick"]
        assert _rows_match(original, out, 3, seed) == 0.0
        if batch == "?":  # at the old batch the fixed layer computes what it did
            assert _rows_match(original, out, 1, seed) == 0.0


def test_moe_of_a_real_model_reshaped_runs_two_batch_and_sequence_sizes(tmp_path, capsys):
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, MIXTRAL, out, {"input_ids": "[1..4,?]",
                                                "attention_mask": "[1..4,?]"})
    assert code == 0 and doc["runtime_proof"]["ran"], doc
    runs = doc["runtime_proof"]["runs"]
    assert [r["input_ids"] for r in runs] == [[2, 5], [3, 8]]


def test_the_proof_is_not_run_over_the_memory_budget_and_says_so(tmp_path, capsys):
    out = tmp_path / "out.xml"
    code, doc = _reshape(capsys, BART, out, _batched(BART, "3"), "--fix",
                         "--memory-budget", "1K")
    assert code == 0 and out.exists()
    assert not doc["runtime_proof"]["ran"] and "memory budget" in doc["runtime_proof"]["why"]
    # asked for explicitly, a proof that cannot run is an error
    out.unlink()
    assert main(["reshape", str(BART), "-o", str(out), "--fix", "--runtime-proof",
                 "--memory-budget", "1K", *[f"--shape={k}={v}" for k, v in
                                            _batched(BART, "3").items()]]) == 2
    assert not out.exists()


def test_proof_sizes_keep_the_originals_static_dims_and_share_a_dynamic_axis():
    P = PartialShape.parse
    old = {"ids": P("[1,12]"), "mask": P("[?,?]"), "dec": P("[?,?]")}
    new = {"ids": P("[?,12]"), "mask": P("[?,?]"), "dec": P("[?,?]")}
    runs, why = proof_sizes(old, new)
    assert why is None
    assert runs == [{"ids": [2, 12], "mask": [2, 5], "dec": [2, 5]},
                    {"ids": [3, 12], "mask": [3, 8], "dec": [3, 8]}]
    assert proof_sizes({"x": P("[1000,4]")}, {"x": P("[1000,4]")})[0] == [{"x": [1000, 4]}]


def test_row_inputs_index_inside_the_table_and_mask_with_ones_and_padding():
    G = read_ir(str(BART))
    feed = row_inputs(G, {"input_ids": [3, 12], "attention_mask": [3, 12],
                          "decoder_input_ids": [3, 5]}, seed=0)
    vocab = ov.Core().read_model(str(BART)).output(0).get_partial_shape()[2].get_length()
    assert feed["input_ids"].max() < vocab and len(np.unique(feed["input_ids"])) > 3
    mask = feed["attention_mask"]
    assert set(np.unique(mask)) <= {0, 1} and mask.sum(axis=1).min() > 0 and mask[:, 0].all()
    assert not np.array_equal(feed["input_ids"][0], feed["input_ids"][1])
