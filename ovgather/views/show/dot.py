"""Graphviz DOT of a model: shapes on the edges, check status as colour.

:func:`to_dot` needs no extra program: it writes DOT text in which every edge carries
the shape of the tensor it moves (ovgather's inferred shape; ``declared`` too when the
IR says something else) and every layer is filled by its check status. With ``fold``
(what ``ovgather show`` draws of a whole model) the plan of :mod:`.outline` applies:
constants become lines of their readers, blocks boxes, and ``max_layers`` bounds the
node count.

>>> import openvino as ov, numpy as np
>>> from openvino import opset8
>>> from ovgather.runtime import from_openvino
>>> d = opset8.parameter([2, 3, 4], np.float32, name="data")
>>> i = opset8.constant(np.array([[1], [0]], dtype=np.int64))
>>> G = from_openvino(ov.Model([opset8.gather_nd(d, i, 1)], [d], "m"))
>>> text = to_dot(G)
>>> text.startswith("digraph"), 'label="[2,3,4]"' in text
(True, True)
>>> "const [2,1] i64" in to_dot(G, fold=True)  # the indices: a line of the GatherND
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx

from ... import graph as g
from ...edit.extract import declared_shape, port_shapes
from ...errors import UnsupportedOpError
from ...graph import gather_types
from ...infer import check
from ...shapes import PartialShape
from .errors import DIFFERS_SHADES, FIRST_DIVERGENT, NOT_COMPARED, OK_SHADES, ErrorView, LayerError
from .outline import Outline, outline

__all__ = ["STATUS_COLOURS", "Drawing", "draw", "to_dot"]

#: Fill colour of a layer per check status (colour-blind-safe ColorBrewer tones).
STATUS_COLOURS = {
    "ok": "#b8e186",
    "mismatch": "#fdb863",
    "invalid": "#d6604d",
    "unchecked": "#e0e0e0",
    "unknown": "#b2abd2",
}


@dataclass
class Drawing:
    """The DOT text and what it was made of: each layer's check row (``status``,
    ``declared``, ``inferred``, ``message``…) and, for a folded picture, its plan."""

    dot: str
    rows: dict[str, dict[str, Any]]
    plan: Outline | None
    errors: ErrorView | None = None
    #: how the boxes were drawn when Graphviz failed on nested ones (newrank, flat, none)
    fallback: str | None = None


def _quote(text: str) -> str:
    """A DOT string literal (``\\n`` inside stays a line break)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(G: nx.MultiDiGraph, layers: Iterable[str] | None = None,
           shapes: dict[str, str] | None = None, title: str | None = None,
           **fold: Any) -> str:
    """The DOT text of :func:`draw` (``fold``: its ``fold`` and ``max_layers``)."""
    return draw(G, layers, shapes, title, **fold).dot


