"""``validate --all-layers``: every layer's inferred shape proved on the OpenVINO CPU
runtime at two or three input sizes, one compile serving them all, and a wrong rule
caught by name."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import re
from pathlib import Path

import jsonschema
import numpy as np
import openvino as ov
import pytest

from ovgather.cli import main
from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.ops.core import registry
from ovgather.runtime.core import cpu_config
from ovgather.shapes import Dimension, PartialShape
from ovgather.validate import all_layers as prove
from ovgather.validate import input_sizes, prove_all_layers, runner

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
#: llama_deep is llama/pytorch_dynamic at 44 blocks instead of 2: the same layers proved 22
#: times over, the slowest proof of the suite (every port of it is checked against read_model
#: in tests/project/test_corpus.py, and it runs on the CPU plugin in tests/runtime/test_feeding.py)
CORPUS = sorted(p for p in (ROOT / "ir_corpus").rglob("*.xml") if p.parent.name != "llama_deep")
SCHEMA = json.loads((ROOT / "docs" / "schema" / "validate.json").read_text(encoding="utf-8"))
GATHERS = ("GatherND", "GatherElements", "Gather")
#: Its inputs admit no concrete sizes at all: a GatherND-5 with batch_dims 1 takes data of
#: batch 2 and indices of batch 4, which only a dynamic tuple length lets OpenVINO accept
#: as partial shapes; neither ovgather's rules nor the runtime accept any size.
NO_SIZE_RUNS = {"dynamic_rank.xml"}


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _proof_json(capsys, path) -> tuple[int, dict]:
    """``validate --all-layers --json`` on one model: its exit code and its report, the
    document checked against docs/schema/validate.json."""
    code, out, _ = _run(capsys, "validate", "--all-layers", "--json", str(path))
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return code, doc["models"][0]


def _dynamic(report: dict) -> bool:
    return any(not PartialShape.parse(t).is_static
               for lp in report["layers"] if lp["type"] == "Parameter" for t in lp["declared"])


def _off_by_one(op_type: str, version: str, monkeypatch) -> None:
    """Make ovgather's rule for ``op_type`` give its last output dim one too many."""
    right = registry.find(op_type, version)

    def wrong_rule(ins, attrs, trace=None):
        out = right.rule(ins, attrs, trace)[0]
        dims = out.shape.dims
        if not dims:
            return [out]
        return [type(out)(PartialShape.of(dims[:-1] + (dims[-1] + Dimension.static(1),)),
                          out.etype)]

    wrong = dataclasses.replace(right, rule=wrong_rule)
    find = registry.find
    monkeypatch.setattr(registry, "find",
                        lambda t, v: wrong if t == op_type else find(t, v))


