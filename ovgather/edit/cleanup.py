"""After the edits: ``cleanup`` drops what no output needs, ``reinfer`` re-runs shape
inference and writes the inferred dims back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import networkx as nx

from ..graph import (
    output_port,
    walk_bodies,
)

if TYPE_CHECKING:
    from ..infer import CheckReport

__all__ = ["cleanup", "reinfer", "SINKS"]


#: the op types that end a model: what they compute is kept by ``cleanup``
SINKS = frozenset({"Result", "Assign"})


def cleanup(G: nx.MultiDiGraph, keep_parameters: bool = True) -> list[str]:
    """Remove every layer from which no Result or Assign (a sink) can be reached; return
    the removed ids in graph order.

    Parameters stay unless ``keep_parameters`` is False: they are the model's inputs,
    and OpenVINO keeps an unused one.
    """
    needed: set[str] = set()
    todo = [n for n, t in G.nodes(data="type") if t in SINKS]
    while todo:
        current = todo.pop()
        if current in needed:
            continue
        needed.add(current)
        todo.extend(u for u in G.predecessors(current) if u not in needed)
    removed = [n for n, t in G.nodes(data="type") if n not in needed and not (
        keep_parameters and t == "Parameter")]
    G.remove_nodes_from(removed)
    return removed


# ---- shapes after a rewrite --------------------------------------------------------------
def reinfer(G: nx.MultiDiGraph, shapes: dict[str, Any] | None = None) -> CheckReport:
    """Re-run shape inference, declare it on added layers, and check the whole graph.

    Layers added in memory (``line`` is None) take the dims inferred for their outputs
    (from the Parameters' own shapes, not from ``shapes``), and so do the input ports
    they feed, so the written IR declares what OpenVINO will compute; layers added inside
    a TensorIterator, Loop or If body too (from the body's Parameters). Returns the
    ``infer.CheckReport`` of the updated graph under ``shapes``.
    """
    from .. import infer

    for graph in (G, *(body for _, _, _, body in walk_bodies(G))):
        added = [n for n, line in graph.nodes(data="line") if line is None]
        if added:  # a body is inferred from its own Parameters, as check reads it
            _declare(graph, added, infer.infer_shapes(graph))
    return infer.check(G, shapes=shapes)


def _declare(G: nx.MultiDiGraph, nodes: Iterable[str], inferred: Mapping[str, Any]) -> None:
    """The inferred dims on the outputs of ``nodes`` and on the inputs they feed."""
    for node in nodes:
        for port, shape in zip(G.nodes[node]["outputs"], inferred.get(node, ()), strict=False):
            if shape.rank is not None:
                port["dims"] = tuple(shape.to_ir_dims())
        for _, consumer, key in G.out_edges(node, keys=True):
            _copy_dims(G, (node, key[0]), (consumer, key[1]))


def _copy_dims(G: nx.MultiDiGraph, src: tuple[str, int], dst: tuple[str, int]) -> None:
    dims = output_port(G, *src)["dims"]
    for port in G.nodes[dst[0]]["inputs"]:
        if port["id"] == dst[1]:
            port["dims"] = dims
