"""A self-contained HTML page of a model: blocks that open, search, overlays.

The page loads nothing (no network, no external script or font): data, script and style
are inline (``page.html`` beside this module is the template). The data is the tree of
:mod:`.groups`: every layer of the model (a folded constant names the layer that reads
it), every block with its items already ranked and ordered. The script lays out only the
blocks that are open, adding up sizes rank by rank, and draws them with DOM calls (a name
is text, never markup), so opening a block is a few milliseconds even in a model of 50,000
layers. It zooms (wheel) and pans (drag), finds layers by name, type or tensor name
(opening the blocks that hold them), walks through the layers of one status, shows a
layer's status and shapes on hover, and fills a side table from an overlay report. An
address ending ``#find=NAME`` or ``#status=mismatch`` opens the page on that search.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import Any

import networkx as nx

from .dot import STATUS_COLOURS, Drawing
from .errors import DIFFERS_SHADES, NOT_COMPARED, OK_SHADES, STATUSES
from .groups import choose_open, group

__all__ = ["html_page", "page_data", "PAGE_BUDGET"]

#: The most items a page shows before a person opens a block.
PAGE_BUDGET = 120


def html_page(G: nx.MultiDiGraph, drawing: Drawing, title: str,
              layers: list[str] | None = None, overlay: dict[str, Any] | None = None) -> str:
    """The page of ``drawing`` of ``G`` (``layers``: the neighbourhood drawn, when not the
    whole model); ``overlay`` the side table and per-layer fills of a report."""
    template = resources.files(__package__).joinpath("page.html").read_text("utf-8")
    data = page_data(G, drawing, layers, overlay)
    colours = overlay["colours"] if overlay else (
        STATUS_COLOURS if drawing.errors is None else _error_colours())
    parts = {
        "__TITLE__": html.escape(title),
        "__DATA__": _script_json(data),
        "__COLOURS__": _script_json(colours),
    }
    return re.sub("|".join(parts), lambda m: parts[m.group(0)], template)


def page_data(G: nx.MultiDiGraph, drawing: Drawing, layers: list[str] | None = None,
              overlay: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page's script reads: layers, blocks (items ranked), edge labels, the
    blocks open at first, the overlay's table."""
    plan = drawing.plan
    labels: dict[str, int] = {}

    def label(u: str, port: int) -> str:
        row = drawing.rows[u].get("inferred") or []
        outputs = [p["id"] for p in G.nodes[u]["outputs"]]
        k = outputs.index(port) if port in outputs else 0
        return row[k] if k < len(row) else "?"

    if plan is not None and plan.groups is not None:
        tree, folded = plan.groups, plan.folded
    else:
        order = [n for n in nx.topological_sort(G) if layers is None or n in set(layers)]
        tree, folded = group(G, order, label, scoped=False), set()
    index = {n: i for i, n in enumerate(tree.order)}
    rows, extra = [], []
    for n in tree.order:
        rows.append(_row(G, drawing, n, tree.block_of[n], -1, overlay))
    for n in G:
        if n in index:
            continue
        reader = _reader(G, folded, n, index) if n in folded else None
        index[n] = len(rows) + len(extra)
        extra.append((n, reader))
    for n, reader in extra:
        block = tree.block_of[reader] if reader is not None else -1
        rows.append(_row(G, drawing, n, block, -1 if reader is None else index[reader],
                         overlay))
    blocks = []
    for b in tree.blocks:
        items = [index[it] if isinstance(it, str) else -it - 1 for it in b.items]
        edges = []
        for u, v, port in b.edges:
            text = label(u, port)
            edges += [index[u], index[v], labels.setdefault(text, len(labels))]
        blocks.append([b.label, b.parent, b.kind, b.repeat, b.size, items, b.ranks, edges,
                       b.inputs, b.outputs])
    bad = {tree.block_of[n] for n in tree.order if rows[index[n]][3] in ("mismatch",
                                                                            "invalid")}
    opened = choose_open(tree, PAGE_BUDGET, bad)
    return {"layers": rows, "blocks": blocks, "labels": list(labels),
            "open": sorted(opened), "table": (overlay or {}).get("table")}


def _row(G: nx.MultiDiGraph, drawing: Drawing, n: str, block: int, reader: int,
         overlay: dict[str, Any] | None) -> list[Any]:
    """[id, name, type, status, block, reader (-1: itself), inferred, declared, message,
    tensor names, folded lines, fill]."""
    row = drawing.rows.get(n, {})
    status, message = row.get("status", "unchecked"), row.get("message", "")
    fill = ""
    if drawing.errors is not None:
        err = drawing.errors.layers.get(n)
        status = "not compared" if err is None else err.status
        message = "" if err is None else err.text() + (
            ", the first divergent layer" if err.first else "")
        fill = NOT_COMPARED if err is None else err.colour
    if overlay is not None:
        o = overlay["layers"].get(n)
        status, fill = (o["status"], o["fill"]) if o else (overlay["missing"], NOT_COMPARED)
        message = o["text"] if o else ""
    plan = drawing.plan
    lines = plan.lines.get(n, []) if plan is not None else []
    tensors = [t for p in G.nodes[n].get("outputs", []) for t in p.get("names", [])]
    return [n, G.nodes[n]["name"], G.nodes[n]["type"], status, block, reader,
            row.get("inferred", []), row.get("declared", []), message, tensors, lines, fill]


def _error_colours() -> dict[str, str]:
    """The buttons of a page coloured by errors: one per comparison status."""
    colours = dict.fromkeys((*STATUSES, "not compared"), NOT_COMPARED)
    colours.update(ok=OK_SHADES[1][1], differs=DIFFERS_SHADES[-1][1])
    return colours


def _reader(G: nx.MultiDiGraph, folded: set[str], n: str, index: dict[str, int]) -> str | None:
    """A folded constant's place: the first drawn layer that reads it, through its chain."""
    todo, seen = [n], {n}
    while todo:
        for v in G.successors(todo.pop(0)):
            if v not in folded:
                return v
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return None


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>`` can end it early)."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")

