"""``runtime.feeding``: what each input of a real model feeds, read from OpenVINO's own graph
of it, and arrays that suit it.

The oracles: OpenVINO's reading of the model (the table an input indexes is the data input
of the Gather that OpenVINO shows reading it), and OpenVINO's CPU plugin at f32 (the inputs
made give finite outputs on every dynamic transformer of the corpus).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

import ovgather as og
from ovgather.runtime.feeding import Feed, input_feeds, make_array, make_arrays
from ovgather.validate import validate_whole_model

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "ir_corpus"


def _feeds(path: Path) -> dict[str, Feed]:
    model = ov.Core().read_model(str(path))
    return {p.get_friendly_name(): f
            for p, f in zip(model.get_parameters(), input_feeds(model), strict=True)}


def _table_rows(path: Path, name: str) -> set[int]:
    """The rows of every table OpenVINO shows input ``name`` indexing through Converts."""
    model = ov.Core().read_model(str(path))
    param = next(p for p in model.get_parameters() if p.get_friendly_name() == name)
    rows, todo = set(), [param.output(0)]
    while todo:
        for target in todo.pop().get_target_inputs():
            node = target.get_node()
            if node.get_type_name() == "Convert":
                todo.append(node.output(0))
            elif node.get_type_name() == "Gather" and target.get_index() == 1:
                rows.add(node.get_input_partial_shape(0)[0].get_length())
    return rows


@pytest.mark.parametrize("path", ["bert/pytorch_dynamic.xml", "bert/onnx_dynamic.xml"])
def test_bert_token_ids_index_their_tables_and_the_mask_is_a_mask(path):
    feeds = _feeds(CORPUS / path)
    for name in ("input_ids", "token_type_ids"):
        [rows] = _table_rows(CORPUS / path, name)
        assert (feeds[name].kind, feeds[name].low, feeds[name].high) == ("index", 0, rows)
    assert feeds["token_type_ids"].high == 2  # BERT's two segments
    assert feeds["attention_mask"].kind == "mask"


def test_a_stateful_llama_gets_positions_and_a_beam_index_valid_at_any_batch():
    feeds = _feeds(CORPUS / "llama_kv/pytorch_stateful.xml")
    assert feeds["position_ids"].kind == "positions"
    assert (feeds["beam_idx"].kind, feeds["beam_idx"].high) == ("index", 1)  # batch is ?
    assert feeds["input_ids"].kind == "index" and feeds["attention_mask"].kind == "mask"


def test_a_mask_pads_the_last_positions_and_never_a_whole_row():
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (1, 5), (4, 2), (6, 9), (2, 1, 3, 7)]:
        mask = make_array(Feed("mask"), shape, np.dtype("int64"), rng)
        rows = mask.reshape(-1, shape[-1])
        assert rows.sum(axis=1).min() >= 1
        assert all(np.array_equal(r, np.sort(r)[::-1]) for r in rows)  # ones, then zeros
        if shape[-1] > 1:
            assert (rows == 0).any()


def test_indices_and_positions_stay_in_their_range():
    rng = np.random.default_rng(1)
    ids = make_array(Feed("index", 0, 7), (50, 50), np.dtype("int32"), rng)
    assert ids.dtype == np.int32 and ids.min() == 0 and ids.max() == 6
    shifted = make_array(Feed("index", 3, 5), (100,), np.dtype("int64"), rng)
    assert set(shifted.tolist()) == {3, 4}
    pos = make_array(Feed("positions", 0, 4), (2, 6), np.dtype("int64"), rng)
    assert pos.tolist() == [[0, 1, 2, 3, 0, 1]] * 2


def _dynamic_models() -> list[str]:
    """Every corpus model with a dynamic input dim but llama_deep (llama's blocks, eleven
    times over: its three compiles here take 15 s; it has a test of its own, below)."""
    doc = json.loads((CORPUS / "corpus.json").read_text())
    return [e["path"] for name, entries in doc.items() for e in entries
            if name != "llama_deep"
            and any("?" in shape or ".." in shape for _, shape in e["inputs"])]


@pytest.mark.parametrize("path", _dynamic_models())
def test_the_inputs_made_give_finite_outputs_on_every_dynamic_corpus_model(path):
    """Fed by compare, every dynamic model of the corpus (BERT, DeBERTa, GPT-2, Llama and
    its stateful form, Mixtral, T5, CLIP, Whisper, ViT, Swin, SegFormer, ...)
    gives outputs without a NaN or an infinity: the arrays compare fed, run again on
    OpenVINO's CPU plugin at f32, give finite numbers everywhere."""
    report = og.compare(CORPUS / path, CORPUS / path)
    assert report.ok, [(o.name, o.status, o.message) for o in report.outputs]
    model = ov.Core().read_model(str(CORPUS / path))
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    names = [p.get_friendly_name() for p in model.get_parameters()]
    fed = [report.arrays[next(i["name"] for i in report.inputs
                              if i["name"] in {n, *p.output(0).get_names()})]
           for n, p in zip(names, model.get_parameters(), strict=True)]
    outputs = compiled(fed)
    for out in outputs.values():
        if out.dtype.kind == "f":
            assert np.isfinite(out).all()


def test_the_inputs_made_give_finite_outputs_on_the_deep_llama():
    """llama_deep (4,945 layers) compiled once, fed at [2,7] the arrays its feeds make."""
    model = ov.Core().read_model(str(CORPUS / "llama_deep/pytorch_dynamic.xml"))
    feeds = input_feeds(model)
    assert [f.kind for f in feeds] == ["index", "mask"]
    arrays = make_arrays(feeds, [(2, 7)] * 2, [np.dtype("int64")] * 2, seed=0, k=0)
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    [logits] = compiled(arrays).values()
    assert logits.shape[:2] == (2, 7) and np.isfinite(logits).all()


