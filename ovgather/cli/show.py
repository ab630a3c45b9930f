"""`ovgather show MODEL [--layer NAME --depth N] --format dot|svg|png -o FILE [--json]`.

DOT needs no extra program; SVG and PNG need Graphviz's ``dot`` and say how to install
it when it is missing (exit 2). Exit 0 when the picture is written.
"""

from __future__ import annotations

import argparse
import json
import os

from ..errors import UsageError
from .explain import add_common, parse_shape_overrides


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `show` on ``sub``."""
    p = sub.add_parser("show", help="draw the model with shapes and check status",
                       description="Draw the model (or a layer's neighbourhood): each edge "
                       "labelled with its shape, layers coloured by check status (ok, "
                       "mismatch, invalid, unchecked).")
    add_common(p)
    p.add_argument("--layer", help="draw only this layer's neighbourhood")
    p.add_argument("--depth", type=int, default=2, help="edges to follow each way (default 2)")
    p.add_argument("--format", choices=("dot", "svg", "png"), default=None,
                   help="picture format (default: from the -o suffix, else dot)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..atomic import clashes_with_model
    from ..interop import load_model
    from ..show import write_picture

    fmt = args.format or _format_of(args.output)
    clash = clashes_with_model([args.output], args.model)
    if clash is not None:
        raise UsageError(f"-o '{args.output}' would overwrite the input model ('{clash}' is "
                         "one of its files); show never overwrites it")
    G = load_model(args.model)
    write_picture(G, args.output, fmt, args.layer, args.depth, parse_shape_overrides(args.shape))
    if args.json:
        print(json.dumps({"path": args.output, "format": fmt}))
    else:
        print(f"wrote {args.output} ({fmt})")
    return 0


def _format_of(path: str) -> str:
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    return suffix if suffix in ("svg", "png") else "dot"
