"""``ovgather convert MODEL.xml (--to opset5|opset8 | --target-runtime RELEASE) -o OUT.xml
[--in-place] [--json]``.

Reads the IR, converts every GatherND (passes/convert_gather_nd.py) or rewrites every layer
an older OpenVINO release cannot load or compile (passes/downgrade.py), re-checks the shapes
of the result and writes OUT.xml + OUT.bin atomically. Nothing is written when the
conversion or the check finds a problem, and the input is never overwritten unless OUT is
the input and ``--in-place`` is given; nothing is written either when the model needs no
change (docs/cli/convert.md).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..errors import RewriteError
from .common import EXIT_OK, EXIT_PROBLEM, add_json, check_output
from .models import add_model_argument, load
from .output import Progress, error, print_json, say_line

__all__ = ["add_parsers", "run"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``convert`` on ``sub``."""
    p = sub.add_parser("convert", help="convert every GatherND to opset5 or opset8, or "
                       "rewrite a model for an older OpenVINO release",
                       description="Rewrite every GatherND into the requested version, "
                       "inserting a Reshape where the batch layouts differ; or rewrite "
                       "every layer an older OpenVINO release cannot load or compile into "
                       "ops it runs, with the same outputs.")
    add_model_argument(p, onnx=False)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--to", choices=("opset5", "opset8"),
                      help="the GatherND version to convert to: opset5 (OpenVINO-style, batch "
                      "dims flattened) or opset8 (ONNX-style, batch dims kept)")
    what.add_argument("--target-runtime", metavar="RELEASE",
                      help="the OpenVINO release to deploy to (2023.0, 2024.0, 2025.0; a "
                      "patch such as 2023.0.2 is the same): every layer it cannot read or "
                      "compile is rewritten, or the command exits 1 naming the layers it "
                      "cannot rewrite")
    p.add_argument("-o", "--output", required=True, metavar="OUT.xml",
                   help="the IR to write (OUT.bin goes beside it); written only when "
                   "something was converted")
    p.add_argument("--in-place", action="store_true",
                   help="allow OUT to be MODEL itself (it is replaced atomically)")
    add_json(p)
    p.set_defaults(run=run)


def _problems(report: Any) -> list[Any]:
    return [entry for entry in report.layers if entry.status in ("invalid", "mismatch")]


def run(args: argparse.Namespace) -> int:
    """Convert, check, write; exit 0, or 1 with nothing written when the model is bad."""
    from ..edit import reinfer
    from ..ir import write_ir
    from ..passes.convert_gather_nd import ConvertGatherND

    if args.target_runtime is not None:
        return _run_downgrade(args)
    check_output(Path(args.output), args.model, args.in_place)
    with Progress(5, unit="step") as bar:
        loaded = _load_checked(args, bar)
        if isinstance(loaded, int):
            return loaded
        G, _ = loaded
        bar.describe(f"converting GatherND to {args.to}")
        try:
            result = ConvertGatherND(args.to).call(G)
        except RewriteError as err:  # a layer of the model breaks a rule: exit 1, no OUT
            error(str(err.located(file=args.model)))
            return EXIT_PROBLEM
        bar.update()
        bar.describe("checking the converted model")
        report = reinfer(G)
        problems = _problems(report)
        if problems:
            return _fail(args.model, problems, "the converted model does not check, so it "
                         "was not written")
        bar.update()
        if result.changes:
            bar.describe(f"writing {os.path.basename(args.output)}")
            write_ir(G, args.output)
        bar.update()
    if args.json:
        print_json({"path": args.model,
                    "output": args.output if result.changes else None, "to": args.to,
                    "modified": result.modified, "converted": result.changes,
                    "summary": report.summary})
    else:
        _print_human(args, G, result.changes)
    return EXIT_OK


def _load_checked(args: argparse.Namespace, bar: Progress) -> tuple[Any, Any] | int:
    """MODEL read and checked: (graph, check report), or exit code 1 (nothing converted)
    when a layer is invalid or mismatch: converting would carry a broken model over."""
    from ..edit import reinfer

    G = load(args.model, bar, args.debug, ir_only=True)
    bar.update()
    bar.describe(f"checking {G.number_of_nodes():,} layers")
    report = reinfer(G)
    before = _problems(report)
    if before:
        return _fail(args.model, before, "the input model has a problem, so nothing was "
                     "converted (see ovgather check)")
    bar.update()
    return G, report


