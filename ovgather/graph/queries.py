"""Lookups over a model graph: the layer a user names, and the layers that count as
gathers. Pure reads: nothing here infers shapes or edits the graph."""

from __future__ import annotations

from .._lazy import networkx as nx
from ..errors import UsageError
from ..ops.core import registry
from .bodies import body_layers, inside_words

__all__ = ["find_layer", "gather_types", "source_file"]


def gather_types() -> tuple[str, ...]:
    """The op types explain, extract and show treat as "gather layers"."""
    return registry.family("gather")


def find_layer(G: nx.MultiDiGraph, name: str) -> str:
    """The id of the layer whose friendly name is ``name``, or failing that whose id is
    ``name``, or one of whose output tensors is named ``name`` (what an ONNX user knows:
    OpenVINO names a converted layer after its output tensor).

    A UsageError lists the gather layers when nothing matches, since that is what a
    user of explain/extract/show usually looks for.
    """
    matches = [n for n, nm in G.nodes(data="name") if nm == name]
    if len(matches) == 1:
        return matches[0]
    if not matches and name in G:
        return name
    if not matches:
        by_tensor = [n for n, outs in G.nodes(data="outputs")
                     if any(name in (p.get("names") or ()) for p in outs)]
        if len(by_tensor) == 1:
            return by_tensor[0]
    where = source_file(G)
    if matches:
        raise UsageError(f"layer name '{name}' is not unique (ids {', '.join(matches)}); "
                         "give the layer id instead", file=where)
    inner = _inside(G, name)
    if inner is not None:
        raise UsageError(inner, file=where)
    gathers = [G.nodes[n]["name"] for n in G if G.nodes[n]["type"] in gather_types()]
    hint = f"; gather layers: {', '.join(gathers[:12])}" if gathers else ""
    raise UsageError(f"no layer named '{name}'{hint}", file=where)


def _inside(G: nx.MultiDiGraph, name: str) -> str | None:
    """Why a body layer's path names no layer here: it sits in a body, and only the
    layer holding the body can be cut out or drawn."""
    for path_id, path_name, owner, _ in body_layers(G):
        if name in (path_id, path_name):
            top = path_id.split("/", 1)[0]
            return (f"'{name}' is {inside_words(owner)}: this command works on top-level "
                    f"layers only; name the {G.nodes[top]['type']} "
                    f"'{G.nodes[top]['name']}' (id {top}) instead")
    return None


def source_file(G: nx.MultiDiGraph) -> str | None:
    """The file a user gave for ``G``: its IR, or the ONNX model it was converted from."""
    return G.graph.get("xml_path") or G.graph.get("source_path")
