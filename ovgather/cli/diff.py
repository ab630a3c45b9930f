"""``ovgather diff A.xml B.xml [--all] [--json]``: what changed between two IRs, layer by
layer (``ovgather.comparison.diff_report``), without running either.

Printed like ``git diff --stat``: one summary line, one line per thing that differs (a
layer, a replacement, an input or output, a model field) with what differs in it, then
the details of each change. Exit codes (docs/cli/diff.md): 0 the models are equal, 1 they
differ, 2 a model cannot be read.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from .common import EXIT_OK, EXIT_PROBLEM, add_json
from .models import IR_HELP, refuse_weights
from .output import print_json, say_line, say_record

__all__ = ["add_parsers", "run_diff", "LISTED"]

#: lines of one section printed at most without --all
LISTED = 40


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``diff`` on ``sub``."""
    p = sub.add_parser(
        "diff", help="what changed between two IRs, layer by layer",
        description="Pair the layers of A and B (by weights, structure, friendly and "
        "tensor names, names only where the structure agrees: a re-export that renames "
        "every layer still pairs) and say what changed: added, removed and changed "
        "layers (type, version, each attribute, each port's dims, element type and "
        "tensor names, rt_info, the weights by content), runs of layers replaced by "
        "other runs, the model's inputs and outputs, and the model's rt_info. Nothing "
        "is run.")
    p.add_argument("model", metavar="A", help=f"the model before: {IR_HELP}")
    p.add_argument("other", metavar="B", help="the model after (an IR too)")
    p.add_argument("--all", action="store_true",
                   help=f"list every difference (by default at most {LISTED} lines of each "
                   "section; --json always has them all)")
    add_json(p)
    p.set_defaults(run=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    from ..comparison.diff_report import diff

    for path in (args.model, args.other):
        refuse_weights(path)
        if path.lower().endswith(".onnx"):
            raise UsageError("diff takes an IR .xml: save the .onnx model as an IR first "
                             "(openvino.save_model), then diff the two IRs", file=path)
    report = diff(args.model, args.other)
    if args.json:
        print_json(report.to_dict())
    else:
        _print_human(report, None if args.all else LISTED)
    return EXIT_OK if report.equal else EXIT_PROBLEM


def _ref(ref: dict | None) -> str:
    return "" if ref is None else f"{ref['name']} ({ref['type']})"


def _whats(changes: list[dict]) -> str:
    """The changes in a few words: ``version, attribute batch_dims, output 0 dims``."""
    said = [c["what"] if c.get("where") is None else
            (f"{c['where']} {c['what']}" if c["where"].startswith(("input", "output"))
             else f"{c['what']} {c['where']}") for c in changes]
    return ", ".join(dict.fromkeys(said))


def _print_human(report: Any, limit: int | None) -> None:
    from ..comparison.diff_report import change_text, stat_line

    s = report.summary
    how = ", ".join(f"{n} by {k}" for k, n in s["paired_by"].items())
    say_record(stat_line(report))
    say_line(f" layers   {s['layers_a']} in A, {s['layers_b']} in B, {s['paired']} paired"
             f"{' (' + how + ')' if how else ''}", hang=10)
    if report.equal:
        return
    rows: list[tuple[str, str, str]] = []
    rows += [("model", "", _whats([c])) for c in report.model]
    for io, word in ((report.inputs, "input"), (report.outputs, "output")):
        for e in io:
            name = e["a"] if e["b"] in (None, e["a"]) else (e["b"] if e["a"] is None
                                                            else f"{e['a']} -> {e['b']}")
            rows.append((word, name, e["status"] if e["status"] != "changed"
                         else _whats(e["changes"])))
    for d in report.layers:
        name = _ref(d.a or d.b)
        if d.status == "renamed":
            name = f"{_ref(d.a)} -> {d.b['name']}"
        rows.append((d.status, name, _whats(d.changes)))
    for r in report.replaced:
        rows.append(("replaced", _run(r["removed"]), f"by {_run(r['added'])}"))
    _section(rows, limit, lambda r: f" {r[0]:8s} {r[1]}".rstrip() + (f" | {r[2]}" if r[2]
                                                                      else ""))
    details = [(e["a"] or e["b"], e["changes"]) for e in (*report.inputs, *report.outputs)
               if e["changes"]]
    details += [(_ref(d.a), d.changes) for d in report.layers
                if d.status == "changed"]
    if report.model:
        details.insert(0, ("the model", report.model))
    if not details:
        return
    say_line("")
    shown = details if limit is None else details[:limit]
    for what, changes in shown:
        say_line(f"{what}:")
        for c in changes:
            say_line(f"    {change_text(c)}", hang=6)
    if len(shown) < len(details):
        say_line(f"… and {len(details) - len(shown)} more (--all or --json lists them)")


def _run(refs: list[dict]) -> str:
    """A run of layers: ``a (X), b (Y)`` or, when long, the first ones and a count."""
    if len(refs) <= 3:
        return ", ".join(map(_ref, refs))
    return f"{', '.join(map(_ref, refs[:2]))} and {len(refs) - 2} more"


def _section(rows: list[Any], limit: int | None, line: Any) -> None:
    shown = rows if limit is None else rows[:limit]
    for row in shown:
        say_line(line(row), hang=10)
    if len(shown) < len(rows):
        say_line(f" … and {len(rows) - len(shown)} more (--all or --json lists them)")