def _fail(model: str, problems: list[Any], what: str) -> int:
    """One ``error:`` line naming the first problem layer; exit code 1."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    error(f"{model}: {what}: {_describe(problems[0])}{more}")
    return EXIT_PROBLEM


def _describe(entry: Any) -> str:
    where = f"line {entry.line}, " if getattr(entry, "line", None) else ""
    return (f"{where}layer '{entry.name}' (id {entry.id}) is {entry.status}: "
            f"{getattr(entry, 'message', '') or ''}").rstrip(": ")


def _print_human(args: argparse.Namespace, G: Any, changes: list[dict[str, Any]]) -> None:
    if not changes:
        from ..passes.convert_gather_nd import count_gather_nd

        found = count_gather_nd(G)
        why = (f"its {found} GatherND layer(s) already are {args.to}" if found
               else "it has no GatherND layer")
        say_line(f"{args.model}: nothing to convert ({why}); nothing written")
        return
    for change in changes:
        added = ", ".join(f"{c['type']} '{c['name']}'" for c in change["inserted"])
        tail = f"; inserted {added}" if added else ""
        say_line(f"{change['name']} (id {change['id']}): GatherND {change['from']} -> "
                 f"{change['to']}, batch_dims={change['batch_dims']}{tail}")
    say_line(f"converted {len(changes)} GatherND layer(s); wrote {args.output}")



def _run_downgrade(args: argparse.Namespace) -> int:
    """``--target-runtime``: rewrite for the release, check, write; exit 1 naming every
    layer there is no rewrite for, with nothing written."""
    from ..edit import reinfer
    from ..ir import write_ir
    from ..ops.core.releases import release_of
    from ..passes.downgrade import Downgrade, DowngradeError

    release = release_of(args.target_runtime)
    check_output(Path(args.output), args.model, args.in_place)
    with Progress(4, unit="step") as bar:
        loaded = _load_checked(args, bar)
        if isinstance(loaded, int):
            return loaded
        G, report = loaded
        bar.describe(f"rewriting for OpenVINO {release}")
        try:
            result = Downgrade(release).call(G)
        except DowngradeError as err:
            err.located(file=args.model)
            if args.json:
                print_json({"path": args.model, "output": None, "target_runtime": release,
                            "modified": False, "converted": [], "refused": err.refused,
                            "summary": report.summary})
            error(str(err))
            if not args.json:
                for refused in err.refused[1:]:
                    say_line(f"  also: {refused['type']} '{refused['name']}' (id {refused['id']}"
                             f"{_line(refused)}): {refused['why']}")
            return EXIT_PROBLEM
        bar.update()
        if result.modified:
            report = reinfer(G)
        problems = _problems(report)
        if problems:  # pragma: no cover - a rewrite that breaks a shape rule
            return _fail(args.model, problems, "the rewritten model does not check, so it "
                         "was not written")
        if result.modified:
            bar.describe(f"writing {os.path.basename(args.output)}")
            write_ir(G, args.output)
        bar.update()
    if args.json:
        print_json({"path": args.model, "output": args.output if result.modified else None,
                    "target_runtime": release, "modified": result.modified,
                    "converted": result.changes, "refused": [], "summary": report.summary})
        return EXIT_OK
    if not result.modified:
        say_line(f"{args.model}: nothing to convert (OpenVINO {release} reads and compiles every "
                 "layer); nothing written")
        return EXIT_OK
    for change in result.changes:
        made = change["to"]
        if change["inserted"]:
            kinds = sorted({c["type"] for c in change["inserted"]})
            made += f" ({', '.join(kinds)})"
        say_line(f"{change['name']} (id {change['id']}): {change['from']} -> {made}")
    say_line(f"rewrote {len(result.changes)} layer(s) for OpenVINO {release}; wrote {args.output}")
    return EXIT_OK


def _line(refused: dict[str, Any]) -> str:
    return f", line {refused['line']}" if refused.get("line") else ""
