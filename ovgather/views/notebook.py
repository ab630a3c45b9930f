"""ovgather in Jupyter: a graph, a check report, a compare report and a picture display
themselves in a notebook.

A graph read by ovgather is a plain ``networkx.MultiDiGraph`` and the reports are plain
objects, so they get no display methods of their own; instead, when ovgather is imported
inside an IPython kernel (``IPython`` already imported and a shell running), :func:`register`
tells the kernel's HTML formatter how to show them, by class name, so nothing of theirs is
imported for it:

* a ``CheckReport`` (``og.check(G)``): the verdict, then an HTML table of the layers that
  are not ok, failing ones first (invalid, mismatch, unknown, then unchecked), coloured
  by status as ``ovgather show`` colours them;
* a ``CompareReport`` (``og.compare(a, b)``): the verdict, then a table of the outputs,
  failing ones first;
* a graph that ovgather read (``og.read_ir(path)``; any other ``MultiDiGraph`` keeps its
  usual display): its check report as above, then its picture inline.

Every display is bounded in size and time whatever the model: a table lists the first
:data:`MAX_ROWS` rows and counts the rest, a cell shows at most :data:`MAX_CELL`
characters, and a report's text form (``text/plain``, ``repr(og.view(x))``) is one short
line, not the dataclass's repr of every layer.

:func:`picture` (``og.picture(G)``) gives a :class:`Picture`, which displays as SVG
(``_repr_svg_``, drawn by Graphviz's ``dot`` on first display) and :func:`view`
(``og.view(x)``) wraps any of the three in an object with ``_repr_html_``, for a front end
that is no IPython kernel, or to show one explicitly (``display(og.view(G))``).

Outside a notebook nothing here runs: ``import ovgather`` never imports IPython (it only
looks whether it is imported already), and this module imports the checker and the
picture code only when something is shown.
"""

from __future__ import annotations

import html
import os
import sys
from typing import Any

__all__ = ["view", "picture", "Picture", "register", "check_html", "compare_html",
           "graph_html", "short_text", "load_ipython_extension"]

#: rows listed at most in a report's table (layers, outputs); the rest are counted below it
MAX_ROWS = 200
#: characters shown at most of one table cell or name (a layer name, a message); the
#: rest is cut with "…": with MAX_ROWS, a report's HTML stays under about 200 KB
MAX_CELL = 160
#: the order of a check report's rows: failing layers first
_CHECK_ORDER = {"invalid": 0, "mismatch": 1, "unknown": 2, "unchecked": 3, "ok": 4}
#: the order of a compare report's rows: failing outputs first
_COMPARE_ORDER = {"differs": 0, "only in A": 1, "only in B": 2, "nothing proven": 3, "ok": 4}
_OK, _BAD = "#1a9850", "#d73027"
_TABLE = '<table style="border-collapse:collapse;font-size:90%;text-align:left">'


def _e(value: Any) -> str:
    text = "" if value is None else str(value)
    if len(text) > MAX_CELL:
        text = text[:MAX_CELL - 1] + "…"
    return html.escape(text)


def _more(shown: int, total: int, what: str) -> str:
    more = total - shown
    return f"<p>… and {more} more {what}</p>" if more > 0 else ""


def _row(cells: list[str], head: bool = False, colour: str | None = None) -> str:
    tag = "th" if head else "td"
    out = []
    for i, cell in enumerate(cells):
        fill = f";background:{colour}" if colour and i == 0 else ""
        out.append(f'<{tag} style="padding:2px 8px;border-bottom:1px solid #ddd;'
                   f'text-align:left{fill}">{cell}</{tag}>')
    return "<tr>" + "".join(out) + "</tr>"


def _verdict(ok: bool, text: str) -> str:
    colour, word = (_OK, "OK") if ok else (_BAD, "PROBLEMS")
    return f'<p><b style="color:{colour}">{word}</b> {text}</p>'


def _status_colours() -> dict[str, str]:
    from .show import STATUS_COLOURS

    return STATUS_COLOURS


# -- check --------------------------------------------------------------------------------------
def check_html(report: Any, all_layers: bool = False) -> str:
    """A check report as HTML: its verdict and counts, then a table of the layers that are
    not ok (every layer with ``all_layers``), failing ones first, then walk order."""
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in ("ok", "mismatch", "invalid", "unchecked",
                                               "unknown") if s[k] or k != "unknown")
    head = _verdict(report.ok, f"<code>{_e(report.path or '(in memory)')}</code>: "
                    f"{s['layers']} layers, {counts}")
    rows = report.layers if all_layers else report.problems()
    rows = sorted(rows, key=lambda lr: _CHECK_ORDER.get(lr.status, 5))  # stable: walk order
    if not rows:
        return head
    colours = _status_colours()
    table = [_TABLE, _row(["status", "layer", "id", "type", "declared", "inferred", "line",
                           "why"], head=True)]
    for lr in rows[:MAX_ROWS]:
        ran = lr.status not in ("invalid", "unknown")
        table.append(_row([_e(lr.status), f"<b>{_e(lr.name)}</b>", _e(lr.id),
                           _e(f"{lr.type}/{lr.version}"), _e(" ".join(lr.declared)),
                           _e(" ".join(lr.inferred)) if ran else "—", _e(lr.line),
                           _e(lr.message)], colour=colours.get(lr.status)))
    table.append("</table>")
    tail = _more(min(len(rows), MAX_ROWS), len(rows), "layers (the report's <code>layers"
                 "</code>)")
    return head + "".join(table) + tail


