"""`extract` cuts a layer out so that OpenVINO runs it alone with the same answer.

For every gather layer of every sample and a few depths: the extracted IR is read and
compiled by OpenVINO, and fed with the tensors the full model computes at the cut
(``Model.add_outputs`` on the full model) it gives the same outputs as the full model
for every layer whose output it keeps (the gather first of all).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovgather.cli import main
from ovgather.edit.extract import extract, neighbourhood, write_extract
from ovgather.errors import UsageError
from ovgather.graph import gather_types
from ovgather.ir import read_ir
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def _gather_layers() -> list[tuple[Path, str]]:
    out = []
    for path in SAMPLES:
        G = read_ir(path)
        out += [(path, G.nodes[n]["name"]) for n in G if G.nodes[n]["type"] in gather_types()]
    return out


GATHERS = _gather_layers()


def concrete_inputs(model: ov.Model, strategy: int = 0, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for ``model``: floats random, booleans random, integers 0 (an index that is
    valid along any non-empty axis). Dynamic dims get concrete sizes by ``strategy``:
    0 takes a static size that another input has at the same position (so batch dims
    agree), else 4 (big enough for the Const indices of the samples), 1 sets every
    dynamic dim to 4, 2 to 2, 3 to its lower bound (at least 1); each is clipped into
    the dim's bounds."""
    rng = np.random.default_rng(seed)
    params = model.get_parameters()
    statics: dict[int, list[int]] = {}
    for p in params:
        for i, d in enumerate(p.get_partial_shape()):
            if d.is_static:
                statics.setdefault(i, []).append(d.get_length())
    feeds = {}
    for p in params:
        shape = [_size(d, statics.get(i, []), strategy)
                 for i, d in enumerate(p.get_partial_shape())]
        et = p.get_element_type()
        dtype = et.to_dtype()
        if et.is_real():
            value = rng.standard_normal(shape).astype(dtype)
        elif et == ov.Type.boolean:
            value = rng.random(shape) < 0.5
        else:
            value = np.zeros(shape, dtype=dtype)
        feeds[p.get_friendly_name()] = value
    return feeds


def _size(d: ov.Dimension, others: list[int], strategy: int) -> int:
    if d.is_static:
        return d.get_length()
    lo, hi = d.get_min_length(), d.get_max_length()
    hi = hi if hi >= 0 else 1 << 30
    fits = [v for v in others if lo <= v <= hi]
    if strategy == 0 and fits:
        return fits[0]
    want = (4, 4, 2, max(lo, 1))[strategy]
    return min(max(want, lo), hi)


