"""A reshape to a dynamic dim is proved across its range, and says what it tried.

OpenVINO's ``Model.reshape`` is the anchor for what it accepts: each refusal here is a
model OpenVINO reshapes to ``?`` but refuses at a static size inside the range.
"""

from __future__ import annotations

import json
from pathlib import Path

import openvino as ov
import pytest

from ovgather import errors
from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.passes.reshape import reshape
from ovgather.passes.reshape_range import probes

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
    code = main(["reshape", str(GPT2), "--shape", "input_ids[2,12],attention_mask[2,12]",
                 "--fix", "--dry-run"])
    assert code == 0 and "warning:" not in capsys.readouterr().err
