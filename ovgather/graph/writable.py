"""The check ``write_ir`` makes before it writes a graph: that what it writes can be read
again, by ovgather and by OpenVINO (the rules are listed in ``graph.schema``)."""

from __future__ import annotations

import re
from typing import Any

from .._lazy import networkx as nx
from ..errors import OutputError

__all__ = ["check_writable"]

_XML_NAME = re.compile(r"(?:\{[^{}]*\})?[^\W\d][\w.\-]*(?::[^\W\d][\w.\-]*)?\Z")
#: Characters XML 1.0 cannot carry, escaped or not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_RESERVED = {"layer_attrs": ("id", "name", "type", "version"),
             "attrs": ("id", "precision", "names")}


def _fail(message: str, node: Any = None, attrs: dict | None = None) -> OutputError:
    name = None if attrs is None else attrs.get("name")
    return OutputError(f"the graph cannot be written as an IR: {message}",
                       layer_name=None if name is None else str(name),
                       layer_id=None if node is None else str(node))


def _check_text(value: Any, what: str, node: Any = None, attrs: dict | None = None) -> None:
    text = value if isinstance(value, str) else str(value)
    bad = _NOT_XML.search(text)
    if bad is not None:
        raise _fail(f"{what} must hold only characters XML can carry, but has "
                    f"U+{ord(bad.group()):04X} at position {bad.start()}", node, attrs)


def _check_attrs(items: Any, what: str, node: Any = None, attrs: dict | None = None,
                 reserved: tuple[str, ...] = ()) -> None:
    if items is None:
        return
    if not isinstance(items, dict):
        raise _fail(f"{what} must be a dict of attributes, but got {type(items).__name__}",
                    node, attrs)
    for key, value in items.items():
        if not isinstance(key, str) or not _XML_NAME.match(key):
            raise _fail(f"an attribute name in {what} must be an XML name, but got {key!r}",
                        node, attrs)
        if key in reserved:
            raise _fail(f"{what} must not repeat the attribute '{key}'", node, attrs)
        _check_text(value, f"the attribute '{key}' in {what}", node, attrs)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: What the reader takes: ids of at most 19 digits, dims within int64.
_MAX_DIGITS = 19
_INT64_MAX = (1 << 63) - 1


