"""``ovgather stats`` and ``ovgather info`` on the command line: text, JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from ovgather.cli import main

ROOT = Path(__file__).resolve().parents[2]
LLAMA = str(ROOT / "ir_corpus/llama/pytorch_dynamic.xml")


def test_stats_json_and_text(capsys):
    assert main(["stats", LLAMA, "--shape", "input_ids[1,8],attention_mask[1,8]",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["total"]["weight_bytes"] == 93977
    assert doc["total"]["flops"] > 0 and doc["layers"] is None
    assert main(["stats", LLAMA, "--shape", "input_ids[1,8],attention_mask[1,8]", "--by",
                 "type"]) == 0
    out = capsys.readouterr().out
    assert "MatMul" in out and "FLOPs" in out and "peak activation" in out


def test_stats_symbols(capsys):
    assert main(["stats", LLAMA, "--symbols", "input_ids[B,S],attention_mask[B,S]",
                 "--shape", "input_ids[1,16],attention_mask[1,16]", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "B*S" in doc["total"]["flops"]
    assert doc["total"]["at"]["flops"] == 1319715 and doc["at"] == {"B": 1, "S": 16}


def test_stats_by_layer_json_lists_layers(capsys):
    assert main(["stats", str(ROOT / "ir_samples/gather_nd8_bd2.xml"), "--by", "layer",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [row["type"] for row in doc["layers"]] == ["Parameter", "Const", "GatherND",
                                                       "Result"]


def test_info(capsys):
    assert main(["info", LLAMA]) == 0
    out = capsys.readouterr().out
    assert "input_ids: [?,?] i64" in out and "IR v11" in out
    assert main(["info", LLAMA, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["weights"]["bytes"] == 93977 and doc["inputs"][0]["name"] == "input_ids"


def test_bad_model_is_one_error_line(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "missing.xml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1
    assert main(["stats", LLAMA, "--symbols", "input_ids[B,2x]"]) == 2
    assert capsys.readouterr().err.startswith("error:")