# -- every model ------------------------------------------------------------------------------
@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_every_sample_is_proved_layer_by_layer(path, capsys):
    code, report = _proof_json(capsys, path)
    s = report["summary"]
    assert code == (1 if path.name in NO_SIZE_RUNS else 0), [
        lp for lp in report["layers"] if lp["status"].endswith("differ")]
    assert s["shape differs"] == s["values differ"] == 0 and s["proved"] == s["ok"] + s["looser"]
    if path.name in NO_SIZE_RUNS:  # a proof that proved nothing fails, and says why
        assert s["not run"] == s["layers"] and report["sizes"] == {}
        assert report["nothing_proved"]
        why = report["layers"][0]["message"]
        assert "ovgather's rules reject" in why and "nor does the runtime run" in why
        return
    # only the layers inside bodies (listed by path) are not run, and they say why
    inner = [lp for lp in report["layers"] if lp["status"] == "not run"]
    assert s["proved"] >= 1 and s["compiles"] == 1
    assert all("/" in lp["id"] and " inside a" in lp["message"] for lp in inner)
    assert len(inner) == sum("/" in lp["id"] for lp in report["layers"])
    assert len(report["sizes"]) >= (2 if _dynamic(report) else 1)
    for lp in report["layers"]:
        if lp["status"] == "ok":  # the real shape is the inferred one at every size run
            assert lp["real"] == lp["inferred"]
        if lp["type"] in GATHERS and "/" not in lp["id"]:  # and the values are checked
            assert lp["values"]["status"] in ("ok", "skipped"), lp
        else:
            assert lp["values"] is None


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(ROOT)) for p in CORPUS])
def test_every_corpus_model_is_proved_layer_by_layer(path, capsys):
    """Real transformer, vision and audio models (stateful LLM included), at two or three
    sizes on one compile: no layer's shape differs from the runtime's; only state writes
    are not run."""
    code, report = _proof_json(capsys, path)
    s = report["summary"]
    assert s["shape differs"] == s["values differ"] == 0, [
        lp for lp in report["layers"] if lp["status"].endswith("differ")]
    assert code == (1 if report["sizes failed"] else 0)
    for f in report["sizes failed"].values():  # an export that baked its batch in
        assert f["layers"] and _openvino_fails_at(path, f["sizes"]), f
    assert s["fails at a size"] == len({n for f in report["sizes failed"].values()
                                        for n in f["layers"]})
    assert all(_openvino_fails_at(path, sizes) is None for sizes in report["sizes"].values())
    assert s["unchecked"] == 0 and s["proved"] >= 0.95 * s["layers"] and s["compiles"] == 1
    assert all(lp["type"] == "Assign" and "state write" in lp["message"]
               for lp in report["layers"] if lp["status"] == "not run")
    assert len(report["sizes"]) >= (2 if _dynamic(report) else 1)
    assert s["values checked"] == sum(lp["type"] in GATHERS for lp in report["layers"])


@functools.lru_cache(maxsize=1)
def _compiled(xml: Path):
    """One compile of ``xml`` for the sizes a test runs it at one after the other (as
    validate serves them all from one compile)."""
    return ov.Core().compile_model(str(xml), "CPU", cpu_config())


def _openvino_fails_at(xml: Path, sizes: dict[str, str]) -> str | None:
    """OpenVINO's own error when it runs the IR on inputs of ``sizes`` (no ovgather):
    zeros for integers, random numbers for reals; None when it runs."""
    compiled = _compiled(xml)
    rng = np.random.default_rng(0)
    feeds = {}
    for port in compiled.inputs:
        shape = PartialShape.parse(sizes[port.get_node().get_friendly_name()]).to_list()
        dtype = port.get_element_type().to_dtype()
        feeds[port] = (rng.standard_normal(shape).astype(dtype) if dtype.kind == "f"
                       else np.zeros(shape, dtype))
    try:
        compiled.create_infer_request().infer(feeds)
    except RuntimeError as err:
        return str(err)
    return None


@pytest.mark.parametrize("path", [ROOT / "ir_samples" / "mixed_ops.xml",
                                  ROOT / "ir_corpus" / "swin" / "pytorch_dynamic.xml"],
                         ids=["mixed_ops", "swin"])
def test_the_summary_says_how_many_layers_were_proved(path, capsys):
    code, out, _ = _run(capsys, "validate", "--all-layers", str(path))
    text = " ".join(out.split())  # long lines wrap
    report = prove_all_layers(read_ir(path))
    s = report.summary
    assert code == 0 and text.startswith(f"{path}: {s['layers']} layers (all layers, ")
    assert f"input size(s), 1 compile(s), {s['values checked']} gather(s) agree" in text
    assert f": {s['proved']} proved; {s['ok']} ok" in text and s["proved"] > 0


# -- the sizes --------------------------------------------------------------------------------
def test_sizes_span_each_dims_bounds_and_agree_across_inputs():
    import networkx as nx

    G = nx.MultiDiGraph()
    G.add_node("0", name="ids", type="Parameter", data={"shape": "?,2..16"})
    G.add_node("1", name="mask", type="Parameter", data={"shape": "?,2..16"})
    sizes = input_sizes(G)
    assert list(sizes) == ["low", "mid", "high"]
    assert [str(v["ids"]) for v in sizes.values()] == ["[2,2]", "[9,9]", "[16,16]"]
    assert all(v["ids"] == v["mask"] for v in sizes.values())
    G.remove_node("1")
    G.nodes["0"]["data"]["shape"] = "?,3"  # unbounded: four times the lower bound
    assert [str(v["ids"]) for v in input_sizes(G).values()] == ["[1,3]", "[2,3]", "[4,3]"]


