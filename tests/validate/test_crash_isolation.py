"""A crash of OpenVINO's native code (a signal) while validate runs layers is a reported
layer, ``crashed``, never the end of ovgather: the runtime runs in a worker process, the
group it crashed on is split until the culprit is found, the other layers are proved,
and the exit code is 1. The crash is stubbed: the worker runs a function that sends
itself SIGSEGV when it sees the marked layer (tests/helpers/crashing.py)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from crashing import (
    run_cases_or_die,
    shapes_crashing_at,
    shapes_refusing_many,
    squares_or_die,
)

import ovgather.validate.gathers as gathers
import ovgather.validate.runner as runner
from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.runtime import RuntimeCrash, Worker, run_split
from ovgather.validate import prove_all_layers, validate

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



def test_all_layers_traces_a_crash_to_its_layer_and_proves_the_rest(monkeypatch) -> None:
    import networkx as nx

    monkeypatch.setattr(runner, "RUN_SHAPES",
                        functools.partial(shapes_crashing_at, marker="fc_add"))
    G = read_ir(SAMPLE)
    report = prove_all_layers(G)
    status = {lp.name: lp.status for lp in report.layers}
    assert status["fc_add"] == "crashed"
    crashed = next(lp for lp in report.layers if lp.name == "fc_add")
    assert "SIGSEGV" in crashed.message and "the runtime crashed here" in crashed.message
    node = next(n for n in G if G.nodes[n]["name"] == "fc_add")
    after = {G.nodes[n]["name"] for n in nx.descendants(G, node)}
    others = set(status) - after - {"fc_add"}
    assert after and others
    assert all(status[name] == "not run" for name in after if name in status)
    assert {status[name] for name in others} <= {"ok", "looser"}  # the rest is proved
    assert not report.ok


def test_all_layers_proves_in_smaller_groups_when_many_outputs_are_refused(monkeypatch
                                                                            ) -> None:
    monkeypatch.setattr(runner, "RUN_SHAPES",
                        functools.partial(shapes_refusing_many, limit=3))
    G = read_ir(SAMPLE)
    report = prove_all_layers(G)
    s = report.summary
    assert report.ok and s["proved"] == s["layers"]  # every layer, in groups of 3 at most
    assert report.compiles > 1
    monkeypatch.undo()
    unbounded = prove_all_layers(G)  # the same proof without the refusal: one compile
    assert unbounded.compiles == 1 and unbounded.summary["proved"] == s["proved"]


def test_a_proof_that_is_refused_even_layer_by_layer_fails(monkeypatch) -> None:
    monkeypatch.setattr(runner, "RUN_SHAPES",
                        functools.partial(shapes_refusing_many, limit=-1))
    report = prove_all_layers(read_ir(SAMPLE))
    assert report.nothing_proved and not report.ok
