"""``precision``: models built to break f16 or bf16 (tests/debug/precision_models.py),
the simulation's rounding against NumPy's, the fix and its marks as OpenVINO reads them,
and two real transformers of the corpus."""

from __future__ import annotations

import os

import numpy as np
import openvino as ov
import precision_models as pm
import pytest
from openvino import opset13 as op

from ovgather.debug import precision
from ovgather.debug.half import MARK
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


@pytest.mark.parametrize("path", ["gpt2/pytorch_dynamic.xml", "vit/pytorch_static.xml"])
@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_a_real_transformer_gets_a_report_and_a_small_fix(path, target, tmp_path):
    xml = os.path.join(CORPUS, path)
    if not os.path.isfile(xml):
        pytest.skip("the ir_corpus is not here")
    _, report = precision(xml, target, fix=True, output=str(tmp_path / "f.xml"))
    assert report.layers and report.outputs
    if report.fixed:
        assert len(report.kept) <= 0.1 * len(report.layers), report.lines()