def test_a_dim_that_must_equal_a_static_dim_of_another_input_is_pinned():
    """GatherElements makes the batch of ``data`` equal the static 3 of ``ge_indices``: the
    batch axis is pinned to 3 while the other dynamic dims still take three sizes."""
    report = prove_all_layers(read_ir(ROOT / "ir_samples" / "dynamic_gathers.xml"))
    data = [PartialShape.parse(v["data"]).to_list() for v in report.sizes.values()]
    assert list(report.sizes) == ["low", "mid", "high"] and report.compiles == 1
    assert {d[0] for d in data} == {3} and [d[1] for d in data] == [2, 5, 8]
    assert report.ok and report.summary["proved"] == report.summary["layers"]


def test_when_only_larger_sizes_run_the_first_that_runs_is_grown():
    """The smallest images are refused (a 4x4 patch kernel): the first fallback that runs
    is grown, so every dynamic dim still runs at two sizes at least."""
    report = prove_all_layers(read_ir(ROOT / "ir_corpus" / "convnext" / "pytorch_dynamic.xml"))
    shapes = [PartialShape.parse(v["pixel_values"]).to_list() for v in report.sizes.values()]
    assert len(shapes) == 3 and report.compiles == 1 and report.ok
    assert all(len({s[axis] for s in shapes}) >= 2 for axis in (0, 2, 3))


def test_a_static_model_is_walked_at_its_one_size_only(monkeypatch):
    walks = []
    monkeypatch.setattr(prove, "check", lambda G, shapes=None: walks.append(shapes) or
                        check(G, shapes=shapes))
    report = prove_all_layers(read_ir(ROOT / "ir_samples" / "gather_nd8_bd3.xml"))
    assert list(report.sizes) == ["static"] and report.ok
    assert len(walks) == 2 and walks[0] is None  # the declared shapes, then the size run


def test_integer_inputs_are_zeros_so_every_index_stays_valid():
    # the runs happen in the runtime's worker process: the inputs are made there by
    # runner.feeds, asked here for the sizes the proof ran
    from ovgather.shapes import PartialShape
    from ovgather.validate.sizes import parameter_types

    G = read_ir(ROOT / "ir_samples" / "dynamic_gathers.xml")
    report = prove_all_layers(G)
    assert report.ok and len(report.sizes) >= 3
    for k, shapes in enumerate(report.sizes.values()):
        sizes = {n: PartialShape.parse(s) for n, s in shapes.items()}
        for name, a in runner.feeds(sizes, parameter_types(G), 0, k).items():
            if name == "data":
                assert a.dtype.kind == "f" and np.unique(a).size > 1
            else:  # indices of every gather: 0 is inside any dim a size can give
                assert a.dtype.kind in "iu" and not a.any()


# -- a wrong rule fails the proof -------------------------------------------------------------
def test_a_wrong_rule_is_caught_and_named_with_the_sizes(capsys, monkeypatch):
    """An off-by-one in MatMul's output (one column too many): the proof must fail, and
    name the MatMul and the Add that ovgather then rejects while the runtime runs it."""
    _off_by_one("MatMul", "opset1", monkeypatch)
    mixed = ROOT / "ir_samples" / "mixed_ops.xml"
    code, out, _ = _run(capsys, "validate", "--all-layers", str(mixed))
    assert code == 1
    text = " ".join(out.split())  # long lines wrap
    assert "shape differs fc_matmul (line 99, id 8, MatMul)" in text
    assert "shape differs fc_add" in text and "ovgather's rules reject the layer" in text
    code, report = _proof_json(capsys, mixed)
    bad = {lp["name"]: lp for lp in report["layers"] if lp["status"] == "shape differs"}
    assert code == 1 and set(bad) == {"fc_matmul", "fc_add"}
    matmul = bad["fc_matmul"]
    for label in ("low", "mid", "high"):  # the sizes where they differ, side by side
        assert f"at the {label} size: ovgather infers {matmul['inferred'][label][0]}, the " \
               f"runtime gives {matmul['real'][label][0]}" in matmul["message"]
        assert matmul["real"][label] != matmul["inferred"][label]


