"""A reshape to a dynamic dim is proved across its range, and says what it tried.

OpenVINO's ``Model.reshape`` is the anchor for what it accepts: each refusal here is a
model OpenVINO reshapes to ``?`` but refuses at a static size inside the range.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovgather import errors
from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.passes.reshape import reshape
from ovgather.passes.reshape_range import probes
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
VIT = ROOT / "ir_corpus/vit/pytorch_static.xml"
GPT2 = ROOT / "ir_corpus/gpt2/onnx_static.xml"
CORE = ov.Core()


def test_a_dynamic_batch_that_only_works_at_the_old_size_blocks():
    model = CORE.read_model(str(VIT))
    model.reshape({"pixel_values": ov.PartialShape("[?,3,32,32]")})  # OpenVINO takes it
    G = read_ir(VIT)
    with pytest.raises(errors.ReshapeError) as err:
        reshape(G, {"pixel_values": "[?,3,32,32]"})
    row = err.value.blockers[0]
    assert row["type"] == "Concat" and row["sizes"] == {"pixel_values": "[2,3,32,32]"}
    static = CORE.read_model(str(VIT))
    with pytest.raises(RuntimeError):
        static.reshape({"pixel_values": ov.PartialShape(row["sizes"]["pixel_values"])})


def test_probes_cover_old_size_small_sizes_and_bounds_of_widened_dims_only():
    G = read_ir(VIT)
    got = [p.shapes["pixel_values"] for p in probes(G, {"pixel_values": "[1..6,3,32,32]"})]
    assert [str(s) for s in got] == ["[1,3,32,32]", "[2,3,32,32]", "[3,3,32,32]",
                                     "[6,3,32,32]"]
    assert probes(G, {"pixel_values": "[2,3,32,32]"}) == []  # static: checked as it is
    dynamic = read_ir(ROOT / "ir_samples/dynamic_gathers.xml")  # `?` there already
    assert probes(dynamic, {"data": "[?,2..8,10,1..,4]"}) == []


def test_blocked_with_fix_lists_the_fixes_tried_and_one_plain_hint_per_blocker(capsys):
    xml = ROOT / "ir_corpus/swin/onnx_static.xml"
    code = main(["reshape", str(xml), "--shape", "pixel_values[?,3,40,40]", "--fix",
                 "--dry-run"])
    out = capsys.readouterr().out
    assert code == 1
    assert "fix (tried, not kept): Reshape" in out
    assert out.count("  hint: ") == out.count("blocked: ")
    assert "--fix rewrites it" not in out
    code = main(["reshape", str(xml), "--shape", "pixel_values[?,3,40,40]", "--fix",
                 "--dry-run", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["fixes"] and not doc["modified"]
    assert all("sizes" in row for row in doc["blocked"])


def test_an_input_left_out_that_shares_the_batch_is_named(capsys):
    # the mask left at batch 1 broadcasts over the ids: it reshapes, with a warning
    code = main(["reshape", str(GPT2), "--shape", "input_ids[2,12]", "--fix", "--dry-run",
                 "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and len(doc["warnings"]) == 1
    assert "'attention_mask'" in doc["warnings"][0] and "dim 0" in doc["warnings"][0]
    # both at batch 2: the static export gathers the mask with indices that pick row 0;
    # the fix makes each row pick its own and the runtime proof passes (no warning)
    code = main(["reshape", str(GPT2), "--shape", "input_ids[2,12],attention_mask[2,12]",
                 "--fix", "--dry-run", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and not doc["warnings"], doc["warnings"]
    assert any(fx["type"] == "GatherND" for fx in doc["fixes"])
    assert doc["runtime_proof"]["ran"] and doc["runtime_proof"]["differs"] is None


# ---- constant indices that a new data size leaves pointing past the data -----------------
def _static_samples() -> list[Path]:
    found = []
    for xml in sorted((ROOT / "ir_samples").rglob("*.xml")):
        shapes = [i.get_partial_shape() for i in CORE.read_model(str(xml)).inputs]
        if all(s.is_static and s.rank.get_length() for s in shapes):
            found.append(xml)
    return found


def _past_data(model: ov.Model) -> list[str]:
    """The gather layers of ``model`` (reshaped by OpenVINO) whose Constant indices reach
    past their data, by the OpenVINO specification's addressing: GatherND column c
    indexes data dim batch_dims + c, Gather and GatherElements their axis."""
    found = []
    for op in model.get_ordered_ops():
        kind = op.get_type_name()
        source = op.input_value(1).get_node() if op.get_input_size() > 1 else None
        if kind not in ("GatherND", "Gather", "GatherElements") \
                or source.get_type_name() != "Constant":
            continue
        indices = np.array(source.get_data()).astype(np.int64)
        data = op.get_input_partial_shape(0)
        if not indices.size or not data.is_static:
            continue
        dims = [d.get_length() for d in data]
        if kind == "GatherND":
            bd = op.get_attributes()["batch_dims"]
            cols = indices.reshape(-1, indices.shape[-1])
            pairs = [(cols[:, c], dims[bd + c]) for c in range(cols.shape[1])]
        else:
            axis = (int(np.array(op.input_value(2).get_node().get_data()).ravel()[0])
                    if kind == "Gather" else op.get_attributes()["axis"])
            pairs = [(indices, dims[axis])]
        if any(v.max() >= n or v.min() < -n for v, n in pairs):
            found.append(op.get_friendly_name())
    return found


@pytest.mark.parametrize("batch", ["3", "?"])
@pytest.mark.parametrize("xml", _static_samples(), ids=lambda p: p.stem)
def test_constant_indices_past_the_new_data_block_the_reshape(xml, batch, capsys):
    """Dim 0 of every input set to 3 (or ``?``, probed at 1, 2, 3): exit 1 names exactly
    the layers whose constant indices then reach past their data (the CPU plugin reads
    out of bounds there; shape inference, OpenVINO's too, lets them pass)."""
    model = CORE.read_model(str(xml))
    shapes = {i.get_any_name(): "[" + ",".join(
        [batch] + [str(d) for d in i.get_partial_shape().to_shape()[1:]]) + "]"
        for i in model.inputs}
    args = ["reshape", str(xml), "--dry-run", "--json"]
    for name, shape in shapes.items():
        args += ["--shape", f"{name}={shape}"]
    code = main(args)
    doc = json.loads(capsys.readouterr().out)
    reaching = [row for row in doc["blocked"] if "out of bounds" in row["why"]]
    sizes = {**shapes, **(reaching[0].get("sizes", {}) if reaching else
                          {k: v.replace("?", "3") for k, v in shapes.items()})}
    try:
        model.reshape({k: ov.PartialShape(v) for k, v in sizes.items()})
    except RuntimeError:
        assert code == 1 and doc["blocked"]  # OpenVINO's shape inference refuses it too
        return
    assert sorted({row["name"] for row in reaching}) == sorted(set(_past_data(model)))
    assert code == (1 if doc["blocked"] else 0)


def _non_batch_samples() -> list[Path]:
    """Static samples whose dim 0 is no batch of 1, every input with the same dim 0."""
    found = []
    for xml in _static_samples():
        firsts = {i.get_partial_shape()[0].get_length() for i in CORE.read_model(str(xml)).inputs}
        if len(firsts) == 1 and firsts != {1}:
            found.append(xml)
    return found


@pytest.mark.parametrize("batch", ["3", "?"])
@pytest.mark.parametrize("xml", _non_batch_samples(), ids=lambda p: p.stem)
def test_a_reshape_of_dim_0_that_exits_0_runs_and_keeps_the_old_size(xml, batch, tmp_path,
                                                                      capsys):
    """Where dim 0 is no batch, exit 0 still promises that OpenVINO runs the written
    model at sizes inside the request (3; or the old size, 2 and 3 for ``?``) and that at
    the old size it computes what the original does."""
    from reshape_survey import _feeds, _run

    model = CORE.read_model(str(xml))
    old = model.inputs[0].get_partial_shape()[0].get_length()
    args = ["reshape", str(xml), "--fix", "--json", "-o", str(tmp_path / "out.xml")]
    for i in model.inputs:
        dims = [batch] + [str(d) for d in i.get_partial_shape().to_shape()[1:]]
        args += ["--shape", f"{i.get_any_name()}=[{','.join(dims)}]"]
    code = main(args)
    doc = json.loads(capsys.readouterr().out)
    if code == 1:  # the refusals are proved by the test above
        assert doc["blocked"]
        return
    written = CORE.compile_model(str(tmp_path / "out.xml"), "CPU", cpu_config())
    original = CORE.compile_model(model, "CPU", cpu_config())
    rng = np.random.default_rng(5)
    for size in ([3] if batch == "3" else [old, 2, 3]):
        feeds = _feeds(model, size, rng)
        got = _run(written, feeds)  # a failure to run raises
        if size == old:
            for a, b in zip(got, _run(original, feeds), strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _conv_stack(path: Path, kernels: list[int]) -> Path:
    """x [1,3,64,64] through unpadded convolutions of the given kernel sizes: the smallest
    image that passes is 1 + sum(k - 1)."""
    import openvino.opset8 as o

    x = o.parameter([1, 3, 64, 64], ov.Type.f32, name="x")
    y = x
    rng = np.random.default_rng(0)
    for k in kernels:
        w = o.constant(rng.standard_normal((3, 3, k, k)).astype(np.float32))
        y = o.convolution(y, w, [1, 1], [0, 0], [0, 0], [1, 1])
    ov.save_model(ov.Model([y], [x], "convs"), str(path))
    return path


@pytest.mark.parametrize("kernels", [[3], [5, 3], [7, 3, 3]])
def test_probes_stay_inside_an_open_range_and_a_minimum_size_is_named(tmp_path, kernels):
    least = 1 + sum(k - 1 for k in kernels)
    G = read_ir(_conv_stack(tmp_path / "convs.xml", kernels))
    for probe in probes(G, {"x": f"[1,3,{least}..,{least}..]"}):
        assert all(d.lo >= least for d in probe.shapes["x"].dims[2:])
    result = reshape(G, {"x": f"[1,3,{least}..,{least}..]"})  # probes at `least`: runs
    assert result.report is not None and not result.report.problems()
    with pytest.raises(errors.ReshapeError) as err:
        reshape(read_ir(tmp_path / "convs.xml"), {"x": "[1,3,1..,1..]"})
    assert f"at least {least}" in str(err.value), str(err.value)
    assert err.value.blockers[0]["least_size"] == least
