"""A picture coloured by a per-layer comparison: ``show A --errors REPORT.json``.

``REPORT.json`` is what ``compare A B --all-layers --json`` writes: ``"layers"``, in A's
topological order, one entry per compared output port, ``{"a": A's layer name or null, "b":
B's or null, "port", "tensor": a tensor name or null, "status": "ok" | "differs" | "only in
A" | "only in B" | "not run", "max_abs", "max_rel"}``, and ``"first_divergent": {"a": …,
"b": …}`` or null.

Each layer of A is coloured by its worst port: a port that differs before one that is ok,
then the larger ``max_rel``. Ok layers are green, lighter as the error grows; differing
layers red, darker as it grows, a decade of ``max_rel`` a shade (:data:`OK_SHADES`,
:data:`DIFFERS_SHADES`). A layer the report has no compared port for (a constant, a
layer without a partner in B, one not run) is grey. The first divergent layer has a thick
dark outline and says so in its label.

>>> shade(1e-5, OK_SHADES) == OK_SHADES[2][1]
True
>>> shade(0.0, OK_SHADES) == OK_SHADES[0][1]
True
>>> shade(0.5, DIFFERS_SHADES) == DIFFERS_SHADES[-1][1]
True
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ...errors import UsageError

__all__ = ["LayerError", "ErrorView", "read_error_report", "layer_errors", "shade",
           "OK_SHADES", "DIFFERS_SHADES", "NOT_COMPARED", "FIRST_DIVERGENT", "STATUSES"]

#: the statuses of a per-layer comparison
STATUSES = ("ok", "differs", "only in A", "only in B", "not run")
#: ok layers: (largest max_rel of the shade, colour), a decade a shade (ColorBrewer Greens)
OK_SHADES = ((0.0, "#41ab5d"), (1e-6, "#74c476"), (1e-5, "#a1d99b"), (1e-4, "#c7e9c0"),
             (math.inf, "#e5f5e0"))
#: differing layers: the same, ColorBrewer Reds
DIFFERS_SHADES = ((1e-3, "#fcbba1"), (1e-2, "#fc9272"), (1e-1, "#fb6a4a"),
                  (math.inf, "#de2d26"))
#: the fill of a layer with no compared port
NOT_COMPARED = "#e0e0e0"
#: the outline of the first divergent layer
FIRST_DIVERGENT = "#67000d"


@dataclass
class LayerError:
    """What the report says of one layer of A: its worst port's ``status``, ``max_abs``,
    ``max_rel`` (None when not compared) and ``tensor``, every port's entry, and whether
    it is the first divergent layer."""

    status: str
    max_abs: float | None = None
    max_rel: float | None = None
    tensor: str | None = None
    ports: list[dict[str, Any]] = field(default_factory=list)
    first: bool = False

    @property
    def compared(self) -> bool:
        return self.status in ("ok", "differs")

    @property
    def colour(self) -> str:
        if self.status == "differs":
            return shade(self.max_rel, DIFFERS_SHADES)
        if self.status == "ok":
            return shade(self.max_rel, OK_SHADES)
        return NOT_COMPARED

    def text(self) -> str:
        """``differs: max_rel 3.1e-02, max_abs 0.12`` (the status alone when not compared)."""
        if not self.compared or self.max_rel is None:
            return self.status
        abs_text = "" if self.max_abs is None else f", max_abs {self.max_abs:.3g}"
        return f"{self.status}: max_rel {self.max_rel:.2g}{abs_text}"


@dataclass
class ErrorView:
    """Per layer id of A its :class:`LayerError`; ``first`` the first divergent layer's id
    (None when none, or when A has no layer of its name); ``unmatched`` the report's
    entries for A that name no layer of A (a report made of another model)."""

    layers: dict[str, LayerError]
    first: str | None
    unmatched: list[str]
    source: str | None = None

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for err in self.layers.values():
            found[err.status] = found.get(err.status, 0) + 1
        return found


def shade(max_rel: float | None, shades: tuple[tuple[float, str], ...]) -> str:
    """The colour of the first shade whose bound ``max_rel`` does not pass (a log scale: a
    decade a shade); None or NaN is the worst shade."""
    if max_rel is None or math.isnan(max_rel):
        return shades[-1][1]
    return next(colour for bound, colour in shades if max_rel <= bound)


def read_error_report(source: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """The report (a path to the JSON of ``compare --all-layers --json``, or its dict),
    checked to hold ``"layers"`` as that command writes it; a UsageError otherwise."""
    where = None if isinstance(source, Mapping) else os.fspath(source)
    if where is not None:
        try:
            with open(where, encoding="utf-8") as f:
                source = json.load(f)
        except OSError as err:
            raise UsageError(f"--errors needs the JSON of compare --all-layers --json, but "
                             f"the file cannot be read ({err.strerror})", file=where) from err
        except ValueError as err:  # UnicodeDecodeError too
            raise UsageError(f"--errors needs the JSON of compare --all-layers --json, but "
                             f"the file is not JSON ({_first_line(err)})", file=where) from err
        except RecursionError:
            raise UsageError("--errors needs the JSON of compare --all-layers --json, but "
                             "the file's JSON is nested deeper than Python can read (a "
                             "report is nested three deep)", file=where) from None
    layers = source.get("layers") if isinstance(source, Mapping) else None
    if not isinstance(layers, list):
        raise UsageError("--errors needs the JSON of compare --all-layers --json, but it has "
                         "no \"layers\" list (was --all-layers given?)", file=where)
    for i, entry in enumerate(layers):
        why = _entry_problem(entry)
        if why:
            raise UsageError(f"--errors: \"layers\"[{i}] {why}", file=where)
    first = source.get("first_divergent")
    if first is not None and not isinstance(first, Mapping):
        raise UsageError(f"--errors: \"first_divergent\" must be an object or null, not "
                         f"{_json_type(first)}", file=where)
    for key in ("a", "b", "tensor"):
        if first is not None and first.get(key) is not None and not isinstance(first[key], str):
            raise UsageError(f"--errors: the \"{key}\" of \"first_divergent\" is "
                             f"{_json_type(first[key])}, not text or null", file=where)
    return dict(source)


def _json_type(value: Any) -> str:
    """What a JSON value is, in words: ``a list``, ``a number``…"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _entry_problem(entry: Any) -> str | None:
    """What is wrong with one entry of ``"layers"``, or None."""
    if not isinstance(entry, Mapping):
        return f"must be an object, not {_json_type(entry)}"
    status = entry.get("status")
    if not isinstance(status, str) or status not in STATUSES:
        shown = repr(status) if isinstance(status, str) else _json_type(status)
        return f"has status {shown[:80]}, not one of {', '.join(STATUSES)}"
    for key in ("a", "b", "tensor"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return f"has a non-text \"{key}\" ({_json_type(entry[key])})"
    port = entry.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        return f"has a \"port\" that is {_json_type(port)}, not a whole number"
    for key in ("max_abs", "max_rel"):
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float))):
            return f"has a non-number \"{key}\" ({_json_type(value)})"
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                float(value)
            except OverflowError:
                return f"has a \"{key}\" too large for a number"
    return None