def test_an_off_by_one_in_convolution_is_caught_at_every_size(capsys, monkeypatch):
    _off_by_one("Convolution", "opset1", monkeypatch)
    resnet = ROOT / "ir_corpus" / "resnet" / "pytorch_dynamic.xml"
    code, report = _proof_json(capsys, resnet)
    assert code == 1 and list(report["sizes"]) == ["low", "mid", "high"]
    convs = [lp for lp in report["layers"] if lp["type"] == "Convolution"]
    assert len(convs) > 10 and all(lp["status"] == "shape differs" for lp in convs)
    for lp in convs:  # the sizes where they differ, inferred and real side by side
        for label in report["sizes"]:
            inferred, real = lp["inferred"][label][0], lp["real"][label][0]
            assert inferred != real and f"at the {label} size: ovgather infers {inferred}, " \
                                       f"the runtime gives {real}" in lp["message"]
    first = [PartialShape.parse(convs[0][k][label][0]).to_list()
             for k in ("inferred", "real") for label in report["sizes"]]
    assert [s[-1] for s in first[:3]] == [s[-1] + 1 for s in first[3:]]  # the input's conv
    code, out, _ = _run(capsys, "validate", "--all-layers", str(resnet))
    text = " ".join(out.split())
    assert code == 1 and all(f"shape differs {lp['name']} (line {lp['line']}, id {lp['id']}, "
                             f"Convolution)" in text for lp in convs)


# -- declared dims that are wrong -------------------------------------------------------------
def _runtime_shape(xml: Path, layer: str, sizes: dict[str, str]) -> str:
    """What OpenVINO itself gives at ``layer`` for inputs of ``sizes`` (no ovgather)."""
    model = ov.Core().read_model(str(xml))
    op = next(o for o in model.get_ops() if o.get_friendly_name() == layer)
    model.add_outputs([op.output(0)])
    compiled = ov.Core().compile_model(model, "CPU", cpu_config())
    rng = np.random.default_rng(0)
    feeds = []
    for p in model.get_parameters():
        shape = PartialShape.parse(sizes[p.get_friendly_name()]).to_list()
        dtype = p.get_element_type().to_dtype()
        feeds.append(rng.standard_normal(shape).astype(dtype) if dtype.kind == "f"
                     else np.zeros(shape, dtype))
    request = compiled.create_infer_request()
    request.infer(feeds)
    return "[" + ",".join(map(str, request.get_output_tensor(len(model.outputs) - 1).shape)) + "]"


WRONG = [p for p in SAMPLES if p.name.startswith("wrong_")]


@pytest.mark.parametrize("xml", WRONG, ids=[p.name for p in WRONG])
def test_wrong_declared_dims_show_declared_inferred_and_real(xml, capsys):
    code, out, _ = _run(capsys, "validate", "--all-layers", str(xml))
    assert code == 0  # the runtime agrees with ovgather; the IR's own dims are what is wrong
    rows = re.findall(r"declared wrong (\S+) \(id (\S+), \w+\): declared (\S+), inferred (\S+), "
                      r"real (\S+)", " ".join(out.split()))
    G = read_ir(xml)
    declared = {lr.id: lr for lr in check(G).layers}
    assert rows and {r[1] for r in rows} == {i for i, lr in declared.items()
                                             if lr.status == "mismatch"}
    sizes = next(iter(prove_all_layers(G).sizes.values()))
    at_sizes = {lr.id: lr for lr in check(G, shapes=sizes).layers}
    for name, node, shown_declared, inferred, real in rows:
        assert shown_declared == declared[node].declared[0]
        assert inferred == at_sizes[node].inferred[0]
        assert real == _runtime_shape(xml, name, sizes) == inferred != shown_declared


