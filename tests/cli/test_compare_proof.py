"""``ovgather compare`` proves something or says it did not: real transformers fed inputs
that exercise them (a doubled output is caught, an unchanged copy passes with finite
outputs), outputs that prove nothing (NaN everywhere, constant) fail unless allowed, the
user's own arrays (.npy, .npz), inputs paired by --map or by position (an FP32 and an FP16
export of one CNN), integers compared exactly, and the memory budget.

The oracles: arithmetic (an output times 2 differs from the original by half of the
doubled one), OpenVINO's reading and running of the same models at f32, and NumPy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from model_edits import doubled, round_trip

import ovgather as og
from ovgather.cli import main
from ovgather.comparison.outputs import differences
from ovgather.errors import CompareError
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "ir_corpus"
#: BERT, GPT-2, Llama and T5 through OpenVINO's PyTorch and ONNX frontends
TRANSFORMERS = ["bert/pytorch_dynamic.xml", "bert/onnx_dynamic.xml",
                "gpt2/pytorch_dynamic.xml", "gpt2/onnx_static.xml",
                "llama/pytorch_dynamic.xml", "llama/onnx_dynamic.xml",
                "t5/pytorch_dynamic.xml", "t5/onnx_static.xml"]


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("path", TRANSFORMERS)
def test_a_transformer_with_a_doubled_output_exits_1_and_its_copy_0_with_finite_outputs(
        path, tmp_path, capsys):
    """An all-zero attention mask made every output of the PyTorch BERT NaN, and NaN = NaN
    passed: a doubled output exited 0. Fed a real mask, the doubled output differs by
    exactly half of it, and the copy passes with no NaN anywhere."""
    a = CORPUS / path
    b, names = doubled(a, tmp_path / "doubled.xml")
    assert main(["compare", str(a), str(b), "--json"]) == 1
    doc = _json(capsys)
    bad = [o for o in doc["outputs"] if o["status"] != "ok"]
    assert [o["status"] for o in bad] == ["differs"] and bad[0]["name"] in names
    assert bad[0]["max_rel"] == pytest.approx(0.5)
    assert main(["compare", str(a), str(round_trip(a, tmp_path / "rt.xml")), "--json"]) == 0
    doc = _json(capsys)
    assert all(o["status"] == "ok" and o["message"] is None for o in doc["outputs"])
    kinds = {i["name"]: i["values"] for i in doc["inputs"]}
    assert kinds["attention_mask"].startswith("mask")
    assert kinds["input_ids"].startswith("random indices in [0,")


def _model(tmp_path: Path, name: str, body, shape=(2, 8), dtype=np.float32,
           input_name: str = "x") -> Path:
    x = ops.parameter(list(shape), dtype, name=input_name)
    x.output(0).set_names({input_name})
    out = body(x)
    out.output(0).set_names({"y"})
    path = tmp_path / f"{name}.xml"
    ov.save_model(ov.Model([out], [x], name), str(path), compress_to_fp16=False)
    return path


def test_outputs_nan_everywhere_in_both_prove_nothing_and_exit_1(tmp_path, capsys):
    """sqrt(-(x*x) - 1) is NaN for every x: before, both models' NaN compared equal (exit
    0); now the output is 'nothing proven' (exit 1) unless --allow-unproven."""
    def body(x):
        return ops.sqrt(ops.subtract(ops.negative(ops.multiply(x, x)),
                                     ops.constant(np.float32(1))))
    a, b = _model(tmp_path, "a", body), _model(tmp_path, "b", body)
    assert main(["compare", str(a), str(b), "--json"]) == 1
    [out] = _json(capsys)["outputs"]
    assert out["status"] == "nothing proven"
    assert "NaN or infinite in both models" in out["message"]
    assert "--input" in out["message"] and "--allow-unproven" in out["message"]
    assert main(["compare", str(a), str(b)]) == 1
    text = capsys.readouterr().out
    assert "1 nothing proven" in text and "nothing proven y:" in text
    assert main(["compare", str(a), str(b), "--allow-unproven"]) == 0
    assert "(allowed)" in capsys.readouterr().out


def test_the_json_of_the_new_fields_follows_the_schema(tmp_path, capsys):
    import jsonschema

    schema = json.loads((ROOT / "docs/schema/compare.json").read_text())
    def body(x):
        return ops.sqrt(ops.subtract(ops.negative(ops.multiply(x, x)),
                                     ops.constant(np.float32(1))))
    a = _model(tmp_path, "a", body)
    assert main(["compare", str(a), str(a), "--json", "--allow-unproven"]) == 0
    doc = _json(capsys)
    jsonschema.validate(doc, schema)
    assert doc["allow_unproven"] and doc["summary"]["nothing proven"] == 1
    x, z = _int_models(tmp_path)
    np.savez(tmp_path / "xz.npz", x=np.arange(3), z=np.arange(3) + 1)
    assert main(["compare", str(x), str(z), "--input", str(tmp_path / "xz.npz"), "--json"]) == 1
    doc = _json(capsys)
    jsonschema.validate(doc, schema)
    assert isinstance(doc["outputs"][0]["max_abs"], int)


def test_an_output_constant_in_both_proves_nothing(tmp_path, capsys):
    """x * 0 + 3 is 3 whatever x is: equal, and proving nothing about x's path."""
    def body(x):
        return ops.add(ops.multiply(x, ops.constant(np.float32(0))),
                       ops.constant(np.float32(3)))
    a, b = _model(tmp_path, "a", body), _model(tmp_path, "b", body)
    report = og.compare(a, b)
    assert not report.ok and report.outputs[0].status == "nothing proven"
    assert report.outputs[0].message.startswith("every element is 3 in both models")
    assert og.compare(a, b, allow_unproven=True).ok
    assert report.summary["nothing proven"] == 1


