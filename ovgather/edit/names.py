"""The model's input and output names: ``rename_input`` and ``rename_output``, each
refusing a name another tensor or layer already holds."""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..errors import RewriteError
from ..graph import (
    output_port,
    producer,
)
from .base import _INDEXES, _out

__all__ = ["rename_input", "rename_output"]


def _names_taken(G: nx.MultiDiGraph, name: str, besides: str) -> str | None:
    """The id of a layer other than ``besides`` that has ``name`` as friendly name or as
    a tensor name of one of its outputs, or None."""
    for n, attrs in G.nodes(data=True):
        if n != besides and (attrs.get("name") == name or any(
                name in p.get("names", ()) for p in attrs.get("outputs", ()))):
            return n
    return None


def _check_new_name(G: nx.MultiDiGraph, new: Any, besides: str, what: str) -> None:
    if not isinstance(new, str) or not new:
        raise RewriteError(f"the new name of {what} must be a non-empty string, but got "
                           f"{new!r}", layer_name=G.nodes[besides]["name"], layer_id=besides)
    other = _names_taken(G, new, besides)
    if other is not None:
        raise RewriteError(f"the new name of {what} must be free, but layer "
                           f"'{G.nodes[other]['name']}' (id {other}) uses '{new}'",
                           layer_name=G.nodes[besides]["name"], layer_id=besides)
    index = _INDEXES.get(id(G))
    if index:
        index.names.add(new)


def rename_input(G: nx.MultiDiGraph, old: str, new: str, keep_old_names: bool = False) -> str:
    """Rename the model input ``old`` (a Parameter's friendly name or tensor name) to
    ``new``; return the Parameter's id.

    The friendly name and the tensor names of its output both become ``new``: every old
    tensor name goes, so OpenVINO's ``model.inputs[i].get_names()`` is ``{new}``, its
    ``get_any_name()`` and the Parameter's ``get_friendly_name()`` say ``new``, and
    ``reshape``/``check(shapes=...)`` take it as the key. With ``keep_old_names`` the old
    tensor names stay beside ``new`` (code that feeds the input by an old name keeps
    working); ``get_any_name()`` is then the least of them in order, perhaps an old one.
    ``new`` must name no other layer or tensor.
    """
    params = [n for n, t in G.nodes(data="type") if t == "Parameter"]
    found = [n for n in params if G.nodes[n]["name"] == old or any(
        old in p["names"] for p in G.nodes[n]["outputs"])]
    if not found:
        known = sorted(G.nodes[n]["name"] for n in params)
        raise RewriteError(f"rename_input takes the name of a model input, but '{old}' names "
                           f"none (inputs: {known})")
    node = found[0]
    _check_new_name(G, new, node, f"input '{old}'")
    G.nodes[node]["name"] = new
    for port in G.nodes[node]["outputs"]:
        kept = [n for n in port["names"] if n != new] if keep_old_names else []
        port["names"] = [new, *kept]
    return node


def rename_output(G: nx.MultiDiGraph, old: str, new: str) -> str:
    """Rename the model output ``old`` (a tensor name of the port feeding a Result, or
    the Result's friendly name) to ``new``; return the Result's id.

    The tensor names of the port feeding the Result become ``new`` (what OpenVINO's
    ``model.outputs[i].get_names()`` shows), the Result's friendly name too, and so does
    its ``output_names`` attribute when the IR has one (``layer_attrs``). Other readers of
    that port see the same tensor: it has one set of names.
    """
    results = [n for n, t in G.nodes(data="type") if t == "Result"]
    found = []
    for r in results:
        src = producer(G, r, G.nodes[r]["inputs"][0]["id"]) if G.nodes[r]["inputs"] else None
        names = _out(G, *src)["names"] if src else []
        if G.nodes[r]["name"] == old or old in names:
            found.append((r, src))
    if not found:
        known = sorted({name for r in results for name in _output_names(G, r)})
        raise RewriteError(f"rename_output takes the name of a model output, but '{old}' "
                           f"names none (outputs: {known})")
    node, src = found[0]
    if src is None:
        raise RewriteError("a renamed output must be fed by a layer, but this Result has no "
                           "edge", layer_name=G.nodes[node]["name"], layer_id=node)
    _check_new_name(G, new, node, f"output '{old}'")
    _out(G, *src)["names"] = [new]
    G.nodes[node]["name"] = new
    layer_attrs = G.nodes[node].get("layer_attrs") or {}
    if "output_names" in layer_attrs:
        layer_attrs["output_names"] = new
    return node


def _output_names(G: nx.MultiDiGraph, result: str) -> list[str]:
    src = producer(G, result, G.nodes[result]["inputs"][0]["id"]) if G.nodes[result][
        "inputs"] else None
    return [G.nodes[result]["name"], *(output_port(G, *src)["names"] if src else [])]