# -- one compile, chunks, the memory budget ---------------------------------------------------
def test_one_compile_serves_every_size():
    report = prove_all_layers(read_ir(ROOT / "ir_samples" / "mixed_ops.xml"))
    assert list(report.sizes) == ["low", "mid", "high"] and report.compiles == 1


def test_a_big_model_is_proved_in_chunks_each_compiled_once(monkeypatch):
    G = read_ir(ROOT / "ir_samples" / "mixed_ops.xml")
    whole = prove_all_layers(G)
    monkeypatch.setattr(prove, "CHUNK_OUTPUTS", 4)
    chunked = prove_all_layers(G)
    ports = sum(len(lp.declared) for lp in whole.layers if lp.type != "Assign")
    assert chunked.compiles == math.ceil(ports / 4) > 1 and chunked.sizes == whole.sizes
    assert [lp.to_dict() for lp in chunked.layers] == [lp.to_dict() for lp in whole.layers]


def test_a_small_budget_splits_the_outputs_into_chunks_within_it():
    G = read_ir(ROOT / "ir_samples" / "mixed_ops.xml")
    report = prove_all_layers(G, memory_budget=4000)
    assert report.ok and report.compiles > 1 and 0 < report.peak_bytes <= 4000
    assert len(report.sizes) >= 2 and report.summary["proved"] == report.summary["layers"]


def test_a_tiny_memory_budget_leaves_layers_not_run_never_a_memory_error():
    report = prove_all_layers(read_ir(ROOT / "ir_samples" / "gather_nd8_bd3.xml"),
                              memory_budget=1000)
    assert report.summary["not run"] == report.summary["layers"]
    assert "memory budget" in report.layers[0].message
    assert report.nothing_proved and not report.ok  # nothing proved is not a pass


def test_the_memory_budget_option_reaches_the_proof(capsys):
    code, out, _ = _run(capsys, "validate", "--all-layers", "--json", "--memory-budget", "1000",
                        str(ROOT / "ir_samples" / "gather_nd8_bd3.xml"))
    layers = json.loads(out)["models"][0]["layers"]
    assert code == 1 and all("memory budget of 1000" in lp["message"] for lp in layers)


# -- what is not run, and states --------------------------------------------------------------
def test_a_layer_whose_friendly_name_is_shared_is_not_run_and_says_why(tmp_path):
    src = (ROOT / "ir_samples" / "mixed_ops.xml").read_text(encoding="utf-8")
    xml = tmp_path / "m.xml"
    xml.write_text(src.replace('name="turn" type="Transpose"', 'name="flatten" type="Transpose"'),
                   encoding="utf-8")
    (tmp_path / "m.bin").write_bytes((ROOT / "ir_samples" / "mixed_ops.bin").read_bytes())
    report = prove_all_layers(read_ir(xml))
    shared = [lp for lp in report.layers if lp.name == "flatten"]
    assert report.ok and len(shared) == 2
    assert all(lp.status == "not run" and "2 layers share its friendly name" in lp.message
               for lp in shared)


def test_states_start_as_a_first_call_and_the_layers_after_them_are_exact():
    """Each ReadValue of the stateful Llama reads its initial value (a [batch,2,0,8] cache)
    as OpenVINO does on a first call, and ovgather infers every layer after it from that
    value: nothing is merely looser."""
    report = prove_all_layers(read_ir(ROOT / "ir_corpus" / "llama_kv" / "pytorch_stateful.xml"))
    reads = [lp for lp in report.layers if lp.type == "ReadValue"]
    assert len(reads) == 6 and report.summary["looser"] == 0 and len(report.sizes) == 3
    for lp in reads:
        assert lp.status == "ok" and lp.real == lp.inferred
        batch = {label: PartialShape.parse(s["input_ids"]).to_list()[0]
                 for label, s in report.sizes.items()}
        assert all(PartialShape.parse(lp.real[k][0]).to_list() == [b, 2, 0, 8]
                   for k, b in batch.items())


