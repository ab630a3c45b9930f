"""`ovgather explain MODEL --layer NAME [--shape …] [--json]`: one layer's shape rule.

A gather's rule is walked step by step; any other layer gets its inputs (with their values
where check knows them), its attributes, its op's rule in words and its output shapes; a
layer ovgather has no rule for, its inputs and attributes and a line saying so.

Exit 0 when the layer is valid and its declared dims fit the inferred ones (a layer with no
rule too), 1 when a rule breaks or the IR declares something else, 2 for unusable input
(docs/cli/explain.md).
"""

from __future__ import annotations

import argparse

from .common import EXIT_OK, EXIT_PROBLEM, add_layer_command, shape_overrides
from .models import load
from .output import print_json, say_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `explain` on ``sub``."""
    add_layer_command(sub, "explain", "explain the shape rule of one layer",
                      "Explain the shape rule of one layer in plain words. A gather's rule is "
                      "walked step by step: b, k, the batch dims and how they merge, and the "
                      "output under GatherND-5, GatherND-8 and ONNX. Any other layer: its "
                      "inputs (shapes, and values where known), attributes, the op's rule in "
                      "words, the inferred output and the declared dims that differ.", run)


def run(args: argparse.Namespace) -> int:
    from ..views.explain import explain_layer

    G = load(args.model, debug=args.debug)
    e = explain_layer(G, args.layer, shape_overrides(args.shape, G))
    problem = e.failed_rule is not None or (e.layer or {}).get("status") in ("mismatch",
                                                                             "invalid")
    if args.json:
        print_json(e.to_json())
    else:
        for line in e.to_text().split("\n"):  # each line one line: names escaped
            say_line(line)
    return EXIT_PROBLEM if problem else EXIT_OK