def run_full(model: ov.Model) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Inputs the full model accepts (the first strategy that runs) and its outputs."""
    errors = []
    for strategy in range(4):
        feeds = concrete_inputs(model, strategy)
        try:
            return feeds, _run(model, feeds)
        except RuntimeError as err:
            errors.append(str(err).strip().splitlines()[-1])
    raise AssertionError(f"no concrete inputs run the full model: {errors}")


def _run(model: ov.Model, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    compiled = ov.Core().compile_model(model, "CPU", CONFIG)
    order = [p.get_friendly_name() for p in model.get_parameters()]
    result = compiled({i: feeds[name] for i, name in enumerate(order)})
    return [np.asarray(result[out]) for out in compiled.outputs]


def _producer(result: ov.Node) -> tuple[str, int]:
    src = result.input_value(0)
    return src.get_node().get_friendly_name(), src.get_index()


def check_extract_matches_full(path: Path, layer: str, depth: int, out: Path) -> None:
    """The heart of the test: cut, run both, compare at every kept output."""
    G = read_ir(path)
    H = write_extract(G, layer, out, depth)
    sub = ov.Core().read_model(str(out))
    full = ov.Core().read_model(str(path))
    if any(p.get_partial_shape().rank.is_dynamic for p in full.get_parameters()):
        check_same_shapes(full, sub)  # the CPU plugin runs no dynamic-rank Parameter
        return
    cuts = H.graph["extract_cuts"]
    params = {p.get_friendly_name() for p in full.get_parameters()}
    wanted = [cuts[p.get_friendly_name()] for p in sub.get_parameters()
              if p.get_friendly_name() in cuts]
    wanted += [_producer(r) for r in sub.get_results()]
    extra = sorted({w for w in wanted if w[0] not in params})
    added = full.add_outputs(list(extra)) if extra else []
    results = [o.get_node().get_friendly_name() for o in full.outputs]
    full_inputs, values = run_full(full)
    at = {w: values[results.index(o.get_node().get_friendly_name())]
          for w, o in zip(extra, added, strict=True)}
    at.update({(name, 0): v for name, v in full_inputs.items()})
    feeds = {p.get_friendly_name(): at[cuts[p.get_friendly_name()]]
             if p.get_friendly_name() in cuts else full_inputs[p.get_friendly_name()]
             for p in sub.get_parameters()}
    got = _run(sub, feeds)
    assert len(got) == len(sub.get_results()) >= 1
    for result, value in zip(sub.get_results(), got, strict=True):
        expected = at[_producer(result)]
        assert value.shape == expected.shape, (layer, _producer(result))
        if np.issubdtype(value.dtype, np.floating):
            np.testing.assert_allclose(value, expected, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(value, expected)


def check_same_shapes(full: ov.Model, sub: ov.Model) -> None:
    """Every layer the cut keeps has the output shapes OpenVINO gives it in the full model."""
    full_ops = {op.get_friendly_name(): op for op in full.get_ops()}
    kept = [op for op in sub.get_ops() if op.get_type_name() not in ("Parameter", "Result")]
    assert kept
    for op in kept:
        src = full_ops[op.get_friendly_name()]
        assert [str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())] == \
            [str(src.get_output_partial_shape(i)) for i in range(src.get_output_size())]


@pytest.mark.parametrize("path,layer", GATHERS,
                         ids=[f"{p.relative_to(ROOT / 'ir_samples')}:{n}" for p, n in GATHERS])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_extract_runs_like_the_full_model(path: Path, layer: str, depth: int,
                                          tmp_path: Path) -> None:
    check_extract_matches_full(path, layer, depth, tmp_path / "sub.xml")


def test_extract_keeps_the_gather_and_its_consts() -> None:
    G = read_ir(ROOT / "ir_samples" / "mixed_ops.xml")
    H = extract(G, "pick_rows_nd8", depth=0)
    types = sorted(H.nodes[n]["type"] for n in H)
    assert types.count("GatherND") == 1
    assert "Result" in types and "Parameter" in types
    target = next(n for n in H if H.nodes[n]["name"] == "pick_rows_nd8")
    assert H.nodes[target] == {**G.nodes[target]}  # the layer itself is untouched


def test_extract_parameters_carry_the_inferred_shape_and_type(tmp_path: Path) -> None:
    """The cut Parameters of the dynamic sample keep the interval dims (port dims lose them)."""
    G = read_ir(ROOT / "ir_samples" / "dynamic_gathers.xml")
    out = tmp_path / "sub.xml"
    write_extract(G, "gather_nd8_bd2", out, depth=0)
    sub = ov.Core().read_model(str(out))
    full = ov.Core().read_model(str(ROOT / "ir_samples" / "dynamic_gathers.xml"))
    full_ops = {op.get_friendly_name(): op for op in full.get_ops()}
    for p in sub.get_parameters():
        src = full_ops[p.get_friendly_name().split(".")[0]]
        assert p.get_element_type() == src.get_output_element_type(0)
        assert str(p.get_partial_shape()) == str(src.get_output_partial_shape(0))
    sub_ops = {op.get_friendly_name(): op for op in sub.get_ops()}
    assert str(sub_ops["gather_nd8_bd2"].get_output_partial_shape(0)) == \
        str(full_ops["gather_nd8_bd2"].get_output_partial_shape(0))


def test_neighbourhood_follows_edges_both_ways() -> None:
    G = read_ir(ROOT / "ir_samples" / "gather_nd8_bd3.xml")
    gnd = next(n for n in G if G.nodes[n]["type"] == "GatherND")
    assert neighbourhood(G, gnd, 0) == {gnd}
    assert {G.nodes[n]["type"] for n in neighbourhood(G, gnd, 1)} == \
        {"Parameter", "Const", "GatherND", "Result"}


def test_extract_unknown_layer_lists_the_gathers() -> None:
    G = read_ir(ROOT / "ir_samples" / "mixed_ops.xml")
    with pytest.raises(UsageError, match="pick_rows_nd8"):
        extract(G, "no_such_layer")


def test_cli_extract_writes_a_readable_ir(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sub.xml"
    src = str(ROOT / "ir_samples" / "mixed_ops.xml")
    code = main(["extract", src, "--layer", "ranked_ge", "--depth", "1", "-o", str(out),
                 "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["path"] == str(out) and report["parameters"]
    model = ov.Core().read_model(str(out))
    assert "ranked_ge" in {op.get_friendly_name() for op in model.get_ops()}


def test_cli_extract_refuses_to_overwrite_its_input(capsys) -> None:
    src = str(ROOT / "ir_samples" / "gather_nd8_bd3.xml")
    code = main(["extract", src, "--layer", "gather_nd8_bd3", "-o", src])
    assert code == 2
    assert "never overwrites" in capsys.readouterr().err


def test_cli_extract_missing_file_is_exit_2(tmp_path: Path, capsys) -> None:
    code = main(["extract", str(tmp_path / "nope.xml"), "--layer", "x", "-o",
                 str(tmp_path / "o.xml")])
    assert code == 2
    assert capsys.readouterr().err.startswith("error:")


def test_extract_with_shape_overrides_cuts_at_the_reshaped_shapes(tmp_path: Path) -> None:
    src = ROOT / "ir_samples" / "mixed_ops.xml"
    out = tmp_path / "sub.xml"
    write_extract(read_ir(src), "pick_rows_nd8", out, depth=1, shapes={"x": "[4,3,8]"})
    full = ov.Core().read_model(str(src))
    full.reshape({"x": ov.PartialShape([4, 3, 8])})
    full_ops = {op.get_friendly_name(): op for op in full.get_ops()}
    sub = ov.Core().read_model(str(out))
    assert sub.get_parameters()
    for p in sub.get_parameters():
        src_op = full_ops[p.get_friendly_name()]
        assert str(p.get_partial_shape()) == str(src_op.get_output_partial_shape(0))
    sub_ops = {op.get_friendly_name(): op for op in sub.get_ops()}
    assert str(sub_ops["pick_rows_nd8"].get_output_partial_shape(0)) == \
        str(full_ops["pick_rows_nd8"].get_output_partial_shape(0)) == "[4,2,4]"


def test_extract_keeps_the_decompression_of_fp16_weights(tmp_path: Path) -> None:
    """Saved with FP16 weights, a MatMul reads Const(f16) -> Convert(f32): the cut keeps
    both, so the weights stay weights (no Parameter stands for them) and the layer runs
    like the full model."""
    rng = np.random.default_rng(0)
    x = ov.opset8.parameter([2, 16], np.float32, name="x")
    weights = ov.opset8.constant(rng.standard_normal((16, 8)).astype(np.float32))
    hidden = ov.opset8.relu(ov.opset8.matmul(x, weights, False, False, name="mm"))
    path = tmp_path / "fp16.xml"
    ov.save_model(ov.Model([hidden], [x]), str(path), compress_to_fp16=True)
    full = read_ir(path)
    assert any(a["type"] == "Convert" for _, a in full.nodes(data=True))
    mm = next(n for n, a in full.nodes(data=True) if a["type"] == "MatMul")
    out = tmp_path / "cut.xml"
    write_extract(full, full.nodes[mm]["name"], out, depth=0)
    cut = ov.Core().read_model(str(out))
    assert len(cut.get_parameters()) == 1  # x alone: the weights were not cut off
    feed = rng.standard_normal((2, 16)).astype(np.float32)
    got = ov.Core().compile_model(cut, "CPU", cpu_config())(feed)[0]
    whole = ov.Core().read_model(str(path))
    full_out = ov.Core().compile_model(whole, "CPU", cpu_config())(feed)[0]
    np.testing.assert_allclose(np.maximum(got, 0), full_out, rtol=1e-5, atol=1e-5)


def _cut_names(full: ov.Model, sub: ov.Model, cuts: dict) -> list[tuple[str, str, str, set]]:
    """For each input of the cut that stands for a tensor of ``full``: the Parameter's
    friendly name, the name OpenVINO shows for the input, the name it shows for that
    tensor in ``full``, and the tensor names of both."""
    ops = {op.get_friendly_name(): op for op in full.get_ops()}
    rows = []
    for p in sub.get_parameters():
        if p.get_friendly_name() in cuts:
            layer, index = cuts[p.get_friendly_name()]
            tensor = ops[layer].output(index)
            rows.append((p.get_friendly_name(), p.output(0).get_any_name(),
                         tensor.get_any_name(), p.output(0).get_names() == tensor.get_names()))
    return rows


def test_a_cut_input_is_named_after_the_tensor_as_openvino_shows_it(tmp_path: Path,
                                                                     capsys) -> None:
    """The layer feeding the cut is 'relu'; its output tensor is 'hidden' and 'zeta':
    OpenVINO shows 'hidden' for it, and so for the cut's input."""
    d = ov.opset8.parameter([2, 3, 4], np.float32, name="data")
    relu = ov.opset8.relu(d)
    relu.set_friendly_name("relu")
    relu.output(0).set_names({"zeta", "hidden"})
    indices = ov.opset8.constant(np.array([[1], [0]], dtype=np.int64))
    gnd = ov.opset8.gather_nd(relu, indices, 1)
    gnd.set_friendly_name("gnd")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ov.opset8.exp(gnd)], [d], "m"), str(path))
    full = ov.Core().read_model(str(path))
    out = tmp_path / "cut.xml"
    assert main(["extract", str(path), "--layer", "gnd", "--depth", "0", "-o", str(out),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sub = ov.Core().read_model(str(out))
    shown = full.get_ops()[[op.get_friendly_name() for op in full.get_ops()].index(
        "relu")].output(0).get_any_name()
    assert shown == "hidden"
    assert [p["name"] for p in doc["parameters"]] == [shown]
    assert doc["parameters"][0]["stands_for"] == ["relu", 0]
    assert sub.inputs[0].get_any_name() == sub.get_parameters()[0].get_friendly_name() == shown
    assert sub.inputs[0].get_names() == {"hidden", "zeta"}


def test_cut_inputs_of_a_corpus_model_carry_the_tensor_names_openvino_shows(
        tmp_path: Path) -> None:
    """bert's embedding sum reads two Gathers whose tensors are called '43' and '45' (their
    layers '__module…/Gather'): the cut's inputs are called so, as OpenVINO shows them."""
    path = ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"
    out = tmp_path / "cut.xml"
    H = write_extract(read_ir(path), "__module.model.embeddings/aten::add/Add", out, depth=0)
    rows = _cut_names(ov.Core().read_model(str(path)), ov.Core().read_model(str(out)),
                      H.graph["extract_cuts"])
    assert len(rows) == 2
    for friendly, shown, in_full, same_names in rows:
        assert friendly == shown == in_full and same_names
    assert sorted(r[0] for r in rows) == ["43", "45"]
