"""``reshape`` writes an IR with new input shapes that OpenVINO reads, checks and runs
exactly like the original model reshaped in memory by ``openvino.Model.reshape``.

Every model of ``ir_samples/`` and ``ir_corpus/`` is reshaped twice: to new static sizes
(batch 2, sequences of 5, images of 32x32) and to a dynamic batch with an interval
sequence or image size. Where ``openvino.Model.reshape`` refuses the new shapes (a
constant Reshape target, constant indices with a batch dim), ovgather must refuse too
and name the layer. Otherwise OUT is read by OpenVINO, whose shapes equal the declared
dims port by port, ``check`` finds it clean, and it computes what the original model
reshaped in memory computes.
"""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovgather import errors
from ovgather.cli import main
from ovgather.infer import check
from ovgather.ir import read_ir, write_ir
from ovgather.passes.reshape import reshape, shape_attribute
from ovgather.shapes import PartialShape
from ovgather.validate import input_sizes

ROOT = Path(__file__).resolve().parents[2]
SEED = 17
#: llama_deep is llama/pytorch_dynamic at 44 blocks instead of 2: the same layers and the same
#: reshape, 22 times over, at a quarter of this file's time (every port of it is checked
#: against read_model in tests/project/test_corpus.py)
MODELS = sorted((ROOT / "ir_samples").rglob("*.xml")) + sorted(
    p for p in (ROOT / "ir_corpus").rglob("*.xml") if p.parent.name != "llama_deep")
