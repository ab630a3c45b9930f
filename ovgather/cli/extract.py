"""`ovgather extract MODEL --layer NAME [--depth N] -o SUB.xml [--json]`.

Writes a standalone IR of a layer and its neighbourhood (ovgather.edit.extract), the small
file to attach to a bug report. Exit 0 when written, 2 for unusable input.
"""

from __future__ import annotations

import argparse
import os

from ..errors import UsageError
from .common import EXIT_OK, add_layer_command, shape_overrides, whole_number
from .models import load
from .output import print_json, say_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `extract` on ``sub``."""
    p = add_layer_command(sub, "extract", "cut a layer and its neighbourhood into a small IR",
                          "Write a standalone IR of a layer and the layers within --depth "
                          "edges of it: Parameters where the cut is (with the shapes ovgather "
                          "inferred there), Results at the outputs, Consts kept.", run)
    p.add_argument("--depth", type=whole_number, default=1,
                   help="edges to follow each way (default 1)")
    p.add_argument("-o", "--output", required=True, metavar="SUB.xml", help="the IR to write")


def run(args: argparse.Namespace) -> int:
    from ..atomic import clashes_with_model
    from ..edit.extract import write_extract

    out = args.output
    if not out.lower().endswith(".xml"):
        raise UsageError(f"-o must name an .xml file, but got '{out}'")
    clash = clashes_with_model([out, os.path.splitext(out)[0] + ".bin"], args.model)
    if clash is not None:
        raise UsageError(f"-o '{out}' would overwrite the input model ('{clash}' is one of "
                         "its files); extract never overwrites it")
    G = load(args.model, debug=args.debug)
    H = write_extract(G, args.layer, out, args.depth, shape_overrides(args.shape, G))
    summary = _summary(H, out)
    if args.json:
        print_json(summary)
    else:
        params = ", ".join(f"{p['name']} {p['shape']} {p['element_type']}"
                           for p in summary["parameters"])
        say_line(f"wrote {out}: {summary['layers']} layers; inputs at the cut: {params or 'none'}")
    return EXIT_OK


def _summary(H, out: str) -> dict:
    cuts = H.graph.get("extract_cuts", {})
    params = []
    for _, attrs in H.nodes(data=True):
        if attrs["type"] == "Parameter":
            shape = attrs["data"].get("shape", "")
            params.append({"name": attrs["name"],
                           "shape": "[...]" if shape == "..." else f"[{shape}]",
                           "element_type": attrs["data"].get("element_type"),
                           "stands_for": list(cuts[attrs["name"]]) if attrs["name"] in cuts
                           else None})
    results = [attrs["name"] for _, attrs in H.nodes(data=True) if attrs["type"] == "Result"]
    return {"path": out, "layers": H.number_of_nodes(), "parameters": params,
            "results": results}
