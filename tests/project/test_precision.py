"""Every OpenVINO compile of the package, the tests and the tools sets its inference
precision: the CPU plugin computes in bf16 (or f16) by default on CPUs that have it, so a
compile that does not say would make a float comparison pass on one machine and fail on
another. A grep over the source text, scripts run in the old releases' venvs included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ovgather.cli import main
from ovgather.runtime.core import INFERENCE_PRECISION, cpu_config

ROOT = Path(__file__).resolve().parents[2]
#: this file's own examples aside
SOURCES = sorted(p for folder in ("ovgather", "tests", "tools") for ext in ("py", "pyx")
                 for p in (ROOT / folder).rglob(f"*.{ext}") if p != Path(__file__).resolve())

#: what sets the precision in a call's arguments: the project's compile properties, or the
#: property itself (a test may state another precision, and set its tolerance from it)
_PINNED = re.compile(r"cpu_config\(|INFERENCE_PRECISION_HINT")


def _arguments(text: str, start: int) -> str:
    """The text between the parenthesis at ``start`` and the one that closes it."""
    depth, end = 0, start
    for end in range(start, len(text)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[start + 1:end]


def _pinned_names(text: str) -> set[str]:
    """Module-level names bound to a dict that sets the precision (``CPU = {...}``)."""
    return {m.group(1) for m in re.finditer(r"^(\w+) = \{[^}]*INFERENCE_PRECISION_HINT",
                                            text, re.M)}


def unpinned(text: str) -> list[str]:
    """Each ``compile_model(…)`` call in ``text`` (code or a script in a string) that
    leaves the precision to the CPU: an OpenVINO ``….compile_model(model, "CPU")`` without
    properties that set it, or a bare ``compile_model(…)`` that is not the project's
    helper (``ovgather.runtime.core.compile_model``, which compiles with ``cpu_config``)."""
    names = _pinned_names(text)
    helper = bool(re.search(r"^\s*from (ovgather\.runtime\.|\.+runtime\.|\.)?core import "
                            r".*\bcompile_model\b", text, re.M)) or "def compile_model(" in text
    found = []
    for m in re.finditer(r"(\.)?\bcompile_model\(", text):
        if text[max(0, m.start() - 4):m.start()] == "def ":
            continue
        args = _arguments(text, m.end() - 1)
        line = text.count("\n", 0, m.start()) + 1
        last = args.rsplit(",", 1)[-1].strip()
        if m.group(1) is None:  # the project's helper, or a name that is not
            if not helper:
                found.append(f"{line}: compile_model({args})")
        elif not (_PINNED.search(args) or last in names
                  or (text[max(0, m.start() - 4):m.start()] == "self" and helper)):
            found.append(f"{line}: .compile_model({args})")
    return found


def test_every_compile_in_the_package_tests_and_tools_sets_the_inference_precision():
    assert len(SOURCES) > 100
    found = {str(p.relative_to(ROOT)): calls for p in SOURCES
             if (calls := unpinned(p.read_text(encoding="utf-8")))}
    assert not found


def test_the_grep_reads_every_place_the_package_compiles():
    """The package's own compiles (its helper and every caller) are among what is read,
    and the helper passes the precision: a product change cannot slip past the grep."""
    compiling = {p.relative_to(ROOT).as_posix() for p in SOURCES
                 if p.is_relative_to(ROOT / "ovgather")
                 and re.search(r"compile_models?\(", p.read_text())}
    assert {"ovgather/runtime/core.py", "ovgather/validate/rows.py"} <= compiling
    helper = (ROOT / "ovgather" / "runtime" / "core.py").read_text(encoding="utf-8")
    assert re.search(r"\.compile_model\([^)]*cpu_config\(", helper)
    assert unpinned(helper.replace("cpu_config(threads)", "{}"))


def test_the_grep_finds_a_compile_that_leaves_the_precision_to_the_cpu():
    assert unpinned('compiled = core.compile_model(model, "CPU")\n') == [
        '1: .compile_model(model, "CPU")']
    assert unpinned('script = """\ncore = Core()\nc = core.compile_model(\n    m, "CPU")\n"""')
    assert unpinned('CPU = {"INFERENCE_NUM_THREADS": 1}\nov.Core().compile_model(m, "CPU", CPU)')
    assert unpinned("from openvino import compile_model\ncompile_model(m)\n")
    assert unpinned("x = ov.compile_model(m)\n")


def test_the_grep_takes_each_way_of_setting_it():
    assert unpinned('ov.Core().compile_model(m, "CPU", cpu_config())\n') == []
    assert unpinned('core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})') == []
    assert unpinned('CPU = {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"}\n'
                    'CORE.compile_model(m, "CPU", CPU)\n') == []
    assert unpinned("from ovgather.runtime.core import compile_model\ncompile_model(m, None)\n"
                    ) == []


def test_the_project_compiles_at_the_precision_it_reports():
    assert cpu_config()["INFERENCE_PRECISION_HINT"] == INFERENCE_PRECISION == "f32"


@pytest.mark.parametrize("mode", [[], ["--whole-model"], ["--all-layers"]],
                         ids=["layers", "whole-model", "all-layers"])
def test_validate_says_at_which_precision_it_ran(mode, capsys):
    sample = str(ROOT / "ir_samples" / "mixed_ops.xml")
    assert main(["validate", *mode, sample, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["models"][0]["inference_precision"] == "f32"
    assert main(["validate", *mode, sample]) == 0
    said = " ".join(capsys.readouterr().out.split())  # a long line is wrapped
    assert "(f32 inference)" in said or "compile(s) at f32" in said


def test_a_target_runtime_check_says_the_precision_of_its_compile_limits(capsys):
    sample = str(ROOT / "ir_samples" / "mixed_ops.xml")
    assert main(["check", sample, "--target-runtime", "2024.0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["models"][0]["target_runtime"]
    assert doc["inference_precision"] == INFERENCE_PRECISION
