"""``write_picture``: a model, or a layer's neighbourhood, drawn into a file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import networkx as nx

from ...atomic import AtomicOutput
from ...edit.extract import neighbourhood
from ...graph import find_layer
from .dot import Drawing, draw
from .errors import ErrorView, layer_errors
from .graphviz import render, to_svg
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
) -> Drawing:
    """Draw ``G`` into ``path`` as ``fmt`` (dot, svg, png or html); returns what was drawn.

    A whole model is drawn folded (:mod:`ovgather.views.show.outline`: constants as lines of
    their readers, blocks boxed, at most ``max_layers`` nodes; 0 or None: no bound);
    ``layer``'s ``depth``-neighbourhood is drawn layer by layer, constants included.

    ``errors``, the JSON of ``compare G B --all-layers --json`` (its path or its dict),
    colours each layer by its error instead of its check status (:mod:`.errors`); the
    returned drawing's ``errors`` holds what each layer got."""
    if errors is not None and not isinstance(errors, ErrorView):
        errors = layer_errors(G, errors)
    layers = None
    title = G.graph.get("name") or ""
    if layer is not None:
        node = find_layer(G, layer)
        layers = neighbourhood(G, node, depth)
        title = f"{G.nodes[node]['name']} (depth {depth})"
    drawing = draw(G, layers, shapes, title, fold=layer is None, max_layers=max_layers,
                   errors=errors)
    if fmt != "html":
        render(drawing.dot, fmt, path)
        return drawing
    page = html_page(G, drawing, to_svg(drawing.dot, path), title or "ovgather show")
    with AtomicOutput([path], "the page") as out, out.open(path, "w") as f:
        f.write(page)
    return drawing
