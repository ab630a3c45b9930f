"""``precision``: models built to break f16 or bf16 (tests/debug/precision_models.py),
the simulation's rounding against NumPy's, the fix and its marks as OpenVINO reads them,
OpenVINO's own f32 marks (norms, softmax sums), and the real transformers of the corpus
(a seeded sample: :func:`corpus_sample`)."""

from __future__ import annotations

import json
import os
import random

import numpy as np
import openvino as ov
import precision_models as pm
import pytest
from openvino import opset13 as op

from ovgather.debug import precision
from ovgather.debug.half import MARK, device_kept
from ovgather.ir import write_ir as og_write
from ovgather.runtime.precision import native_bf16, read_marks, round_array, rounded

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "ir_corpus")
#: tolerances of the built models' outputs (the feed-forward's f32 values reach a few
#: hundred: its absolute tolerance is wider)
def tol(name):
    return {"rtol": 1e-2, "atol": 1.0 if name == "feed_forward" else 1e-2}


@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_the_rounding_matches_numpy_bit_for_bit(target):
    rng = np.random.default_rng(7)
    n = 100_000
    vals = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 20, n))).astype(np.float32)
    vals[:6] = [np.inf, -np.inf, np.nan, 65519, 65520, 0.0]
    x = op.parameter([n], np.float32, name="x")
    pre = op.multiply(x, op.constant(np.float32(1.0000001)))
    model = ov.Model([op.result(rounded(pre.output(0), target))], [x])
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({0: vals})[0]
    want = round_array((vals * np.float32(1.0000001)).astype(np.float32), target)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (vals[~same][:5], got[~same][:5], want[~same][:5])


