"""``ovgather infer --symbols SPEC`` and ``og.infer_symbols``: what they print, what they
refuse, and what they leave alone (``inferred``, the plain check path)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ovgather as og
from ovgather.cli import main
from ovgather.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "dynamic_gathers.xml"
SAMPLE_SYMBOLS = "data[N,C,10,D,4],nd_indices[N,C,5,2],ge_indices[3,C,10,E,K],g_indices[M,J]"


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def proved_static(tmp_path_factory) -> Path:
    """``Broadcast(1, ShapeOf(x) - ShapeOf(x) + 4)``: the names prove [4] where the value
    bounds (OpenVINO's, and so ovgather's) leave ``[?]``."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter(ov.PartialShape([-1]), ov.Type.f32, name="x")
    s = ops.shape_of(x)
    four = ops.add(ops.subtract(s, s), ops.constant(np.array([4], dtype=np.int64)))
    out = ops.broadcast(ops.constant(np.float32(1.0)), four, name="spread")
    path = tmp_path_factory.mktemp("proved") / "m.xml"
    ov.save_model(ov.Model([out], [x], "m"), str(path), compress_to_fp16=False)
    assert str(out.get_output_partial_shape(0)) == "[?]"
    return path


@pytest.fixture(scope="module")
def kv_cache(tmp_path_factory) -> Path:
    """A cache ``ReadValue [?,2,?,8]`` concatenated with new keys ``k`` along axis 2."""
    import openvino as ov
    from openvino import opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    info = VariableInfo()
    info.data_shape, info.data_type = ov.PartialShape([-1, 2, -1, 8]), ov.Type.f32
    info.variable_id = "cache"
    cache = Variable(info)
    k = ops.parameter(ov.PartialShape([-1, 2, -1, 8]), ov.Type.f32, name="k")
    read = ops.read_value(ops.constant(np.zeros([1, 2, 0, 8], np.float32)), cache)
    both = ops.concat([read, k], 2, name="both")
    path = tmp_path_factory.mktemp("kv") / "kv.xml"
    model = ov.Model([ops.result(both)], [ops.assign(both, cache)], [k], "kv")
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def test_a_concat_gives_the_cache_the_batch_of_the_new_keys(kv_cache):
    """A Concat's other dims must be equal: the cache's fresh batch is B, everywhere."""
    G = og.read_ir(kv_cache)
    by_name = {}
    for node, syms in og.infer_symbols(G, {"k": "[B,2,S,8]"}).items():
        by_name[G.nodes[node]["type"]] = [str(s) for s in syms]
    assert by_name["ReadValue"] == ["[B,2,d1,8]"] and by_name["Concat"] == ["[B,2,S+d1,8]"]
    named = og.infer_symbols(G, {"k": "[B,2,S,8]", "cache": "[B,2,P,8]"})
    assert [str(s) for n, syms in named.items() for s in syms
            if G.nodes[n]["type"] == "Concat"] == ["[B,2,P+S,8]"]


def test_json_gives_each_layer_one_symbolic_text_per_output_port(capsys):
    code, out, _ = _run(["infer", str(SAMPLE), "--symbols", SAMPLE_SYMBOLS, "--json"], capsys)
    layers = {lr["name"]: lr for lr in json.loads(out)["models"][0]["layers"]}
    assert code == 0
    assert layers["gather_nd8_bd2"]["symbolic"] == ["[N,C,5,4]"]
    assert layers["gather_nd5_bd2"]["symbolic"] == ["[C*N,5,4]"]
    assert layers["gather8_axis1_bd1"]["symbolic"] == ["[N,J,10,D,4]"]
    assert all(len(lr["symbolic"]) == len(lr["inferred"]) for lr in layers.values())


def test_a_dim_the_names_prove_static_is_shown_beside_the_question_mark(proved_static, capsys):
    code, out, _ = _run(["infer", str(proved_static), "--symbols", "x[S]"], capsys)
    row = next(line for line in out.splitlines() if line.startswith(("6 ", "6\t")) or
               " spread " in f" {line} ")
    assert code == 0 and "[?]" in row and "[? (=4)]" in row
    _, out, _ = _run(["infer", str(proved_static), "--symbols", "x[S]", "--json"], capsys)
    spread = next(lr for lr in json.loads(out)["models"][0]["layers"] if lr["name"] == "spread")
    assert spread["inferred"] == ["[?]"] and spread["symbolic"] == ["[4]"]


@pytest.mark.parametrize("spec,named", [
    ("nope[B]", "nope"),                       # no such input
    ("data[N,C]", "data"),                     # rank 5, two dims given
    ("data[N,C,10,2x,4]", "2x"),               # not a name
    ("data[N,C,10,D", "--symbols"),            # unbalanced
])
def test_a_bad_spec_is_one_error_line_and_exit_2(spec, named, capsys):
    code, out, err = _run(["infer", str(SAMPLE), "--symbols", spec], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and named in err


def test_the_python_api_refuses_the_same_specs():
    G = og.read_ir(SAMPLE)
    for bad in ({"nope": "[B]"}, {"data": "[N,C]"}, {"data": "[N,C,10,D,x-1]"},
                {"data": ["N", "C", 10, "D", "1y"]}):
        with pytest.raises(UsageError):
            og.infer_symbols(G, bad)
    found = og.infer_symbols(G, {"data": ["N", "C", 10, "D", 4], "nd_indices": "[N,C,5,2]"},
                             shapes={"g_indices": "[4,3]"})
    names = {G.nodes[n]["name"]: [str(s) for s in syms] for n, syms in found.items()}
    assert names["gather_nd8_bd2"] == ["[N,C,5,4]"] and names["g_indices"] == ["[4,3]"]


def _inferred(path: Path, extra: list[str], capsys) -> list:
    code, out, _ = _run(["infer", str(path), "--json", *extra], capsys)
    return code, [lr["inferred"] for lr in json.loads(out)["models"][0]["layers"]]


def _all_dims_named(path: Path) -> str:
    """A SPEC naming every dynamic dim of every Parameter (``d<k>`` by position)."""
    G = og.read_ir(path)
    parts = []
    for attrs in G.nodes.values():
        if attrs["type"] != "Parameter":
            continue
        shape = og.PartialShape.parse(attrs["data"].get("shape", "..."))
        if shape.dims is None:
            continue
        dims = [str(d.lo) if d.lo == d.hi else f"n{i}_{k}" for k, d in enumerate(shape.dims)
                for i in [len(parts)]]
        parts.append(f'"{attrs["name"]}"[{",".join(dims)}]')
    return ",".join(parts)


@pytest.mark.parametrize("path", sorted([*ROOT.glob("ir_samples/**/*.xml"),
                                         *ROOT.glob("ir_corpus/*/*.xml")]),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_inferred_is_byte_identical_with_and_without_symbols(path, capsys):
    plain = _inferred(path, [], capsys)
    spec = _all_dims_named(path)
    named = _inferred(path, ["--symbols", spec] if spec else [], capsys)
    assert plain == named


def test_check_and_plain_infer_import_nothing_of_the_symbolic_walk():
    code = ("import sys, ovgather.cli; from ovgather.cli import main; "
            f"main(['check', {str(ROOT / 'ir_corpus/bert/pytorch_dynamic.xml')!r}]); "
            f"main(['infer', {str(SAMPLE)!r}]); "
            "print([m for m in sys.modules if m.endswith(('.symbolic', '.symbols'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.splitlines()
    assert out[-1] == "[]"
