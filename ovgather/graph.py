"""The graph schema: how an OpenVINO IR lives in a ``networkx.MultiDiGraph``.

This docstring is the specification of the schema (SPEC.md §4). ``ir.read_ir`` builds
it, ``ir.write_ir`` writes it back, and every other module reads it through the helpers
below or directly. It is a plain ``MultiDiGraph``, no subclass, so every networkx
algorithm works on it (``nx.topological_sort(G)``, ``nx.ancestors(G, n)``, …).

Graph attributes (``G.graph``)
------------------------------
``name``         the ``<net name>``.
``ir_version``   the ``<net version>`` as an int (10 or 11).
``rt_info``      the net-level ``<rt_info>`` element as XML text (lossless), or None.
``xml_path``     the .xml file read (``str``) or None for ``parse_ir`` on bytes.
``bin_path``     the .bin file beside it (``str``) or None.
``weights``      the weights buffer (a read-only numpy uint8 memmap or array over the
                 .bin) or None; opened lazily by ``const_value``.
``net_attrs``    every ``<net>`` attribute in XML order (``dict[str, str]``).
``extra_xml``    other children of ``<net>`` (besides layers/edges/rt_info) as a list of
                 XML texts, kept so that a round trip loses nothing (written after
                 ``<edges>``).

XML texts (``rt_info``, ``extra_xml``) are compact: whitespace-only text removed, so
equal content gives equal strings. Comments and processing instructions are dropped.

Nodes: one per ``<layer>``, keyed by its ``id`` text
----------------------------------------------------
``name``         friendly name (``str``).
``type``         op type as written (``"GatherND"``, ``"Const"`` …).
``version``      the opset string as written (``"opset8"``), or None. Nothing derived is
                 stored: the op version it selects (GatherND-8 for opset8) is looked up
                 when needed (:func:`op_spec`), so editing ``version`` is enough.
``data``         every ``<data>`` attribute, in XML order (``dict[str, str]``, values as
                 text: ``{"batch_dims": "2"}``).
``layer_attrs``  the other ``<layer>`` attributes besides id/name/type/version, in order
                 (``dict[str, str]``; e.g. ``output_names`` on a Result).
``inputs``       list of input ports in XML order, each a ``Port`` dict (below).
``outputs``      list of output ports in XML order.
``rt_info``      the layer-level ``<rt_info>`` as XML text, or None.
``line``         the XML line of the ``<layer>`` tag (int, exact also past line 65535),
                 None for added layers.
``value``        only on Const layers added in memory: a ``numpy.ndarray`` with the data
                 (read layers keep their data in the .bin, see ``ir.const_value``).
                 ``write_ir`` derives element_type, shape, offset and size from it.
``extra_xml``    only when present: other children of the ``<layer>`` (e.g. the
                 ``<port_map>``/``<body>`` of a TensorIterator) as a list of XML texts.

A ``Port`` dict:
``id``           port id (int).
``precision``    the precision text (``"FP32"``, ``"I64"``) or None.
``names``        tensor names (``list[str]``, unescaped: ``a\\,b`` in XML → ``"a,b"``).
``dims``         declared dims as a tuple of ints (``-1`` for any non-static dim;
                 ``()`` for no ``<dim>``, which is a scalar or a dynamic rank).
``rt_info``      the port-level ``<rt_info>`` as XML text, or None.
``attrs``        other port attributes in XML order (``dict[str, str]``).
``extra_xml``    only when present: other children of the ``<port>`` (list of XML texts).

Edges: one per ``<edge>``
-------------------------
``G.add_edge(from_layer, to_layer, key=(from_port, to_port), from_port=…, to_port=…)``.
The key is the pair of port ids, so two edges between the same layers stay distinct.
``line`` is the XML line of the ``<edge>`` (None or absent for added edges).
``write_ir`` writes the edges in ``G.edges`` order (grouped by producer).
"""

from __future__ import annotations

from collections.abc import Iterator
from sys import intern
from typing import Any

import networkx as nx

__all__ = [
    "Port",
    "new_layer",
    "layer_of_xml",
    "new_port",
    "op_spec",
    "layer",
    "input_edges",
    "output_port",
    "input_port",
    "producer",
    "consumers",
    "layers_by_type",
]

Port = dict[str, Any]


