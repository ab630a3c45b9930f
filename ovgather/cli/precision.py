"""``ovgather precision MODEL --target f16|bf16 [--fix -o OUT.xml] [--json]``.

Where half precision breaks a model (``ovgather.debug.half``): each layer's
accumulated and local error in the simulated target precision, the first layer that
makes a NaN or Inf, and with ``--fix`` an IR that keeps just the layers it needs in f32.
Exit 0 when the outputs are within tolerance (or the fix was written), 1 when they are
not, 2 for unusable input.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError
from .common import EXIT_OK, EXIT_PROBLEM, add_json, shape_overrides, tolerance, whole_number
from .models import IR_HELP
from .output import say_report

__all__ = ["add_parsers", "run"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `precision` on ``sub``."""
    p = sub.add_parser(
        "precision", help="where f16 or bf16 breaks a model, and an IR that keeps those "
                          "layers in f32",
        description="Run MODEL with every float tensor rounded to --target (simulated on "
                    "any CPU), report each layer's accumulated and local error and the first "
                    "layer that makes a NaN or Inf; --fix writes an IR whose fewest layers "
                    "kept in f32 bring the outputs within --rtol/--atol of f32.")
    p.add_argument("model", metavar="MODEL", help=f"the model: {IR_HELP}")
    p.add_argument("--target", required=True, choices=("f16", "bf16"),
                   help="the precision to simulate")
    p.add_argument("--fix", action="store_true", help="find the layers to keep in f32")
    p.add_argument("-o", "--output", metavar="OUT.xml", help="the fixed IR (with --fix)")
    p.add_argument("--input", metavar="FILE.npz", help="the inputs to run on")
    p.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="the input size to run at (repeatable)")
    p.add_argument("--seed", type=whole_number, default=0, help="seed of the inputs made")
    p.add_argument("--rtol", type=tolerance, default=None, metavar="R",
                   help="relative tolerance of the outputs (default 1e-2)")
    p.add_argument("--atol", type=tolerance, default=None, metavar="A",
                   help="absolute tolerance of the outputs (default 1e-2)")
    add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..atomic import clashes_with_model
    from ..debug import precision
    from ..debug.half import ATOL, RTOL
    from .models import load

    if args.output is not None and not args.fix:
        raise UsageError("-o goes with --fix")
    if args.fix and args.output is None:
        raise UsageError("--fix needs -o OUT.xml")
    if args.output is not None:
        if not args.output.lower().endswith(".xml"):
            raise UsageError(f"-o must name an .xml file, but got '{args.output}'")
        base = args.output[:-4]
        clash = clashes_with_model([args.output, base + ".bin"], args.model)
        if clash is not None:
            raise UsageError(f"-o '{args.output}' would overwrite the input model "
                             f"('{clash}' is one of its files)")
    G = load(args.model, debug=args.debug, ir_only="precision")
    _, report = precision(
        G, args.target,
        fix=args.fix, output=args.output, inputs=args.input,
        shapes=shape_overrides(args.shape, G), seed=args.seed,
        rtol=RTOL if args.rtol is None else args.rtol,
        atol=ATOL if args.atol is None else args.atol)
    say_report(report, args.json)
    if report.fixed:
        return EXIT_OK
    return EXIT_OK if report.ok else EXIT_PROBLEM
