"""``reshape``'s runtime proof feeds values that tell rows apart, and compares what can be
compared (``validate/rows.py``, ``validate/row_values.py``):

- integer inputs that feed nothing known vary row by row, so a rewrite that mixes rows of
  an integer model is refused as its float twin is;
- a quantized model (FakeQuantize on activations and weights) is proven at the precision
  it computes in: the row unchanged bit for bit when the other rows change, then within a
  few quantization steps of the row run alone;
- an output downstream of a random op is left out and named;
- a DetectionOutput is compared per image, as sets of detections; a proof that compared
  nothing proves nothing, and never says "equals".

Each model is generated here, seeded. A "mixing" model is the original with a Roll of
one row along the batch axis: the identity at batch 1, so the original runs as before,
while reshaped its rows trade places.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o
import pytest

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.runtime import from_openvino
from ovgather.validate.rows import prove_rows
from ovgather.validate.sizes import parameter_shapes

RNG = np.random.default_rng(20240611)
TABLE = RNG.integers(-9, 10, (50, 4)).astype(np.int32)


def _roll(x):
    """Row r takes row r - 1's values: the identity at batch 1."""
    return o.roll(x, o.constant(np.array([1], np.int64)), o.constant(np.array([0], np.int64)))


def _model(outputs: dict[str, object], params: list, name: str) -> ov.Model:
    model = ov.Model([o.result(v) for v in outputs.values()], params, name)
    for port, tensor in zip(model.outputs, outputs, strict=True):
        port.get_tensor().set_names({tensor})
    return model