# -- compare ------------------------------------------------------------------------------------
def compare_html(report: Any) -> str:
    """A compare report as HTML: its verdict, then a table of the outputs, failing ones
    first."""
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in ("ok", "differs", "nothing proven", "only in A",
                                               "only in B") if s[k] or k in ("ok", "differs"))
    head = _verdict(report.ok, f"<code>{_e(report.a)}</code> against <code>{_e(report.b)}"
                    f"</code>: {s['outputs']} outputs, {counts} ({_e(report.precision)} "
                    f"inference, rtol {report.rtol:g}, atol {report.atol:g}, seed "
                    f"{report.seed})")
    outputs = sorted(report.outputs, key=lambda o: _COMPARE_ORDER.get(o.status, 5))
    table = [_TABLE, _row(["status", "output", "in B", "shape", "max abs", "max rel",
                           "why"], head=True)]
    for o in outputs[:MAX_ROWS]:
        colour = "#e0e0e0" if o.status == "nothing proven" else (
            "#b8e186" if o.status == "ok" else "#fdb863")
        table.append(_row([_e(o.status), f"<b>{_e(o.name)}</b>", _e(o.name_b),
                           _e(o.shape if o.shape == o.shape_b or o.shape_b is None
                              else f"{o.shape} / {o.shape_b}"),
                           _num(o.max_abs), _num(o.max_rel), _e(o.message)], colour=colour))
    table.append("</table>")
    return head + "".join(table) + _more(min(len(outputs), MAX_ROWS), len(outputs),
                                         "outputs (the report's <code>outputs</code>)")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}"


