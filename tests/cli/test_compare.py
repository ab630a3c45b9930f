"""``ovgather compare A B`` as a user runs it: exit 0 for a model and its read/write round
trip, 1 naming the output an edit doubled, the tolerance flags honoured, 2 (one ``error:``
line) for models that cannot be fed alike."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from model_edits import doubled, round_trip

import ovgather as og
from ovgather.cli import main
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples/mixed_ops.xml"
CORPUS = ROOT / "ir_corpus/gpt2/onnx_static.xml"


@pytest.mark.parametrize("path", [SAMPLE, ROOT / "ir_samples/loop_gather.xml", CORPUS],
                         ids=lambda p: p.name)
def test_a_round_trip_exits_0_and_lists_every_output(path, tmp_path, capsys):
    assert main(["compare", str(path), str(round_trip(path, tmp_path / "rt.xml"))]) == 0
    out = capsys.readouterr().out
    names = [o.get_any_name() for o in ov.Core().read_model(str(path)).outputs]
    for name in names:
        assert f"  ok        {name}: max abs 0, max rel 0" in out


@pytest.mark.parametrize("path", [SAMPLE, CORPUS], ids=lambda p: p.name)
def test_a_doubled_output_exits_1_and_is_named(path, tmp_path, capsys):
    b, names = doubled(path, tmp_path / "doubled.xml")
    assert main(["compare", str(path), str(b), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    bad = [o for o in doc["outputs"] if o["status"] != "ok"]
    assert [o["status"] for o in bad] == ["differs"] and bad[0]["name"] in names
    assert bad[0]["max_rel"] == pytest.approx(0.5)
    assert main(["compare", str(path), str(b)]) == 1
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "differs " in ln)
    assert bad[0]["name"] in line


def test_rtol_and_atol_decide(tmp_path, capsys):
    b, _ = doubled(SAMPLE, tmp_path / "doubled.xml")
    assert main(["compare", str(SAMPLE), str(b), "--rtol", "0.5", "--atol", "0"]) == 0
    assert main(["compare", str(SAMPLE), str(b), "--rtol", "0.49", "--atol", "0"]) == 1
    assert main(["compare", str(SAMPLE), str(b), "--rtol", "0", "--atol", "1e30"]) == 0
    assert main(["compare", str(SAMPLE), str(b), "--rtol", "0", "--atol", "0"]) == 1
    capsys.readouterr()
    for bad in ("-1", "nan", "x"):
        assert main(["compare", str(SAMPLE), str(b), "--rtol", bad]) == 2
        assert "argument --rtol: must be a number >= 0" in capsys.readouterr().err


def test_the_seed_changes_the_inputs_not_the_verdict(tmp_path, capsys):
    rt = round_trip(SAMPLE, tmp_path / "rt.xml")
    b, _ = doubled(SAMPLE, tmp_path / "doubled.xml")
    largest = []
    for seed in ("0", "7"):
        assert main(["compare", str(SAMPLE), str(rt), "--seed", seed]) == 0
        capsys.readouterr()
        assert main(["compare", str(SAMPLE), str(b), "--seed", seed, "--json"]) == 1
        doc = json.loads(capsys.readouterr().out)
        assert doc["seed"] == int(seed)
        largest.append(max(o["max_abs"] for o in doc["outputs"]))
    assert largest[0] != largest[1]


def test_inputs_that_do_not_pair_exit_2_with_one_error_line(tmp_path, capsys):
    G = og.read_ir(SAMPLE)
    og.rename_input(G, "ge_ids", "positions")
    og.write_ir(G, tmp_path / "renamed.xml")
    assert main(["compare", str(SAMPLE), str(tmp_path / "renamed.xml")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "'ge_ids'" in lines[0] and "'positions'" in lines[0]


def test_a_missing_file_and_a_bad_shape_exit_2(tmp_path, capsys):
    assert main(["compare", str(SAMPLE), str(tmp_path / "nope.xml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["compare", str(SAMPLE), str(SAMPLE), "--shape", "nope=[1]"]) == 2
    assert "'nope'" in capsys.readouterr().err


def test_an_output_in_one_model_only_exits_1_naming_it(tmp_path, capsys):
    G = og.read_ir(SAMPLE)
    results = og.find_layers(G, type="Result")
    names = {r: og.graph.output_port(G, *og.graph.producer(G, r, 0))["names"] for r in results}
    gone = next(r for r in results if "ranked_ge" in names[r])
    og.remove_layer(G, gone)
    og.cleanup(G)
    og.write_ir(G, tmp_path / "fewer.xml")
    assert main(["compare", str(SAMPLE), str(tmp_path / "fewer.xml")]) == 1
    out = capsys.readouterr().out
    assert "only in A ranked_ge" in out


def test_an_onnx_model_compares_with_the_ir_openvino_makes_of_it(tmp_path, capsys):
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("GatherND", ["data", "indices"], ["out"], batch_dims=1)], "m",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 3, 5]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, ["N", 2, 1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              tmp_path / "m.onnx")
    ov.save_model(ov.convert_model(str(tmp_path / "m.onnx")), str(tmp_path / "m.xml"))
    assert main(["compare", str(tmp_path / "m.onnx"), str(tmp_path / "m.xml"),
                 "--shape", "data=[4,3,5]"]) == 0
    out = capsys.readouterr().out
    assert "data[4,3,5], indices[4,2,1]" in out and "ok        out:" in out


def test_a_model_the_cpu_plugin_cannot_compile_exits_2_naming_it(tmp_path, capsys):
    """A Reshape to a target read at run time has an output of dynamic rank, which the
    CPU plugin compiles nowhere (OpenVINO itself refuses it below)."""
    data = ov.opset8.parameter([2, 3], np.float32, name="data")
    target = ov.opset8.parameter([-1], np.int64, name="target")
    model = ov.Model([ov.opset8.relu(ov.opset8.reshape(data, target, False))], [data, target])
    path = tmp_path / "any_rank.xml"
    ov.save_model(model, str(path))
    with pytest.raises(RuntimeError, match="rank"):
        ov.Core().compile_model(str(path), "CPU", cpu_config())
    assert main(["compare", str(path), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: the CPU plugin could not compile") and \
        len(err.splitlines()) == 1
