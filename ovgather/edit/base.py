"""What every edit shares: finding layers, fresh names and ids (``editing`` indexes them
once for many edits), ports and edges checked before the graph changes, and the rewiring
that moves an output's names to the layer that now produces it."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import networkx as nx
import numpy as np

from ..element_types import ELEMENT_TYPES
from ..errors import RewriteError
from ..graph import (
    Port,
    consumers,
    inside_words,
    locate,
    new_port,
    output_port,
)

__all__ = ["find_layers", "connect", "unique_name", "editing", "PRECISIONS"]


#: numpy dtype name -> (IR element_type, port precision), for Consts made from arrays.
PRECISIONS: dict[str, tuple[str, str]] = {
    e.dtype.name: (e.name, e.precision) for e in ELEMENT_TYPES.values() if not e.raw}


# ---- finding ---------------------------------------------------------------------------
def find_layers(
    G: nx.MultiDiGraph,
    type: str | None = None,  # noqa: A002 - mirrors the IR attribute name
    version: str | None = None,
    **data_attrs: Any,
) -> list[str]:
    """The ids of the layers matching ``type``, ``version`` and ``<data>`` attributes.

    ``data_attrs`` compare as text, as the IR stores them: ``batch_dims=2`` matches
    ``batch_dims="2"``. A layer without the attribute does not match.
    """
    wanted = {key: str(value) for key, value in data_attrs.items()}
    found = []
    for node, attrs in G.nodes(data=True):
        if type is not None and attrs.get("type") != type:
            continue
        if version is not None and attrs.get("version") != version:
            continue
        data = attrs.get("data") or {}
        if all(data.get(key) == value for key, value in wanted.items()):
            found.append(node)
    return found


# ---- naming and ids ----------------------------------------------------------------------
class _Index:
    """Taken names and the next free id of one graph, for the length of ``editing``."""

    def __init__(self, G: nx.MultiDiGraph) -> None:
        self.names = {name for _, name in G.nodes(data="name")}
        self.next_id = _max_numeric_id(G) + 1


_INDEXES: dict[int, _Index] = {}


@contextmanager
def editing(G: nx.MultiDiGraph) -> Iterator[nx.MultiDiGraph]:
    """Make many edits of ``G`` fast: names and ids are indexed once, not per call.

    Inside the block, layer names must change only through this module (as passes do);
    the index then only grows, so a name it hands out is always unique.
    """
    if id(G) in _INDEXES:
        yield G
        return
    _INDEXES[id(G)] = _Index(G)
    try:
        yield G
    finally:
        del _INDEXES[id(G)]


def _max_numeric_id(G: nx.MultiDiGraph) -> int:
    return max((int(n) for n in G.nodes if isinstance(n, str) and n.isdigit()), default=-1)


def _fresh_id(G: nx.MultiDiGraph) -> str:
    """One more than the largest numeric layer id (OpenVINO's own ids are numbers)."""
    index = _INDEXES.get(id(G))
    candidate = index.next_id if index else _max_numeric_id(G) + 1
    while str(candidate) in G:
        candidate += 1
    if index:
        index.next_id = candidate + 1
    return str(candidate)


def unique_name(G: nx.MultiDiGraph, base: str) -> str:
    """``base`` if no layer has that friendly name, else ``base_1``, ``base_2``, …

    Outside ``editing`` the name is not reserved: give it to a layer before asking for
    the next one. Inside, it is.
    """
    index = _INDEXES.get(id(G))
    taken = index.names if index else {name for _, name in G.nodes(data="name")}
    name = base
    for i in itertools.count(1):
        if name not in taken:
            break
        name = f"{base}_{i}"
    if index:
        index.names.add(name)
    return name


def _port(port_id: int, spec: Port, op: str) -> Port:
    """A port from a user's ``{"precision", "dims", "names"}`` dict, checked here so that a
    wrong one is a RewriteError now, not a TypeError in a later walk."""
    where = f"output {port_id} of a new {op} layer"
    if not isinstance(spec, dict):
        raise RewriteError(f"{where} must be a dict such as {{'precision': 'FP32', "
                           f"'dims': (2, 3)}}, but got {spec!r}")
    dims = spec.get("dims", ())
    if dims is None:
        dims = ()
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Iterable) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        raise RewriteError(f"the dims of {where} must be a sequence of ints (-1 for a "
                           f"dynamic dim), but got {dims!r}")
    precision = spec.get("precision")
    if precision is not None and not isinstance(precision, str):
        raise RewriteError(f"the precision of {where} must be text such as 'FP32', but got "
                           f"{precision!r}")
    names = spec.get("names") or []
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise RewriteError(f"the names of {where} must be a list of strings, but got {names!r}")
    return new_port(port_id, precision, tuple(int(d) for d in dims), list(names),
                    spec.get("rt_info"), dict(spec.get("attrs") or {}))