def draw(
    G: nx.MultiDiGraph,
    layers: Iterable[str] | None = None,
    shapes: dict[str, str] | None = None,
    title: str | None = None,
    fold: bool = False,
    max_layers: int | None = None,
    errors: ErrorView | None = None,
    boxes: str = "nested",
) -> Drawing:
    """The DOT of ``G`` (or of the ``layers`` among it), shapes on the edges, layers
    filled by check status, with a legend, and the check rows and plan it drew from.
    Edges entering the shown part from outside start at a small point, so the input
    shapes of a cut-out are visible. Gather layers have a thick border. A TensorIterator,
    Loop or If is one node whose label counts the layers of its bodies (their layers are
    not drawn). ``fold`` (whole models only) draws the plan of :mod:`ovgather.views.show.outline`
    with at most ``max_layers`` nodes (None or 0: no bound). ``errors`` (a per-layer
    comparison, :mod:`ovgather.views.show.errors`) colours each layer by its error instead, and
    keeps every differing layer a node. ``boxes`` says how open blocks are drawn:
    ``nested`` clusters, ``newrank`` the same laid out with Graphviz's newrank, ``flat``
    (only the innermost boxes), ``none`` (no boxes): the steps down when Graphviz fails."""
    report = check(G, shapes)
    known = port_shapes(G, report)
    rows = {lr.id: lr.to_dict() for lr in report.layers}
    for n in G:
        rows.setdefault(n, {"status": "unchecked", "name": G.nodes[n]["name"]})
    plan = None
    if fold and layers is None:
        status = {n: r["status"] for n, r in rows.items()}
        if errors is not None:  # a differing layer is never folded, collapsed, left out
            status.update((n, "mismatch") for n, e in errors.layers.items()
                          if e.status == "differs")
        plan = outline(G, status, known, max_layers,
                       label=lambda u, p: _edge_label(G, u, p, known).split("\n")[0])
        title = "\n".join([title or G.graph.get("name") or "", *plan.notes(G)]).strip()
    lines = ["digraph ovgather {", '  rankdir=TB; fontname="Helvetica";',
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    if boxes == "newrank":
        lines.append("  newrank=true;")
    if title:
        lines.append(f"  labelloc=t; label={_quote(title)};")
    if plan is None:
        shown = set(G) if layers is None else set(layers)
        lines += [_node_line(G, n, rows[n], errors=errors) for n in G if n in shown]
        lines += _edge_lines(G, known, lambda n: f"n{n}" if n in shown else None)
    else:
        lines += _planned_nodes(G, plan, rows, errors, boxes)
        lines += _edge_lines(G, known, plan.node_of, plan.folded, bool(plan.left_out))
    lines.extend(_legend() if errors is None else _error_legend(G, errors))
    lines.append("}")
    return Drawing("\n".join(lines) + "\n", rows, plan, errors)


def _planned_nodes(G: nx.MultiDiGraph, plan: Outline, rows: dict[str, dict[str, Any]],
                   errors: ErrorView | None = None, boxes: str = "nested") -> list[str]:
    """Nodes of a folded picture: open blocks as boxes (clusters, nested unless ``boxes``
    says ``flat`` or ``none``), closed blocks as one node, layers as theirs."""
    tree = plan.groups
    out: list[str] = []
    counter = [0]

    def scope_key(b: int) -> str | None:
        return next((tree.blocks[c].key for c in tree.chain(b)
                     if c and tree.blocks[c].kind == "scope"), None)

    def walk(b: int, indent: str, outer: list[str]) -> None:
        blk = tree.blocks[b]
        box = b != 0 and boxes != "none" and (
            boxes != "flat" or not any(isinstance(it, int) and it in plan.opened
                                       for it in blk.items))
        here = outer
        if box:
            here = []
            counter[0] += 1
        key = scope_key(b)
        for it in blk.items:
            if isinstance(it, str):
                here.append(indent + ("  " if box else "") + _node_line(
                    G, it, rows[it], plan.lines.get(it), key, errors).strip())
            elif it in plan.opened:
                walk(it, indent + ("  " if box else ""), here)
            else:
                members = [n for n in plan.order if plan.node_of(n) == f"b{it}"]
                here.append(indent + ("  " if box else "")
                            + _collapsed_line(G, f"b{it}", tree.blocks[it], members, rows,
                                              errors).strip())
        if box:
            outer.append(f"{indent}subgraph cluster_{counter[0]} {{")
            outer.append(f"{indent}  label={_quote(blk.label)}; style=dashed;")
            outer.extend(here)
            outer.append(f"{indent}}}")

    walk(0, "  ", out)
    return out


def _spec_version(G: nx.MultiDiGraph, n: str) -> int | None:
    """The op version the layer's opset selects, None when ovgather cannot tell."""
    try:
        spec = g.op_spec(G, n)
    except UnsupportedOpError:
        return None
    return None if spec is None else spec.version


def _node_line(G: nx.MultiDiGraph, n: str, row: dict[str, Any],
               folded: list[str] | None = None, block: str | None = None,
               errors: ErrorView | None = None) -> str:
    attrs = G.nodes[n]
    st = row.get("status", "unchecked")
    version = _spec_version(G, n) or attrs.get("version") or ""
    if isinstance(version, int):
        version = f"-{version}"
    elif version:
        version = f" ({version})"
    name = attrs["name"]
    if block and name.startswith(block):  # the box says the prefix once
        name = "…" + name[len(block):]
    text = f"{name}\n{attrs['type']}{version}  id {n}"
    if attrs.get("bodies"):  # a TensorIterator, Loop or If is drawn as one node
        text += "\n" + _bodies_text(attrs)
    text += "".join(f"\n{line}" for line in folded or ())
    bold = ", penwidth=2.5" if attrs["type"] in gather_types() else ""
    if errors is not None:
        return _error_node_line(n, text, attrs["name"], errors.layers.get(n), bold)
    if st in ("mismatch", "invalid", "unknown"):
        text += f"\n{st}"
    return (f'  "n{n}" [label={_quote(text)}, fillcolor="{STATUS_COLOURS.get(st, "#ffffff")}", '
            f'tooltip={_quote(_tooltip(attrs["name"], row))}, id="n{n}", class="{st}"{bold}];')


def _error_node_line(n: str, text: str, name: str, err: LayerError | None,
                     bold: str) -> str:
    """A layer filled by its error; the first divergent one outlined thickly."""
    status = err.status if err is not None else "not compared"
    fill = err.colour if err is not None else NOT_COMPARED
    if err is not None and err.compared:
        text += f"\n{err.text()}"
    tip = f"{name}\n{err.text() if err is not None else status}"
    if err is not None and len(err.ports) > 1:
        for p in err.ports:
            one = LayerError(p["status"], p.get("max_abs"), p.get("max_rel"))
            tip += f"\nport {p.get('port')}: {one.text()}"
    cls = status.replace(" ", "-")
    if err is not None and err.first:
        text += "\nfirst divergent"
        bold = f', penwidth=4, color="{FIRST_DIVERGENT}"'
        cls += " first-divergent"
    return (f'  "n{n}" [label={_quote(text)}, fillcolor="{fill}", tooltip={_quote(tip)}, '
            f'id="n{n}", class="{cls}"{bold}];')


def _tooltip(name: str, row: dict[str, Any]) -> str:
    """What hovering a layer tells: its status and why, inferred and declared shapes."""
    text = f"{name}\n{row.get('status', 'unchecked')}"
    if row.get("message"):
        text += f": {row['message']}"
    if row.get("inferred"):
        text += "\ninferred: " + ", ".join(row["inferred"])
    if row.get("declared"):
        text += "\ndeclared: " + ", ".join(row["declared"])
    return text


def _collapsed_line(G: nx.MultiDiGraph, node: str, block: Any, members: list[str],
                    rows: dict[str, dict[str, Any]], errors: ErrorView | None = None) -> str:
    """One node for a closed block: its name, size, commonest ops, the shapes in and out;
    filled ``ok`` when every layer is ok, else ``unchecked``."""
    kinds = Counter(G.nodes[n]["type"] for n in members).most_common(4)
    ops = ", ".join(f"{t} ×{c}" for t, c in kinds)
    st = "ok" if all(rows[n]["status"] == "ok" for n in members) else "unchecked"
    fill = STATUS_COLOURS[st]
    if errors is not None:  # the worst compared layer's colour (never a differing one)
        found = [errors.layers[n] for n in members if n in errors.layers]
        compared = [e for e in found if e.compared]
        st = "ok" if compared else "not-compared"
        fill = (max(compared, key=lambda e: e.max_rel or 0.0).colour if compared
                else NOT_COMPARED)
    text = f"{block.label}\n{len(members)} layers (closed)\n{ops}"
    if block.inputs or block.outputs:
        text += f"\nin {' '.join(block.inputs) or '-'}  out {' '.join(block.outputs) or '-'}"
    return (f'  "{node}" [label={_quote(text)}, fillcolor="{fill}", '
            f'tooltip={_quote(text)}, id="{node}", class="{st} block", peripheries=2];')


def _bodies_text(attrs: dict[str, Any]) -> str:
    """``body: 13 layers`` (``then_body: 4 layers, else_body: 5 layers`` for an If)."""
    from ...graph.bodies import body_size

    return ", ".join(f"{name}: {body_size({'bodies': {name: body}})} layers"
                     for name, body in attrs["bodies"].items())


def _edge_lines(G: nx.MultiDiGraph, known: dict[tuple[str, int], PartialShape],
                node_of, folded: set[str] = frozenset(), more: bool = False) -> list[str]:
    """One edge per tensor and input; an edge from a layer not drawn starts at a point.
    Edges into a collapsed block, or to the ``more`` node that stands for the layers
    left out (when ``more``), are drawn once per tensor."""
    lines, seen = [], set()
    for u, v, key in G.edges(keys=True):
        if u in folded or v in folded:
            continue
        a, b = node_of(u), node_of(v)
        if (b is None and (a is None or not more)) or a == b:
            continue
        merged = b is None or b != f"n{v}" or (a is not None and a != f"n{u}")
        ident = (a, b or "more", u, key[0]) if merged else (u, v, key)
        if ident in seen:
            continue
        seen.add(ident)
        label = _quote(_edge_label(G, u, key[0], known))
        if a is None:
            lines.append(f'  "cut{u}_{key[0]}" [shape=point, width=0.08, label=""];')
            lines.append(f'  "cut{u}_{key[0]}" -> "{b}" [label={label}, style=dashed];')
        elif b is None:
            lines.append(f'  "{a}" -> "more" [label={label}, style=dashed];')
        else:
            lines.append(f'  "{a}" -> "{b}" [label={label}];')
    return lines


def _edge_label(G: nx.MultiDiGraph, u: str, port_id: int,
                known: dict[tuple[str, int], PartialShape]) -> str:
    shape = known.get((u, port_id))
    declared = declared_shape(G, u, port_id)
    text = str(shape) if shape is not None else str(declared)
    if shape is not None and not shape.compatible(declared):
        text += f"\ndeclared {declared}"
    return text


def _error_legend(G: nx.MultiDiGraph, errors: ErrorView) -> list[str]:
    """The shades of ok and differs with their max_rel bounds, grey, the first divergent
    layer's outline (and its name)."""
    def cells(shades: tuple[tuple[float, str], ...]) -> str:
        out, low = "", 0.0
        for bound, colour in shades:
            words = ("0" if bound == 0 else f"&gt; {low:.0e}" if math.isinf(bound)
                     else f"≤ {bound:.0e}")
            out += f'<TD BGCOLOR="{colour}">{words}</TD>'
            low = bound
        return out

    first = "none" if errors.first is None else _html(G.nodes[errors.first]["name"])
    rows = (f'<TR><TD>ok, max_rel</TD>{cells(OK_SHADES)}</TR>'
            f'<TR><TD>differs, max_rel</TD>{cells(DIFFERS_SHADES)}</TR>'
            f'<TR><TD BGCOLOR="{NOT_COMPARED}">not compared</TD>'
            f'<TD COLSPAN="5" BORDER="3" COLOR="{FIRST_DIVERGENT}">first divergent: {first}'
            '</TD></TR>')
    return ['  legend [shape=plaintext, style="", label=<<TABLE BORDER="0" CELLBORDER="1" '
            f'CELLSPACING="0" CELLPADDING="3">{rows}</TABLE>>];']


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _legend() -> list[str]:
    cells = "".join(f'<TD BGCOLOR="{c}">{s}</TD>' for s, c in STATUS_COLOURS.items())
    return ['  legend [shape=plaintext, style="", label=<<TABLE BORDER="0" CELLBORDER="1" '
            f'CELLSPACING="0" CELLPADDING="3"><TR>{cells}</TR></TABLE>>];']
