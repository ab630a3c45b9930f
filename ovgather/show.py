"""Pictures of a model: Graphviz DOT with shapes on the edges and check status as colour.

:func:`to_dot` needs no extra program: it writes DOT text in which every edge carries
the shape of the tensor it moves (ovgather's inferred shape; ``declared`` too when the
IR says something else) and every layer is filled by its check status. :func:`render`
turns DOT into SVG or PNG with Graphviz's ``dot`` when it is installed, and otherwise
raises an OutputError that says how to install it.

>>> import openvino as ov, numpy as np
>>> from openvino import opset8
>>> from ovgather.runtime import from_openvino
>>> d = opset8.parameter([2, 3, 4], np.float32, name="data")
>>> i = opset8.constant(np.array([[1], [0]], dtype=np.int64))
>>> text = to_dot(from_openvino(ov.Model([opset8.gather_nd(d, i, 1)], [d], "m")))
>>> text.startswith("digraph"), 'label="[2,3,4]"' in text
(True, True)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from typing import Any

import networkx as nx

from . import graph as g
from .atomic import AtomicOutput
from .errors import OutputError, UnsupportedOpError, UsageError
from .extract import declared_shape, neighbourhood, port_shapes
from .graph import find_layer, gather_types
from .infer import check
from .shapes import PartialShape

__all__ = ["STATUS_COLOURS", "to_dot", "render", "write_picture", "FORMATS"]

#: Fill colour of a layer per check status (colour-blind-safe ColorBrewer tones).
STATUS_COLOURS = {
    "ok": "#b8e186",
    "mismatch": "#fdb863",
    "invalid": "#d6604d",
    "unchecked": "#e0e0e0",
}
FORMATS = ("dot", "svg", "png")
_INSTALL_HINT = ("Graphviz's 'dot' program is needed for --format {fmt}; install it with "
                 "'apt-get install graphviz' (or 'brew install graphviz', 'conda install "
                 "graphviz'), or write --format dot and render it elsewhere")


def _quote(text: str) -> str:
    """A DOT string literal (``\\n`` inside stays a line break)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(
    G: nx.MultiDiGraph,
    layers: Iterable[str] | None = None,
    shapes: dict[str, str] | None = None,
    title: str | None = None,
) -> str:
    """The DOT text of ``G`` (or of the ``layers`` among it), shapes on the edges,
    layers filled by check status, with a legend. Edges entering the shown part from
    outside start at a small point, so the input shapes of a cut-out are visible. Gather
    layers have a thick border. A TensorIterator, Loop or If is one node whose label
    counts the layers of its bodies (their layers are not drawn)."""
    shown = set(G) if layers is None else set(layers)
    report = check(G, shapes)
    known = port_shapes(G, report)
    rows = {lr.id: lr.to_dict() for lr in report.layers}
    status = {n: rows.get(n, {"status": "unchecked"}) for n in G}
    lines = ["digraph ovgather {", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    if title:
        lines.append(f"  labelloc=t; label={_quote(title)};")
    for n in G:
        if n in shown:
            lines.append(_node_line(G, n, status[n]))
    for u, v, key in G.edges(keys=True):
        if v not in shown:
            continue
        label = _edge_label(G, u, key[0], known)
        if u not in shown:
            lines.append(f'  "cut{u}_{key[0]}" [shape=point, width=0.08, label=""];')
            lines.append(f'  "cut{u}_{key[0]}" -> "n{v}" [label={_quote(label)}, style=dashed];')
        else:
            lines.append(f'  "n{u}" -> "n{v}" [label={_quote(label)}];')
    lines.extend(_legend())
    lines.append("}")
    return "\n".join(lines) + "\n"


def _spec_version(G: nx.MultiDiGraph, n: str) -> int | None:
    """The op version the layer's opset selects, None when ovgather cannot tell."""
    try:
        spec = g.op_spec(G, n)
    except UnsupportedOpError:
        return None
    return None if spec is None else spec.version


def _node_line(G: nx.MultiDiGraph, n: str, row: dict[str, Any]) -> str:
    attrs = G.nodes[n]
    st = row.get("status", "unchecked")
    version = _spec_version(G, n) or attrs.get("version") or ""
    if isinstance(version, int):
        version = f"-{version}"
    elif version:
        version = f" ({version})"
    text = f"{attrs['name']}\n{attrs['type']}{version}  id {n}"
    if attrs.get("bodies"):  # a TensorIterator, Loop or If is drawn as one node
        text += "\n" + _bodies_text(attrs)
    if st in ("mismatch", "invalid"):
        text += f"\n{st}"
    tooltip = row.get("message") or st
    bold = ", penwidth=2.5" if attrs["type"] in gather_types() else ""
    return (f'  "n{n}" [label={_quote(text)}, fillcolor="{STATUS_COLOURS.get(st, "#ffffff")}", '
            f'tooltip={_quote(tooltip)}{bold}];')


def _bodies_text(attrs: dict[str, Any]) -> str:
    """``body: 13 layers`` (``then_body: 4 layers, else_body: 5 layers`` for an If)."""
    from .graph.bodies import body_size

    return ", ".join(f"{name}: {body_size({'bodies': {name: body}})} layers"
                     for name, body in attrs["bodies"].items())


def _edge_label(G: nx.MultiDiGraph, u: str, port_id: int,
                known: dict[tuple[str, int], PartialShape]) -> str:
    shape = known.get((u, port_id))
    declared = declared_shape(G, u, port_id)
    text = str(shape) if shape is not None else str(declared)
    if shape is not None and not shape.compatible(declared):
        text += f"\ndeclared {declared}"
    return text


def _legend() -> list[str]:
    cells = "".join(f'<TD BGCOLOR="{c}">{s}</TD>' for s, c in STATUS_COLOURS.items())
    return ['  legend [shape=plaintext, style="", label=<<TABLE BORDER="0" CELLBORDER="1" '
            f'CELLSPACING="0" CELLPADDING="3"><TR>{cells}</TR></TABLE>>];']


#: Seconds Graphviz may take before ``render`` gives up on it.
DOT_TIMEOUT = 300


def render(dot_text: str, fmt: str, path: str | os.PathLike[str]) -> None:
    """Write ``dot_text`` as ``fmt`` (dot, svg or png) to ``path``, atomically (see
    :mod:`ovgather.atomic`: a private temporary file renamed over ``path``; a link at
    ``path`` is replaced, never written through)."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, but got '{fmt}'")
    exe = None
    if fmt != "dot":
        exe = shutil.which("dot")
        if exe is None:
            raise OutputError(_INSTALL_HINT.format(fmt=fmt), file=str(path))
    with AtomicOutput([path], "the picture") as out:
        if exe is None:
            with out.open(path, "w") as f:
                f.write(dot_text)
        else:
            _run_dot(exe, fmt, dot_text, out.path(path), path)


def _run_dot(exe: str, fmt: str, dot_text: str, tmp: str, path: str | os.PathLike[str]) -> None:
    try:
        run = subprocess.run([exe, f"-T{fmt}", "-o", tmp], input=dot_text.encode("utf-8"),
                             capture_output=True, timeout=DOT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise OutputError(f"Graphviz 'dot' did not finish within {DOT_TIMEOUT} s (the graph "
                          "may be too big to lay out: draw a part with --layer and --depth, "
                          "or write --format dot)", file=str(path)) from None
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip().splitlines()
        last = message[-1] if message else f"exit code {run.returncode}"
        raise OutputError(f"Graphviz 'dot' failed: {last}", file=str(path))
    if not os.path.isfile(tmp):
        raise OutputError("Graphviz 'dot' wrote no picture", file=str(path))


def write_picture(
    G: nx.MultiDiGraph,
    path: str | os.PathLike[str],
    fmt: str = "dot",
    layer: str | None = None,
    depth: int = 2,
    shapes: dict[str, str] | None = None,
) -> str:
    """Draw ``G`` (or ``layer``'s ``depth``-neighbourhood) into ``path``; returns the DOT."""
    layers = None
    title = G.graph.get("name")
    if layer is not None:
        node = find_layer(G, layer)
        layers = neighbourhood(G, node, depth)
        title = f"{G.nodes[node]['name']} (depth {depth})"
    text = to_dot(G, layers, shapes, title)
    render(text, fmt, path)
    return text