def _int_models(tmp_path: Path) -> tuple[Path, Path]:
    """Two models of int64 inputs x and z: A returns x, B returns z (the CPU plugin runs
    i64 arithmetic in i32, so the values pass through unchanged, not computed)."""
    paths = []
    for name in ("a", "b"):
        x, z = (ops.parameter([3], np.int64, name=n) for n in ("x", "z"))
        out = ops.result(x if name == "a" else z)
        out.input_value(0).set_names({"y"} | ({"x"} if name == "a" else {"z"}))
        ov.save_model(ov.Model([out], [x, z], name), str(tmp_path / f"{name}.xml"))
        paths.append(tmp_path / f"{name}.xml")
    return paths[0], paths[1]


def test_int64_outputs_are_compared_exactly_from_npz_inputs(tmp_path, capsys):
    """2**53 and 2**53 + 1 are one float64: compared in float64 they were equal with
    --rtol 0 --atol 0. Fed x = [2**53, 7, -3] and z = [2**53 + 1, 7, -3] from an .npz,
    A's x and B's z differ by exactly 1 at one element."""
    a, b = _int_models(tmp_path)
    np.savez(tmp_path / "xz.npz", x=np.array([2**53, 7, -3], np.int64),
             z=np.array([2**53 + 1, 7, -3], np.int64))
    argv = ["compare", str(a), str(b), "--input", str(tmp_path / "xz.npz")]
    assert main([*argv, "--rtol", "0", "--atol", "0", "--json"]) == 1
    doc = _json(capsys)
    [out] = doc["outputs"]
    assert out["status"] == "differs" and out["max_abs"] == 1
    assert out["message"].startswith("1 of 3 elements differ")
    assert [(i["name"], i["values"]) for i in doc["inputs"]] == [("x", "given"),
                                                                ("z", "given")]
    assert main(argv) == 0  # 1 <= 1e-5 + 1e-5 * 2**53: within the default tolerance
    capsys.readouterr()


