"""`ovgather explain MODEL --layer NAME [--shape …] [--json]`: one gather layer's rule walk.

Exit 0 when the layer is valid and its declared dims fit the inferred ones, 1 when a
rule breaks or the IR declares something else, 2 for unusable input (docs/cli.md).
"""

from __future__ import annotations

import argparse

from .models import add_model_argument, load
from .output import print_json, say

EXIT_OK, EXIT_PROBLEM = 0, 1


def parse_shape_overrides(values: list[str] | None) -> dict[str, str] | None:
    """The ``--shape`` options, spelled as for ``check``; None when there are none."""
    from .check import parse_shape_options

    return parse_shape_options(values) if values else None


def add_common(p: argparse.ArgumentParser) -> None:
    """The options explain, extract and show share."""
    add_model_argument(p)
    p.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="input shape override, as for check (repeatable)")
    p.add_argument("--json", action="store_true",
                   help="one JSON document on stdout (see docs/json.md)")


def add_layer_command(sub: argparse._SubParsersAction, name: str, summary: str,
                      description: str, run, layer_help: str = "the layer's name (or id)",
                      layer_required: bool = True) -> argparse.ArgumentParser:
    """Register a subcommand about one layer of a model (explain, extract, show): the
    model, ``--shape``, ``--json`` and ``--layer``; the caller adds its own options."""
    p = sub.add_parser(name, help=summary, description=description)
    add_common(p)
    p.add_argument("--layer", required=layer_required, help=layer_help)
    p.set_defaults(run=run)
    return p


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `explain` on ``sub``."""
    add_layer_command(sub, "explain", "explain the shape rule of one gather layer",
                      "Walk the shape rule of one gather layer in plain words: b, k, the batch "
                      "dims and how they merge, and the output under GatherND-5, GatherND-8 "
                      "and ONNX.", run)


def run(args: argparse.Namespace) -> int:
    from ..explain import explain_layer

    G = load(args.model, debug=args.debug)
    e = explain_layer(G, args.layer, parse_shape_overrides(args.shape))
    problem = e.failed_rule is not None or (e.layer or {}).get("status") in ("mismatch",
                                                                             "invalid")
    if args.json:
        print_json(e.to_json())
    else:
        say(e.to_text())
    return EXIT_PROBLEM if problem else EXIT_OK
