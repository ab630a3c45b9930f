"""The bodies of TensorIterator-1, Loop-5 and If-8 as the graph holds them, and the
queries every package asks of them.

A layer of these types holds whole models: ``<body>`` (TensorIterator, Loop) or
``<then_body>`` and ``<else_body>`` (If), each a ``networkx.MultiDiGraph`` of the same
schema (``graph.schema``), tied to the layer's ports by its port maps and, for the loops,
back edges that carry a body result to a body parameter of the next iteration. The node
keys ``bodies``, ``port_maps`` and ``back_edges`` are documented in ``graph.schema``.
A body layer is named by its path: the ids ``4/body/6`` (layer 6 of the body of layer 4),
the names ``Loop_4/body/Add_6``.
"""

from __future__ import annotations

from typing import Any

from .._lazy import networkx as nx

__all__ = ["BODIES", "bodies_of", "walk_bodies", "body_layers", "inside_words", "locate",
           "body_size", "share_source", "edge_list"]

#: The op types that hold bodies, and the bodies and port maps each one has.
BODIES = {"TensorIterator": (("body", "port_map"),),
          "Loop": (("body", "port_map"),),
          "If": (("then_body", "then_port_map"), ("else_body", "else_port_map"))}


def edge_list(G: Any) -> list[tuple[str, str, Any, dict]]:
    """``(u, v, key, data)`` of every edge, from the adjacency dicts (``G`` may be the
    reader's LayerGraph or a MultiDiGraph)."""
    return [(u, v, k, d) for u, nbrs in G._succ.items() for v, keyed in nbrs.items()
            for k, d in keyed.items()]


def bodies_of(G: nx.MultiDiGraph) -> list[tuple[str, str, nx.MultiDiGraph]]:
    """``(layer id, body name, body graph)`` of every body directly in ``G``."""
    return [(n, name, body) for n, attrs in G._node.items()
            for name, body in (attrs.get("bodies") or {}).items()]


def walk_bodies(G: nx.MultiDiGraph, id_path: str = "", name_path: str = ""
                ) -> list[tuple[str, str, str, nx.MultiDiGraph]]:
    """``(id prefix, name prefix, owner type, body graph)`` of every body at any depth,
    outer bodies first; a body layer's path id is its prefix plus its id (``4/body/``
    + ``6``), its path name the prefix plus its name, as ``check`` lists them."""
    found = []
    for n, name, body in bodies_of(G):
        attrs = G._node[n]
        ids, names = f"{id_path}{n}/{name}/", f"{name_path}{attrs['name']}/{name}/"
        found.append((ids, names, attrs["type"], body))
        found += walk_bodies(body, ids, names)
    return found


def body_layers(G: nx.MultiDiGraph) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``(path id, path name, owner type, node attributes)`` of every layer inside a
    body, at any depth, body by body (``owner type``: the TensorIterator, Loop or If
    whose body holds the layer directly)."""
    return [(ids + n, names + attrs["name"], owner, attrs)
            for ids, names, owner, body in walk_bodies(G) for n, attrs in body._node.items()]


def inside_words(owner: str) -> str:
    """``inside a Loop body`` / ``inside an If branch``: where a body layer sits, in the
    words the commands use when they cannot work on it."""
    return "inside an If branch" if owner == "If" else f"inside a {owner} body"


def locate(G: nx.MultiDiGraph, path: str) -> tuple[nx.MultiDiGraph, str] | None:
    """The graph holding the layer with path id ``path`` (``4/body/6``, or a plain
    top-level id) and its id there; None when no layer has that path."""
    parts = str(path).split("/")
    while len(parts) >= 3:
        bodies = (G._node.get(parts[0]) or {}).get("bodies") or {}
        if parts[1] not in bodies:
            return None
        G, parts = bodies[parts[1]], parts[2:]
    if len(parts) != 1 or parts[0] not in G._node:
        return None
    return G, parts[0]


def body_size(attrs: dict[str, Any]) -> int:
    """How many layers a layer's bodies hold, at any depth (0 without bodies)."""
    return sum(body.number_of_nodes() + sum(body_size(a) for a in body._node.values())
               for body in (attrs.get("bodies") or {}).values())


def share_source(G: nx.MultiDiGraph) -> None:
    """Give every body (at any depth) the source of ``G``'s weights and file names, so
    that its Consts read the same .bin."""
    for _, _, body in bodies_of(G):
        for key in ("xml_path", "bin_path", "bin_stat", "weights"):
            body.graph[key] = G.graph.get(key)
        share_source(body)
