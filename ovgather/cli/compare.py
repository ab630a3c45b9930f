"""``ovgather compare A B [--shape NAME=SHAPE …] [--seed N] [--rtol R] [--atol A] [--json]``.

Runs both models on the OpenVINO CPU runtime with the same seeded inputs and compares
every output (``ovgather.comparison``). Exit codes (docs/cli.md): 0 every output within
tolerance, 1 an output differs or is in one model only (each is named), 2 the models
cannot be compared (a missing file, inputs that do not pair up, a model the CPU plugin
cannot compile).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from .common import EXIT_OK, EXIT_PROBLEM, add_json, shape_overrides, whole_number
from .models import ANY_HELP, quiet_native_stderr, refuse_weights
from .output import print_json, say, say_record

__all__ = ["add_parsers", "run_compare"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``compare`` on ``sub``."""
    p = sub.add_parser(
        "compare", help="run two models on the same inputs and compare their outputs",
        description="Run both models on the OpenVINO CPU runtime with the same seeded inputs "
        "(paired by input name) and compare the outputs of the same name: the largest "
        "absolute and relative difference of each, and whether every element is within "
        "atol + rtol * |B|.")
    p.add_argument("model", metavar="A", help=f"the reference: {ANY_HELP}")
    p.add_argument("other", metavar="B", help="the model compared with A (the same kinds)")
    p.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="reshape an input of both models like openvino.Model.reshape, as for "
                   "check (repeatable); dynamic dims left get the size validate picks")
    p.add_argument("--seed", type=lambda t: whole_number(t, digits=40), default=0,
                   help="seed of the random inputs (default 0)")
    p.add_argument("--rtol", type=_tolerance, default=None, metavar="R",
                   help="relative tolerance (default 1e-5, polygraphy's)")
    p.add_argument("--atol", type=_tolerance, default=None, metavar="A",
                   help="absolute tolerance (default 1e-5, polygraphy's)")
    add_json(p)
    p.set_defaults(run=run_compare)


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0 such as 1e-5, but got "
                                         f"'{text[:40]}'")
    return value


def run_compare(args: argparse.Namespace) -> int:
    from ..comparison import compare

    models = (args.model, args.other)
    for path in models:
        refuse_weights(path)
    tolerances = {k: v for k, v in (("rtol", args.rtol), ("atol", args.atol)) if v is not None}
    with quiet_native_stderr(enabled=not args.debug):  # the ONNX frontends' native lines
        report = compare(*models, shapes=shape_overrides(args.shape), seed=args.seed,
                         **tolerances)
    if args.json:
        print_json(report.to_dict())
    else:
        _print_human(report)
    return EXIT_OK if report.ok else EXIT_PROBLEM


def _print_human(report: Any) -> None:
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in ("ok", "differs", "only in A", "only in B")
                       if s[k])
    fed = ", ".join(f"{i['name']}{i['shape']}" for i in report.inputs)
    n = s["outputs"]
    say_record(f"{report.a} vs {report.b}: {n} output{'s' if n != 1 else ''}: "
               f"{counts or 'none'}")
    say(f"  inputs (seed {report.seed}): {fed or 'none'}")
    for o in report.outputs:
        name = o.name if o.name_b in (None, o.name) else f"{o.name} / {o.name_b}"
        said = [f"max abs {o.max_abs:.3g}, max rel {o.max_rel:.3g}"] if o.max_abs is not None \
            else []
        if o.matched_by in ("similar name", "position"):
            said.append(f"paired by {'a ' if o.matched_by != 'position' else ''}"
                        f"{o.matched_by}: no name in common")
        if o.message:
            said.append(o.message)
        say(f"  {o.status:9s} {name}: {'; '.join(said)}")