def new_layer(name: str, op_type: str, version: str | None, *,
              data: dict[str, str] | None = None, layer_attrs: dict[str, str] | None = None,
              inputs: list[Port] | None = None, outputs: list[Port] | None = None,
              rt_info: str | None = None, line: int | None = None) -> dict[str, Any]:
    """The attributes of one node, as the schema above lists them: the one place a layer
    dict is built (the reader, the compiled walk, rewrite and extract all call it)."""
    return {"name": name, "type": op_type, "version": version,
            "data": {} if data is None else data,
            "layer_attrs": {} if layer_attrs is None else layer_attrs,
            "inputs": [] if inputs is None else inputs,
            "outputs": [] if outputs is None else outputs,
            "rt_info": rt_info, "line": line}


def layer_of_xml(attrs: dict[str, str], line: int | None, taken: dict[str, Any]
                 ) -> tuple[str | None, dict[str, Any] | None]:
    """``(id, node)`` from the attributes of a ``<layer>`` tag (``id``, ``name``, ``type``
    and ``version`` are taken out; the rest become ``layer_attrs``). The node is None
    when the tag lacks one of them, its id is not a number, or ``taken`` holds the id:
    the reader then says which."""
    node_id = attrs.pop("id", None)
    name = attrs.pop("name", None)
    op_type = attrs.pop("type", None)
    version = attrs.pop("version", None)
    if (node_id is None or not node_id.isdigit() or node_id in taken or name is None
            or op_type is None):
        return node_id, None
    return node_id, new_layer(name, intern(op_type), None if version is None else intern(version),
                              layer_attrs=attrs, line=line)


def new_port(port_id: int, precision: str | None = None, dims: tuple[int, ...] = (),
             names: list[str] | None = None, rt_info: str | None = None,
             attrs: dict[str, str] | None = None) -> Port:
    """One ``Port`` dict, as the schema above lists it (the one place a port is built)."""
    return {"id": port_id, "precision": precision, "names": [] if names is None else names,
            "dims": dims, "rt_info": rt_info, "attrs": {} if attrs is None else attrs}


def op_spec(G: nx.MultiDiGraph, node: str) -> Any:
    """The ``ops.spec.OpSpec`` that the layer's ``type`` and ``version`` select, or None
    for an op ovgather does not know (UnsupportedOpError for an opset without the op)."""
    from .ops.registry import find

    attrs = G.nodes[node]
    return find(attrs["type"], attrs.get("version"))


def layer(G: nx.MultiDiGraph, node: str) -> dict[str, Any]:
    """The attribute dict of layer ``node``."""
    return G.nodes[node]


def input_port(G: nx.MultiDiGraph, node: str, port_id: int) -> Port:
    """The input port dict with IR id ``port_id`` of layer ``node``."""
    for port in G.nodes[node]["inputs"]:
        if port["id"] == port_id:
            return port
    raise KeyError(f"layer {node} has no input port {port_id}")


def output_port(G: nx.MultiDiGraph, node: str, port_id: int) -> Port:
    """The output port dict with IR id ``port_id`` of layer ``node``."""
    for port in G.nodes[node]["outputs"]:
        if port["id"] == port_id:
            return port
    raise KeyError(f"layer {node} has no output port {port_id}")


def input_edges(G: nx.MultiDiGraph, node: str) -> list[tuple[str, int, int]]:
    """``(producer, from_port, to_port)`` for every edge into ``node``, ordered by the
    position of ``to_port`` among the layer's input ports."""
    order = {p["id"]: i for i, p in enumerate(G.nodes[node]["inputs"])}
    edges = [(u, k[0], k[1]) for u, _, k in G.in_edges(node, keys=True)]
    edges.sort(key=lambda e: order.get(e[2], len(order)))
    return edges


def producer(G: nx.MultiDiGraph, node: str, to_port: int) -> tuple[str, int] | None:
    """``(layer, from_port)`` that feeds input port ``to_port`` of ``node``, or None."""
    for u, _, k in G.in_edges(node, keys=True):
        if k[1] == to_port:
            return u, k[0]
    return None


def consumers(G: nx.MultiDiGraph, node: str, from_port: int) -> list[tuple[str, int]]:
    """``(layer, to_port)`` for every consumer of output port ``from_port`` of ``node``."""
    return [(v, k[1]) for _, v, k in G.out_edges(node, keys=True) if k[0] == from_port]


def layers_by_type(G: nx.MultiDiGraph, op_type: str) -> Iterator[str]:
    """The ids of the layers of type ``op_type``, in graph order."""
    return (n for n, t in G.nodes(data="type") if t == op_type)
