"""GatherND 5 ⇄ 8 conversion, judged by OpenVINO.

Models are built with OpenVINO's own Python API (not ovgather), saved as IR, converted
by ovgather and read back by ``openvino.Core().read_model``. Each converted model must
compile on CPU, hold only GatherND layers of the requested version, and give outputs
(names and values) ``np.array_equal`` to the original's for random valid inputs, for
several concrete sizes of every dynamic dim.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset5 as ov5
import openvino.opset8 as ov8
import pytest

from ovgather.ir import read_ir, write_ir
from ovgather.passes import ConvertGatherND, convert_gather_nd
from ovgather.runtime.core import cpu_config

CORE = ov.Core()
ROOT = Path(__file__).resolve().parents[2]

#: concrete batch sizes tried for dynamic/interval batch dims (inside 1..4).
BATCH_VARIANTS = [(2, 3, 2), (1, 4, 3), (3, 1, 1)]
REST = (4, 5, 3)  # data dims after the batch dims


# ---- model builders (OpenVINO API) ---------------------------------------------------------
def _dim(kind: str, size: int) -> ov.Dimension:
    return {"static": ov.Dimension(size), "dynamic": ov.Dimension(),
            "interval": ov.Dimension(1, 4)}[kind]


def _gather_nd(version: int, data, indices, b: int):
    return (ov5 if version == 5 else ov8).gather_nd(data, indices, b)


def _named_outputs(node, name: str) -> list:
    """GatherND output to a Result and through Multiply(x, 2) to a second Result."""
    node.get_output_tensor(0).set_names({name})
    twice = ov8.multiply(node, ov8.constant(np.float32(2)))
    twice.get_output_tensor(0).set_names({f"{name}_x2"})
    return [ov8.result(node), ov8.result(twice)]


def single_model(version: int, b: int, kind: str, const_indices: bool, k: int):
    """data [B..., 4, 5, 3] and indices [B..., 3, k]; one GatherND with batch_dims b."""
    batch = [_dim(kind, s) for s in BATCH_VARIANTS[0][:b]]
    data = ov8.parameter(ov.PartialShape(batch + list(REST)), np.float32, name="data")
    params = [data]
    if const_indices:
        indices = ov8.constant(_indices(np.random.default_rng(7), BATCH_VARIANTS[0][:b], k))
    else:
        indices = ov8.parameter(ov.PartialShape(batch + [3, k]), np.int32, name="ids")
        params.append(indices)
    gnd = _gather_nd(version, data, indices, b)
    return ov.Model(_named_outputs(gnd, "gnd"), params, "single")


def chain_model(version: int, kind: str):
    """Two GatherND in a chain (b=2, then b=3 for v8 / b=2 for v5) plus a b=0 one."""
    batch = [_dim(kind, s) for s in BATCH_VARIANTS[0][:2]]
    data = ov8.parameter(ov.PartialShape(batch + list(REST)), np.float32, name="data")
    ids = ov8.parameter(ov.PartialShape(batch + [3, 1]), np.int32, name="ids")
    first = _gather_nd(version, data, ids, 2)  # v8 [B0,B1,3,5,3]; v5 [B0*B1,3,5,3]
    if version == 8:
        lead, b2 = batch, 3
    else:
        lead, b2 = [ov.Dimension(6) if kind == "static" else ov.Dimension()], 2
    ids2 = ov8.parameter(ov.PartialShape(lead + [3, 2, 1]), np.int32, name="ids2")
    second = _gather_nd(version, first, ids2, b2)  # gathers along the dim of size 5
    side = _gather_nd(version, data, ov8.constant(np.array([[0, 1]], np.int32)), 0)
    outputs = _named_outputs(second, "chain") + _named_outputs(side, "side")
    return ov.Model(outputs, [data, ids, ids2], f"chain{version}")


def _indices(rng, batch, k: int, rows: int = 3, dims=REST) -> np.ndarray:
    """Valid indices [batch..., rows, k] into ``dims[:k]`` (negative ones included)."""
    cols = [rng.integers(-dims[j], dims[j], size=(*batch, rows)) for j in range(k)]
    return np.stack(cols, axis=-1).astype(np.int32)


def _inputs(model: ov.Model, batch, rng) -> dict[str, np.ndarray]:
    """Concrete valid inputs for ``model`` with batch sizes ``batch``."""
    feeds = {}
    for param in model.get_parameters():
        name, shape = param.get_friendly_name(), param.get_output_partial_shape(0)
        rank = shape.rank.get_length()
        if name == "data":
            feeds[name] = rng.standard_normal((*batch[: rank - 3], *REST)).astype(np.float32)
        elif name == "ids":
            feeds[name] = _indices(rng, batch[: rank - 2], shape[rank - 1].get_length())
        elif rank == 5:  # chain v8: ids2 [B0,B1,3,2,1] into the dim of size 5
            feeds[name] = _indices(rng, (*batch[:2], 3), 1, rows=2, dims=(5,))
        else:  # chain v5: ids2 [B0*B1,3,2,1]
            feeds[name] = _indices(rng, (batch[0] * batch[1], 3), 1, rows=2, dims=(5,))
    return feeds


# ---- the oracle ------------------------------------------------------------------------------
def _run(model: ov.Model, feeds) -> dict[str, np.ndarray]:
    compiled = CORE.compile_model(model, "CPU", cpu_config())
    results = compiled(feeds)
    return {",".join(sorted(out.get_names())): results[out] for out in compiled.outputs}


def _gather_versions(model: ov.Model) -> set[str]:
    return {op.get_type_info().version_id for op in model.get_ordered_ops()
            if op.get_type_name() == "GatherND"}


def _convert_file(src: Path, dst: Path, to: str) -> list[dict]:
    """Convert ``src`` into ``dst`` and prove ``ovgather check`` exits 0 on it."""
    from ovgather.cli import main

    G = read_ir(src)
    changes = convert_gather_nd(G, to=to)
    write_ir(G, dst)
    assert main(["check", "--json", str(dst)]) == 0
    return changes


def _variants(kind: str, b: int) -> list[tuple[int, ...]]:
    return BATCH_VARIANTS[:1] if kind == "static" or b == 0 else BATCH_VARIANTS


def assert_same_outputs(original: ov.Model, converted: ov.Model, kind: str, b: int,
                        const_indices: bool = False) -> None:
    rng = np.random.default_rng(2026)
    variants = BATCH_VARIANTS[:1] if const_indices else _variants(kind, b)
    for batch in variants:
        feeds = _inputs(original, batch, rng)
        want, got = _run(original, feeds), _run(converted, feeds)
        assert got.keys() == want.keys()
        for name in want:
            assert got[name].shape == want[name].shape, (name, batch)
            assert np.array_equal(got[name], want[name]), (name, batch)


SINGLE_CASES = [
    (version, b, kind, const, 1 + (b + version) % 2)
    for version, b, kind, const in itertools.product(
        (5, 8), (0, 1, 2, 3), ("static", "dynamic", "interval"), (False, True))
]


@pytest.mark.parametrize("to", ["opset5", "opset8"])
@pytest.mark.parametrize("version,b,kind,const,k", SINGLE_CASES,
                         ids=[f"v{v}-b{b}-{kind}-{'const' if c else 'param'}-k{k}"
                              for v, b, kind, c, k in SINGLE_CASES])
def test_convert_single_gather_nd_keeps_outputs(tmp_path, to, version, b, kind, const, k):
    model = single_model(version, b, kind, const, k)
    ov.save_model(model, tmp_path / "in.xml")
    changes = _convert_file(tmp_path / "in.xml", tmp_path / "out.xml", to)
    original = CORE.read_model(tmp_path / "in.xml")
    converted = CORE.read_model(tmp_path / "out.xml")
    assert _gather_versions(converted) == {to}
    assert len(changes) == (0 if f"opset{version}" == to else 1)
    if changes:
        assert bool(changes[0]["inserted"]) == (b > 1)
    assert_same_outputs(original, converted, kind, b, const)


@pytest.mark.parametrize("to", ["opset5", "opset8"])
@pytest.mark.parametrize("version", [5, 8])
@pytest.mark.parametrize("kind", ["static", "dynamic", "interval"])
def test_convert_chain_of_gather_nd_keeps_outputs(tmp_path, to, version, kind):
    model = chain_model(version, kind)
    ov.save_model(model, tmp_path / "in.xml")
    _convert_file(tmp_path / "in.xml", tmp_path / "out.xml", to)
    converted = CORE.read_model(tmp_path / "out.xml")
    assert _gather_versions(converted) == {to}
    assert_same_outputs(CORE.read_model(tmp_path / "in.xml"), converted, kind, 2)


@pytest.mark.parametrize("start,there", [("opset8", "opset5"), ("opset5", "opset8")])
@pytest.mark.parametrize("kind", ["static", "dynamic", "interval"])
def test_round_trip_gives_the_original_outputs(tmp_path, start, there, kind):
    model = single_model(int(start[-1]), 2, kind, False, 1)
    ov.save_model(model, tmp_path / "a.xml")
    _convert_file(tmp_path / "a.xml", tmp_path / "b.xml", there)
    _convert_file(tmp_path / "b.xml", tmp_path / "c.xml", start)
    back = CORE.read_model(tmp_path / "c.xml")
    assert _gather_versions(back) == {start}
    assert_same_outputs(CORE.read_model(tmp_path / "a.xml"), back, kind, 2)


@pytest.mark.parametrize("to", ["opset5", "opset8"])
@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_converting_twice_changes_nothing_the_second_time(tmp_path, to, kind):
    ov.save_model(chain_model(13 - int(to[-1]), kind), tmp_path / "in.xml")
    G = read_ir(tmp_path / "in.xml")
    first = ConvertGatherND(to).call(G)
    nodes, edges = dict(G.nodes(data="name")), sorted(G.edges(keys=True))
    second = ConvertGatherND(to).call(G)
    assert first.modified and not second.modified and second.changes == []
    assert dict(G.nodes(data="name")) == nodes and sorted(G.edges(keys=True)) == edges


def test_batch_dims_one_only_changes_the_version(tmp_path):
    ov.save_model(single_model(8, 1, "dynamic", False, 2), tmp_path / "in.xml")
    G = read_ir(tmp_path / "in.xml")
    before = len(G)
    changes = convert_gather_nd(G, to="opset5")
    assert len(G) == before and changes[0]["inserted"] == []
    assert changes[0]["from"] == "opset8" and changes[0]["to"] == "opset5"


def test_static_batch_uses_a_const_target_and_dynamic_one_shape_of(tmp_path):
    for kind, expect in (("static", {"Const", "Reshape"}),
                         ("dynamic", {"ShapeOf", "StridedSlice", "Concat", "Reshape"})):
        ov.save_model(single_model(8, 2, kind, False, 1), tmp_path / "in.xml")
        G = read_ir(tmp_path / "in.xml")
        [change] = convert_gather_nd(G, to="opset5")
        assert expect <= {c["type"] for c in change["inserted"]}
        assert ("ShapeOf" in {c["type"] for c in change["inserted"]}) == (kind == "dynamic")


def test_reshape_takes_the_names_of_the_converted_layer(tmp_path):
    ov.save_model(single_model(8, 3, "interval", False, 1), tmp_path / "in.xml")
    G = read_ir(tmp_path / "in.xml")
    gnd = next(n for n, t in G.nodes(data="type") if t == "GatherND")
    name = G.nodes[gnd]["name"]
    [change] = convert_gather_nd(G, to="opset5")
    reshape = next(c["id"] for c in change["inserted"] if c["type"] == "Reshape")
    assert G.nodes[reshape]["name"] == name
    assert G.nodes[reshape]["outputs"][0]["names"] == ["gnd"]
    assert G.nodes[gnd]["outputs"][0]["names"] == [] and G.nodes[gnd]["name"] == f"{name}/v5"
    write_ir(G, tmp_path / "out.xml")
    out = CORE.read_model(tmp_path / "out.xml")
    producers = {r.input_value(0).get_node().get_friendly_name() for r in out.get_results()}
    assert name in producers


def test_unknown_target_is_an_error():
    from ovgather.errors import RewriteError

    with pytest.raises(RewriteError, match="opset5' or 'opset8"):
        ConvertGatherND("opset7")


# ---- the command line ----------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ovgather", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_cli_convert_writes_out_and_reports_json(tmp_path):
    import json

    ov.save_model(single_model(8, 2, "dynamic", False, 1), tmp_path / "in.xml")
    done = _cli("convert", str(tmp_path / "in.xml"), "--to", "opset5",
                "-o", str(tmp_path / "out.xml"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [c["to"] for c in report["converted"]] == ["opset5"]
    assert "Reshape" in {c["type"] for c in report["converted"][0]["inserted"]}
    assert _gather_versions(CORE.read_model(tmp_path / "out.xml")) == {"opset5"}
    check = _cli("check", str(tmp_path / "out.xml"))
    assert check.returncode == 0, check.stdout + check.stderr


def test_cli_refuses_to_overwrite_the_input_without_in_place(tmp_path):
    ov.save_model(single_model(8, 2, "static", False, 1), tmp_path / "in.xml")
    before = (tmp_path / "in.xml").read_bytes()
    done = _cli("convert", str(tmp_path / "in.xml"), "--to", "opset5",
                "-o", str(tmp_path / "in.xml"))
    assert done.returncode == 2 and done.stderr.startswith("error:")
    assert (tmp_path / "in.xml").read_bytes() == before
    done = _cli("convert", str(tmp_path / "in.xml"), "--to", "opset5",
                "-o", str(tmp_path / "in.xml"), "--in-place")
    assert done.returncode == 0, done.stderr
    assert _gather_versions(CORE.read_model(tmp_path / "in.xml")) == {"opset5"}


def test_cli_failed_write_leaves_no_out_file(tmp_path):
    ov.save_model(single_model(8, 2, "static", False, 1), tmp_path / "in.xml")
    out = tmp_path / "missing_dir" / "out.xml"
    done = _cli("convert", str(tmp_path / "in.xml"), "--to", "opset5", "-o", str(out))
    assert done.returncode == 2
    assert done.stderr.startswith("error:") and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists() and not out.with_suffix(".bin").exists()


def test_cli_invalid_layer_exits_1_and_writes_nothing(tmp_path):
    ov.save_model(single_model(8, 2, "static", False, 1), tmp_path / "in.xml")
    text = (tmp_path / "in.xml").read_text().replace('batch_dims="2"', 'batch_dims="-1"')
    (tmp_path / "bad.xml").write_text(text)
    (tmp_path / "bad.bin").write_bytes((tmp_path / "in.bin").read_bytes())
    out = tmp_path / "out.xml"
    done = _cli("convert", str(tmp_path / "bad.xml"), "--to", "opset5", "-o", str(out))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error:") and "batch_dims" in done.stderr
    assert not out.exists() and not out.with_suffix(".bin").exists()


# ---- every ir_samples/ model -----------------------------------------------------------------
SAMPLES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "ir_samples").rglob("*.xml"))
_PASS_THROUGH = {"Convert", "Broadcast", "Reshape", "Squeeze", "Unsqueeze"}


def _concrete(shape: ov.PartialShape, size: int, any_rank: list[int]) -> list[int]:
    """``shape`` with every dynamic dim set to ``size`` clamped into its bounds."""
    if shape.rank.is_dynamic:
        return list(any_rank)
    out = []
    for dim in shape:
        if dim.is_static:
            out.append(dim.get_length())
            continue
        hi = dim.get_max_length()
        out.append(max(dim.get_min_length(), 1, min(size, hi if hi >= 0 else size)))
    return out


def _index_bounds(output: ov.Output) -> np.ndarray | None:
    """The exclusive upper bound of valid values for a tensor used as gather indices
    (per column for GatherND), following Convert/Broadcast/Reshape; None if unused so."""
    bounds = []
    for target in output.get_target_inputs():
        node, port = target.get_node(), target.get_index()
        kind = node.get_type_name()
        if kind in _PASS_THROUGH and port == 0:
            found = _index_bounds(node.output(0))
        elif port != 1 or kind not in ("GatherND", "Gather", "GatherElements"):
            continue
        else:
            found = _bound_at(node, output)
        if found is not None:
            bounds.append(found)
    return None if not bounds else np.minimum.reduce(np.broadcast_arrays(*bounds))


def _const_indices_fit(model: ov.Model) -> bool:
    """False when a Const index of a gather-family op is out of range at these sizes
    (the original would read out of bounds: OpenVINO does not check)."""
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        source = node.input_value(1).get_node() if node.get_input_size() > 1 else None
        if kind not in ("GatherND", "Gather", "GatherElements") or (
                source.get_type_name() != "Constant"):
            continue
        bound = _bound_at(node, node.input_value(1))
        if not np.all(source.get_data() < bound):
            return False
    return True


def _bound_at(node: ov.Node, indices: ov.Output) -> np.ndarray:
    """The exclusive bound of valid indices of gather-family ``node`` (static shapes)."""
    data = list(node.input(0).get_shape())
    if node.get_type_name() == "GatherND":
        b, k = node.get_attributes()["batch_dims"], indices.get_shape()[-1]
        return np.array(data[b:b + k])
    axis = (node.get_attributes()["axis"] if node.get_type_name() == "GatherElements"
            else int(node.input_value(2).get_node().get_data()))
    return np.array(data[axis])


def _sample_feeds(xml: str, size: int, rng) -> dict[str, np.ndarray] | None:
    """Valid inputs for a sample with dynamic dims set to ``size`` (None if impossible)."""
    model = CORE.read_model(ROOT / xml)
    concrete = {p.get_friendly_name(): _concrete(p.get_output_partial_shape(0), size,
                                                 [2, size, size])
                for p in model.get_parameters()}
    try:
        model.reshape({p.output(0): ov.PartialShape(concrete[p.get_friendly_name()])
                       for p in model.get_parameters()})
    except RuntimeError:
        return None
    if not _const_indices_fit(model):
        return None
    feeds = {}
    for p in model.get_parameters():
        shape, dtype = concrete[p.get_friendly_name()], p.get_element_type().to_dtype()
        bound = _index_bounds(p.output(0)) if np.issubdtype(dtype, np.integer) else None
        if bound is not None:
            feeds[p.get_friendly_name()] = (rng.random(shape) * bound).astype(dtype)
        elif np.issubdtype(dtype, np.integer):
            feeds[p.get_friendly_name()] = rng.integers(-50, 50, shape).astype(dtype)
        else:
            feeds[p.get_friendly_name()] = rng.standard_normal(shape).astype(dtype)
    return feeds


@pytest.mark.parametrize("to", ["opset5", "opset8"])
@pytest.mark.parametrize("sample", SAMPLES)
def test_convert_every_sample(tmp_path, capsys, sample, to):
    from ovgather.cli import main

    out = tmp_path / "out.xml"
    code = main(["convert", str(ROOT / sample), "--to", to, "-o", str(out), "--json"])
    if Path(sample).name.startswith("wrong_"):  # declared dims contradict the rules
        assert code == 1 and not out.exists() and not out.with_suffix(".bin").exists()
        return
    outs = capsys.readouterr()
    assert code == 0, outs.err
    if json.loads(outs.out)["output"] is None:  # no GatherND to convert: nothing written
        assert not out.exists() and _gather_versions(CORE.read_model(ROOT / sample)) <= {to}
        return
    converted = CORE.read_model(out)
    assert _gather_versions(converted) <= {to}
    assert main(["check", str(out)]) == 0, capsys.readouterr().out
    if all(p.get_output_partial_shape(0).rank.is_static for p in converted.get_parameters()):
        # the CPU plugin refuses dynamic-rank inputs
        CORE.compile_model(converted, "CPU", cpu_config())
    original = CORE.read_model(ROOT / sample)
    rng, compared = np.random.default_rng(11), 0
    for size in (3, 2, 4):
        feeds = _sample_feeds(sample, size, rng)
        if feeds is None:  # OpenVINO itself rejects these sizes for the original
            continue
        want, got = _run(original, feeds), _run(converted, feeds)
        assert got.keys() == want.keys()
        for name in want:
            assert np.array_equal(got[name], want[name], equal_nan=True), (name, size)
        compared += 1
    # dynamic_rank's 'gather_nd5_open_tuple' has data batch 2 against indices batch 4:
    # no input fits it, so OpenVINO cannot run that sample at any size
    assert compared >= 1 or Path(sample).name == "dynamic_rank.xml"


# ---- generated random models (tools/gen_models.py) ------------------------------------------
@pytest.mark.parametrize("to", ["opset5", "opset8"])
@pytest.mark.parametrize("seed", range(24))
def test_convert_random_models(tmp_path, seed, to):
    from gen_models import random_inputs, random_model

    from ovgather.infer import check

    model = random_model(seed)
    ov.save_model(model, tmp_path / "in.xml", compress_to_fp16=False)
    _convert_file(tmp_path / "in.xml", tmp_path / "out.xml", to)
    assert check(read_ir(tmp_path / "out.xml")).ok
    original = CORE.read_model(tmp_path / "in.xml")
    converted = CORE.read_model(tmp_path / "out.xml")
    assert _gather_versions(converted) <= {to}
    feeds = random_inputs(model, seed)  # in Parameter order, which conversion keeps
    want, got = _run(original, feeds), _run(converted, feeds)
    assert got.keys() == want.keys()
    for name in want:
        assert np.array_equal(got[name], want[name]), name


@pytest.mark.parametrize("to,version", [("opset5", 8), ("opset8", 5)])
def test_open_tuple_length_converts_with_run_time_shapes(tmp_path, to, version):
    """indices [?,3,6,?] make the output rank unknown: every target part is ShapeOf-based."""
    data = ov8.parameter(ov.PartialShape([-1, 3, 4, 5]), np.float32, name="data")
    ids = ov8.parameter(ov.PartialShape([-1, 3, 6, -1]), np.int32, name="ids")
    gnd = _gather_nd(version, data, ids, 2)
    ov.save_model(ov.Model(_named_outputs(gnd, "gnd"), [data, ids], "open"), tmp_path / "in.xml")
    _convert_file(tmp_path / "in.xml", tmp_path / "out.xml", to)
    assert _gather_versions(CORE.read_model(tmp_path / "out.xml")) == {to}
    rng = np.random.default_rng(3)
    for batch, k in ((2, 1), (3, 2), (1, 2)):
        feeds = {"data": rng.standard_normal((batch, 3, 4, 5)).astype(np.float32),
                 "ids": _indices(rng, (batch, 3), k, rows=6, dims=(4, 5))}
        # the CPU plugin runs no dynamic-rank GatherND: fix the input shapes first
        original, converted = (CORE.read_model(tmp_path / f) for f in ("in.xml", "out.xml"))
        for model in (original, converted):
            model.reshape({name: list(value.shape) for name, value in feeds.items()})
        want, got = _run(original, feeds), _run(converted, feeds)
        for name in want:
            assert np.array_equal(got[name], want[name]), (name, batch, k)


def test_a_bad_layer_stops_the_pass_before_any_edit(tmp_path):
    from ovgather.errors import ShapeInferenceError

    ov.save_model(chain_model(8, "static"), tmp_path / "in.xml")
    G = read_ir(tmp_path / "in.xml")
    layers = sorted(n for n, t in G.nodes(data="type") if t == "GatherND")
    G.nodes[layers[-1]]["data"]["batch_dims"] = "x"
    before = {n: (dict(a["data"]), a["version"], a["name"]) for n, a in G.nodes(data=True)}
    # the same error as everywhere the rule runs (check reports it as an invalid layer)
    with pytest.raises(ShapeInferenceError, match="batch_dims") as info:
        convert_gather_nd(G, to="opset5")
    assert info.value.layer_id == layers[-1] and info.value.line is not None
    assert {n: (dict(a["data"]), a["version"], a["name"]) for n, a in G.nodes(data=True)} == before


@pytest.mark.parametrize("start,there", [("opset8", "opset5"), ("opset5", "opset8")])
def test_static_round_trip_gives_back_the_original_graph(tmp_path, start, there):
    ov.save_model(single_model(int(start[-1]), 3, "static", False, 1), tmp_path / "a.xml")
    G = read_ir(tmp_path / "a.xml")
    original = {n: (a["type"], a["version"], a["name"], a["data"].get("batch_dims"),
                    [p["names"] for p in a["outputs"]], [p["dims"] for p in a["outputs"]])
                for n, a in G.nodes(data=True)}
    edges = sorted(G.edges(keys=True))
    convert_gather_nd(G, to=there)
    [change] = convert_gather_nd(G, to=start)
    assert {c["type"] for c in change["removed"]} == {"Reshape", "Const"}
    assert change["inserted"] == []
    back = {n: (a["type"], a["version"], a["name"], a["data"].get("batch_dims"),
                [p["names"] for p in a["outputs"]], [p["dims"] for p in a["outputs"]])
            for n, a in G.nodes(data=True)}
    assert back == original and sorted(G.edges(keys=True)) == edges
    write_ir(G, tmp_path / "c.xml")
    assert_same_outputs(CORE.read_model(tmp_path / "a.xml"), CORE.read_model(tmp_path / "c.xml"),
                        "static", 3)


@pytest.mark.parametrize("sample", ["gather_nd8_bd2", "gather_nd8_bd3", "gather_nd5_bd2",
                                    "gather_nd5_bd3", "gather_nd8_bd0", "mixed_ops"])
@pytest.mark.parametrize("to", ["opset5", "opset8"])
def test_output_tensor_names_stay_on_what_produces_the_output(sample, to, tmp_path):
    """As OpenVINO reads both models: every output keeps its tensor names, and the layer
    producing it keeps the friendly name the original's producer had."""
    path = ROOT / "ir_samples" / f"{sample}.xml"
    G = read_ir(path)
    convert_gather_nd(G, to=to)
    write_ir(G, tmp_path / "out.xml")
    before, after = CORE.read_model(str(path)), CORE.read_model(tmp_path / "out.xml")

    def outputs(model):
        return sorted((sorted(r.input_value(0).get_names()),
                       r.input_value(0).get_node().get_friendly_name())
                      for r in model.get_results())

    assert outputs(after) == outputs(before)
    gathers = [n for n in after.get_ordered_ops() if n.get_type_name() == "GatherND"]
    assert all(n.get_type_info().version_id == to for n in gathers)
