"""``ovgather convert MODEL.xml --to opset5|opset8 -o OUT.xml [--in-place] [--json]``.

Reads the IR, converts every GatherND (passes/convert_gather_nd.py), re-checks the shapes
of the result and writes OUT.xml + OUT.bin atomically. Nothing is written when the
conversion or the check finds a problem, and the input is never overwritten unless OUT is
the input and ``--in-place`` is given (SPEC.md §3).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import RewriteError, UsageError

__all__ = ["add_parsers", "run"]

EXIT_OK, EXIT_PROBLEM = 0, 1


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``convert`` on ``sub``."""
    p = sub.add_parser("convert", help="convert every GatherND to opset5 or opset8",
                       description="Rewrite every GatherND into the requested version, "
                       "inserting a Reshape where the batch layouts differ.")
    p.add_argument("model", metavar="MODEL.xml")
    p.add_argument("--to", required=True, choices=("opset5", "opset8"))
    p.add_argument("-o", "--output", required=True, metavar="OUT.xml")
    p.add_argument("--in-place", action="store_true",
                   help="allow OUT to be MODEL itself (it is replaced atomically)")
    p.add_argument("--json", action="store_true", help="machine output on stdout")
    p.set_defaults(run=run)


def _check_paths(args: argparse.Namespace) -> None:
    from ..atomic import clashes_with_model

    out = Path(args.output)
    if out.suffix.lower() != ".xml":
        raise UsageError(f"OUT must be an .xml path (its .bin goes beside it), but got '{out}'")
    clash = clashes_with_model([out, out.with_suffix(".bin")], args.model)
    if clash is not None and not args.in_place:
        raise UsageError(f"OUT '{out}' would overwrite the input model ('{clash}' is one of "
                         "its files); pass --in-place to replace it")


def _problems(report: Any) -> list[Any]:
    return [entry for entry in report.layers if entry.status in ("invalid", "mismatch")]


def run(args: argparse.Namespace) -> int:
    """Convert, check, write; exit 0, or 1 with nothing written when the model is bad."""
    from ..ir import read_ir, write_ir
    from ..passes.convert_gather_nd import ConvertGatherND
    from ..rewrite import reinfer

    _check_paths(args)
    G = read_ir(args.model)
    before = _problems(reinfer(G))
    if before:  # converting would carry a broken model over: say so, write nothing
        return _fail(args.model, before, "the input model has a problem, so nothing was "
                     "converted (see ovgather check)")
    try:
        result = ConvertGatherND(args.to).call(G)
    except RewriteError as err:  # a layer of the model breaks a rule: exit 1, no OUT
        print(f"error: {err.located(file=args.model)}", file=sys.stderr)
        return EXIT_PROBLEM
    report = reinfer(G)
    problems = _problems(report)
    if problems:
        return _fail(args.model, problems, "the converted model does not check, so it was "
                     "not written")
    write_ir(G, args.output)
    if args.json:
        print(json.dumps({"path": args.model, "output": args.output, "to": args.to,
                          "modified": result.modified, "converted": result.changes,
                          "summary": report.summary}))
    else:
        _print_human(args, result.changes)
    return EXIT_OK


def _fail(model: str, problems: list[Any], what: str) -> int:
    """One ``error:`` line naming the first problem layer; exit code 1."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    print(f"error: {model}: {what}: {_describe(problems[0])}{more}", file=sys.stderr)
    return EXIT_PROBLEM


def _describe(entry: Any) -> str:
    where = f"line {entry.line}, " if getattr(entry, "line", None) else ""
    return (f"{where}layer '{entry.name}' (id {entry.id}) is {entry.status}: "
            f"{getattr(entry, 'message', '') or ''}").rstrip(": ")


def _print_human(args: argparse.Namespace, changes: list[dict[str, Any]]) -> None:
    if not changes:
        print(f"{args.model}: every GatherND already is {args.to}; wrote {args.output}")
        return
    for change in changes:
        added = ", ".join(f"{c['type']} '{c['name']}'" for c in change["inserted"])
        tail = f"; inserted {added}" if added else ""
        print(f"{change['name']} (id {change['id']}): GatherND {change['from']} -> "
              f"{change['to']}, batch_dims={change['batch_dims']}{tail}")
    print(f"converted {len(changes)} GatherND layer(s); wrote {args.output}")