def _save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _reshape(capsys, xml: Path, out: Path, shape: str, *flags: str) -> tuple[int, dict]:
    code = main(["reshape", str(xml), "--shape", shape, "-o", str(out), "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


def _human(capsys, xml: Path, out: Path, shape: str) -> tuple[int, str]:
    code = main(["reshape", str(xml), "--shape", shape, "-o", str(out)])
    return code, capsys.readouterr().out


# ---- 1. integer inputs -----------------------------------------------------------------
def _hashed_embedding(mix: bool) -> ov.Model:
    """Token ids hashed into a table (``ids mod 50``), summed over the sequence: an
    integer model whose ids feed no table directly (so they were fed zeros)."""
    ids = o.parameter([1, 6], ov.Type.i32, name="ids")
    picked = o.gather(o.constant(TABLE), o.floor_mod(ids, o.constant(np.int32(50))),
                      o.constant(np.int64(0)))
    if mix:
        picked = _roll(picked)
    return _model({"y": o.reduce_sum(picked, o.constant(np.array([1], np.int64)))}, [ids],
                  "hashed")


def test_an_integer_model_that_mixes_rows_is_refused_and_the_correct_one_written(
        tmp_path, capsys):
    bad = _save(_hashed_embedding(True), tmp_path / "bad.xml")
    code, doc = _reshape(capsys, bad, tmp_path / "b.xml", "ids[?,6]")
    assert code == 1 and not (tmp_path / "b.xml").exists()
    assert doc["runtime_proof"]["differs"]["output"] == "y"
    good = _save(_hashed_embedding(False), tmp_path / "good.xml")
    code, doc = _reshape(capsys, good, tmp_path / "g.xml", "ids[?,6]")
    assert code == 0, doc
    proof = doc["runtime_proof"]
    assert proof["compared"] == [{"output": "y", "bound": "exact"}]
    assert proof["nothing_proven"] is None


# ---- 2. quantized models ---------------------------------------------------------------
def _fq(x, lo: float, hi: float):
    c = [o.constant(np.array(v, np.float32)) for v in (lo, hi, lo, hi)]
    return o.fake_quantize(x, *c, 256, name=f"fq_{lo}_{hi}_{RNG.integers(1 << 30)}")


def _weights(w: np.ndarray):
    top = np.abs(w).reshape(w.shape[0], -1).max(1).reshape((-1,) + (1,) * (w.ndim - 1))
    return o.fake_quantize(o.constant(w), o.constant(-top), o.constant(top),
                           o.constant(-top), o.constant(top), 256)


def _int8_cnn(batch: int, mix: bool = False, jitter: float = 0.0) -> ov.Model:
    """An INT8-style CNN as NNCF writes one: FakeQuantize on the input, after each
    convolution and on every weight. ``jitter`` scales the values before each activation
    FakeQuantize by ``1 + jitter``: kernels that sum in another order round a value at a
    step's edge the other way."""
    rng = np.random.default_rng(5)
    x = o.parameter([batch, 3, 16, 16], ov.Type.f32, name="image")
    h, cin = _fq(x, -2.5, 2.5), 3
    for k, c in enumerate((8, 16)):
        w = (rng.standard_normal((c, cin, 3, 3)) / np.sqrt(cin * 9)).astype(np.float32)
        h = o.convolution(h, _weights(w), [2 if k else 1] * 2, [1, 1], [1, 1], [1, 1])
        b = (rng.standard_normal((1, c, 1, 1)) * 0.1).astype(np.float32)
        h = o.relu(o.add(h, o.constant(b)))
        if jitter:
            h = o.multiply(h, o.constant(np.float32(1 + jitter)))
        if mix and k == 0:
            h = _roll(h)
        h, cin = _fq(h, 0.0, 3.0), c
    h = _fq(o.reduce_mean(h, o.constant(np.array([2, 3], np.int64)), False), 0.0, 2.0)
    w = (rng.standard_normal((10, cin)) / np.sqrt(cin)).astype(np.float32)
    return _model({"logits": o.matmul(h, _weights(w), False, True)}, [x], "int8_cnn")


def test_a_quantized_cnn_reshaped_to_any_batch_is_written_and_a_mixing_one_refused(
        tmp_path, capsys):
    good = _save(_int8_cnn(1), tmp_path / "q.xml")
    code, doc = _reshape(capsys, good, tmp_path / "g.xml", "image[?,3,16,16]")
    assert code == 0, doc
    assert [r["output"] for r in doc["runtime_proof"]["compared"]] == ["logits"]
    bad = _save(_int8_cnn(1, mix=True), tmp_path / "mix.xml")
    code, doc = _reshape(capsys, bad, tmp_path / "b.xml", "image[?,3,16,16]")
    assert code == 1 and not (tmp_path / "b.xml").exists()
    assert doc["runtime_proof"]["differs"]["output"] == "logits"


def test_quantization_steps_rounded_otherwise_in_a_batch_are_within_the_bound_it_names(
        tmp_path):
    original = _save(_int8_cnn(1), tmp_path / "q.xml")
    old = parameter_shapes(read_ir(str(original)))
    proof = prove_rows(str(original), old, from_openvino(_int8_cnn(-1, jitter=1e-3)))
    assert proof.ok, proof.to_dict()
    (row,) = proof.compared
    assert row["bound"] == "quantization" and row["levels"] == 256 and row["steps"] == 4
    assert row["fake_quantize"].startswith("FakeQuantize 'fq_0.0_2.0")
    assert row["step"] == pytest.approx(2 / 255) and 0 < row["atol"] < 0.02
    # the same rounding with rows that trade places: the row moves with the others
    proof = prove_rows(str(original), old,
                       from_openvino(_int8_cnn(-1, mix=True, jitter=1e-3)))
    assert not proof.ok and proof.differs["output"] == "logits"
    assert "changes when the other rows change" in proof.differs["why"]


# ---- 3. random ops ---------------------------------------------------------------------
def _noisy(batch: int) -> ov.Model:
    x = o.parameter([batch, 4], ov.Type.f32, name="x")
    noise = o.random_uniform(o.shape_of(x), o.constant(np.float32(0)),
                             o.constant(np.float32(1)), "f32", 7, 11, name="noise")
    return _model({"noisy": o.add(x, noise), "y": o.relu(x)}, [x], "noisy")


def test_an_output_downstream_of_a_random_op_is_named_not_compared_and_the_rest_proven(
        tmp_path, capsys):
    xml = _save(_noisy(1), tmp_path / "noisy.xml")
    code, doc = _reshape(capsys, xml, tmp_path / "o.xml", "x[?,4]")
    assert code == 0, doc
    proof = doc["runtime_proof"]
    assert proof["not_compared"] == [
        {"output": "noisy", "why": "downstream of RandomUniform 'noise': its values are random"}]
    assert proof["compared"] == [{"output": "y", "bound": "f32", "rtol": 1e-3, "atol": 1e-4}]
    code, text = _human(capsys, xml, tmp_path / "h.xml", "x[?,4]")
    assert code == 0 and "not compared: noisy (downstream of RandomUniform" in text


# ---- 4. detections, and nothing compared ----------------------------------------------
def _ssd(batch: int, mix: bool = False) -> ov.Model:
    """An SSD-like detector: two convolutions, a location and a class head (3 classes,
    background 0) on a 4x4 map with 2 prior boxes a cell, DetectionOutput (keep 10)."""
    rng = np.random.default_rng(11)
    image = o.parameter([batch, 3, 32, 32], ov.Type.f32, name="image")

    def conv(x, cout, stride):
        w = (rng.standard_normal((cout, x.get_output_partial_shape(0)[1].get_length(), 3, 3))
             * 0.3).astype(np.float32)
        return o.convolution(x, o.constant(w), [stride] * 2, [1, 1], [1, 1], [1, 1])

    feat = o.relu(conv(o.relu(conv(image, 8, 4)), 8, 2))  # [N,8,4,4]
    loc = o.transpose(conv(feat, 2 * 4, 1), o.constant(np.array([0, 2, 3, 1], np.int64)))
    conf = o.transpose(conv(feat, 2 * 3, 1), o.constant(np.array([0, 2, 3, 1], np.int64)))
    if mix:
        conf = _roll(conf)
    flat = o.constant(np.array([0, -1], np.int64))
    conf = o.reshape(o.softmax(o.reshape(conf, o.constant(np.array([0, -1, 3], np.int64)),
                                         True), 2), flat, True)
    priors = o.prior_box(o.strided_slice(o.shape_of(feat), o.constant(np.array([2])),
                                         o.constant(np.array([4])), o.constant(np.array([1])),
                                         [0], [0]),
                         o.strided_slice(o.shape_of(image), o.constant(np.array([2])),
                                         o.constant(np.array([4])), o.constant(np.array([1])),
                                         [0], [0]),
                         {"min_size": [8.0], "max_size": [16.0], "aspect_ratio": [],
                          "flip": False, "clip": True, "step": 8.0, "offset": 0.5,
                          "variance": [0.1, 0.1, 0.2, 0.2]})
    dets = o.detection_output(
        o.reshape(loc, flat, True), conf, o.unsqueeze(priors, o.constant(np.int64(0))),
        {"background_label_id": 0, "top_k": 20, "keep_top_k": [10],
         "code_type": "caffe.PriorBoxParameter.CENTER_SIZE", "share_location": True,
         "nms_threshold": 0.45, "confidence_threshold": 0.05, "normalized": True},
        name="detection_out")
    return _model({"detections": dets}, [image], "ssd")


def test_a_detector_reshaped_to_batch_4_compares_detections_per_image(tmp_path, capsys):
    bad = _save(_ssd(1, mix=True), tmp_path / "mix.xml")
    code, doc = _reshape(capsys, bad, tmp_path / "b.xml", "image[4,3,32,32]")
    assert code == 1 and not (tmp_path / "b.xml").exists()
    assert doc["runtime_proof"]["differs"]["output"] == "detections"
    xml = _save(_ssd(1), tmp_path / "ssd.xml")
    code, doc = _reshape(capsys, xml, tmp_path / "o.xml", "image[4,3,32,32]")
    assert code == 0, doc
    proof = doc["runtime_proof"]
    (row,) = proof["compared"]
    assert row["output"] == "detections" and row["bound"] == "detections"
    assert row["matched"] >= 8 and row["iou"] == 0.5 and proof["not_compared"] == []
    code, text = _human(capsys, xml, tmp_path / "h.xml", "image[4,3,32,32]")
    assert code == 0 and "detections matched per image" in text


def test_a_proof_that_compared_nothing_proves_nothing_and_never_says_equals(tmp_path,
                                                                          capsys):
    x = o.parameter([1, 4], ov.Type.f32, name="x")
    xml = _save(_model({"where": o.non_zero(o.relu(x), "i64")}, [x], "nz"), tmp_path / "nz.xml")
    code, doc = _reshape(capsys, xml, tmp_path / "o.xml", "x[?,4]")
    proof = doc["runtime_proof"]  # no verdict on the model: written, and said
    assert code == 0 and proof["ran"] and proof["differs"] is None and proof["compared"] == []
    assert proof["nothing_proven"].startswith("no output was compared (where: a list NonZero")
    code, text = _human(capsys, xml, tmp_path / "o.xml", "x[?,4]")
    assert "equals" not in text and "runtime proof: nothing proven" in text
    code, doc = _reshape(capsys, xml, tmp_path / "o2.xml", "x[?,4]", "--runtime-proof")
    assert code == 1 and not (tmp_path / "o2.xml").exists()  # a proof was demanded
