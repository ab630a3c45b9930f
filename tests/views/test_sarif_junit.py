"""``check --format sarif`` and ``check --format junit``: the documents CI systems read.

The SARIF log is validated against OASIS' SARIF 2.1.0 JSON schema (tests/data/sarif/), and
every result must point at the XML line of its layer, found here with lxml's ``sourceline``
in the tampered file itself; the JUnit XML is read by ``junitparser``, as a CI dashboard
reads it. The samples are copies of ir_samples/ with known faults put in
(tests/helpers/tampered_irs.py): a mismatch, an invalid and an unknown layer, and a mismatch
inside a Loop's body and inside an If's body.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import junitparser
import pytest
from tampered_irs import CLEAN, FAULTS, ROOT, layer_line, write_samples

from ovgather.cli import main

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())

@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    """A folder with the tampered copies and a clean sample, each with its .bin."""
    return write_samples(tmp_path_factory.mktemp("ci_formats"))


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _validate(log: dict) -> None:
    validator = jsonschema.validators.validator_for(SCHEMA)
    validator.check_schema(SCHEMA)
    validator(SCHEMA, format_checker=validator.FORMAT_CHECKER).validate(log)


# -- SARIF ------------------------------------------------------------------------------------
def test_sarif_validates_and_marks_the_xml_line_of_every_bad_layer(models, capsys,
                                                                   monkeypatch):
    monkeypatch.chdir(models)
    code, out, _ = _run(["check", "mixed_ops.xml", "loop_gather.xml", "if_gather.xml",
                         f"{CLEAN}.xml", "--format", "sarif"], capsys)
    assert code == 1
    log = json.loads(out)  # stdout holds the log and nothing else
    _validate(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1  # one run for every model
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "ovgather" and driver["version"] and driver["informationUri"]
    rules = [rule["id"] for rule in driver["rules"]]
    assert set(rules) == {"mismatch", "invalid", "unknown"}
    found = {}
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] == "error"
        physical = result["locations"][0]["physicalLocation"]
        where = physical["artifactLocation"]
        assert where["uriBaseId"] == "%SRCROOT%"
        found[where["uri"], result["properties"]["layerId"]] = (
            result["ruleId"], physical["region"]["startLine"])
    expected = {(f"{name}.xml", path_id): (status, layer_line(models, name, path_id))
                for name, faults in FAULTS.items() for path_id, status in faults.items()}
    assert found == expected
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == models.as_uri() + "/"


def test_the_schema_refuses_a_log_that_breaks_it(models, capsys):
    """The validation can fail: a line 0 and an unknown level are refused."""
    code, out, _ = _run(["check", str(models / "loop_gather.xml"), "--format", "sarif"], capsys)
    assert code == 1
    log = json.loads(out)
    _validate(log)
    for path, value in ((("locations", 0, "physicalLocation", "region", "startLine"), 0),
                        (("level",), "fatal")):
        broken = copy.deepcopy(log)
        holder = broken["runs"][0]["results"][0]
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            _validate(broken)


def test_sarif_of_a_clean_model_has_no_result_and_exits_0(models, capsys):
    code, out, err = _run(["check", str(models / f"{CLEAN}.xml"), "--format", "sarif"], capsys)
    assert code == 0 and err == ""
    log = json.loads(out)
    _validate(log)
    run = log["runs"][0]
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]
    assert "originalUriBaseIds" not in run  # an absolute path is a file: URI of its own


def test_an_absolute_path_is_a_file_uri(models, capsys):
    code, out, _ = _run(["check", str(models / "loop_gather.xml"), "--format", "sarif"], capsys)
    assert code == 1
    where = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"] == {"uri": (models / "loop_gather.xml").as_uri()}


def test_a_model_that_cannot_be_used_is_a_tool_notification(models, capsys):
    missing = models / "missing.xml"
    code, out, err = _run(["check", str(missing), str(models / "loop_gather.xml"),
                           "--format", "sarif"], capsys)
    assert code == 2
    assert err.count("error:") == 1 and str(missing) in err  # the error line is still printed
    log = json.loads(out)
    _validate(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    (note,) = invocation["toolExecutionNotifications"]
    assert str(missing) in note["message"]["text"]
    assert len(log["runs"][0]["results"]) == 1  # the other model is still checked


def test_target_runtime_problems_are_results_of_their_own_rule(models, capsys):
    code, out, _ = _run(["check", str(models / "mixed_ops.xml"), "--target-runtime", "2023.0",
                         "--format", "sarif"], capsys)
    assert code == 1
    log = json.loads(out)
    _validate(log)
    rules = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    target = [r for r in log["runs"][0]["results"] if r["ruleId"] == "target-runtime"]
    assert "target-runtime" in rules and len(target) == 1
    region = target[0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == layer_line(models, "mixed_ops", "16")
    assert "2023.0" in target[0]["message"]["text"]


# -- JUnit ------------------------------------------------------------------------------------
def test_junit_has_a_test_case_per_model_and_one_failure_listing_its_layers(models, capsys,
                                                                            tmp_path):
    missing = models / "missing.xml"
    paths = [models / "mixed_ops.xml", models / "loop_gather.xml", models / "if_gather.xml",
             models / f"{CLEAN}.xml", missing]
    code, out, _ = _run(["check", *map(str, paths), "--format", "junit"], capsys)
    assert code == 2  # as check's: a model could not be used
    report = tmp_path / "junit.xml"
    report.write_text(out, encoding="utf-8")
    xml = junitparser.JUnitXml.fromfile(str(report))
    (suite,) = list(xml)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 3, 1, 0)
    cases = {case.name: case for case in suite}
    assert list(cases) == [str(p) for p in paths]
    for name, faults in FAULTS.items():
        (failure,) = cases[str(models / f"{name}.xml")].result
        assert isinstance(failure, junitparser.Failure)
        lines = failure.text.splitlines()
        assert len(lines) == len(faults)
        for path_id, status in faults.items():
            where = f"{models / f'{name}.xml'}:{layer_line(models, name, path_id)}: {status}: "
            assert sum(line.startswith(where) and f"(id {path_id}," in line
                       for line in lines) == 1, (where, lines)
    assert cases[str(models / f"{CLEAN}.xml")].is_passed
    (error,) = cases[str(missing)].result
    assert isinstance(error, junitparser.Error) and str(missing) in error.message


def test_junit_of_clean_models_passes(models, capsys, tmp_path):
    code, out, _ = _run(["check", str(models / f"{CLEAN}.xml"), "--format", "junit"], capsys)
    assert code == 0
    report = tmp_path / "junit.xml"
    report.write_text(out, encoding="utf-8")
    (suite,) = list(junitparser.JUnitXml.fromfile(str(report)))
    assert (suite.tests, suite.failures, suite.errors) == (1, 0, 0)


# -- the options ------------------------------------------------------------------------------
def test_format_json_is_json(models, capsys):
    path = str(models / "mixed_ops.xml")
    assert _run(["check", path, "--format", "json"], capsys)[1] == \
        _run(["check", path, "--json"], capsys)[1]


def test_json_with_another_format_is_a_usage_error(models, capsys):
    code, out, err = _run(["check", str(models / f"{CLEAN}.xml"), "--json", "--format", "sarif"],
                          capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and "--format sarif" in err


def test_skip_non_ir_passes_over_an_xml_that_is_no_ir_with_a_note(models, capsys, tmp_path):
    pom = tmp_path / "pom.xml"
    pom.write_text("<?xml version='1.0'?>\n<project><modelVersion>4.0.0</modelVersion></project>\n")
    clean = str(models / f"{CLEAN}.xml")
    code, out, err = _run(["check", str(pom), clean], capsys)
    assert code == 2 and "root element must be <net>" in err  # without the option: an error
    code, out, err = _run(["check", str(pom), clean, "--skip-non-ir"], capsys)
    assert code == 0
    assert err == f"note: {pom}: skipped: not an OpenVINO IR (its root element is <project>, " \
                  "not <net>)\n"
    assert out.strip().endswith(": OK: 4 layers, 4 ok, 0 mismatch, 0 invalid, 0 unchecked")


def test_skip_non_ir_reads_the_root_in_any_encoding(models, capsys, tmp_path):
    manifest = tmp_path / "AndroidManifest.xml"
    manifest.write_text("<?xml version='1.0' encoding='UTF-16'?>\n<manifest/>\n",
                        encoding="utf-16")
    code, _, err = _run(["check", str(manifest), "--skip-non-ir"], capsys)
    assert code == 0 and "its root element is <manifest>" in err


@pytest.mark.parametrize("text", ["", "not XML at all", "<net version='11'><layers>",
                                  "<!DOCTYPE project>\n<project/>\n"])
def test_skip_non_ir_still_refuses_a_broken_file(text, capsys, tmp_path):
    """Only a well-formed start with another root element is skipped: an empty file, one
    that is no XML, a truncated IR, or a file with a DTD (never parsed) are errors, as any
    broken IR."""
    broken = tmp_path / "model.xml"
    broken.write_text(text)
    code, out, err = _run(["check", str(broken), "--skip-non-ir"], capsys)
    assert code == 2 and out == "" and err.startswith("error: ") and "note:" not in err
