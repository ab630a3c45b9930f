"""docs/schema/*.json describe the --json output of every subcommand, field by field, and
docs/cli/ lists every subcommand and option: real output is validated against them."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from ovgather.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schema"


def _schema(command: str) -> dict:
    schema = json.loads((SCHEMAS / f"{command}.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_there_is_one_schema_per_subcommand():
    assert {p.stem for p in SCHEMAS.glob("*.json")} == set(_commands())


RUNS = [
    ("check", ["check", "ir_samples/gather_nd8_bd3.xml", "ir_samples/mixed_ops.xml", "--all"]),
    ("check", ["check", "ir_samples/wrong_mixed_ops_nd8_dim.xml"]),
    ("check", ["check", "ir_samples/onnx/gathernd13_bd2_dynamic.xml",
               "--shape", "data[2,3,4,5],indices[2,4,6,1]"]),
    ("check", ["check", "ir_samples/gather_versions.xml", "--shape", "data=[1,64,64,320]"]),
    ("infer", ["infer", "ir_samples/onnx/gathernd13_bd2_dynamic.xml",
               "--shape", "data[2,3,4,5],indices[2,4,6,1]"]),
    ("infer", ["infer", "ir_samples/dynamic_rank.xml"]),
    ("convert", ["convert", "ir_samples/gather_nd8_bd3.xml", "--to", "opset5", "-o", "o.xml"]),
    ("convert", ["convert", "ir_samples/dynamic_gathers.xml", "--to", "opset8", "-o", "p.xml"]),
    ("convert", ["convert", "ir_samples/gather_versions.xml", "--to", "opset5", "-o", "q.xml"]),
    ("reshape", ["reshape", "ir_samples/mixed_ops.xml", "--shape", "x=[?,3,8]", "-o", "r.xml"]),
    ("reshape", ["reshape", "ir_samples/mixed_ops.xml", "--shape", "x=[4,3,8],ids=[5,2,1]",
                 "--dry-run"]),
    ("validate", ["validate", "ir_samples/gather_versions.xml", "ir_samples/mixed_ops.xml"]),
    ("validate", ["validate", "ir_samples/dynamic_gathers.xml", "--whole-model"]),
    ("validate", ["validate", "ir_samples/mixed_ops.xml", "ir_samples/dynamic_rank.xml",
                  "--all-layers"]),
    ("diff", ["diff", "ir_samples/mixed_ops.xml", "ir_samples/wrong_mixed_ops_nd8_dim.xml"]),
    ("reduce", ["reduce", "ir_samples/wrong_mixed_ops_nd8_dim.xml", "--until", "mismatch",
                "-o", "small.xml"]),
    ("precision", ["precision", "ir_samples/mixed_ops.xml", "--target", "f16"]),
    ("stats", ["stats", "ir_samples/mixed_ops.xml"]),
    ("stats", ["stats", "ir_samples/loop_gather.xml", "--by", "layer"]),
    ("info", ["info", "ir_samples/if_gather.xml"]),
    ("explain", ["explain", "ir_samples/gather_nd8_bd3.xml", "--layer", "gather_nd8_bd3"]),
    ("explain", ["explain", "ir_samples/gather_versions.xml", "--layer", "gather7_axis_m3_bd1"]),
    ("explain", ["explain", "ir_samples/wrong_gather_nd8_bd3_v5_layout.xml",
                 "--layer", "gather_nd8_bd3"]),
    ("explain", ["explain", "ir_samples/pytorch/torch_gather.xml", "--layer", "7"]),
    ("extract", ["extract", "ir_samples/mixed_ops.xml", "--layer", "pick_rows_nd8", "-o",
                 "bug.xml"]),
    ("show", ["show", "ir_samples/mixed_ops.xml", "-o", "m.dot"]),
    # a blocked reshape, and models whose layers hold bodies (layers listed by path)
    ("reshape", ["reshape", "ir_samples/onnx/gathernd13_bd2_dynamic.xml", "--dry-run",
                 "--shape", "data[2,3,4,5],indices[2,4,6,1]"]),
    ("reshape", ["reshape", "ir_samples/loop_gather.xml", "--shape", "table=[5,4]", "-o",
                 "s.xml"]),
    ("check", ["check", "ir_samples/loop_gather.xml", "ir_samples/if_gather.xml", "--all"]),
    ("check", ["check", "ir_samples/mixed_ops.xml",
               str(ROOT / "ir_corpus" / "llama_kv" / "pytorch_stateful.xml"),
               "--target-runtime", "2024.0"]),
    ("convert", ["convert", str(ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"),
                 "--target-runtime", "2023.0", "-o", "t.xml"]),
    ("convert", ["convert", str(ROOT / "ir_corpus" / "llama_kv" / "pytorch_stateful.xml"),
                 "--target-runtime", "2023.0", "-o", "u.xml"]),
    ("infer", ["infer", "ir_samples/if_gather.xml"]),
    ("infer", ["infer", "ir_samples/dynamic_gathers.xml", "--symbols",
               "data[N,C,10,D,4],nd_indices[N,C,5,2],g_indices[M,J]"]),
    ("infer", ["infer", "ir_samples/loop_gather.xml", "--symbols", "table[R,4]"]),
    ("validate", ["validate", "ir_samples/if_gather.xml", "ir_samples/loop_gather.xml"]),
    ("validate", ["validate", "ir_samples/loop_gather.xml", "--all-layers"]),
    ("explain", ["explain", "ir_samples/loop_gather.xml", "--layer", "4/body/6"]),
    ("compare", ["compare", "ir_samples/mixed_ops.xml", "ir_samples/wrong_mixed_ops_nd8_dim.xml",
                 "--shape", "x=[3,3,8]"]),
    ("compare", ["compare", "ir_samples/gather_nd5_bd3.xml", "ir_samples/gather_nd8_bd3.xml"]),
    ("compare", ["compare", "ir_samples/mixed_ops.xml", "ir_samples/wrong_mixed_ops_nd8_dim.xml",
                 "--shape", "x=[3,3,8]", "--all-layers"]),
]


@pytest.fixture
def samples_copy(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_runs_cover_every_subcommand_and_every_document_shape():
    assert {command for command, _ in RUNS} == set(_commands())
    flags = {flag for _, argv in RUNS for flag in argv if flag.startswith("--")}
    assert {"--all-layers", "--whole-model", "--shape", "--dry-run", "--all"} <= flags


@pytest.mark.parametrize("command,argv", RUNS, ids=[" ".join(a[:2]) for _, a in RUNS])
def test_real_json_output_follows_the_schema(command, argv, samples_copy, capsys):
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    assert code in (0, 1) and out
    jsonschema.validate(json.loads(out), _schema(command))


def test_the_schemas_are_strict_so_an_undocumented_field_fails(samples_copy, capsys):
    main(["check", "ir_samples/gather_nd8_bd3.xml", "--json"])
    doc = json.loads(capsys.readouterr().out)
    doc["models"][0]["undocumented"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, _schema("check"))


def test_every_schema_names_its_exit_codes():
    for path in SCHEMAS.glob("*.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        assert "Exit codes: 0" in schema["description"], path.name


def test_the_cli_reference_covers_every_subcommand_option_and_exit_code():
    text = (ROOT / "docs" / "cli" / "README.md").read_text(encoding="utf-8")
    for code in ("`0`", "`1`", "`2`"):
        assert code in text
    for name, parser in _commands().items():
        page = ROOT / "docs" / "cli" / f"{name}.md"
        assert page.is_file(), f"docs/cli/ has no page for {name}"
        section = page.read_text(encoding="utf-8")
        assert re.search(rf"^# `ovgather {name}\b", section, re.M), page.name
        assert f"({name}.md)" in text, f"docs/cli/README.md does not link {name}.md"
        for action in parser._actions:
            for option in set(action.option_strings) - {"-h", "--help"}:  # said once on top
                assert f"`{option}" in section, (name, option)
    for option in ("--version", "--debug", "--help"):
        assert f"`{option}`" in text


def test_docs_stand_alone():
    """Nothing a user reads (README, docs, the package's docstrings and messages, the
    tools) points at documents outside the repo or at issue numbers."""
    package = ROOT / "ovgather"
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
                 *sorted(SCHEMAS.glob("*.json")), *sorted(package.rglob("*.py")),
                 *sorted(package.rglob("*.pyx")), *sorted((ROOT / "tools").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert "SPEC.md" not in text and "../shared" not in text, path
        assert "openvino-facts" not in text and "user-needs" not in text, path
        assert not re.search(r"\bissues? #?\d", text, re.I), path
        assert "§" not in text, path  # a section of a document the user does not have


def test_every_link_of_the_readme_and_docs_leads_to_a_file_in_the_repo():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)\)", text):
            if "://" in target:
                continue
            path = (page.parent / target).resolve()
            assert path.exists() and ROOT in path.parents, (page.name, target)


def test_the_json_page_names_every_schema():
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    for path in SCHEMAS.glob("*.json"):
        assert f"`{path.name}`" in text, path.name
        assert f"## {path.stem}\n" in text, path.stem