def test_a_state_without_an_initial_value_is_seeded_with_a_past_of_at_least_one(tmp_path):
    """Left alone it would start empty (the CPU plugin makes its dynamic dims 0) and its
    empty tensors would prove nothing: it is seeded, and the report names the seed."""
    import openvino.opset6 as o6
    from openvino.op.util import Variable, VariableInfo

    x = o6.parameter(ov.PartialShape([-1, 3]), ov.Type.f32, name="x")
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = \
        ov.PartialShape("[?,2,1..,8]"), ov.Type.f32, "cache"
    cache = Variable(info)
    read = o6.read_value(cache)
    read.set_friendly_name("cache_read")
    model = ov.Model([x.output(0), o6.relu(read).output(0)], [o6.assign(read, cache)], [x],
                     [cache], "state")
    ov.save_model(model, str(tmp_path / "state.xml"))
    report = prove_all_layers(read_ir(tmp_path / "state.xml"))
    lp = next(lp for lp in report.layers if lp.name == "cache_read")
    assert report.ok and lp.status == "ok" and len(report.sizes) == 3
    for label, real in lp.real.items():
        seeded = report.sizes[label]["state cache"]
        assert real == [seeded] and PartialShape.parse(seeded).dims[2].lo >= 1


def test_a_body_layer_is_listed_after_its_layer_as_not_run():
    report = prove_all_layers(read_ir(ROOT / "ir_samples" / "loop_gather.xml"))
    ids = [lp.id for lp in report.layers]
    inner = [lp for lp in report.layers if "/" in lp.id]
    assert inner and all(lp.status == "not run" and " inside a" in lp.message for lp in inner)
    for lp in inner:  # right after the layer holding it (or after its siblings)
        owner = lp.id.split("/", 1)[0]
        assert all("/" in i and i.startswith(owner + "/")
                   for i in ids[ids.index(owner) + 1:ids.index(lp.id)])


# -- the gathers keep their value check -------------------------------------------------------
def test_gather_layers_keep_their_value_check_against_the_reference(capsys):
    code, report = _proof_json(capsys, ROOT / "ir_samples" / "mixed_ops.xml")
    gathers = [lp for lp in report["layers"] if lp["type"] in GATHERS]
    assert code == 0 and len(gathers) == 5 == report["summary"]["values checked"]
    assert all(lp["values"]["status"] == "ok" and lp["values"]["max_error"] is not None
               for lp in gathers)


def test_a_wrong_reference_fails_the_proof_with_values_differ(capsys, monkeypatch):
    validate = importlib.import_module("ovgather.validate.gathers")
    right = validate.for_layer
    monkeypatch.setattr(validate, "for_layer", lambda *a, **k: right(*a, **k) + 1)
    code, out, _ = _run(capsys, "validate", "--all-layers",
                        str(ROOT / "ir_samples" / "gather_versions.xml"))
    text = " ".join(out.split())
    assert code == 1 and "values differ" in text and "mismatch" in text
    code, report = _proof_json(capsys, ROOT / "ir_samples" / "gather_versions.xml")
    bad = [lp for lp in report["layers"] if lp["status"] == "values differ"]
    assert code == 1 and bad and all(lp["values"]["status"] == "mismatch" for lp in bad)
    assert report["summary"]["values differ"] == len(bad)


