"""``ovgather reduce MODEL --until CONDITION -o SMALL.xml [--json]``.

Cuts a failing model down to the few layers that still fail (``ovgather.debug.search``):
the small IR, its inputs beside it (``SMALL.npz``, the tensors the model computed at the
cuts, which ``compare --input SMALL.npz`` loads) and the largest passing cut
(``SMALL.passing.xml``). Exit 0 when the small model was written, 1 when the condition
does not hold on MODEL itself, 2 for unusable input. Ctrl-C writes the best model so far.
"""

from __future__ import annotations

import argparse
import os

from ..errors import UsageError
from .common import EXIT_OK, EXIT_PROBLEM, add_json, shape_overrides, tolerance, whole_number
from .models import IR_HELP
from .output import say_report

__all__ = ["add_parsers", "run"]

CONDITION_HELP = ("crashes (the CPU plugin dies or refuses the model), differs (a layer "
                  "output differs from --against's), nonfinite (an output holds NaN or Inf), "
                  "invalid or mismatch (check's verdicts), validate-fails, command (--command "
                  "fails)")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `reduce` on ``sub``."""
    p = sub.add_parser(
        "reduce", help="cut a failing model down to the few layers that still fail",
        description="Bisect the layers of MODEL, then drop layers while --until still holds: "
                    "writes the smallest failing IR, its inputs (.npz beside it) and the "
                    "largest passing cut (.passing.xml).")
    p.add_argument("model", metavar="MODEL", help=f"the failing model: {IR_HELP}")
    p.add_argument("--until", required=True, metavar="CONDITION",
                   help=f"the failure to keep: {CONDITION_HELP}")
    p.add_argument("--against", metavar="B.xml|B.onnx", help="the model differs compares with")
    p.add_argument("--command", metavar="'CMD {model}'",
                   help="a command that fails on a failing model ({model}: the IR, {inputs}: "
                        "its .npz); with --until command (implied)")
    p.add_argument("--fail-regex", metavar="RE",
                   help="--command fails only when its output also matches RE")
    p.add_argument("--rtol", type=tolerance, default=None, metavar="R",
                   help="relative tolerance of differs (default: compare's)")
    p.add_argument("--atol", type=tolerance, default=None, metavar="A",
                   help="absolute tolerance of differs (default: compare's)")
    p.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="the input size to run at (repeatable)")
    p.add_argument("--input", metavar="FILE.npz", help="the inputs to run on")
    p.add_argument("--seed", type=whole_number, default=0, help="seed of the inputs made")
    p.add_argument("--max-runs", type=whole_number, default=None, metavar="N",
                   help="stop after N runs with the best model so far (default 400)")
    p.add_argument("-o", "--output", required=True, metavar="SMALL.xml", help="the IR to write")
    add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..atomic import clashes_with_model
    from ..comparison.outputs import ATOL, RTOL
    from ..debug import reduce
    from ..debug.search import MAX_RUNS
    from .models import load

    out = args.output
    if not out.lower().endswith(".xml"):
        raise UsageError(f"-o must name an .xml file, but got '{out}'")
    base = os.path.splitext(out)[0]
    clash = clashes_with_model([out, base + ".bin", base + ".npz"], args.model)
    if clash is not None:
        raise UsageError(f"-o '{out}' would overwrite the input model ('{clash}' is one of "
                         "its files); reduce never overwrites it")
    until = args.until
    if args.command is not None and until not in ("command",):
        raise UsageError("--command goes with --until command")
    G = load(args.model, debug=args.debug, ir_only="reduce")
    small, report = reduce(
        G, until, against=args.against, command=args.command, fail_regex=args.fail_regex,
        rtol=RTOL if args.rtol is None else args.rtol,
        atol=ATOL if args.atol is None else args.atol,
        shapes=shape_overrides(args.shape, G), inputs=args.input, seed=args.seed,
        max_runs=MAX_RUNS if args.max_runs is None else args.max_runs, output=out)
    say_report(report, args.json)
    if report.interrupted:
        raise KeyboardInterrupt
    return EXIT_OK if small is not None else EXIT_PROBLEM
