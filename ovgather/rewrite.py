"""Graph surgery on an IR graph: free functions over the ``networkx.MultiDiGraph``.

The surface is small on purpose (as onnx-graphsurgeon's): find layers, add a layer or a
Const, insert a layer after an output port, replace a layer, remove a layer with the
producers only it used, and re-infer the shapes afterwards. Every function edits the
graph in place and follows the schema in :mod:`ovgather.graph`.

One invariant holds after every call: the tensor names of a rewired output port, and the
friendly name of the layer that produced it, move to the layer that now produces the
same tensor. Results and downstream code therefore see the same names; the displaced
layer gets a derived name (``"gnd/orig"``), unique in the graph.

>>> import networkx as nx, numpy as np
>>> G = nx.MultiDiGraph()
>>> p = add_layer(G, "Parameter", "opset1", data={"shape": "2,3", "element_type": "f32"},
...               outputs=[{"precision": "FP32", "dims": (2, 3)}], name="x")
>>> c = add_const(G, np.array([6], dtype=np.int64), name="target")
>>> r = add_layer(G, "Reshape", "opset1", data={"special_zero": "false"},
...               inputs=[(p, 0), (c, 0)], outputs=[{"precision": "FP32", "dims": (6,)}])
>>> find_layers(G, type="Reshape", special_zero="false") == [r]
True
>>> G.nodes[r]["name"], G.nodes[c]["data"]["shape"]
('Reshape', '1')
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from .element_types import ELEMENT_TYPES
from .errors import RewriteError
from .graph import Port, consumers, new_layer, new_port, output_port

if TYPE_CHECKING:
    from .infer import CheckReport

__all__ = [
    "find_layers",
    "add_layer",
    "add_const",
    "connect",
    "insert_after",
    "replace_layer",
    "remove_layer",
    "reinfer",
    "unique_name",
    "editing",
    "PRECISIONS",
]

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


def _port(port_id: int, spec: Port) -> Port:
    return new_port(port_id, spec.get("precision"), tuple(int(d) for d in spec.get("dims", ())),
                    list(spec.get("names", [])), spec.get("rt_info"),
                    dict(spec.get("attrs", {})))


# ---- adding ------------------------------------------------------------------------------
def connect(G: nx.MultiDiGraph, src: tuple[str, int], dst: tuple[str, int]) -> None:
    """Add the edge from output port ``src = (layer, port)`` to input ``dst``."""
    (u, from_port), (v, to_port) = src, dst
    G.add_edge(u, v, key=(from_port, to_port), from_port=from_port, to_port=to_port, line=None)


def add_layer(
    G: nx.MultiDiGraph,
    type: str,  # noqa: A002 - mirrors the IR attribute name
    version: str | None,
    data: dict[str, Any] | None = None,
    inputs: Sequence[tuple[str, int]] = (),
    outputs: Sequence[Port] = (),
    name: str | None = None,
) -> str:
    """Add a layer fed by ``inputs`` (``(producer, output port id)`` pairs); return its id.

    Input ports get ids ``0..n-1`` and copy precision and dims from their producer;
    output ports continue the numbering (IR convention) and take ``precision``, ``dims``
    and optionally ``names`` from the ``outputs`` dicts. The friendly name defaults to
    the op type and is made unique.
    """
    node = _fresh_id(G)
    in_ports = []
    for i, (src, src_port) in enumerate(inputs):
        if src not in G:
            raise RewriteError(f"an input of a new {type} layer must be a layer of the graph, "
                               f"but got '{src}'")
        producer_port = output_port(G, src, src_port)
        in_ports.append(_port(i, {"precision": producer_port.get("precision"),
                                  "dims": producer_port.get("dims", ())}))
    out_ports = [_port(len(in_ports) + j, spec) for j, spec in enumerate(outputs)]
    G.add_node(node, **new_layer(
        unique_name(G, name or type), type, version,
        data={key: str(value) for key, value in (data or {}).items()},
        inputs=in_ports, outputs=out_ports))
    for i, src in enumerate(inputs):
        connect(G, src, (node, i))
    return node


def add_const(G: nx.MultiDiGraph, array: Any, name: str | None = None) -> str:
    """Add a Const holding ``array``; ``ir.write_ir`` appends its bytes to the .bin.

    The element type, shape and port precision come from the array's dtype and shape;
    the data stays in the node's ``value`` attribute until the graph is written.
    """
    value = np.asarray(array).copy(order="C")
    if value.dtype.name not in PRECISIONS:
        raise RewriteError(f"a Const holds one of the types {sorted(PRECISIONS)}, "
                           f"but got dtype {value.dtype.name}")
    element_type, precision = PRECISIONS[value.dtype.name]
    node = add_layer(
        G, "Const", "opset1",
        data={"element_type": element_type, "shape": ", ".join(map(str, value.shape))},
        outputs=[{"precision": precision, "dims": value.shape}],
        name=name or "Constant",
    )
    G.nodes[node]["value"] = value
    return node


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
        connect(G, new, (consumer, to_port))


def insert_after(
    G: nx.MultiDiGraph,
    node: str,
    port: int,
    new: str,
    new_port: int | None = None,
    take_name: bool = True,
    keep: Iterable[str] = (),
) -> None:
    """Put layer ``new`` (already fed by ``node:port``) between ``node`` and its consumers.

    Every consumer of output ``port`` of ``node`` other than ``new`` then reads output
    ``new_port`` of ``new`` (its first output by default). The tensor names of the port
    move to ``new``; with ``take_name`` so does the friendly name of ``node``. Layers in
    ``keep`` (say a ShapeOf that measures the old output) keep reading ``node:port``.
    """
    if new_port is None:
        new_port = G.nodes[new]["outputs"][0]["id"]
    if not G.has_edge(node, new) or all(k[0] != port for k in G[node][new]):
        raise RewriteError(
            f"a layer inserted after output port {port} must read that port, but layer "
            f"'{G.nodes[new]['name']}' (id {new}) does not",
            layer_name=G.nodes[node]["name"], layer_id=node)
    _rewire(G, (node, port), (new, new_port), skip=(new, *keep))
    _take_names(G, (node, port), (new, new_port), friendly=take_name)


def replace_layer(G: nx.MultiDiGraph, old: str, new: str) -> None:
    """Let ``new`` take over the consumers, tensor names and friendly name of ``old``,
    then remove ``old`` and the producers only it used.

    Output ports pair up by position, so ``new`` needs at least as many outputs as
    ``old`` has used ones.
    """
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
    if node not in G:
        raise RewriteError(f"cannot remove layer id {node}: the graph has no such layer")
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


# ---- shapes after a rewrite --------------------------------------------------------------
def reinfer(G: nx.MultiDiGraph, shapes: dict[str, Any] | None = None) -> CheckReport:
    """Re-run shape inference, declare it on added layers, and check the whole graph.

    Layers added in memory (``line`` is None) take the dims inferred for their outputs
    (from the Parameters' own shapes, not from ``shapes``), and so do the input ports
    they feed, so the written IR declares what OpenVINO will compute. Returns the
    ``infer.CheckReport`` of the updated graph under ``shapes``.
    """
    from . import infer

    inferred = infer.infer_shapes(G)
    for node, attrs in G.nodes(data=True):
        if attrs.get("line") is not None:
            continue
        for port, shape in zip(attrs["outputs"], inferred.get(node, ()), strict=False):
            if shape.rank is not None:
                port["dims"] = tuple(shape.to_ir_dims())
        for _, consumer, key in G.out_edges(node, keys=True):
            _copy_dims(G, (node, key[0]), (consumer, key[1]))
    return infer.check(G, shapes=shapes)


def _copy_dims(G: nx.MultiDiGraph, src: tuple[str, int], dst: tuple[str, int]) -> None:
    dims = output_port(G, *src)["dims"]
    for port in G.nodes[dst[0]]["inputs"]:
        if port["id"] == dst[1]:
            port["dims"] = dims