def _node(G: nx.MultiDiGraph, node: Any, role: str = "a layer") -> str:
    """``node`` when the graph has it, else a RewriteError saying which argument is wrong
    (for a body layer's path, how to reach the graph that holds it)."""
    try:
        known = node in G
    except TypeError:  # an unhashable argument, say a list
        known = False
    if not known:
        if isinstance(node, str) and "/" in node and locate(G, node) is not None:
            raise _body_path_error(G, node, role)
        raise RewriteError(f"{role} must be a layer id of the graph, but got {node!r}")
    return node


def _body_path_error(G: nx.MultiDiGraph, path: str, role: str) -> RewriteError:
    """A body layer is edited in its body's graph: the error says which graph and id."""
    parts = path.split("/")
    owner, body_name, inner = "/".join(parts[:-2]), parts[-2], parts[-1]
    holder, owner_id = locate(G, owner)  # the layer holding the body: found with the path
    attrs = holder.nodes[owner_id]
    return RewriteError(
        f"{role} must be a layer of the graph edited, but '{path}' is layer "
        f"'{attrs['bodies'][body_name].nodes[inner]['name']}' "
        f"{inside_words(attrs['type'])}: edit the body's own graph with the same "
        f"functions (body, layer = og.graph.locate(G, '{path}'))",
        layer_name=attrs["name"], layer_id=owner)


def _out(G: nx.MultiDiGraph, node: Any, port: Any, role: str = "a layer") -> Port:
    """The output port ``port`` of ``node``, or a RewriteError naming the layer."""
    _node(G, node, role)
    for p in G.nodes[node]["outputs"]:
        if p["id"] == port:
            return p
    raise RewriteError(f"{role} has no output port {port!r} (its outputs: "
                       f"{[p['id'] for p in G.nodes[node]['outputs']]})",
                       layer_name=G.nodes[node].get("name"), layer_id=node)


def _pair(ref: Any, role: str) -> tuple[Any, Any]:
    if not isinstance(ref, (tuple, list)) or len(ref) != 2:
        raise RewriteError(f"{role} must be a (layer id, port id) pair, but got {ref!r}")
    return tuple(ref)


# ---- adding ------------------------------------------------------------------------------
def connect(G: nx.MultiDiGraph, src: tuple[str, int], dst: tuple[str, int]) -> None:
    """Add the edge from output port ``src = (layer, port)`` to input ``dst``."""
    (u, from_port), (v, to_port) = _pair(src, "the source"), _pair(dst, "the target")
    _out(G, u, from_port, "the source")
    if all(p["id"] != to_port for p in G.nodes[_node(G, v, "the target")]["inputs"]):
        raise RewriteError(f"the target has no input port {to_port!r} (its inputs: "
                           f"{[p['id'] for p in G.nodes[v]['inputs']]})",
                           layer_name=G.nodes[v].get("name"), layer_id=v)
    for w, _, key, e in G.in_edges(v, keys=True, data=True):
        if e.get("to_port", key[1] if isinstance(key, tuple) else None) == to_port:
            fed_by = (w, e.get("from_port", key[0] if isinstance(key, tuple) else None))
            raise RewriteError(
                f"an input port takes one edge, but input port {to_port!r} of the target is "
                f"fed already, by output port {fed_by[1]!r} of layer {w!r}: remove that edge "
                f"first (G.remove_edge({w!r}, {v!r}, key={key!r})), or move every reader "
                "with replace_uses", layer_name=G.nodes[v].get("name"), layer_id=v)
    _edge(G, src, dst)


def _edge(G: nx.MultiDiGraph, src: tuple[str, int], dst: tuple[str, int]) -> None:
    (u, from_port), (v, to_port) = src, dst
    G.add_edge(u, v, key=(from_port, to_port), from_port=from_port, to_port=to_port, line=None)


# ---- rewiring ----------------------------------------------------------------------------
def _derived_name(G: nx.MultiDiGraph, node: str) -> str:
    return unique_name(G, f"{G.nodes[node]['name']}/orig")


def _take_names(G: nx.MultiDiGraph, old: tuple[str, int], new: tuple[str, int],
                friendly: bool) -> None:
    """Move tensor names of port ``old`` to port ``new`` (and the friendly name)."""
    old_port, new_port = output_port(G, *old), output_port(G, *new)
    new_port["names"] = list(old_port["names"]) + [
        n for n in new_port["names"] if n not in old_port["names"]]
    old_port["names"] = []
    if friendly:
        name = G.nodes[old[0]]["name"]
        G.nodes[old[0]]["name"] = _derived_name(G, old[0])
        G.nodes[new[0]]["name"] = name


def _rewire(G: nx.MultiDiGraph, old: tuple[str, int], new: tuple[str, int],
            skip: Iterable[str] = ()) -> None:
    """Make every consumer of output port ``old`` (except ``skip``) read ``new``."""
    skipped = set(skip)
    for consumer, to_port in consumers(G, *old):
        if consumer in skipped:
            continue
        G.remove_edge(old[0], consumer, key=(old[1], to_port))
        _edge(G, new, (consumer, to_port))