def test_differences_of_integers_never_overflow_or_round():
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    assert differences(np.array([lo]), np.array([hi]), 0, 0)[0] == 2**64 - 1
    assert differences(np.array([2**62 + 1]), np.array([2**62]), 0, 0.99)[2] == 1
    assert differences(np.array([2**62 + 1]), np.array([2**62]), 0, 1)[2] == 0
    assert differences(np.array([True, False]), np.array([True, True]), 0, 0)[:3:2] == (1, 1)
    assert differences(np.array([5], np.uint64), np.array([-5], np.int64), 0, 0)[0] == 10


def test_given_arrays_are_fed_and_size_the_other_inputs(tmp_path, capsys):
    """abs(x) and x + 0 agree on the x given (non-negative), not on random x; a BERT fed its
    input_ids [2,7] from a file makes its mask [2,7] too."""
    a = _model(tmp_path, "a", lambda x: ops.add(x, ops.constant(np.float32(0))))
    b = _model(tmp_path, "b", lambda x: ops.abs(x))
    assert main(["compare", str(a), str(b)]) == 1
    np.savez(tmp_path / "all.npz", x=np.linspace(0, 3, 16, dtype=np.float32).reshape(2, 8))
    assert main(["compare", str(a), str(b), "--input", str(tmp_path / "all.npz")]) == 0
    capsys.readouterr()
    bert = CORPUS / "bert/pytorch_dynamic.xml"
    ids = np.random.default_rng(5).integers(0, 500, (2, 7))
    np.save(tmp_path / "ids.npy", ids)
    assert main(["compare", str(bert), str(bert), "--input", f"input_ids={tmp_path}/ids.npy",
                 "--json"]) == 0
    doc = _json(capsys)
    assert [(i["name"], i["shape"]) for i in doc["inputs"]] == [
        ("input_ids", "[2,7]"), ("attention_mask", "[2,7]"), ("token_type_ids", "[2,7]")]
    assert doc["inputs"][0]["values"] == "given"


