"""``infer --symbols`` on the real-model corpus, judged by OpenVINO.

For each IR with dynamic inputs (``tools/symbols_report.py`` names their dims):

- three seeded random sizes for the names, the model reshaped to them in OpenVINO
  (``model.reshape``): every dim written in the given names alone, evaluated at those
  sizes, equals the static dim OpenVINO infers;
- OpenVINO's own symbols (``ov.Symbol()`` on the Parameters' named dynamic dims, one per
  name, then ``validate_nodes_and_infer_types``): two dims with one symbol get one
  expression;
- on every IR, at least 95% of the dynamic dims are written in the given names alone.
"""

from __future__ import annotations

import json
import random
from functools import cache

import openvino as ov
import pytest
from symbols_report import CORPUS, CORPUS_SYMBOLS, coverage  # tools/, through conftest.py

import ovgather as og
from ovgather.infer.symbols import parse_symbols

#: The sizes a name may take: inside the model's bounds and big enough for its windows
#: (a draw OpenVINO cannot reshape the model to, a batch a trace fixed, is drawn again).
SIZES = {"B": range(1, 5), "S": range(2, 25), "T": range(2, 25), "P": range(1, 17),
         "H": range(32, 97, 8), "W": range(32, 97, 8), "L": range(400, 1601)}


@cache
def _symbols(rel: str):
    G = og.read_ir(CORPUS / rel)
    return G, og.infer_symbols(G, CORPUS_SYMBOLS[rel])


def _ports(G, found):
    """``(layer name, port index, dims)`` of every output ovgather wrote."""
    for node, syms in found.items():
        for i, sym in enumerate(syms):
            if sym.dims is not None:
                yield G.nodes[node]["name"], i, sym.dims


def _parameter_shapes(model, symbols, sizes):
    """Each Parameter's shape with its named dims set to ``sizes``."""
    out = {}
    for p in model.get_parameters():
        names = [n for n in (p.get_friendly_name(), *p.output(0).get_names()) if n in symbols]
        if not names:
            continue
        dims = parse_symbols(symbols[names[0]])
        shape = p.get_partial_shape()
        out[p.output(0)] = ov.PartialShape(
            [sizes[d] if isinstance(d, str) else d if isinstance(d, int) else shape[i]
             for i, d in enumerate(dims)])
    return out


@pytest.mark.parametrize("rel", sorted(CORPUS_SYMBOLS))
def test_named_dims_equal_openvinos_static_dims_at_random_sizes(rel):
    G, found = _symbols(rel)
    symbols = CORPUS_SYMBOLS[rel]
    given = {n for text in symbols.values() for n in parse_symbols(text) if isinstance(n, str)}
    rng = random.Random(f"symbols {rel}")
    ports = [(layer, i, dims) for layer, i, dims in _ports(G, found)
             if any(d.const is None and d.names() <= given for d in dims)]
    checked, wrong, runs = 0, [], 0
    for _ in range(12):
        sizes = {n: rng.choice(SIZES[n]) for n in sorted(given)}
        model = ov.Core().read_model(CORPUS / rel)
        try:
            model.reshape(_parameter_shapes(model, symbols, sizes))
        except RuntimeError:
            continue
        runs += 1
        ops = {op.get_friendly_name(): op for op in model.get_ops()}
        for layer, i, dims in ports:
            shape = ops[layer].output(i).get_partial_shape()
            for k, d in enumerate(dims):
                if d.const is not None or not d.names() <= given or not shape[k].is_static:
                    continue
                checked += 1
                if d.evaluate(sizes) != shape[k].get_length():
                    wrong.append((layer, i, k, str(d), sizes, shape[k].get_length()))
        if runs == 3:
            break
    assert runs == 3 and checked and not wrong, (runs, wrong[:5])


@pytest.mark.parametrize("rel", sorted(CORPUS_SYMBOLS))
def test_dims_openvinos_symbols_prove_equal_get_one_expression(rel):
    G, found = _symbols(rel)
    symbols = CORPUS_SYMBOLS[rel]
    model = ov.Core().read_model(CORPUS / rel)
    marks: dict[str, ov.Symbol] = {}
    for p in model.get_parameters():
        names = [n for n in (p.get_friendly_name(), *p.output(0).get_names()) if n in symbols]
        if not names:
            continue
        shape = p.get_partial_shape()
        dims = [shape[k] for k in range(len(shape))]  # copies: set their symbols, rebuild
        for k, d in enumerate(parse_symbols(symbols[names[0]])):
            if isinstance(d, str) and dims[k].is_dynamic:
                dims[k].set_symbol(marks.setdefault(d, ov.Symbol()))
        p.set_partial_shape(ov.PartialShape(dims))
    model.validate_nodes_and_infer_types()
    ops = {op.get_friendly_name(): op for op in model.get_ops()}
    classes: list = []  # [symbol, texts, first place]: Symbol's == compares the roots
    for layer, i, dims in _ports(G, found):
        shape = ops[layer].output(i).get_partial_shape()
        if shape.rank.is_dynamic or len(shape) != len(dims):
            continue
        for k, d in enumerate(dims):
            symbol = shape[k].get_symbol()
            if shape[k].is_dynamic and symbol is not None:
                row = next((c for c in classes if c[0] == symbol), None)
                if row is None:
                    row = [symbol, set(), (layer, i, k)]
                    classes.append(row)
                row[1].add(str(d))
    split = {place: texts for _, texts, place in classes if len(texts) > 1}
    assert classes and not split, split


@pytest.mark.parametrize("rel", sorted(CORPUS_SYMBOLS))
def test_nineteen_in_twenty_dynamic_dims_are_written_in_the_given_names(rel):
    """On every dynamic IR, ONNX exports (whose shape arithmetic runs through Shape,
    Gather, Concat, Equal, Where and Expand) as much as traced PyTorch ones."""
    named, dynamic = coverage(og.read_ir(CORPUS / rel), CORPUS_SYMBOLS[rel])
    assert dynamic and named >= 0.95 * dynamic, (named, dynamic)


def test_every_dynamic_ir_of_the_corpus_is_measured():
    """An IR added to ``corpus.json`` with a dynamic input is named here too (but the
    44-block llama_deep: llama's block repeated, left out for time)."""
    rows = json.loads((CORPUS / "corpus.json").read_text())
    dynamic = {r["path"] for rs in rows.values() for r in rs
               if any("?" in shape or ".." in shape for _, shape in r["inputs"])}
    assert dynamic - set(CORPUS_SYMBOLS) == {"llama_deep/pytorch_dynamic.xml"}


def test_the_corpus_has_onnx_legacy_exports_of_the_text_models():
    """The TorchScript exporter's graphs (most ONNX models in the wild) are measured."""
    legacy = {rel.split("/")[0] for rel in CORPUS_SYMBOLS if "onnx_legacy" in rel}
    assert {"bert", "distilbert", "gpt2", "qwen2", "t5"} <= legacy
