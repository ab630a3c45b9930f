"""A self-contained HTML page of a picture: the SVG Graphviz drew, and a small script.

The page loads nothing (no network, no external script or font): the SVG is inline,
the script and style too (``page.html`` beside this module is the template). The
script zooms (wheel) and pans (drag), finds layers by name (every layer of the model,
also those folded into a reader, collapsed into a block or left out, says where it went),
walks through the layers of one check status, and shows a layer's status, inferred and
declared shapes on hover. An address ending ``#find=NAME`` or ``#status=mismatch`` opens
the page on that search.
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
from .outline import Outline

__all__ = ["html_page"]

_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)


def html_page(G: nx.MultiDiGraph, drawing: Drawing, svg: str, title: str) -> str:
    """The page of ``drawing`` (drawn by Graphviz as ``svg``) of ``G``."""
    template = resources.files(__package__).joinpath("page.html").read_text("utf-8")
    parts = {
        "__TITLE__": html.escape(title),
        "__SVG__": _PROLOG.sub("", svg, count=1),
        "__LAYERS__": _script_json(_rows(G, drawing)),
        "__COLOURS__": json.dumps(STATUS_COLOURS if drawing.errors is None
                                  else _error_colours()),
    }
    return re.sub("|".join(parts), lambda m: parts[m.group(0)], template)


def _rows(G: nx.MultiDiGraph, drawing: Drawing) -> dict[str, list[Any]]:
    """Per layer id: name, type, status, the node that stands for it ("" when none),
    inferred and declared shapes, the check's message."""
    plan = drawing.plan
    out = {}
    for n in G:
        row = drawing.rows[n]
        if plan is None:
            node = f"n{n}" if f'"n{n}" [' in drawing.dot else ""
        else:
            node = plan.node_of(n) or _reader_node(G, plan, n)
        status, message = row.get("status", "unchecked"), row.get("message", "")
        if drawing.errors is not None:
            err = drawing.errors.layers.get(n)
            status = "not compared" if err is None else err.status
            message = "" if err is None else err.text() + (
                ", the first divergent layer" if err.first else "")
        out[n] = [G.nodes[n]["name"], G.nodes[n]["type"], status, node,
                  row.get("inferred", []), row.get("declared", []), message]
    return out


def _error_colours() -> dict[str, str]:
    """The buttons of a page coloured by errors: one per comparison status."""
    colours = dict.fromkeys((*STATUSES, "not compared"), NOT_COMPARED)
    colours.update(ok=OK_SHADES[1][1], differs=DIFFERS_SHADES[-1][1])
    return colours


def _reader_node(G: nx.MultiDiGraph, plan: Outline, n: str) -> str:
    """A folded constant's place: the first drawn layer that reads it, through its chain."""
    if n not in plan.folded:
        return ""
    todo, seen = [n], {n}
    while todo:
        for v in G.successors(todo.pop(0)):
            if v not in plan.folded:
                return plan.node_of(v) or ""
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return ""


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>`` can end it early)."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")