def _one_op(make) -> Feed:
    ids = ov.opset13.parameter([4, 2], np.int32, name="ids")
    model = ov.Model([make(ids)], [ids])
    return input_feeds(model)[0]


def _const(shape):
    return ov.opset13.constant(np.zeros(shape, np.float32))


@pytest.mark.parametrize("make,low,high", [
    (lambda i: ov.opset13.gather(_const([4, 9]), i, ov.opset13.constant(-1)), 0, 9),
    (lambda i: ov.opset13.gather_nd(_const([5, 7, 3]), i), 0, 5),  # columns pick 5 and 7
    (lambda i: ov.opset13.gather_elements(_const([4, 6]), i, 1), 0, 6),
    (lambda i: ov.opset13.embedding_bag_packed_sum(_const([11, 3]), i), 0, 11),
    (lambda i: ov.opset13.gather(_const([10, 2]), ov.opset13.add(
        ov.opset13.convert(i, "i64"), ov.opset13.constant(np.int64(3))),
        ov.opset13.constant(0)), 0, 7),  # ids + 3 in [0, 10), ids never negative
    (lambda i: ov.opset13.gather(_const([10, 2]), ov.opset13.subtract(
        i, ov.opset13.constant(np.int32(4))), ov.opset13.constant(0)), 4, 14),
])
def test_an_input_reaching_indices_stays_inside_the_table(make, low, high):
    """The range is each op's table size as its spec gives it, and the CPU plugin runs
    the op on indices made in it (Gather-8 would give zeros past it, the others fail)."""
    feed = _one_op(make)
    assert (feed.kind, feed.low, feed.high) == ("index", low, high)
    ids = make_array(feed, (4, 2), np.dtype("int32"), np.random.default_rng(3))
    assert ids.min() >= low and ids.max() < high
    ids_param = ov.opset13.parameter([4, 2], np.int32, name="ids")
    compiled = ov.Core().compile_model(ov.Model([make(ids_param)], [ids_param]), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    compiled([ids])


def _mask_model(body, dtype=np.int64) -> Feed:
    """A model whose input ``m`` [2,6] reaches ``body(m, scores)``; scores [2,6] floats."""
    m = ov.opset13.parameter([2, 6], dtype, name="m")
    scores = ov.opset13.parameter([2, 6], np.float32, name="scores")
    model = ov.Model([body(m, scores)], [m, scores])
    return input_feeds(model)[0]


@pytest.mark.parametrize("body", [
    # BERT's additive mask: (1 - float(m)) * -10000 added into the scores, then softmax
    lambda m, s: ov.opset13.softmax(ov.opset13.add(s, ov.opset13.multiply(
        ov.opset13.subtract(ov.opset13.constant(np.float32(1)), ov.opset13.convert(m, "f32")),
        ov.opset13.constant(np.float32(-1e4)))), -1),
    # a comparison feeding a Select condition
    lambda m, s: ov.opset13.select(ov.opset13.equal(m, ov.opset13.constant(np.int64(0))),
                                   ov.opset13.constant(np.float32(-1e9)), s),
    # a Convert to boolean
    lambda m, s: ov.opset13.select(ov.opset13.convert(m, "boolean"), s,
                                   ov.opset13.constant(np.float32(0))),
])
def test_an_input_used_as_a_mask_is_a_mask(body):
    assert _mask_model(body).kind == "mask"


def test_a_boolean_input_into_a_logical_op_is_a_mask_and_other_integers_stay_zeros():
    assert _mask_model(lambda m, s: ov.opset13.select(ov.opset13.logical_and(
        m, ov.opset13.constant(np.ones((2, 6), bool))), s, s), dtype=bool).kind == "mask"
    assert _mask_model(lambda m, s: ov.opset13.add(ov.opset13.convert(m, "f32"), s)
                       ).kind == "zeros"


def test_validate_whole_model_feeds_the_same_kind_of_inputs(monkeypatch):
    """validate --whole-model runs BERT on valid token ids and a padded mask too."""
    import ovgather.validate.whole_model as whole

    seen = {}
    real = whole.Runs.shapes

    def spy(self, part, sizes, seed, k, types, given=None):
        seen.update(given or {})
        return real(self, part, sizes, seed, k, types, given)

    monkeypatch.setattr(whole.Runs, "shapes", spy)
    path = CORPUS / "bert/pytorch_dynamic.xml"
    report = validate_whole_model(og.read_ir(path))
    assert {lv.status for lv in report.layers} == {"ok"}
    [rows] = _table_rows(path, "input_ids")
    assert 0 <= seen["input_ids"].min() and seen["input_ids"].max() < rows
    assert seen["input_ids"].max() > 0 and set(np.unique(seen["token_type_ids"])) <= {0, 1}
    mask = seen["attention_mask"]
    assert set(np.unique(mask)) == {0, 1} and mask.sum(axis=-1).min() >= 1


def test_an_input_named_for_positions_that_indexes_a_table_gets_positions():
    """GPT-2 and BERT take position_ids into a table of positions: the graph shows an
    index into 16 rows, the name says which, and the values are 0, 1, … (inside 16)."""
    feeds = []
    for name in ("position_ids", "token_ids"):
        ids = ov.opset13.parameter([2, 20], np.int64, name=name)
        gather = ov.opset13.gather(_const([16, 4]), ids, ov.opset13.constant(0))
        feeds.append(input_feeds(ov.Model([gather], [ids]))[0])
    assert [(f.kind, f.high) for f in feeds] == [("positions", 16), ("index", 16)]
    values = make_array(feeds[0], (2, 20), np.dtype("int64"), np.random.default_rng(0))
    assert values[1].tolist() == [*range(16), 0, 1, 2, 3]
