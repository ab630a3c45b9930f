"""`ovgather show MODEL [--layer NAME --depth N] [--max-layers N] [--overlay REPORT.json]
--format dot|svg|png|html -o FILE [--json]`.

DOT needs no extra program; SVG, PNG and HTML need Graphviz's ``dot`` and say how to
install it when it is missing (exit 2). Exit 0 when the picture is written.
"""

from __future__ import annotations

import argparse
import os

from ..errors import UsageError
from .common import EXIT_OK, add_layer_command, shape_overrides, whole_number
from .models import load
from .output import print_json, say_line

#: ovgather.views.show.FORMATS, spelled out so that building the parser imports no drawing code
_FORMATS = ("dot", "svg", "png", "html")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `show` on ``sub``."""
    p = add_layer_command(sub, "show", "draw the model with shapes and check status",
                          "Draw the model (or a layer's neighbourhood): each edge labelled "
                          "with its shape, layers coloured by check status (ok, mismatch, "
                          "invalid, unchecked).", run,
                          layer_help="draw only this layer's neighbourhood",
                          layer_required=False)
    p.add_argument("--depth", type=whole_number, default=2,
                   help="edges to follow each way (default 2)")
    p.add_argument("--max-layers", type=whole_number, default=None, metavar="N",
                   help="draw a whole model with at most N layer nodes: repeated blocks "
                        "collapse, then the rest is left out (default 200; 0: no bound)")
    p.add_argument("--format", choices=_FORMATS, default=None,
                   help="picture format (default: from the -o suffix, else dot); html is "
                        "a self-contained page with search, zoom and pan")
    p.add_argument("--overlay", "--errors", dest="errors", default=None, metavar="REPORT.json",
                   help="colour each layer by a report: the --json of check, compare MODEL B "
                        "--all-layers (green ok to red differs), diff or stats --by layer; "
                        "the page lists it in a side table (--errors: the old name)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write")


def run(args: argparse.Namespace) -> int:
    from ..atomic import clashes_with_model
    from ..views.show import DEFAULT_MAX_LAYERS, write_picture

    fmt = args.format or _format_of(args.output)
    clash = clashes_with_model([args.output], args.model)
    if clash is not None:
        raise UsageError(f"-o '{args.output}' would overwrite the input model ('{clash}' is "
                         "one of its files); show never overwrites it")
    G = load(args.model, debug=args.debug)
    bound = DEFAULT_MAX_LAYERS if args.max_layers is None else args.max_layers
    drawing = write_picture(G, args.output, fmt, args.layer, args.depth,
                            shape_overrides(args.shape, G), bound, errors=args.errors)
    plan = drawing.plan
    if args.json:
        out = {"path": args.output, "format": fmt}
        if plan is not None:
            out.update(drawn=len(plan.drawn), folded=len(plan.folded),
                       collapsed=sum(len(v) for v in plan.collapsed.values()),
                       left_out=len(plan.left_out))
        if drawing.fallback is not None:
            out["fallback"] = drawing.fallback
        print_json(out)
    elif plan is None:
        say_line(f"wrote {args.output} ({fmt})")
    else:
        say_line(f"wrote {args.output} ({fmt}): {len(plan.drawn)} of {G.number_of_nodes()} layers "
            "drawn as nodes")
        for note in plan.notes(G):
            say_line(f"  {note}")
    if drawing.fallback is not None and not args.json:
        say_line(f"  Graphviz could not lay out the nested boxes; drawn with {drawing.fallback}"
                 f"{' boxes' if drawing.fallback != 'newrank' else ''} instead")
    if drawing.errors is not None and not args.json:
        _say_errors(G, drawing.errors)
    return EXIT_OK


def _say_errors(G, errors) -> None:
    counts = errors.counts()
    if not set(counts) <= {"ok", "differs", "only in A", "only in B", "not run", "crashed"}:
        say_line(f"  coloured by {errors.source}: {len(errors.layers)} layers in the report ("
                 + ", ".join(f"{c} {s}" for s, c in sorted(counts.items())) + ")")
        return
    compared = sum(n for s, n in counts.items() if s in ("ok", "differs"))
    say_line(f"  coloured by the errors of {errors.source}: {compared} layers compared, "
        f"{counts.get('differs', 0)} differ, {G.number_of_nodes() - compared} not compared")
    if errors.first is not None:
        say_line(f"  first divergent: {G.nodes[errors.first]['name']}")
    if errors.unmatched:
        say_line(f"  {len(errors.unmatched)} layers of the report are not in the model "
            f"(first: {errors.unmatched[0]})")


def _format_of(path: str) -> str:
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    return suffix if suffix in _FORMATS else "dot"