def _shown(value: Any) -> str:
    """``repr(value)`` for a message, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"


def _port_ids(node: Any, attrs: dict, key: str, seen: set) -> set[int]:
    ports = attrs.get(key) or []
    if not isinstance(ports, (list, tuple)):
        raise _fail(f"'{key}' must be a list of ports, but got {type(ports).__name__}", node,
                    attrs)
    ids = set()
    for port in ports:
        if not isinstance(port, dict) or "id" not in port:
            raise _fail(f"every port in '{key}' needs an 'id'", node, attrs)
        pid = port["id"]
        if not _is_int(pid) or not 0 <= pid < 10 ** _MAX_DIGITS:
            raise _fail(f"a port id must be an int >= 0 of at most {_MAX_DIGITS} digits, but "
                        f"got {_shown(pid)}", node, attrs)
        if pid in seen:
            raise _fail(f"port ids must be unique within a layer, but {pid} is used twice",
                        node, attrs)
        seen.add(pid)
        ids.add(pid)
        for d in port.get("dims") or ():
            if not _is_int(d) and not (hasattr(d, "__index__") and not isinstance(d, bool)):
                raise _fail(f"port {pid}'s dims must be ints, but got {d!r}", node, attrs)
            if not -1 <= int(d) <= _INT64_MAX:
                raise _fail(f"port {pid}'s dims must be >= -1 (-1 for a dynamic dim) and at "
                            f"most {_INT64_MAX}, but got {_shown(int(d))}", node, attrs)
        for name in port.get("names") or ():
            _check_text(name, f"a tensor name of port {pid}", node, attrs)
        if port.get("precision") is not None:
            _check_text(port["precision"], f"the precision of port {pid}", node, attrs)
        _check_attrs(port.get("attrs"), f"the attributes of port {pid}", node, attrs,
                     _RESERVED["attrs"])
    return ids


def check_writable(G: nx.MultiDiGraph) -> None:
    """Check ``G`` against this schema; an OutputError names the layer (id and name) and
    the attribute that would make an IR that cannot be read back."""
    version = G.graph.get("ir_version")
    if version is not None and (not _is_int(version) or version not in (10, 11)):
        raise _fail(f"G.graph['ir_version'] must be the int 10 or 11, but got {version!r}")
    for key in ("name",):
        if G.graph.get(key) is not None:
            _check_text(G.graph[key], f"G.graph['{key}']")
    _check_attrs(G.graph.get("net_attrs"), "G.graph['net_attrs']")
    ports: dict[Any, tuple[set[int], set[int]]] = {}
    texts: set[str] = set()
    for node, attrs in G.nodes(data=True):
        text = str(node) if _is_int(node) else node
        if not isinstance(text, str) or not (text.isascii() and text.isdigit()) or len(
                text) > _MAX_DIGITS:
            raise _fail(f"a layer id must be a decimal integer of at most {_MAX_DIGITS} digits "
                        f"(an IR's ids are), but got {_shown(node)}",
                        node if len(repr(node)) <= 40 else _shown(node), attrs)
        number = text.lstrip("0") or "0"  # "1" and "01" are one id to OpenVINO's reader
        if number in texts:
            raise _fail(f"layer ids must be unique as numbers (OpenVINO reads 1 and 01 as one "
                        f"id), but {int(text)} is used twice", node, attrs)
        texts.add(number)
        op_type = attrs.get("type")
        if not isinstance(op_type, str) or not op_type:
            raise _fail("a layer needs a 'type' (the op name), but it is missing", node, attrs)
        for key in ("name", "type", "version"):
            if attrs.get(key) is not None:
                _check_text(attrs[key], f"the layer's '{key}'", node, attrs)
        _check_attrs(attrs.get("data"), "the layer's data", node, attrs)
        _check_attrs(attrs.get("layer_attrs"), "the layer's attributes", node, attrs,
                     _RESERVED["layer_attrs"])
        seen: set[int] = set()
        ports[node] = (_port_ids(node, attrs, "inputs", seen),
                       _port_ids(node, attrs, "outputs", seen))
    fed: set[tuple[Any, int]] = set()
    for u, v, key, e in G.edges(keys=True, data=True):
        fp = e.get("from_port", key[0] if isinstance(key, tuple) else None)
        tp = e.get("to_port", key[1] if isinstance(key, tuple) else None)
        if not _is_int(fp) or not _is_int(tp):
            raise _fail(f"the edge {u} -> {v} must carry int from_port and to_port, but got "
                        f"{fp!r} and {tp!r}", v, G.nodes[v])
        if fp not in ports[u][1]:
            raise _fail(f"the edge {u} -> {v} starts at output port {fp}, which layer {u} "
                        "does not have", u, G.nodes[u])
        if tp not in ports[v][0]:
            raise _fail(f"the edge {u} -> {v} ends at input port {tp}, which layer {v} "
                        "does not have", v, G.nodes[v])
        if (v, tp) in fed:
            raise _fail(f"an input port takes one edge, but port {tp} is fed twice", v,
                        G.nodes[v])
        fed.add((v, tp))
    for node, (inputs, _) in ports.items():
        for tp in inputs:
            if (node, tp) not in fed:
                raise _fail(f"every input port needs an edge, but port {tp} has none", node,
                            G.nodes[node])
    if not nx.is_directed_acyclic_graph(G):
        cycle = nx.find_cycle(G)
        path = " -> ".join(str(u) for u, *_ in cycle) + f" -> {cycle[0][0]}"
        raise _fail(f"an IR must be acyclic, but the edges form the cycle {path}",
                    cycle[0][0], G.nodes[cycle[0][0]])