# -- pictures -----------------------------------------------------------------------------------
class Picture:
    """A picture of a model, or of a layer's neighbourhood, as ``ovgather show`` draws it
    (shapes on the edges, layers coloured by check status). It displays itself as SVG in a
    notebook; ``dot`` is the Graphviz text, ``svg`` the drawing (Graphviz's ``dot`` program
    runs on first use), ``save(path)`` writes .svg, .png, .dot or .html by the suffix."""

    def __init__(self, G: Any, layer: str | None = None, depth: int = 2,
                 shapes: dict[str, str] | None = None, max_layers: int | None = 200) -> None:
        from .show import draw

        self._G, self._args = G, (layer, depth, shapes, max_layers)
        layers, title = None, G.graph.get("name") or ""
        if layer is not None:
            from ..edit.extract import neighbourhood
            from ..graph import find_layer

            node = find_layer(G, layer)
            layers = neighbourhood(G, node, depth)
            title = f"{G.nodes[node]['name']} (depth {depth})"
        self.drawing = draw(G, layers, shapes, title, fold=layer is None,
                            max_layers=max_layers)
        self._svg: str | None = None

    @property
    def dot(self) -> str:
        return self.drawing.dot

    @property
    def svg(self) -> str:
        if self._svg is None:
            from .show.graphviz import to_svg

            self._svg = to_svg(self.drawing.dot, "the picture")
        return self._svg

    def _repr_svg_(self) -> str | None:
        """The SVG; None (the text form shows instead) when Graphviz cannot draw it."""
        from ..errors import OvgatherError

        try:
            return self.svg
        except OvgatherError as err:
            self.problem = str(err)
            return None

    def __repr__(self) -> str:
        nodes = self.dot.count("\n  n")
        why = getattr(self, "problem", "")
        return f"<ovgather Picture: {nodes} nodes{'; ' + why if why else ''}>"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the picture to ``path``: .svg, .png, .dot or .html, by its suffix."""
        from .show import write_picture

        layer, depth, shapes, max_layers = self._args
        fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "dot"
        write_picture(self._G, path, fmt, layer, depth, shapes, max_layers)


def picture(G: Any, layer: str | None = None, depth: int = 2,
            shapes: dict[str, str] | None = None, max_layers: int | None = 200) -> Picture:
    """The picture of ``G`` (or of ``layer``'s ``depth``-neighbourhood) that displays
    itself in a notebook; see :class:`Picture` and ``ovgather show`` (docs/cli/show.md)."""
    return Picture(G, layer, depth, shapes, max_layers)


# -- graphs -------------------------------------------------------------------------------------
def is_ovgather_graph(G: Any) -> bool:
    """A graph read or built by ovgather (the schema's graph attributes), not any graph."""
    graph = getattr(G, "graph", None)
    return isinstance(graph, dict) and "ir_version" in graph and "net_attrs" in graph


def graph_html(G: Any, shapes: dict[str, str] | None = None) -> str:
    """A graph ovgather read, as HTML: its check report (:func:`check_html`), then its
    picture inline (or why there is none: Graphviz's ``dot`` is missing)."""
    from ..errors import OvgatherError
    from ..infer import check

    report = check(G, shapes)
    title = f"<h4>{_e(G.graph.get('name') or 'model')}</h4>"
    try:
        svg = Picture(G, shapes=shapes).svg
        drawn = f'<div style="max-height:800px;overflow:auto">{svg}</div>'
    except OvgatherError as err:
        drawn = f"<p><i>No picture: {html.escape(str(err))}</i></p>"
    return title + check_html(report) + drawn


# -- showing ------------------------------------------------------------------------------------
class _View:
    """Any of the three, with ``_repr_html_`` (what :func:`view` returns)."""

    def __init__(self, obj: Any, make) -> None:  # noqa: ANN001
        self.obj, self._make = obj, make

    def _repr_html_(self) -> str:
        return self._make(self.obj)

    def __repr__(self) -> str:
        return f"view({short_text(self.obj)})"


def short_text(obj: Any) -> str:
    """The text form of a graph, a report or a picture in a notebook: one bounded line
    (a report's own repr lists every layer: megabytes for a large model)."""
    name = type(obj).__name__
    if name == "CheckReport" and hasattr(obj, "layers"):
        s = obj.summary
        counts = ", ".join(f"{s[k]} {k}" for k in ("ok", "mismatch", "invalid", "unchecked",
                                                   "unknown") if s.get(k))
        return _cut(f"<CheckReport {obj.path or '(in memory)'}: {'OK' if obj.ok else 'PROBLEMS'}"
                    f": {s['layers']} layers{', ' + counts if counts else ''}>")
    if name == "CompareReport" and hasattr(obj, "outputs"):
        s = obj.summary
        counts = ", ".join(f"{n} {k}" for k, n in s.items() if k != "outputs" and n)
        return _cut(f"<CompareReport {obj.a} against {obj.b}: {'OK' if obj.ok else 'PROBLEMS'}"
                    f": {s['outputs']} outputs{', ' + counts if counts else ''}>")
    if is_ovgather_graph(obj):
        return _cut(f"<graph {obj.graph.get('name') or ''}: {obj.number_of_nodes()} layers>")
    return _cut(repr(obj))


def _cut(text: str, most: int = 4 * MAX_CELL) -> str:
    return text if len(text) <= most else text[:most - 1] + "…"


def _plain(obj: Any, p: Any, cycle: bool) -> None:
    """IPython's text/plain printer for the reports (registered by name, as the HTML)."""
    p.text(short_text(obj))


def view(obj: Any) -> _View:
    """``obj`` (a graph ovgather read, a CheckReport, a CompareReport) with a
    ``_repr_html_`` that shows it as in a notebook; a Picture is shown as it is."""
    make = _html_maker(obj)
    if make is None:
        raise TypeError(f"view() shows a graph ovgather read, a CheckReport or a "
                        f"CompareReport, but got a {type(obj).__name__}")
    return _View(obj, make)


def _html_maker(obj: Any):  # noqa: ANN202
    if is_ovgather_graph(obj):
        return graph_html
    name = type(obj).__name__
    if name == "CheckReport" and hasattr(obj, "layers"):
        return check_html
    if name == "CompareReport" and hasattr(obj, "outputs"):
        return compare_html
    if isinstance(obj, Picture):
        return lambda p: p.svg
    return None


def _graph_or_none(G: Any) -> str | None:
    """The HTML formatter's answer for any MultiDiGraph: None (its usual display) unless
    ovgather read it."""
    return graph_html(G) if is_ovgather_graph(G) else None


#: (module, class name, HTML maker): registered by name, so nothing is imported for it
_FORMATS = (("ovgather.infer.report", "CheckReport", check_html),
            ("ovgather.comparison.outputs", "CompareReport", compare_html),
            ("networkx.classes.multidigraph", "MultiDiGraph", _graph_or_none))


def register(shell: Any = None) -> bool:
    """Tell the running IPython shell (or ``shell``) how to show ovgather's graphs and
    reports as HTML; False when there is none. ``import ovgather`` calls it when IPython
    is imported already, so a notebook needs nothing more."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        get = getattr(ipython, "get_ipython", None)
        shell = get() if get is not None else None
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if not formatters or "text/html" not in formatters:
        return False
    for module, name, make in _FORMATS:
        formatters["text/html"].for_type_by_name(module, name, make)
        if name != "MultiDiGraph" and "text/plain" in formatters:  # networkx's is short
            formatters["text/plain"].for_type_by_name(module, name, _plain)
    return True


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext ovgather.views.notebook``: :func:`register` in a shell started after ovgather
    was imported."""
    register(shell)
