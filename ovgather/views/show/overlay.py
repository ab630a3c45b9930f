"""Overlays: a report's per-layer figure as the colour of each layer and a side table.

``show MODEL --overlay REPORT.json`` reads the JSON of ``check``, ``compare --all-layers``,
``diff``, ``stats --by layer`` or ``precision`` (the kind is told by its keys) and gives
each layer of MODEL a status, a fill and a line of text; the page lists the layers in a
table (a click goes to the layer). A compare report goes through :mod:`.errors` (its log scale of
``max_rel``); the others:

- ``check``: the check status of the report's first model;
- ``diff``: changed, renamed, added (B's names), removed; unchanged layers grey;
- ``stats``: the layer's share of the FLOPs, a shade of blue per decade;
- ``precision``: the layer's local error in the target precision (the layer alone, on exact
  inputs: what names the cause), red for NaN/Inf, as compare's shades of ``max_rel``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from ...errors import UsageError
from .dot import STATUS_COLOURS
from .errors import NOT_COMPARED, ErrorView, LayerError, layer_errors

__all__ = ["read_overlay", "overlay_kind", "OverlayCell"]

_DIFF = {"changed": "#fdb863", "renamed": "#b2abd2", "added": "#b8e186", "removed": "#d6604d"}
_BLUES = ((1e-4, "#eff3ff"), (1e-3, "#bdd7e7"), (1e-2, "#6baed6"), (1e-1, "#3182bd"),
          (math.inf, "#08519c"))


@dataclass
class OverlayCell(LayerError):
    """A layer's cell of an overlay: its status, fill and text."""

    fill: str = NOT_COMPARED
    note: str = ""

    @property
    def compared(self) -> bool:  # type: ignore[override]
        return True

    @property
    def colour(self) -> str:  # type: ignore[override]
        return self.fill

    def text(self) -> str:
        return self.note or self.status


def overlay_kind(report: Mapping[str, Any]) -> str:
    """``check``, ``compare``, ``diff`` or ``stats``, from the report's keys."""
    if "models" in report:
        return "check"
    if "first_divergent" in report or "layer_summary" in report:
        return "compare"
    if "summary" in report and "equal" in report:
        return "diff"
    if "total" in report and "layers" in report:
        return "stats"
    if "target" in report and "top_local" in report:
        return "precision"
    raise UsageError("--overlay: the report is none of check, compare --all-layers, diff, "
                     "stats --by layer or precision (their --json)")


def read_overlay(G: nx.MultiDiGraph, source: str | os.PathLike[str] | Mapping[str, Any]
                 ) -> tuple[str, ErrorView, dict[str, Any]]:
    """The kind, the per-layer view (for the pictures) and the page's part of a report."""
    report: Any = source
    if not isinstance(source, Mapping):
        try:
            with open(source, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            report = None  # the compare reader says what is wrong with it
    kind = "compare"
    if isinstance(report, Mapping):
        try:
            kind = overlay_kind(report)
        except UsageError:
            kind = "compare"
    if kind == "compare":
        view = layer_errors(G, source)
    else:
        by_name = {G.nodes[n]["name"]: n for n in G}
        cells = {"check": _check, "diff": _diff, "stats": _stats,
                 "precision": _precision}[kind](report, by_name)
        if not cells:
            raise UsageError(f"--overlay: no layer of the {kind} report is in the model")
        view = ErrorView(cells, None, [], None if isinstance(source, Mapping) else str(source))
    layers = {n: {"status": e.status, "fill": e.colour,
                  "text": e.text() + (", the first divergent layer" if e.first else "")}
              for n, e in view.layers.items()}
    statuses = sorted({e.status for e in view.layers.values()})
    colours = {s: next(e.colour for e in view.layers.values() if e.status == s)
               for s in statuses}
    rows = sorted(view.layers.items(), key=lambda kv: (-(kv[1].max_rel or 0.0),
                                                      G.nodes[kv[0]]["name"]))
    table = {"head": ["layer", "status", "figure"],
             "rows": [[n, G.nodes[n]["name"], e.status, e.text()] for n, e in rows[:2000]]}
    return kind, view, {"kind": kind, "layers": layers, "colours": colours,
                        "missing": "not in the report", "table": table}


def _check(report: Mapping[str, Any], by_name: dict[str, str]) -> dict[str, LayerError]:
    models = report.get("models") or [{}]
    out: dict[str, LayerError] = {  # check lists the layers at fault: the others are ok
        n: OverlayCell("ok", fill=STATUS_COLOURS["ok"]) for n in by_name.values()}
    for row in models[0].get("layers") or []:
        n = by_name.get(row.get("name"))
        if n is not None:
            st = row.get("status", "unchecked")
            out[n] = OverlayCell(st, fill=STATUS_COLOURS.get(st, NOT_COMPARED),
                                 note=f"{st}: {row.get('message', '')}".rstrip(": "))
    return out


def _diff(report: Mapping[str, Any], by_name: dict[str, str]) -> dict[str, LayerError]:
    out = {}
    for row in report.get("layers") or []:
        st = row.get("status")
        side = row.get("b") if st == "added" else row.get("a")
        n = by_name.get((side or {}).get("name")) or by_name.get((row.get("b") or {}).get("name"))
        if n is not None:
            what = ", ".join(c.get("what", "") for c in row.get("changes") or [])
            out[n] = OverlayCell(st, fill=_DIFF.get(st, NOT_COMPARED),
                                 note=f"{st}: {what}" if what else st)
    return out


def _stats(report: Mapping[str, Any], by_name: dict[str, str]) -> dict[str, LayerError]:
    rows = report.get("layers") or []
    total = sum(r["flops"] for r in rows if isinstance(r.get("flops"), int)) or 1
    out = {}
    for r in rows:
        n = by_name.get(r.get("name"))
        if n is None:
            continue
        flops = r.get("flops") if isinstance(r.get("flops"), int) else 0
        share = flops / total
        fill = next(c for bound, c in _BLUES if share <= bound)
        out[n] = OverlayCell("flops", max_rel=share, fill=fill,
                             note=f"{flops:,} FLOPs ({share:.1%})")
    return out


def _precision(report: Mapping[str, Any], by_name: dict[str, str]) -> dict[str, LayerError]:
    """Each layer by its local error in the report's target precision (its worst port)."""
    from .errors import DIFFERS_SHADES

    out: dict[str, LayerError] = {}
    worst: dict[str, float] = {}
    for r in report.get("layers") or []:
        n = by_name.get(r.get("name"))
        if n is None:
            continue
        bad = bool(r.get("local_nonfinite"))
        rel = math.inf if bad else float(r.get("local_max_rel") or 0.0)
        if rel < worst.get(n, -1.0):
            continue
        worst[n] = rel
        shade = next((c for bound, c in DIFFERS_SHADES if rel <= bound), DIFFERS_SHADES[-1][1])
        note = ("local: NaN/Inf" if bad else f"local max rel {rel:.3g}") + \
            f", accumulated max abs {r.get('max_abs')}"
        out[n] = OverlayCell("non-finite" if bad else "local error", max_rel=rel,
                             fill=shade, note=note)
    return out