@pytest.mark.parametrize("array,message", [
    (np.zeros((2, 8), np.float64), "input 'x' is f32 (float32), but the array given is "
                                   "float64"),
    (np.zeros((2, 8, 1), np.float32), "input 'x' takes shape [2,8], but the array given "
                                      "has shape [2,8,1]"),
])
def test_an_array_of_the_wrong_type_or_shape_exits_2(array, message, tmp_path, capsys):
    a = _model(tmp_path, "a", lambda x: ops.abs(x))
    np.save(tmp_path / "x.npy", array)
    assert main(["compare", str(a), str(a), "--input", f"x={tmp_path / 'x.npy'}"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and message in err


def test_a_wrong_input_name_or_file_exits_2(tmp_path, capsys):
    a = _model(tmp_path, "a", lambda x: ops.abs(x))
    np.save(tmp_path / "x.npy", np.zeros((2, 8), np.float32))
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    cases = [([f"nope={tmp_path / 'x.npy'}"], "'nope' names none"),
             ([f"x={tmp_path / 'missing.npy'}"], "does not exist"),
             ([f"x={tmp_path / 'bad.npy'}"], "NumPy could not read"),
             ([str(tmp_path / "x.npy")], "--input takes NAME=FILE.npy or FILE.npz"),
             ([f"x={tmp_path / 'x.npy'}", f"x={tmp_path / 'x.npy'}"], "given twice")]
    for items, message in cases:
        argv = ["compare", str(a), str(a)]
        for item in items:
            argv += ["--input", item]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and message in err, err


def _lenet(path: Path, input_name: str, fp16: bool) -> Path:
    """A LeNet-like CNN (two convolutions with pooling, two dense layers), seeded weights,
    saved with its weights in f32 or compressed to f16, its input named ``input_name``."""
    rng = np.random.default_rng(20261128)

    def weights(*shape):
        return ops.constant((rng.standard_normal(shape) * 0.2).astype(np.float32))

    image = ops.parameter([1, 1, 28, 28], np.float32, name=input_name)
    image.output(0).set_names({input_name})
    x = image
    for out_ch, in_ch in ((6, 1), (16, 6)):
        x = ops.relu(ops.convolution(x, weights(out_ch, in_ch, 5, 5), [1, 1], [0, 0],
                                     [0, 0], [1, 1]))
        x = ops.max_pool(x, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2]).output(0)
    x = ops.reshape(x, ops.constant(np.array([1, -1], np.int64)), False)
    x = ops.relu(ops.matmul(x, weights(256, 64), False, False))
    logits = ops.matmul(x, weights(64, 10), False, False)
    logits.output(0).set_names({"logits"})
    ov.save_model(ov.Model([logits], [image], "lenet"), str(path), compress_to_fp16=fp16)
    return path


def test_fp32_and_fp16_exports_compare_by_map_and_by_position(tmp_path, capsys):
    fp32 = _lenet(tmp_path / "fp32.xml", "image", fp16=False)
    fp16 = _lenet(tmp_path / "fp16.xml", "input.1", fp16=True)
    assert "f16" in fp16.read_text() and "f16" not in fp32.read_text()
    assert main(["compare", str(fp32), str(fp16)]) == 2
    err = capsys.readouterr().err
    assert "'image'" in err and "--map A_NAME=B_NAME or --by-position" in err
    loose = ["--rtol", "1e-2", "--atol", "1e-2"]
    for pairing in (["--map", "image=input.1"], ["--by-position"]):
        assert main(["compare", str(fp32), str(fp16), *pairing, *loose, "--json"]) == 0
        doc = _json(capsys)
        assert [(i["name"], i["name_b"]) for i in doc["inputs"]] == [("image", "input.1")]
        assert doc["outputs"][0]["max_abs"] > 0  # f16 weights: not the same numbers
        assert main(["compare", str(fp32), str(fp16), *pairing, "--rtol", "0", "--atol",
                     "0"]) == 1
        capsys.readouterr()
    assert main(["compare", str(fp32), str(fp16), "--by-position", *loose]) == 0
    assert "inputs (seed 0, f32 inference): image / input.1[1,1,28,28]\n" in \
        capsys.readouterr().out
    assert og.compare(fp32, fp16, input_map={"image": "input.1"}, rtol=1e-2, atol=1e-2).ok
    assert og.compare(fp32, fp16, by_position=True, rtol=1e-2, atol=1e-2).ok
    with pytest.raises(CompareError, match="has no input 'nope'"):
        og.compare(fp32, fp16, input_map={"image": "nope"})


def test_the_report_names_the_inference_precision(tmp_path, capsys):
    a = _model(tmp_path, "a", lambda x: ops.abs(x))
    precision = cpu_config()["INFERENCE_PRECISION_HINT"]
    assert main(["compare", str(a), str(a), "--json"]) == 0
    assert _json(capsys)["precision"] == precision == "f32"
    assert main(["compare", str(a), str(a)]) == 0
    assert f"{precision} inference" in capsys.readouterr().out


def test_a_run_over_the_memory_budget_exits_2_before_running(tmp_path, capsys):
    a = _model(tmp_path, "a", lambda x: ops.abs(x), shape=(256, 1024))  # 1 MiB in and out
    with pytest.raises(CompareError, match="more than the memory budget of 2.0 MiB"):
        og.compare(a, a, memory_budget=2 << 20)
    assert og.compare(a, a, memory_budget=8 << 20).ok
    assert main(["compare", str(a), str(a), "--memory-budget", "1M"]) == 2
    assert "--memory-budget" in capsys.readouterr().err


def test_outputs_are_compared_without_copies(tmp_path):
    """A 128 MiB output: compared where the runtime wrote it, a million elements at a time,
    NumPy's peak stays under the size of one output (before: two copies and two float64
    conversions, six times it)."""
    import tracemalloc

    def body(x):
        return ops.tile(x, ops.constant(np.array([32768, 1], np.int64)))
    a = _model(tmp_path, "a", body, shape=(1, 1024))
    tracemalloc.start()
    try:
        report = og.compare(a, a)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok and report.outputs[0].shape == "[32768,1024]"
    assert peak < 128 << 20, peak
