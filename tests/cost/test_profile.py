"""``stats --profile``: the CPU plugin's time per node, mapped back to the IR layers each
node was made from (``cost/timing.py``, ``runtime/profiling.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

import ovgather as og
from ovgather.cli import main
from ovgather.cost.timing import profile
from ovgather.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
TRANSFORMERS = ["bert/pytorch_dynamic", "gpt2/pytorch_dynamic", "llama/pytorch_dynamic",
                "t5/pytorch_dynamic", "vit/onnx_dynamic", "whisper/pytorch_dynamic"]


@pytest.fixture(scope="module")
def profiles():
    return {m: profile(og.read_ir(ROOT / "ir_corpus" / f"{m}.xml"), iterations=5)
            for m in TRANSFORMERS}


def test_nearly_all_the_time_of_the_corpus_transformers_reaches_ir_layers(profiles):
    """At least 95% of the runtime's execution time is mapped to IR layers (what is left:
    the plugin's own reorders and converts, which no IR layer names)."""
    coverage = {m: p.coverage for m, p in profiles.items()}
    assert all(c >= 0.9 for c in coverage.values()), coverage  # one noisy run at worst
    assert sorted(coverage.values())[len(coverage) // 2] >= 0.95, coverage
    assert sum(p.mapped_ms for p in profiles.values()) >= \
        0.95 * sum(p.total_ms for p in profiles.values()), coverage


def test_every_mapped_layer_is_a_layer_of_the_ir_and_times_add_up(profiles):
    for m, p in profiles.items():
        names = {a["name"] for _, a in og.read_ir(ROOT / "ir_corpus" / f"{m}.xml")
                 .nodes(data=True)}
        assert set(p.layer_ms) <= names
        unmapped = sum(ms for _, _, ms in p.unmapped)
        assert p.mapped_ms + unmapped == pytest.approx(p.total_ms, rel=1e-6, abs=1e-9)


def test_the_attention_decomposed_by_the_plugin_is_given_to_its_ir_layer(profiles):
    """The CPU plugin cuts ScaledDotProductAttention into MatMul, Softmax, … pieces that
    lose the name; their time goes to the SDPA layer, not to 'not in the IR'."""
    p = profiles["bert/pytorch_dynamic"]
    sdpa = [n for n in p.layer_ms if n.endswith("ScaledDotProductAttention")]
    assert sdpa and all(p.layer_ms[n] > 0 for n in sdpa)
    assert not any(t in ("Softmax", "MatMul") for _, t, _ in p.unmapped)


def test_the_cli_profile_validates_against_the_schema(capsys):
    schema = json.loads((ROOT / "docs" / "schema" / "stats.json").read_text())
    code = main(["stats", str(ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"),
                 "--profile", "--iterations", "2", "--json"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["profile"]["layers"] and doc["profile"]["coverage"] > 0.5
    code = main(["stats", str(ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"),
                 "--profile", "--iterations", "1", "--top", "3"])
    out = capsys.readouterr().out
    assert code == 0 and "CPU time:" in out and "in IR layers" in out


def test_a_sized_state_is_refused_the_profile_runs_from_the_initial_one():
    G = og.read_ir(ROOT / "ir_corpus/llama_kv/pytorch_stateful.xml")
    state = "past_key_values.0.keypresent.0.key"
    with pytest.raises(UsageError, match=re.escape(f"size '{state}'")):
        profile(G, {"input_ids": "[1,4]", state: "[1,2,6,8]"}, iterations=1)