def layer_errors(G: nx.MultiDiGraph, report: Mapping[str, Any] | str | os.PathLike[str]
                 ) -> ErrorView:
    """Each layer of ``G`` (model A) with the entries of ``report`` that name it (by
    friendly name, else by an output tensor's name), reduced to its worst port. A report
    none of whose layers of A is in ``G`` is a UsageError: it was made of another model."""
    source = None if isinstance(report, Mapping) else os.fspath(report)
    report = read_error_report(report)
    by_name: dict[str, list[str]] = {}
    by_tensor: dict[str, str] = {}
    for n, attrs in G.nodes(data=True):
        by_name.setdefault(attrs["name"], []).append(n)
        for port in attrs.get("outputs") or ():
            for tensor in port.get("names") or ():
                by_tensor.setdefault(tensor, n)
    entries: dict[str, list[dict[str, Any]]] = {}
    unmatched = []
    for entry in report["layers"]:
        if entry.get("a") is None:
            continue  # only in B: nothing of A to colour
        n = _layer_of(entry["a"], entry.get("tensor"), by_name, by_tensor)
        if n is None:
            unmatched.append(entry["a"])
        else:
            entries.setdefault(n, []).append(dict(entry))
    if unmatched and not entries:
        raise UsageError(f"--errors: no layer of the model is named in the report (its first "
                         f"layer of A is '{unmatched[0]}'): is it the report of this model "
                         "as A?", file=source)
    layers = {n: _worst(found) for n, found in entries.items()}
    first = None
    divergent = report.get("first_divergent")
    if divergent and divergent.get("a") is not None:
        tensor = next((e.get("tensor") for e in report["layers"]
                       if e.get("a") == divergent["a"] and e.get("status") == "differs"), None)
        first = _layer_of(divergent["a"], tensor, by_name, by_tensor)
        if first is not None and first in layers:
            layers[first].first = True
    return ErrorView(layers, first, unmatched, source)


def _layer_of(name: str, tensor: str | None, by_name: dict[str, list[str]],
              by_tensor: dict[str, str]) -> str | None:
    """The layer a report entry names: the one of that friendly name, else the one whose
    output is its tensor (an ONNX node name is no friendly name OpenVINO keeps, but its
    output's name is), else one whose output tensor is called ``name``."""
    found = by_name.get(name)
    if found and len(found) == 1:
        return found[0]
    if tensor is not None and tensor in by_tensor:
        return by_tensor[tensor]
    if found:
        return found[0]
    return by_tensor.get(name)


def _worst(entries: list[dict[str, Any]]) -> LayerError:
    """The port that says most: differs before ok before the rest, then the larger
    max_rel (a NaN the largest)."""
    rank = {"differs": 2, "ok": 1}

    def key(e: dict[str, Any]) -> tuple[int, float]:
        rel = e.get("max_rel")
        return rank.get(e["status"], 0), math.inf if rel is None or rel != rel else rel

    worst = max(entries, key=key)
    return LayerError(worst["status"], worst.get("max_abs"), worst.get("max_rel"),
                      worst.get("tensor"), entries)
