"""Adding layers: ``add_layer`` (a layer of any op, wired to existing outputs) and
``insert_after`` (a layer between an output and every reader of it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

from ..errors import RewriteError
from ..graph import (
    Port,
    new_layer,
    new_port,
)
from .base import _edge, _fresh_id, _node, _out, _pair, _port, _rewire, _take_names, unique_name

__all__ = ["add_layer", "insert_after"]


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
