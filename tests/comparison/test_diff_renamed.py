"""``og.diff`` of two exports whose names differ: the layers pair by structure.

Three ways to lose the names: every friendly name and tensor name handed to another layer
(a seeded shuffle: the names are now lies), every name replaced by a fresh one, and the
same small model built twice through OpenVINO's Python opset API with other friendly
names. The truth is the layer id (kept by the renaming; the same build order gives the
same ids in OpenVINO's serializer): at least 95% of the layers pair, and no pair is false.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import ovgather as og

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["ir_samples/mixed_ops.xml", "ir_samples/dynamic_gathers.xml",
          "ir_corpus/bert/pytorch_dynamic.xml", "ir_corpus/llama/pytorch_dynamic.xml",
          "ir_corpus/t5/onnx_legacy_dynamic.xml", "ir_corpus/resnet/onnx_dynamic.xml",
          "ir_corpus/swin/pytorch_static.xml"]


def shuffled_names(G, seed: int) -> None:
    """Each layer gets another layer's friendly name, each named port another port's
    tensor names (a seeded permutation)."""
    rng = random.Random(seed)
    nodes = list(G)
    names = [G.nodes[n]["name"] for n in nodes]
    rng.shuffle(names)
    for n, name in zip(nodes, names, strict=True):
        G.nodes[n]["name"] = name
    ports = [p for n in nodes for p in G.nodes[n]["outputs"] if p["names"]]
    tensor_names = [list(p["names"]) for p in ports]
    rng.shuffle(tensor_names)
    for p, t in zip(ports, tensor_names, strict=True):
        p["names"] = t


def fresh_names(G, seed: int) -> None:
    rng = random.Random(seed)
    nodes = list(G)
    order = list(range(len(nodes)))
    rng.shuffle(order)
    for n, k in zip(nodes, order, strict=True):
        G.nodes[n]["name"] = f"layer_{k}"
        for j, p in enumerate(G.nodes[n]["outputs"]):
            if p["names"]:
                p["names"] = [f"t{k}_{j}"]


def assert_paired_by_structure(report, total: int) -> None:
    wrong = {a: b for a, b in report.pairs.items() if a != b}
    assert not wrong, f"{len(wrong)} false pairs: {list(wrong.items())[:5]}"
    assert len(report.pairs) >= 0.95 * total, (len(report.pairs), total)
    # what is left unpaired is said: nothing changed besides the names
    for d in report.layers:
        if d.status in ("changed", "renamed"):
            assert {c["what"] for c in d.changes} <= {"name", "tensor names", "attribute"}, d


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.split("/", 1)[1])
@pytest.mark.parametrize("rename", [shuffled_names, fresh_names],
                         ids=["shuffled", "fresh"])
def test_renamed_exports_pair_by_structure(path, rename):
    G0, G1 = og.read_ir(ROOT / path), og.read_ir(ROOT / path)
    rename(G1, seed=20261207)
    report = og.diff(G0, G1)
    assert_paired_by_structure(report, G0.number_of_nodes())
    assert not report.equal


def test_renamed_and_written_pairs_the_same(tmp_path):
    path = ROOT / "ir_corpus/bert/pytorch_dynamic.xml"
    G1 = og.read_ir(path)
    fresh_names(G1, seed=7)
    og.write_ir(G1, tmp_path / "renamed.xml")
    report = og.diff(path, tmp_path / "renamed.xml")
    assert_paired_by_structure(report, report.summary["layers_a"])


# -- the same model built twice through OpenVINO --------------------------------------------
ov = pytest.importorskip("openvino")


def build(prefix: str, seed: int = 3):
    """A small transformer-like block (MatMuls, a softmax, a layer norm, a residual, shape
    arithmetic), every friendly name starting with ``prefix``."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(seed)
    k = iter(range(1000))

    def name(what: str) -> str:
        return f"{prefix}{what}_{next(k)}"

    def const(shape, dtype=np.float32):
        return ops.constant(rng.standard_normal(shape).astype(dtype), name=name("w"))

    x = ops.parameter([-1, 8, 16], np.float32, name=f"{prefix}x")
    h = x
    for _ in range(2):
        q = ops.matmul(h, const([16, 16]), False, False, name=name("q"))
        kk = ops.matmul(h, const([16, 16]), False, False, name=name("k"))
        s = ops.matmul(q, kk, False, True, name=name("scores"))
        p = ops.softmax(s, -1, name=name("softmax"))
        v = ops.matmul(p, h, False, False, name=name("attend"))
        h = ops.add(h, v, name=name("residual"))
        mean = ops.reduce_mean(h, ops.constant(np.array([-1], np.int64), name=name("axis")),
                               True, name=name("mean"))
        h = ops.multiply(ops.subtract(h, mean, name=name("center")), const([16]),
                         name=name("scale"))
        shape = ops.shape_of(h, name=name("shape"))
        h = ops.reshape(h, shape, False, name=name("reshape"))
    out = ops.result(ops.relu(h, name=name("relu")), name=f"{prefix}out")
    return ov.Model([out], [x], f"{prefix}model")


@pytest.mark.parametrize("compress", [False, True])
def test_one_model_built_twice_with_other_names(tmp_path, compress):
    ov.save_model(build("first/"), tmp_path / "a.xml", compress_to_fp16=compress)
    ov.save_model(build("second."), tmp_path / "b.xml", compress_to_fp16=compress)
    report = og.diff(tmp_path / "a.xml", tmp_path / "b.xml")
    assert_paired_by_structure(report, report.summary["layers_a"])
    assert report.summary["layers_a"] == report.summary["layers_b"]


def test_fp16_compression_lists_the_converts_and_the_weight_types(tmp_path):
    model = build("m.")
    ov.save_model(model, tmp_path / "f32.xml", compress_to_fp16=False)
    ov.save_model(model, tmp_path / "f16.xml", compress_to_fp16=True)
    report = og.diff(tmp_path / "f32.xml", tmp_path / "f16.xml")
    assert not report.equal
    assert not report.inputs and not report.outputs and not report.replaced
    G16 = og.read_ir(tmp_path / "f16.xml")
    converts = {n for n in G16 if G16.nodes[n]["type"] == "Convert"
                and "decompression" in (G16.nodes[n]["rt_info"] or "")}
    assert converts
    added = {d.b["id"] for d in report.layers if d.status == "added"}
    assert added == converts
    assert not any(d.status == "removed" for d in report.layers)
    changed = [d for d in report.layers if d.status in ("changed", "renamed")]
    assert {d.a["type"] for d in changed} == {"Const"}
    assert len(changed) == len(converts)  # each compressed weight once
    for d in changed:
        assert {c["what"] for c in d.changes} <= {"name", "element type", "weights"}, d
        (w,) = [c for c in d.changes if c["what"] == "weights"]
        assert w["a"].startswith("f32 ") and w["b"].startswith("f16 ")
        assert w["max_abs"] is not None and w["max_abs"] < 1e-2
    assert {report.pairs[d.a["id"]] for d in changed} == {
        next(iter(G16.pred[c])) for c in converts}  # the Const under each Convert
