"""Replacing and removing: ``replace_layer``, ``replace_uses``, ``bypass`` and ``remove_layer``."""

from __future__ import annotations

import networkx as nx

from ..errors import RewriteError
from ..graph import (
    consumers,
    producer,
)
from .base import _derived_name, _node, _out, _pair, _rewire, _take_names

__all__ = ["replace_layer", "remove_layer", "bypass", "replace_uses"]


def replace_layer(G: nx.MultiDiGraph, old: str, new: str) -> None:
    """Let ``new`` take over the consumers, tensor names and friendly name of ``old``,
    then remove ``old`` and the producers only it used.

    Output ports pair up by position, so ``new`` needs at least as many outputs as
    ``old`` has used ones.
    """
    _node(G, old, "the replaced layer")
    _node(G, new, "the replacement")
    if old == new:
        raise RewriteError("a layer cannot replace itself", layer_name=G.nodes[old]["name"],
                           layer_id=old)
    if G.has_edge(old, new):
        raise RewriteError(
            f"a replacement cannot read the layer it replaces, but layer "
            f"'{G.nodes[new]['name']}' (id {new}) does", layer_name=G.nodes[old]["name"],
            layer_id=old)
    old_outs, new_outs = G.nodes[old]["outputs"], G.nodes[new]["outputs"]
    for i, port in enumerate(old_outs):
        if not consumers(G, old, port["id"]) and not port["names"]:
            continue
        if i >= len(new_outs):
            raise RewriteError(
                f"a replacement needs an output for every used output, but layer "
                f"'{G.nodes[new]['name']}' (id {new}) has {len(new_outs)} and output "
                f"{i} is used", layer_name=G.nodes[old]["name"], layer_id=old)
        _rewire(G, (old, port["id"]), (new, new_outs[i]["id"]), skip=(new,))
        _take_names(G, (old, port["id"]), (new, new_outs[i]["id"]), friendly=False)
    name = G.nodes[old]["name"]
    G.nodes[old]["name"] = _derived_name(G, old)
    G.nodes[new]["name"] = name
    remove_layer(G, old)


def remove_layer(G: nx.MultiDiGraph, node: str, keep_parameters: bool = True) -> list[str]:
    """Remove ``node`` and every producer left without consumers; return the removed ids.

    A layer whose outputs are still read cannot be removed (replace it instead).
    Parameters stay unless ``keep_parameters`` is False: they are the model's inputs.
    """
    _node(G, node, "the removed layer")
    if G.out_degree(node):
        readers = sorted({v for _, v in G.out_edges(node)})
        raise RewriteError(
            f"a layer can be removed only when nothing reads it, but layers {readers} do",
            layer_name=G.nodes[node]["name"], layer_id=node)
    removed, todo = [], [node]
    while todo:
        current = todo.pop()
        producers = {u for u, _ in G.in_edges(current)}
        G.remove_node(current)
        removed.append(current)
        for u in producers:
            if G.out_degree(u) == 0 and u not in todo and not (
                    keep_parameters and G.nodes[u].get("type") == "Parameter"):
                todo.append(u)
    return removed


def bypass(G: nx.MultiDiGraph, node: str, input: int = 0) -> list[str]:  # noqa: A002
    """Remove ``node`` and let every reader of its outputs read what feeds its input
    port ``input`` (the position among its input ports); return the removed ids.

    For a layer that passes its input through (a Convert to the same type, a Reshape to
    the same shape, an Identity). The tensor names of its outputs move to the producer's
    port, so the model's outputs keep their names; producers left unused (the Reshape's
    shape Const) go with it, Parameters stay.
    """
    _node(G, node, "the bypassed layer")
    attrs = G.nodes[node]
    ports = attrs["inputs"]
    if not isinstance(input, int) or not 0 <= input < len(ports):
        raise RewriteError(f"a bypassed layer is skipped through one of its {len(ports)} "
                           f"inputs, but input {input!r} was asked for",
                           layer_name=attrs["name"], layer_id=node)
    source = producer(G, node, ports[input]["id"])
    if source is None:
        raise RewriteError(f"input {input} of a bypassed layer must be connected, but it is "
                           "not", layer_name=attrs["name"], layer_id=node)
    for port in attrs["outputs"]:
        _rewire(G, (node, port["id"]), source)
        _take_names(G, (node, port["id"]), source, friendly=False)
    return remove_layer(G, node)


def replace_uses(G: nx.MultiDiGraph, old: tuple[str, int], new: tuple[str, int],
                 take_names: bool = False) -> list[tuple[str, int]]:
    """Make every consumer of output ``old = (layer, port)`` read output ``new`` instead;
    return the ``(consumer, input port)`` pairs rewired.

    The layer of ``new`` itself keeps reading ``old`` (so ``new`` may be computed from
    it). With ``take_names`` the tensor names of ``old`` move to ``new`` as well (what the
    model's outputs are called); the friendly names stay. ``old``'s layer is not removed:
    :func:`cleanup` drops it once nothing needs it.
    """
    (u, from_port), (v, to_port) = _pair(old, "the old output"), _pair(new, "the new output")
    _out(G, u, from_port, "the old output")
    _out(G, v, to_port, "the new output")
    if (u, from_port) == (v, to_port):
        raise RewriteError(f"an output cannot replace itself, but both are port {from_port}",
                           layer_name=G.nodes[u]["name"], layer_id=u)
    moved = [(c, p) for c, p in consumers(G, u, from_port) if c != v]
    above = nx.ancestors(G, v) if moved else set()
    loops = sorted({c for c, _ in moved if c in above})
    if loops:
        raise RewriteError(
            f"the new output must not depend on a consumer of the old one, but layer "
            f"'{G.nodes[v]['name']}' (id {v}) reads layers {loops} that read it: the "
            "graph would loop", layer_name=G.nodes[u]["name"], layer_id=u)
    _rewire(G, (u, from_port), (v, to_port), skip=(v,))
    if take_names:
        _take_names(G, (u, from_port), (v, to_port), friendly=False)
    return moved