CORE = ov.Core()
CPU = {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"}

#: the variants that openvino.Model.reshape refuses, and why (ovgather must refuse them too)
REFUSED = {
    ("clip/onnx_static", "static"): "a Reshape target holds batch 1",
    ("gpt2/onnx_static", "static"): "a Reshape target holds batch 1",
    ("segformer/onnx_dynamic", "static"): "a Reshape target holds the 64x64 image's sizes",
    ("swin/onnx_static", "static"): "a Reshape target holds batch 1",
    ("swin/pytorch_static", "static"): "a Reshape target holds batch 1",
    ("t5/onnx_static", "static"): "a Reshape target holds batch 1",
    ("vit/pytorch_static", "static"): "a Concat with a constant [1,1,C] class token",
    ("whisper/onnx_static", "static"): "a Reshape target holds batch 1",
    ("bart/onnx_static", "static"): "a Reshape target holds batch 1",
    ("bart/pytorch_static", "static"): "a MatMul operand reshaped with batch 1",
    ("mistral/pytorch_static", "static"): "a repeat-kv Broadcast target holds batch 1",
    ("roberta/onnx_static", "static"): "GatherElements position ids hold batch 1",
    ("roberta/pytorch_static", "static"): "GatherElements position ids hold batch 1",
    ("detr/onnx_static", "static"): "a flatten's Reshape target holds batch 1",
    ("detr/pytorch_static", "static"): "a MatMul operand reshaped with batch 1",
    ("dynamic_gathers", "static"): "GatherND batch dims of data and indices now differ",
    ("dynamic_rank", "static"): "the GatherND index tuple grows past the data rank",
    ("gather_nd5_bd3", "static"): "constant indices keep batch 1",
    ("gather_nd8_bd3", "static"): "constant indices keep batch 1",
    ("wrong_gather_nd8_bd3_v5_layout", "static"): "constant indices keep batch 1",
}
#: new shapes chosen by hand where the rule below does not fit the model
CHOSEN = {
    # constant indices [30,2,3,1] with batch_dims 2: only the trailing data dim may change
    **{(name, "static"): {"data": "[30,2,100,7]"}
       for name in ("gather_nd5_bd2", "gather_nd8_bd2", "wrong_gather_nd5_bd2_one_dim")},
    **{(name, "dynamic"): {"data": "[30,2,100,1..64]"}
       for name in ("gather_nd5_bd2", "gather_nd8_bd2", "wrong_gather_nd5_bd2_one_dim")},
    # constant indices [25,125,3] index the first three data dims: only the last may change
    **{(name, "static"): {"data": "[1000,256,10,2]"}
       for name in ("gather_nd5_bd0", "gather_nd8_bd0")},
    **{(name, "dynamic"): {"data": "[1000,256,10,1..16]"}
       for name in ("gather_nd5_bd0", "gather_nd8_bd0")},
    # the constant first_ids need 4 rows of x, and the GatherND batch equals the ids batch
    **{(name, "static"): {"x": "[4,3,8]", "ids": "[4,2,1]", "ge_ids": "[4,24]"}
       for name in ("mixed_ops", "wrong_mixed_ops_nd8_dim")},
    # its Reshape targets hold the 64x64 image's sizes, and with interval image sizes the
    # CPU plugin ends the process (a segmentation fault, the original model too): only
    # the batch is dynamic
    ("segformer/onnx_dynamic", "dynamic"): {"pixel_values": "[?,3,64,64]"},
    # the row mask must be as long as x has rows
    ("bool_mask", "static"): {"rows": "[2]"}, ("bool_mask", "dynamic"): {"rows": "[?]"},
    # the ONNX export's attention mask length is computed as ``len // 20 - 1``: audio
    # shorter than that stride makes its Broadcast target negative, which openvino
    # refuses and so does ovgather; the interval starts at 400 samples, clear of it
    ("wav2vec2/onnx_dynamic", "dynamic"): {"input_values": "[?,400..1600]"},
    ("wav2vec2/pytorch_dynamic", "dynamic"): {"input_values": "[?,400..1600]"},
}

#: run sizes chosen by hand where the generic pick breaks a rule the CPU plugin trusts
RUN = {("dynamic_gathers", "dynamic"): {"data": [3, 5, 10, 5, 4], "nd_indices": [3, 5, 5, 2],
                                        "ge_indices": [3, 5, 10, 5, 6], "g_indices": [3, 4]},
       ("segformer/onnx_dynamic", "dynamic"): {"pixel_values": [2, 3, 64, 64]}}
#: variants that cannot run on the CPU at all (checked: compiling the original fails too)
NO_RUN = {("dynamic_rank", "dynamic"): "the CPU plugin does not compile a dynamic-rank input"}
#: variants whose run ends the test process in the CPU plugin (a segmentation fault, with
#: the original model reshaped in memory too): checked as IR, not run
CRASHES = {("segformer/onnx_dynamic", "dynamic"): "segmentation fault on CPU"}


def _key(xml: Path) -> str:
    rel = xml.relative_to(ROOT)
    return str(rel.with_suffix("")).removeprefix("ir_corpus/").removeprefix("ir_samples/") \
        .removeprefix("onnx/").removeprefix("pytorch/") if rel.parts[0] == "ir_samples" \
        else str(rel.relative_to("ir_corpus").with_suffix(""))


def _new_dim(name: str, shape: ov.PartialShape, i: int, variant: str) -> str:
    d = shape[i]
    batch = i == 0 and (shape.rank.get_length() > 1 or name == "beam_idx")
    if batch:
        return "2" if variant == "static" else "?"
    if d.is_static:
        return str(d.get_length())
    lo, hi = d.get_min_length(), d.get_max_length()
    pick = 32 if shape.rank.get_length() == 4 else 800 if "values" in name else 5
    pick = max(pick, lo) if hi == -1 else min(max(pick, lo), hi)
    if variant == "static":
        return str(pick)
    return f"{lo}..{hi}" if hi != -1 else f"{max(1, lo)}..{2 * pick}"


def _shapes(model: ov.Model, key: str, variant: str) -> dict[str, str]:
    """Batch 2 and sizes 5/32/800 (static), or a dynamic batch with intervals (dynamic)."""
    out = {}
    for inp in model.inputs:
        name, shape = inp.get_any_name(), inp.get_partial_shape()
        if shape.rank.is_dynamic:
            out[name] = "[2,3,7]" if variant == "static" else "[...]"
            continue
        out[name] = "[" + ",".join(_new_dim(name, shape, i, variant)
                                   for i in range(shape.rank.get_length())) + "]"
    return {**out, **CHOSEN.get((key, variant), {})}


def _cases():
    for xml in MODELS:
        key = _key(xml)
        model = CORE.read_model(str(xml))
        for variant in ("static", "dynamic"):
            refused = REFUSED.get((key, variant))
            yield pytest.param(xml, _shapes(model, key, variant), refused,
                               id=f"{key}-{variant}" + ("-openvino-refuses" if refused else ""))


CASES = list(_cases())


# ---- comparing with OpenVINO ---------------------------------------------------------------
def _ir_dims(shape: ov.PartialShape) -> tuple[int, ...]:
    """A port's dims as OpenVINO's serializer writes them."""
    if shape.rank.is_dynamic:
        return ()
    return tuple(d.get_length() if d.is_static else -1 for d in shape)


def _by_name(model: ov.Model) -> dict[str, list]:
    ops: dict[str, list] = {}
    for op in model.get_ordered_ops():
        ops.setdefault(op.get_friendly_name(), []).append(op)
    return ops


def _compare_declared(out_xml: Path, reshaped: ov.Model) -> None:
    """read_model(OUT) and the in-memory reshape agree with every declared dim."""
    G = read_ir(out_xml)
    read = _by_name(CORE.read_model(str(out_xml)))
    memory = _by_name(reshaped)
    wrong = []
    for node, attrs in G.nodes(data=True):
        op = read[attrs["name"]].pop(0)
        # Model.reshape runs openvino's smart-reshape passes, which may swap a few layers
        mem = memory[attrs["name"]].pop(0) if memory.get(attrs["name"]) else None
        if attrs["type"] == "Parameter":
            assert attrs["data"]["shape"] == shape_attribute(
                PartialShape.parse(str(op.get_output_partial_shape(0))))
        for i, port in enumerate(attrs["outputs"]):
            theirs = op.get_output_partial_shape(i)
            if tuple(port["dims"]) != _ir_dims(theirs):
                wrong.append(f"{attrs['type']} {attrs['name']} port {port['id']}: declared "
                             f"{port['dims']}, read_model {theirs}")
            if mem is not None and str(theirs) != str(mem.get_output_partial_shape(i)):
                wrong.append(f"{attrs['name']}: OUT gives {theirs}, Model.reshape gives "
                             f"{mem.get_output_partial_shape(i)}")
        for port in attrs["inputs"]:
            src = next(d for _, _, d in G.in_edges(node, data=True) if d["to_port"] == port["id"])
            u = next(u for u, _, d in G.in_edges(node, data=True) if d is src)
            from_dims = next(p["dims"] for p in G.nodes[u]["outputs"]
                             if p["id"] == src["from_port"])
            assert port["dims"] == from_dims, (attrs["name"], port["id"])
    assert not wrong, "\n".join(wrong[:20])


def _run_sizes(xml: Path, shapes: dict[str, str]) -> dict[str, list[int]]:
    """Concrete input shapes inside ``shapes``: the static variant's sizes where openvino
    takes that variant, else the mid sizes ``validate`` runs the original model with."""
    key = _key(xml)
    if (key, "dynamic") in RUN and not all(PartialShape.parse(v).is_static
                                           for v in shapes.values()):
        return RUN[key, "dynamic"]
    if ("static" if all(PartialShape.parse(v).is_static for v in shapes.values())
            else None) == "static":
        return {k: PartialShape.parse(v).to_list() for k, v in shapes.items()}
    if (key, "static") not in REFUSED:
        picks = _shapes(CORE.read_model(str(xml)), key, "static")
    else:
        sizes = input_sizes(read_ir(xml))
        picks = {k: str(v) for k, v in sizes.get("mid", next(iter(sizes.values()))).items()}
    run = {}
    for name, text in shapes.items():
        shape, pick = PartialShape.parse(text), PartialShape.parse(picks[name])
        if shape.rank is None:
            run[name] = pick.to_list()
            continue
        run[name] = [min(max(p.lo if p.is_static else 2, d.lo), d.hi)
                     for d, p in zip(shape.dims, pick.dims, strict=True)]
    return run


def _inputs(model: ov.Model, run: dict[str, list[int]], rng) -> dict[str, np.ndarray]:
    feeds = {}
    for inp in model.inputs:
        name = inp.get_any_name()
        shape, dtype = run[name], inp.get_element_type().to_dtype()
        if dtype.kind == "f":
            feeds[name] = rng.standard_normal(shape).astype(dtype)
        elif "mask" in name and name != "mask":
            feeds[name] = np.ones(shape, dtype)
        elif name == "beam_idx":
            feeds[name] = np.arange(shape[0], dtype=dtype)
        elif name == "position_ids":
            feeds[name] = np.broadcast_to(np.arange(shape[-1], dtype=dtype), shape).copy()
        else:
            feeds[name] = rng.integers(0, 2, shape).astype(dtype)
    return feeds


def _outputs(model: ov.Model, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    compiled = CORE.compile_model(model, "CPU", CPU)  # kept alive while its request runs
    request = compiled.create_infer_request()
    request.infer(feeds)
    return [np.array(request.get_output_tensor(i).data)
            for i in range(len(model.outputs))]


def _same_outputs(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(x, y)


# ---- every model, two ways -------------------------------------------------------------------
@pytest.mark.parametrize(("xml", "shapes", "refused"), CASES)
def test_reshape_matches_openvino_model_reshape(xml, shapes, refused, tmp_path):
    reshaped = CORE.read_model(str(xml))
    try:
        reshaped.reshape({k: ov.PartialShape(v) for k, v in shapes.items()})
        ov_refused = None
    except RuntimeError as err:
        ov_refused = str(err)
    assert (ov_refused is None) == (refused is None), ov_refused or "openvino reshapes it"
    G = read_ir(xml)
    if refused:
        with pytest.raises(errors.ReshapeError) as err:
            reshape(G, shapes)
        assert err.value.blockers and err.value.layer_name
        return
    try:
        reshape(G, shapes)
    except errors.ReshapeError as err:
        _fails_inside_range(xml, shapes, err)
        return
    out = tmp_path / "out.xml"
    write_ir(G, out)
    report = check(read_ir(out))
    assert report.ok and report.summary["mismatch"] == 0, report.problems()[:3]
    _compare_declared(out, reshaped)
    variant = "static" if all(PartialShape.parse(v).is_static for v in shapes.values()) \
        else "dynamic"
    if (_key(xml), variant) in CRASHES:
        return
    if (_key(xml), variant) in NO_RUN:
        with pytest.raises(RuntimeError):
            CORE.compile_model(reshaped, "CPU", CPU)
        return
    feeds = _inputs(reshaped, _run_sizes(xml, shapes), np.random.default_rng(SEED))
    _same_outputs(_outputs(CORE.read_model(str(out)), feeds), _outputs(reshaped, feeds))


def _fails_inside_range(xml: Path, shapes: dict[str, str], err) -> None:
    """ovgather refused a dynamic range OpenVINO's Model.reshape took: only for a layer
    that fails at static sizes inside it, which OpenVINO refuses too. (Running there is
    no safe proof: the CPU plugin does not check GatherND batch dims and reads out of
    bounds; tests/passes/test_reshape_batch.py runs the real models.)"""
    rows = err.blockers
    assert rows and all("sizes" in row for row in rows), rows
    model = CORE.read_model(str(xml))
    for row in rows:
        sizes = {**shapes, **row["sizes"]}
        assert all(PartialShape.parse(v).is_static for k, v in row["sizes"].items())
        with pytest.raises(RuntimeError):
            model.reshape({k: ov.PartialShape(v) for k, v in sizes.items()})


# ---- --fix: models openvino cannot reshape because of a constant Reshape target -------------
def _save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _flatten(path: Path) -> Path:
    """x [1,3,4,4] -> Reshape [1,-1] -> Add [1,48]: the batch is baked into the flatten.
    (Before a MatMul, openvino's own smart reshape would mend the flatten.)"""
    import openvino.opset13 as ops

    x = ops.parameter([1, 3, 4, 4], ov.Type.f32, name="x")
    flat = ops.reshape(x, ops.constant(np.array([1, -1], np.int64)), special_zero=False)
    bias = np.random.default_rng(SEED).standard_normal((1, 48)).astype(np.float32)
    return _save(ov.Model([ops.add(flat, ops.constant(bias))], [x], "flatten"), path)


def _view(path: Path) -> Path:
    """x [2,6,4] -> Reshape [2,3,8] -> Softmax: a view with the batch 2 baked in."""
    import openvino.opset13 as ops

    x = ops.parameter([2, 6, 4], ov.Type.f32, name="x")
    view = ops.reshape(x, ops.constant(np.array([2, 3, 8], np.int32)), special_zero=False)
    return _save(ov.Model([ops.softmax(view, -1)], [x], "view"), path)


def _attention(path: Path) -> Path:
    """Self-attention over x [1,8,16] (4 heads of 4) whose head split has the sequence
    length 8 baked in, and whose merge folds batch and sequence into [8,16]."""
    import openvino.opset13 as ops

    x = ops.parameter([1, 8, 16], ov.Type.f32, name="x")
    heads = ops.reshape(x, ops.constant(np.array([1, 8, 4, 4], np.int64)), special_zero=False)
    q = ops.transpose(heads, ops.constant(np.array([0, 2, 1, 3], np.int64)))
    scores = ops.softmax(ops.matmul(q, q, False, True), -1)
    back = ops.transpose(ops.matmul(scores, q, False, False),
                         ops.constant(np.array([0, 2, 1, 3], np.int64)))
    merged = ops.reshape(back, ops.constant(np.array([8, 16], np.int64)), special_zero=False)
    return _save(ov.Model([merged], [x], "attention"), path)


def _attention_numpy(x: np.ndarray) -> np.ndarray:
    b, s, _ = x.shape
    q = x.reshape(b, s, 4, 4).transpose(0, 2, 1, 3)
    e = np.exp(q @ q.transpose(0, 1, 3, 2) - (q @ q.transpose(0, 1, 3, 2)).max(-1, keepdims=True))
    out = (e / e.sum(-1, keepdims=True)) @ q
    return out.transpose(0, 2, 1, 3).reshape(b * s, 16)


FIXABLE = [
    pytest.param(_flatten, "x=[2,3,4,4]", ["Reshape"], id="flatten-1-minus1-batch-2"),
    pytest.param(_flatten, "x=[3,3,4,4]", ["Reshape"], id="flatten-1-minus1-batch-3"),
    pytest.param(_view, "x=[5,6,4]", ["Reshape"], id="view-batch-baked-in"),
    pytest.param(_attention, "x=[1,5,16]", ["Reshape", "Reshape"], id="attention-sequence-5"),
    pytest.param(_attention, "x=[1,12,16]", ["Reshape", "Reshape"], id="attention-sequence-12"),
]


@pytest.mark.parametrize(("build", "shape", "fixed"), FIXABLE)
def test_fix_makes_a_constant_reshape_target_reshapeable(build, shape, fixed, tmp_path,
                                                          capsys):
    xml = build(tmp_path / "m.xml")
    name, _, text = shape.partition("=")
    with pytest.raises(RuntimeError):  # openvino refuses it as it is
        CORE.read_model(str(xml)).reshape({name: ov.PartialShape(text)})
    out = tmp_path / "out.xml"
    assert main(["reshape", str(xml), "--shape", shape, "-o", str(out)]) == 1
    assert not out.exists() and "--fix rewrites it" in capsys.readouterr().out
    assert main(["reshape", str(xml), "--shape", shape, "-o", str(out), "--fix",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["type"] for f in doc["fixes"]] == fixed
    assert all(f["before"] != f["after"] for f in doc["fixes"])
    report = check(read_ir(out))
    assert report.ok
    # openvino reads OUT at the new shapes, and reshapes it back to the original shapes
    fixed_model = CORE.read_model(str(out))
    assert str(fixed_model.input(0).get_partial_shape()) == text
    _compare_declared(out, fixed_model)
    original = CORE.read_model(str(xml))
    fixed_model.reshape({name: original.input(0).get_partial_shape()})
    feeds = _inputs(original, {name: list(original.input(0).get_shape())},
                    np.random.default_rng(SEED))
    _same_outputs(_outputs(fixed_model, feeds), _outputs(original, feeds))
    # at the new shape it computes what the model means: per sample, or by NumPy
    run = _run_sizes_fixed(text)
    x = np.random.default_rng(SEED + 1).standard_normal(run).astype(np.float32)
    got = _outputs(CORE.read_model(str(out)), {name: x})[0]
    if build is _attention:
        want = _attention_numpy(x)
    else:
        parts = [_outputs(original, {name: x[i:i + 1] if build is _flatten else
                                     np.concatenate([x[i:i + 1], x[i:i + 1]])})[0][:1]
                 for i in range(run[0])]
        want = np.concatenate(parts)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _run_sizes_fixed(text: str) -> list[int]:
    shape = PartialShape.parse(text)
    return [d.lo if d.is_static else min(max(3, d.lo), d.hi) for d in shape.dims]


def test_fix_on_a_model_that_needs_nothing_changes_nothing(tmp_path, capsys):
    src = ROOT / "ir_samples" / "mixed_ops.xml"
    first, second = tmp_path / "a.xml", tmp_path / "b.xml"
    assert main(["reshape", str(src), "--shape", "x=[?,3,8]", "--fix", "-o", str(first),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fixes"] == [] and doc["changed"]
    assert main(["reshape", str(first), "--fix", "-o", str(second), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert not doc["modified"] and doc["fixes"] == [] and doc["changed"] == []
    assert filecmp.cmp(first, second, shallow=False)
    assert filecmp.cmp(first.with_suffix(".bin"), second.with_suffix(".bin"), shallow=False)
    before = first.read_bytes()
    assert main(["reshape", str(first), "--fix", "--in-place"]) == 0
    assert first.read_bytes() == before


@pytest.mark.parametrize("name", ["wrong_gather_nd5_bd2_one_dim",
                                  "wrong_gather_nd8_bd3_v5_layout", "wrong_mixed_ops_nd8_dim"])
def test_reshape_without_shapes_repairs_the_mismatched_dims(name, tmp_path, capsys):
    src = ROOT / "ir_samples" / f"{name}.xml"
    assert not check(read_ir(src)).ok
    out = tmp_path / "out.xml"
    assert main(["reshape", str(src), "-o", str(out)]) == 0
    assert "changed; wrote" in capsys.readouterr().out
    assert check(read_ir(out)).ok
    _compare_declared(out, CORE.read_model(str(src)))


def test_dry_run_lists_and_writes_nothing_and_in_place_is_required(tmp_path, capsys):
    src = tmp_path / "m.xml"
    _view(src)
    stamp = src.read_bytes()
    assert main(["reshape", str(src), "--shape", "x[5,6,4]", "--fix", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "fix: Reshape" in out and "nothing written (--dry-run)" in out
    assert src.read_bytes() == stamp and sorted(p.name for p in tmp_path.iterdir()) == [
        "m.bin", "m.xml"]
    assert main(["reshape", str(src), "--shape", "x=[5,6,4]", "-o", str(src)]) == 2
    assert "--in-place" in capsys.readouterr().err
    assert main(["reshape", str(src), "--shape", "nope=[1]", "-o", str(tmp_path / "o.xml")]) == 2


def test_api_reshape_returns_what_changed_and_leaves_a_blocked_graph_alone(tmp_path):
    xml = _flatten(tmp_path / "m.xml")
    G = read_ir(xml)
    snapshot = {n: [p["dims"] for p in a["outputs"]] for n, a in G.nodes(data=True)}
    with pytest.raises(errors.ReshapeError) as err:
        reshape(G, {"x": "[2,3,4,4]"})
    assert err.value.blockers[0]["type"] == "Add" and "hint" in err.value.blockers[0]
    assert {n: [p["dims"] for p in a["outputs"]] for n, a in G.nodes(data=True)} == snapshot
    result = reshape(G, {"x": "[2,3,4,4]"}, fix=True)
    assert result.modified and [f["after"] for f in result.fixes] == [
        "target [0,-1], special_zero=true"]
    assert {c["type"] for c in result.changed} >= {"Parameter", "Reshape", "Add"}


# ---- --shape: which layers a reshape changes, and which one stops it ------------------------


def _reshape_model(hard: bool, batch_dims: int = 0):
    import numpy as np
    import openvino as ov
    from openvino import opset8

    x = opset8.parameter([1, 3, 8], np.float32, name="x")
    target = [1, 24] if hard else [0, -1]
    flat = opset8.reshape(x, opset8.constant(np.array(target, np.int64)), not hard)
    flat.set_friendly_name("flatten")
    cube = opset8.reshape(flat, opset8.constant(np.array([0, 4, 6], np.int64)), True)
    cube.set_friendly_name("to_cube")
    ids = opset8.constant(np.zeros((1, 2, 1) if batch_dims else (2, 1), np.int64))
    gnd = opset8.gather_nd(cube, ids, batch_dims)
    gnd.set_friendly_name("gnd")
    return ov.Model([opset8.relu(gnd)], [x], "reshape_demo")


def test_reshape_effect_lists_the_layers_openvino_changes():
    import openvino as ov

    from ovgather.passes.reshape import reshape_effect
    from ovgather.runtime.interop import from_openvino

    model = _reshape_model(hard=False)
    before = {op.get_friendly_name(): str(op.get_output_partial_shape(0))
              for op in model.get_ops() if op.get_output_size()}
    effect = reshape_effect(from_openvino(model), {"x": "[5,3,8]"})
    model.reshape({"x": ov.PartialShape([5, 3, 8])})
    after = {op.get_friendly_name(): str(op.get_output_partial_shape(0))
             for op in model.get_ops() if op.get_output_size()}
    theirs = {n for n in after if after[n] != before[n]}
    assert {row["name"] for row in effect["changed"]} == theirs
    assert {row["name"]: row["after"][0] for row in effect["changed"]} == \
        {n: after[n] for n in theirs}
    assert effect["stopped"] == []


def test_reshape_effect_names_the_hard_coded_reshape_that_stops_it():
    import openvino as ov

    from ovgather.passes.reshape import reshape_effect
    from ovgather.runtime.interop import from_openvino

    model = _reshape_model(hard=True)
    effect = reshape_effect(from_openvino(model), {"x": "[2,3,8]"})
    assert [row["name"] for row in effect["stopped"]] == ["flatten"]
    assert effect["stopped"][0]["status"] == "invalid"
    with pytest.raises(RuntimeError):  # OpenVINO refuses the same reshape
        model.reshape({"x": ov.PartialShape([2, 3, 8])})


def test_reshape_effect_names_the_gather_whose_batch_dims_clash():
    from ovgather.passes.reshape import reshape_effect
    from ovgather.runtime.interop import from_openvino

    effect = reshape_effect(from_openvino(_reshape_model(False, batch_dims=1)), {"x": "[5,3,8]"})
    assert [(r["name"], r["status"]) for r in effect["stopped"]] == [("gnd", "invalid")]
    assert "batch" in effect["stopped"][0]["why"].lower()


def test_reshape_effect_names_a_hard_coded_target_that_swallows_the_change():
    import openvino as ov

    from ovgather.passes.reshape import reshape_effect
    from ovgather.runtime.interop import from_openvino

    model = _reshape_model(hard=True)
    effect = reshape_effect(from_openvino(model), {"x": "[3,1,8]"})  # 24 elements still
    model.reshape({"x": ov.PartialShape([3, 1, 8])})  # OpenVINO accepts it …
    ops = {op.get_friendly_name(): op for op in model.get_ops()}
    assert str(ops["flatten"].get_output_partial_shape(0)) == "[1,24]"  # … and keeps [1,24]
    assert [(r["name"], r["status"]) for r in effect["stopped"]] == [("flatten", "ok")]
    assert [r["name"] for r in effect["changed"]] == ["x"]


def test_cli_check_shape_names_the_layer_that_stops_the_reshape(tmp_path, capsys):
    import openvino as ov

    xml = tmp_path / "hard.xml"
    ov.save_model(_reshape_model(hard=True), str(xml), compress_to_fp16=False)
    code = main(["check", str(xml), "--shape", "x=[2,3,8]", "--json"])
    effect = json.loads(capsys.readouterr().out)["models"][0]["reshape"]
    assert code == 1  # the hard-coded Reshape is invalid under the override
    assert [r["name"] for r in effect["stopped"]] == ["flatten"]
    assert [r["name"] for r in effect["changed"]] == ["x"]
    main(["check", str(xml), "--shape", "x[2,3,8]"])
    assert "stopped at flatten (Reshape, invalid)" in capsys.readouterr().out


def test_a_state_key_is_refused_by_reshape_and_nothing_is_written(tmp_path, capsys):
    # check and stats take a state's variable_id (the cache it holds at run time); a
    # reshape sets input shapes, and a ReadValue's declared dims follow them
    xml = Path(__file__).resolve().parents[2] / "ir_corpus/llama_kv/pytorch_stateful.xml"
    state = next(a["data"]["variable_id"] for _, a in read_ir(str(xml)).nodes(data=True)
                 if a["type"] == "ReadValue")
    out = tmp_path / "out.xml"
    code = main(["reshape", str(xml), "--shape", f"{state}=[1,2,4,8]", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.startswith("error:") and f"'{state}' names a state" in err
