"""``write_picture``: a model, or a layer's neighbourhood, drawn into a file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import networkx as nx

from ...atomic import AtomicOutput
from ...edit.extract import neighbourhood
from ...errors import OutputError
from ...graph import find_layer
from .dot import Drawing, draw
from .errors import ErrorView
from .graphviz import render
from .overlay import read_overlay
from .page import html_page

__all__ = ["write_picture", "DEFAULT_MAX_LAYERS"]

#: Layer nodes in a picture of a whole model unless told otherwise: a few hundred keeps
#: the layout to seconds and the labels readable in a PNG of at most 20 megapixels.
DEFAULT_MAX_LAYERS = 200


def write_picture(
    G: nx.MultiDiGraph,
    path: str | os.PathLike[str],
    fmt: str = "dot",
    layer: str | None = None,
    depth: int = 2,
    shapes: dict[str, str] | None = None,
    max_layers: int | None = DEFAULT_MAX_LAYERS,
    errors: ErrorView | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    overlay: Mapping[str, Any] | str | os.PathLike[str] | None = None,
) -> Drawing:
    """Draw ``G`` into ``path`` as ``fmt`` (dot, svg, png or html); returns what was drawn.

    A whole model is drawn folded and grouped (:mod:`ovgather.views.show.outline`:
    constants as lines of their readers, blocks by name scope, at most ``max_layers`` nodes
    in an SVG or PNG, the other blocks closed; 0 or None: every block open); the HTML page
    holds every layer and opens any block. ``layer``'s ``depth``-neighbourhood is drawn
    layer by layer, constants included.

    ``overlay`` (or ``errors``, its older name for a compare report): the JSON of check,
    compare --all-layers, diff or stats --by layer, its path or its dict, colours each
    layer by that report (:mod:`.overlay`); the returned drawing's ``errors`` holds what
    each layer got. When Graphviz fails on the boxes of a layout, the picture is drawn
    again with newrank, then flatter boxes, then none; ``drawing.fallback`` says which."""
    page_overlay = None
    if overlay is None and errors is not None and not isinstance(errors, ErrorView):
        overlay = errors
    if overlay is not None:
        _, errors, page_overlay = read_overlay(G, overlay)
    layers = None
    title = G.graph.get("name") or ""
    if layer is not None:
        node = find_layer(G, layer)
        layers = neighbourhood(G, node, depth)
        title = f"{G.nodes[node]['name']} (depth {depth})"
    steps = ("nested", "newrank", "flat", "none")
    for k, boxes in enumerate(steps):
        drawing = draw(G, layers, shapes, title, fold=layer is None,
                       max_layers=max_layers if fmt != "html" else 0, errors=errors,
                       boxes=boxes)
        drawing.fallback = None if k == 0 else boxes
        if fmt == "html":
            break
        try:
            render(drawing.dot, fmt, path)
            break
        except OutputError as e:
            if "Graphviz 'dot' failed" not in str(e) or boxes == steps[-1]:
                raise
    if fmt != "html":
        return drawing
    page = html_page(G, drawing, title or "ovgather show", layers, page_overlay)
    with AtomicOutput([path], "the page") as out, out.open(path, "w") as f:
        f.write(page)
    return drawing
