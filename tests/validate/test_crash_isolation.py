"""A crash of OpenVINO's native code (a signal) while validate runs layers is a reported
layer, ``crashed``, never the end of ovgather: the runtime runs in a worker process, the
group it crashed on is split until the culprit is found, the other layers are proved,
and the exit code is 1. The crash is stubbed: the worker runs a function that sends
itself SIGSEGV when it sees the marked layer (tests/helpers/crashing.py)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from crashing import run_cases_or_die, squares_or_die

import ovgather.validate.gathers as gathers
from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.runtime import RuntimeCrash, Worker, run_split
from ovgather.validate import validate

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "mixed_ops.xml"
MARKED = "pick_rows_nd8"


def test_a_crash_names_the_layer_and_the_others_are_proved(monkeypatch) -> None:
    monkeypatch.setattr(gathers, "RUN_CASES",
                        functools.partial(run_cases_or_die, marker=MARKED))
    report = validate(read_ir(SAMPLE))
    status = {lv.name: lv.status for lv in report.layers}
    assert status.pop(MARKED) == "crashed"
    assert status and set(status.values()) == {"ok"}  # every other layer proved
    (crashed,) = [lv for lv in report.layers if lv.status == "crashed"]
    assert "the runtime crashed here" in crashed.message and "SIGSEGV" in crashed.message
    assert not report.ok


def test_the_cli_reports_the_crash_and_exits_1(monkeypatch, capsys) -> None:
    monkeypatch.setattr(gathers, "RUN_CASES",
                        functools.partial(run_cases_or_die, marker=MARKED))
    code = main(["validate", str(SAMPLE), "--json"])
    layers = json.loads(capsys.readouterr().out)["models"][0]["layers"]
    assert code == 1
    assert [lv["name"] for lv in layers if lv["status"] == "crashed"] == [MARKED]
    assert all(lv["status"] == "ok" for lv in layers if lv["name"] != MARKED)


def test_run_split_finds_the_items_that_crash_alone() -> None:
    with Worker() as worker:
        results = run_split(worker, squares_or_die, list(range(10)), bad={3, 7})
        assert worker.starts >= 2  # the child was started again after the crashes
    crashed = [i for i, r in enumerate(results) if isinstance(r, RuntimeCrash)]
    assert crashed == [3, 7]
    assert [r for r in results if not isinstance(r, RuntimeCrash)] == [
        i * i for i in range(10) if i not in (3, 7)]
    assert results[3].signal_name == "SIGSEGV"

