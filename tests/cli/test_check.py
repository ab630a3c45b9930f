"""``ovgather check`` / ``ovgather infer`` as a user runs them."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ovgather.cli import main
from ovgather.infer import check
from ovgather.infer.report import follow_resize
from ovgather.ir import read_ir

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "ir_samples" / "gather_nd8_bd2.xml"
WRONG = ROOT / "ir_samples" / "wrong_gather_nd5_bd2_one_dim.xml"
DYNAMIC = ROOT / "ir_samples" / "dynamic_gathers.xml"


def test_clean_model_exits_0_with_a_one_line_summary(capsys):
    assert main(["check", str(GOOD)]) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == [
        f"{GOOD}: OK: 4 layers, 4 ok, 0 mismatch, 0 invalid, 0 unchecked"]
    assert err == ""


def test_the_summary_stays_one_line_under_a_long_path(tmp_path, capsys):
    """Scripts grep for ``PATH: OK: …``: a deep folder must not wrap it (CI clones deeper)."""
    deep = tmp_path.joinpath(*["a_rather_long_folder_name"] * 4)
    deep.mkdir(parents=True)
    shutil.copy(GOOD, deep / GOOD.name)
    shutil.copy(GOOD.with_suffix(".bin"), deep / GOOD.with_suffix(".bin").name)
    assert main(["check", str(deep / GOOD.name)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{deep / GOOD.name}: OK: 4 layers, 4 ok, 0 mismatch, 0 invalid, 0 unchecked"]


def test_a_mismatch_exits_1_and_shows_a_table_row(capsys):
    assert main(["check", str(WRONG)]) == 1
    out, _ = capsys.readouterr()
    lines = out.replace("\n    ", " ").splitlines()  # lines wrapped at 100 columns, joined
    assert lines[0].split() == ["status", "layer", "id", "type", "declared", "inferred",
                                "line", "why"]
    row = lines[1].split()
    assert row[:6] == ["mismatch", "gather_nd5_bd2", "2", "GatherND/opset5", "[60,3,34]",
                       "[60,3,35]"]
    assert row[6] == str(read_ir(WRONG).nodes["2"]["line"])
    summary = out.replace("\n    ", " ").splitlines()[-1]  # wrapped at 100 columns
    assert "PROBLEMS" in summary and "1 mismatch" in summary


def test_json_has_exactly_the_spec_structure(capsys):
    assert main(["check", str(WRONG), str(GOOD), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["models"] and len(doc["models"]) == 2
    m = doc["models"][0]
    assert list(m) == ["path", "ir_version", "summary", "layers"]
    assert m["summary"] == {"layers": 4, "ok": 3, "mismatch": 1, "invalid": 0, "unchecked": 0,
                            "unknown": 0}
    (layer,) = m["layers"]
    assert list(layer) == ["id", "name", "type", "version", "status", "declared", "inferred",
                           "line", "message"]
    assert layer["declared"] == ["[60,3,34]"] and layer["inferred"] == ["[60,3,35]"]
    assert doc["models"][1]["layers"] == []


def test_all_lists_every_layer(capsys):
    assert main(["check", str(GOOD), "--json", "--all"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [lr["status"] for lr in doc["models"][0]["layers"]] == ["ok"] * 4
    assert main(["check", str(GOOD), "--all"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 4 + 1


def test_unusable_input_exits_2_with_one_error_line(tmp_path, capsys):
    missing = tmp_path / "missing.xml"
    assert main(["check", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(missing) in err and len(err.splitlines()) == 1
    notxml = tmp_path / "bad.xml"
    notxml.write_text("hello")
    assert main(["check", str(notxml), str(GOOD)]) == 2  # the good one is still checked
    out, err = capsys.readouterr()
    assert "OK" in out and str(notxml) in err


def test_an_unknown_override_name_exits_2(capsys):
    assert main(["check", str(GOOD), "--shape", "nope=[1]"]) == 2
    assert "nope" in capsys.readouterr().err


def test_both_override_spellings_give_the_library_result(capsys):
    G = read_ir(DYNAMIC)
    param = next(a for _, a in G.nodes(data=True) if a["type"] == "Parameter")
    rank = len(param["outputs"][0]["dims"])
    shape = "[" + ",".join(["2..3"] + ["4"] * (rank - 1)) + "]"
    resized = check(G, shapes={param["name"]: shape})
    follow_resize(resized, check(G))  # what check --shape says: dims that follow the resize
    expected = resized.to_dict(all_layers=True)
    for option in (f"{param['name']}={shape}", f"{param['name']}{shape}"):
        main(["check", str(DYNAMIC), "--json", "--all", "--shape", option])
        got = json.loads(capsys.readouterr().out)["models"][0]
        assert got["layers"] == expected["layers"]


def test_infer_prints_every_layer(capsys):
    assert main(["infer", str(GOOD)]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 + 1 + 4  # the path, the header, 4 layers
    assert main(["infer", str(GOOD), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    inferred = {lr["name"]: lr["inferred"] for lr in doc["models"][0]["layers"]}
    G = read_ir(GOOD)
    assert inferred == {lr.name: lr.inferred for lr in check(G).layers}


def test_the_check_path_never_imports_openvino():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "ovgather", "check",
                           str(GOOD)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    modules = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")]
    assert "ovgather.infer" in modules
    assert not [m for m in modules if m.split(".")[0] == "openvino"]


def test_check_without_target_runtime_imports_none_of_its_code():
    """``--target-runtime`` off costs a check nothing: neither the release table nor the
    target walk is imported (nor the symbolic walk of ``infer --symbols``)."""
    llama = str(ROOT / "ir_corpus/llama_deep/pytorch_dynamic.xml")
    code = ("import sys; from ovgather.cli import main; "
            f"main(['check', '--json', {llama!r}]); "
            "print([m for m in sys.modules "
            "if m.endswith(('.target', '.releases', '.symbols', '.symbolic'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.splitlines()
    assert out[-1] == "[]"
    with_target = code.replace("'--json'", "'--json', '--target-runtime', '2024.0'")
    out = subprocess.run([sys.executable, "-c", with_target], capture_output=True,
                         text=True, cwd=ROOT).stdout.splitlines()
    assert any(m.endswith(".releases") for m in ast.literal_eval(out[-1]))  # it sees them
