"""Graph surgery on an IR graph: free functions over the ``networkx.MultiDiGraph``.

The surface is small on purpose (as onnx-graphsurgeon's): find layers, add a layer or a
Const, insert a layer after an output port, make the readers of one output read another,
bypass, replace or remove a layer, drop what no output needs, set a Const's data, rename
the model's inputs and outputs, and re-infer the shapes afterwards. Every function edits
the graph in place and follows the schema in :mod:`ovgather.graph`; a wrong argument is a
RewriteError naming the layer, raised before the graph changes. A TensorIterator, Loop or
If body is edited as the graph it is (``graph.locate`` finds it from a body path).
docs/api.md shows each function at work.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from .element_types import ELEMENT_TYPES
from .errors import RewriteError
from .graph import (
    Port,
    consumers,
    inside_words,
    locate,
    new_layer,
    new_port,
    output_port,
    producer,
    walk_bodies,
)

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
    "bypass",
    "replace_uses",
    "rename_input",
    "rename_output",
    "set_const",
    "cleanup",
    "reinfer",
    "unique_name",
    "editing",
    "PRECISIONS",
    "SINKS",
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
    and optionally ``names`` from the ``outputs`` dicts (``dims`` None or missing declare
    none: :func:`reinfer` fills them in). The friendly name defaults to
    the op type and is made unique.
    """
    if data is not None and not isinstance(data, Mapping):
        raise RewriteError(f"the data of a new {type} layer must be a dict of its <data> "
                           f"attributes, but got {data!r}")
    for what, value in (("inputs", inputs), ("outputs", outputs)):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise RewriteError(f"the {what} of a new {type} layer must be a list, but got "
                               f"{value!r}")
    if name is not None and not isinstance(name, str):
        raise RewriteError(f"the name of a new {type} layer must be a string, but got {name!r}")
    in_ports = []
    for i, ref in enumerate(inputs):
        src, src_port = _pair(ref, f"input {i} of a new {type} layer")
        _node(G, src, f"an input of a new {type} layer")
        producer_port = _out(G, src, src_port, f"input {i} of a new {type} layer")
        in_ports.append(new_port(i, producer_port.get("precision"),
                                 producer_port.get("dims", ())))
    out_ports = [_port(len(in_ports) + j, spec, type) for j, spec in enumerate(outputs)]
    node = _fresh_id(G)
    G.add_node(node, **new_layer(
        unique_name(G, name or type), type, version,
        data={key: str(value) for key, value in (data or {}).items()},
        inputs=in_ports, outputs=out_ports))
    for i, src in enumerate(inputs):
        _edge(G, tuple(src), (node, i))
    return node


def add_const(G: nx.MultiDiGraph, array: Any, name: str | None = None) -> str:
    """Add a Const holding ``array``; ``ir.write_ir`` appends its bytes to the .bin.

    The element type, shape and port precision come from the array's dtype and shape;
    the data stays in the node's ``value`` attribute until the graph is written.
    """
    value = _const_array(array)
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
        _edge(G, new, (consumer, to_port))


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
    _out(G, node, port, "the layer to insert after")
    _node(G, new, "the inserted layer")
    if new_port is None:
        if not G.nodes[new]["outputs"]:
            raise RewriteError("an inserted layer needs an output, but it has none",
                               layer_name=G.nodes[new]["name"], layer_id=new)
        new_port = G.nodes[new]["outputs"][0]["id"]
    _out(G, new, new_port, "the inserted layer")
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


def set_const(G: nx.MultiDiGraph, node: str, array: Any) -> None:
    """Give Const ``node`` the data ``array``: its value, element type, shape attribute
    and output port (precision, dims) change together, and the input ports that read it
    take the new dims. ``write_ir`` writes the new bytes to the .bin; ``const_value``
    reads them back. Run :func:`reinfer` when the shape changed what follows.
    """
    _node(G, node, "the Const to set")
    attrs = G.nodes[node]
    if attrs.get("type") not in ("Const", "Constant"):
        raise RewriteError(f"set_const changes a Const, but this layer is a {attrs.get('type')}",
                           layer_name=attrs.get("name"), layer_id=node)
    value = _const_array(array)
    element_type, precision = PRECISIONS[value.dtype.name]
    data = attrs.setdefault("data", {})
    data["element_type"] = element_type
    data["shape"] = ", ".join(map(str, value.shape))
    port = attrs["outputs"][0]
    port["precision"], port["dims"] = precision, tuple(value.shape)
    attrs["value"] = value
    for _, consumer, key in G.out_edges(node, keys=True):
        _copy_dims(G, (node, key[0]), (consumer, key[1]))


def _const_array(array: Any) -> np.ndarray:
    try:
        value = np.asarray(array).copy(order="C")
    except (TypeError, ValueError) as err:
        raise RewriteError(f"a Const holds an array, but {array!r} is not one: {err}") from None
    if value.dtype.name not in PRECISIONS:
        raise RewriteError(f"a Const holds one of the types {sorted(PRECISIONS)}, "
                           f"but got dtype {value.dtype.name}")
    return value


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
    from . import infer

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