@pytest.fixture(scope="module", params=sorted(pm.CASES))
def case(request, tmp_path_factory):
    name = request.param
    build, target, first = pm.CASES[name]
    model, feeds, culprits, neighbours = build(np.random.default_rng(20261207))
    folder = tmp_path_factory.mktemp(name)
    xml = str(folder / "model.xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    out = str(folder / "fixed.xml")
    fixed, report = precision(xml, target, fix=True, output=out, inputs=feeds, **tol(name))
    return name, target, first, culprits, neighbours, report, out


def test_the_culprit_has_the_top_local_error(case):
    name, _, _, culprits, _, report, _ = case
    assert report.top(1)[0]["name"] in culprits, report.lines()


def test_the_first_nonfinite_layer_is_named_with_its_line(case):
    name, _, first, _, _, report, _ = case
    if first is None:
        assert report.first_nonfinite is None
        return
    assert report.first_nonfinite["name"] == first
    with open(report.model, encoding="utf-8") as f:
        line = f.read().splitlines()[report.first_nonfinite["line"] - 1]
    assert f'name="{first}"' in line


def test_the_fix_is_within_tolerance_and_keeps_only_culprits_and_neighbours(case):
    name, target, _, culprits, neighbours, report, out = case
    assert not report.ok
    assert report.fixed and all(o["ok"] for o in report.fixed_outputs), report.lines()
    kept = {d["name"] for d in report.kept}
    assert kept and kept <= culprits | neighbours, kept
    _, again = precision(out, target, inputs=case_feeds(name), **tol(name))
    assert again.ok, again.lines()  # the marks are read back: the written IR passes


def test_the_written_ir_has_the_marks_on_the_kept_layers(case):
    _, target, _, _, _, report, out = case
    marks = read_marks(out)
    marked = {n for n, keys in marks.items() if f"{MARK}_0" in keys}
    assert marked == {d["name"] for d in report.kept}
    with open(out, encoding="utf-8") as f:
        assert f'value="dynamic:{target}"' in f.read()


def case_feeds(name):
    return pm.CASES[name][0](np.random.default_rng(20261207))[1]


def test_a_layer_kept_by_the_reader_only_under_the_new_key(tmp_path):
    """OpenVINO 2026.4's reader drops ``disable_fp16_compression``; MARK is kept."""
    model, *_ = pm.inf_minus_inf(np.random.default_rng(0))
    xml = str(tmp_path / "m.xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    text = open(xml, encoding="utf-8").read()
    for key, kept in (("disable_fp16_compression", False), (MARK, True)):
        tagged = text.replace('type="Subtract" version="opset1">',
                              f'type="Subtract" version="opset1"><rt_info><attribute '
                              f'name="{key}" version="0" value="dynamic:f16"/></rt_info>')
        path = str(tmp_path / f"{key}.xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(tagged)
        os.link(xml[:-4] + ".bin", path[:-4] + ".bin")
        assert (f"{MARK}_0" in read_marks(path).get("difference", [])) is kept


@pytest.mark.parametrize("eps, kept", [(1e-6, True), (1e-5, True), (1e-3, False)])
def test_the_device_keeps_a_norm_with_a_small_eps_and_what_it_reads_and_feeds(
        eps, kept, tmp_path):
    """OpenVINO's MarkDivWithEps: ``x / sqrt(mean + eps)`` with eps at most 2**-14 stays
    f32, the mark spreads up to the MatMul it reads and down to the one it feeds."""
    from ovgather.debug.half import device_kept, mark_layers
    from ovgather.ir import read_ir

    model, norm = pm.rms_norm(np.random.default_rng(3), eps)
    xml = str(tmp_path / "m.xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    G = read_ir(xml)
    assert device_kept(G) == (norm if kept else set())
    assert device_kept(G, {"normed"}) == norm  # a mark the IR carries spreads the same way
    half = str(tmp_path / "half.xml")  # compressed: the eps an f16 Const behind a Convert
    ov.save_model(model, half, compress_to_fp16=True)
    _, report = precision(half, "f16")
    assert set(report.device_kept) == (norm if kept else set())
    marked = str(tmp_path / "marked.xml")
    og_write(mark_layers(read_ir(half), {"normed"}, "f16"), marked)
    _, report = precision(marked, "f16")
    assert set(report.device_kept) == norm


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no bf16 (no avx512_bf16 or AMX)")
def test_native_bf16_runs_the_fixed_ir_with_the_kept_layers_in_f32(tmp_path):
    from ovgather.runtime.precision import native_in_child

    model, feeds, culprits, _ = pm.variance(np.random.default_rng(1))
    xml = str(tmp_path / "m.xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    _, report = precision(xml, "bf16", fix=True, output=str(tmp_path / "f.xml"), inputs=feeds)
    assert report.native.startswith("ran")
    _, precisions = native_in_child(str(tmp_path / "f.xml"), feeds, "bf16")
    assert all(precisions.get(d["name"], "f32").lower().startswith(("f32", "fp32"))
               for d in report.kept)


#: The real transformers of the done-when, and the seed that picks their sample.
FAMILIES = ("bert", "gpt2", "llama", "t5", "whisper", "vit")
SAMPLE_SEED = 20261207


def corpus_sample():
    """Per family a pair picked with :data:`SAMPLE_SEED` among the variants corpus.json
    lists: a PyTorch-frontend variant in one target and an ONNX-frontend variant in the
    other (every variant in both targets is in tools/bench_precision.py and the table of
    docs/performance.md)."""
    listing = os.path.join(CORPUS, "corpus.json")
    if not os.path.isfile(listing):
        return []
    with open(listing, encoding="utf-8") as f:
        corpus = json.load(f)
    rng = random.Random(SAMPLE_SEED)
    out = []
    for family in FAMILIES:
        paths = sorted(v["path"] for v in corpus.get(family, [])
                       if "stateful" not in v["path"])
        targets = rng.sample(["f16", "bf16"], 2)
        for frontend, target in zip(("pytorch_", "onnx_"), targets, strict=True):
            mine = [p for p in paths if os.path.basename(p).startswith(frontend)]
            if mine:
                out.append((rng.choice(mine), target))
    return out


def _within(got, rtol, atol):
    """Each ``(name, simulated, exact)`` output within tolerance, judged by NumPy."""
    return {name: bool(np.allclose(sim, exact, rtol=rtol, atol=atol, equal_nan=True))
            for name, sim, exact in got}


@pytest.mark.parametrize("path, target", corpus_sample() or [("bert/pytorch_dynamic.xml", "f16")])
def test_a_real_transformer_gets_a_report_and_a_small_fix(path, target, tmp_path):
    """Both frontends and both targets of bert, gpt2, llama, t5, whisper and vit: a seeded
    pair per family (:func:`corpus_sample`; every variant in both targets is swept by
    tools/bench_precision.py, whose table is in docs/performance.md): a report, and where the
    model with every layer kept in f32 is within tolerance, a fix of at most 10% of the
    layers whose written IR, its marks read back by OpenVINO, runs within tolerance."""
    from ovgather.debug.runs import make_inputs
    from ovgather.debug.search import default_sizes
    from ovgather.ir import read_ir
    from ovgather.runtime.precision import simulate_in_child

    xml = os.path.join(CORPUS, path)
    if not os.path.isfile(xml):
        pytest.skip("the ir_corpus is not here")
    feeds = make_inputs(xml, default_sizes(read_ir(xml)), 0)
    out = str(tmp_path / "f.xml")
    _, report = precision(xml, target, fix=True, output=out, inputs=feeds)
    assert report.layers and report.outputs, report.lines()
    assert {o["name"] for o in report.outputs} == {r[0] for r in simulate_in_child(
        xml, feeds, target, report.device_kept)}
    every = sorted({d["name"] for d in report.layers})
    if not all(_within(simulate_in_child(xml, feeds, target, every), 1e-2, 1e-2).values()):
        return  # even all in f32 the outputs differ: no fix to ask for
    assert report.fixed, report.lines()
    assert len(report.kept) <= 0.1 * len(report.layers), report.lines()
    def marks(path):  # as OpenVINO's reader keeps them (the corpus marks shape subgraphs)
        return {n for n, keys in read_marks(path).items() if f"{MARK}_0" in keys}

    marked = marks(out)
    assert marked - marks(xml) == {d["name"] for d in report.kept} - marks(xml)
    assert {d["name"] for d in report.kept} <= marked
    # the device spreads each mark as it spreads its own (through the norm it sits in)
    spread = device_kept(read_ir(out), marked)
    fixed = simulate_in_child(out, feeds, target, sorted(marked | spread))
    assert all(_within(fixed, report.rtol, report.atol).values()), report.lines()


@pytest.mark.parametrize("seed", range(3))
def test_an_additive_mask_of_f32s_lowest_stays_finite_in_f16_as_the_device_stores_it(
        seed, tmp_path):
    # OpenVINO's f16 conversion saturates constants (f32's lowest becomes -65504): the
    # masked scores stay finite and no layer of the mask is an error; a computed value
    # past 65504 still overflows (the scores scaled by 1e4 here, with the other seeds)
    rng = np.random.default_rng(seed)
    x = op.parameter([1, 4, 16], np.float32, name="x")
    keep = op.parameter([1, 1, 16], np.bool_, name="keep")
    scores = op.matmul(x, op.constant(rng.normal(0, 1, (16, 16)).astype(np.float32)),
                       False, False)
    scores.set_friendly_name("scores")
    lowest = op.constant(np.float32(np.finfo(np.float32).min))
    mask = op.select(keep, op.constant(np.float32(0.0)), lowest)
    mask.set_friendly_name("mask")
    big = seed == 2
    logits = op.add(op.multiply(scores, op.constant(np.float32(1e4 if big else 1.0))), mask)
    logits.set_friendly_name("masked")
    probs = op.softmax(logits, 2)
    xml = str(tmp_path / "m.xml")
    ov.save_model(ov.Model([op.result(probs)], [x, keep]), xml, compress_to_fp16=False)
    feeds = {"x": rng.normal(0, 1, (1, 4, 16)).astype(np.float32),
             "keep": rng.integers(0, 2, (1, 1, 16)).astype(bool)}
    feeds["keep"][..., 0] = True
    _, report = precision(xml, "f16", inputs=feeds)
    by_name = {d["name"]: d for d in report.layers}
    if big:  # the scaled scores pass 65504: an overflow, named
        assert report.first_nonfinite is not None, report.lines()
        return
    assert report.first_nonfinite is None, report.lines()
    assert report.outputs[0]["ok"], report.lines()
    assert by_name["mask"]["local_max_abs"] == 0 and by_name["mask"]["max_abs"] == 0
    # the masked scores: the rounding of the scores kept, nothing of the mask's size
    assert by_name["masked"]["local_max_abs"] < 0.01 and by_name["masked"]["max_abs"] < 0.01