# -- a dynamic dim the model cannot run above 1 ----------------------------------------------
def _vit_reshaped_by_openvino(tmp_path: Path) -> Path:
    """The ViT of the corpus with a dynamic batch, by plain ``openvino.Model.reshape``: its
    class token, a constant ``[1,1,32]`` concatenated to the patches, fits batch 1 only."""
    model = ov.Core().read_model(str(ROOT / "ir_corpus" / "vit" / "pytorch_static.xml"))
    model.reshape({model.inputs[0].any_name: [-1, 3, 32, 32]})
    path = tmp_path / "vit_dynamic_batch.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def test_a_batch_that_runs_at_1_only_names_the_layers_that_break_above_it(tmp_path, capsys):
    path = _vit_reshaped_by_openvino(tmp_path)
    code, report = _proof_json(capsys, path)
    assert code == 1 and list(report["sizes"]) == ["low"]
    assert report["sizes"]["low"] == {"pixel_values": "[1,3,32,32]"}
    failed = report["sizes failed"]
    assert list(failed) == ["batch 2", "batch 3"]
    for label, f in failed.items():  # OpenVINO itself fails there, and runs at batch 1
        assert f["sizes"] == {"pixel_values": f"[{label[-1]},3,32,32]"}
        assert "Concat" in _openvino_fails_at(path, f["sizes"])
    assert _openvino_fails_at(path, report["sizes"]["low"]) is None
    broken = [lp for lp in report["layers"] if lp["status"] == "fails at a size"]
    assert [lp["type"] for lp in broken] == ["Concat"] and broken[0]["name"] in \
        _openvino_fails_at(path, failed["batch 2"]["sizes"])
    assert broken[0]["message"].startswith("works at batch 1, fails at 2, 3 (the runtime fails "
                                           "here and ovgather's rules reject it: ")
    assert all(f["layers"] == [broken[0]["name"]] for f in failed.values())
    code, out, _ = _run(capsys, "validate", "--all-layers", str(path))
    text = " ".join(out.split())
    assert code == 1 and "1 fails at a size" in text
    assert (f"fails at a size {broken[0]['name']} (line {broken[0]['line']}, id "
            f"{broken[0]['id']}, Concat): declared [1,17,32]; works at batch 1, fails at 2, 3"
            in text)


def test_the_same_model_at_a_fixed_batch_of_1_is_not_swept(tmp_path, capsys):
    """Static dims are the model's contract: no other size is tried."""
    code, report = _proof_json(capsys, ROOT / "ir_corpus" / "vit" / "pytorch_static.xml")
    assert code == 0 and list(report["sizes"]) == ["static"] and report["sizes failed"] == {}


def test_a_dynamic_dim_is_swept_at_1_2_and_3_inside_its_bounds():
    from ovgather.validate.sizes import sweep_sizes

    def swept(shape: str, ran: str) -> list[tuple[int, int, str]]:
        return [(axis, v, str(s["x"])) for axis, v, s in sweep_sizes(
            {"x": PartialShape.parse(shape)}, 2, [{"x": PartialShape.parse(ran)}])]

    assert swept("?,3", "[1,3]") == [(0, 2, "[2,3]"), (0, 3, "[3,3]")]
    assert swept("1..2,3", "[1,3]") == [(0, 2, "[2,3]")]
    assert swept("1..1,?", "[1,1]") == [(1, 2, "[1,2]"), (1, 3, "[1,3]")]
    assert swept("2..8,?", "[2,5]") == []  # both already ran above 1
    assert swept("?,?", "[1,4]") == [(0, 2, "[2,4]"), (0, 3, "[3,4]")]


@pytest.mark.parametrize("path", [p for p in SAMPLES if "loop" not in p.name][:6]
                         + [ROOT / "ir_corpus" / "llama_kv" / "pytorch_stateful.xml"],
                         ids=lambda p: p.name)
def test_the_proof_counts_the_layers_check_counts_and_gives_every_status_its_reason(path):
    G = read_ir(path)
    report = prove_all_layers(G)
    top = [lp for lp in report.layers if "/" not in lp.id]
    assert len(top) + sum(report.left_out.values()) == len(
        [lr for lr in check(G).layers if "/" not in lr.id])
    assert all(lp.message for lp in report.layers if lp.status != "ok"), [
        (lp.name, lp.status) for lp in report.layers if lp.status != "ok" and not lp.message]
    from ovgather.validate import left_out_line

    assert all(f"{n} {kind}" in left_out_line(report) for kind, n in report.left_out.items())
