"""The graph schema: how an OpenVINO IR lives in a ``networkx.MultiDiGraph``.

This docstring is the specification of the schema. ``ir.read_ir`` builds
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
``weights``      the weights given to ``parse_ir`` as a read-only numpy uint8 array, or
                 None. A .bin file is never mapped: ``const_value`` reads the bytes it
                 needs (checked against the file's size at that moment, so a .bin that
                 shrinks is an error, not a SIGBUS) through a reader kept in
                 ``bin_reader`` (internal, opened on first use), and only from the
                 file the model was read with: ``bin_stat`` (internal) holds its device,
                 inode, size and modification time, and a .bin replaced since is an error.
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
``extra_xml``    only when present: other children of the ``<layer>`` (e.g. a ``<body>``
                 of a custom op) as a list of XML texts.

Layers that hold bodies (TensorIterator, Loop, If; see ``graph.bodies``) have three keys more:

``bodies``       ``{"body": G}`` (TensorIterator, Loop) or ``{"then_body": G, "else_body":
                 G}`` (If): each body a ``MultiDiGraph`` of this same schema, read by the
                 same reader (its layers keep their real XML lines; its ``G.graph`` has
                 ``net_attrs`` (the body element's attributes), ``rt_info``, ``extra_xml``
                 and the ``xml_path``/``bin_path``/``weights`` of the whole model).
``port_maps``    per body name, ``{"inputs": [entry …], "outputs": [entry …]}``, each entry
                 a dict of the ``<input>``/``<output>`` attributes of the port map, with
                 ``external_port_id``, ``axis``, ``start``, ``end``, ``stride``, ``part_size``
                 as ints and ``internal_layer_id`` the body's node id (``str``).
``back_edges``   TensorIterator and Loop only: per body name, a list of dicts
                 ``{"from-layer": result id, "to-layer": parameter id}`` (body node ids).

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

What ``write_ir`` checks first (``graph.check_writable``)
---------------------------------------------------------
So that what it writes can be read again, by ovgather and by OpenVINO: ``ir_version``
is the int 10 or 11 (or absent); every node id is a plain decimal integer (``"7"`` or
``7``) of at most 19 digits and unique as text; ``type`` is present; ``inputs`` and
``outputs`` are lists; port ``id`` s are ints >= 0 of at most 19 digits, unique in their
layer; ``dims`` are ints from -1 to 2^63 - 1 (what the reader takes); attribute keys
(``data``, ``layer_attrs``, port ``attrs``, ``net_attrs``) are XML names
(``{namespace}local`` is allowed and written with a prefix); no text holds a character
XML 1.0 cannot carry (control characters other than tab, newline and carriage return);
every edge joins an existing output port to an existing input port, every input port has
exactly one edge, and the edges form no cycle.
"""

from __future__ import annotations

from sys import intern
from typing import Any

from .._lazy import networkx as nx

__all__ = [
    "Port",
    "LayerGraph",
    "as_networkx",
    "fill_adjacency",
    "new_layer",
    "layer_of_xml",
    "new_port",
    "has_port",
    "op_spec",
    "layer",
    "input_edges",
    "output_port",
    "producer",
    "consumers",
]

Port = dict[str, Any]


class LayerGraph:
    """The reader's graph before it becomes a ``MultiDiGraph``: the same dicts, in
    networkx's own layout (``_node[n]`` the node dict, ``_succ[u][v][key]`` the edge dict,
    with ``_pred[v][u]`` the same key dict), and no networkx.

    ``ovgather check`` infers on it directly, so a check never imports networkx (which
    alone takes longer than checking a transformer IR); :func:`as_networkx` turns it into
    the ``MultiDiGraph`` that ``read_ir`` returns without copying a dict.

    With ``records`` the compiled walk read layers into records instead of node dicts
    (``ir/_fastwalk.pyx``: a C object a layer and a port, read as the dicts they stand
    for), and the edges are kept as ``edges``, a list of ``(u, v, key, data)`` (data the
    edge's dict, or its line for a dict not made yet): ``_pred[v][u]`` is then a tuple of
    keys, all that ``check`` reads of the edges, and ``_succ`` is made when first asked for.
    :func:`as_networkx` makes the records their dicts and the edges networkx's layout.
    """

    __slots__ = ("graph", "_node", "_succ_dicts", "_pred", "in_order", "records", "edges")

    def __init__(self) -> None:
        #: True when the reader saw every edge go forward in layer order (as OpenVINO
        #: writes IRs): the walk then takes that order as it is
        self.in_order = False
        self.records = False
        self.edges: list[tuple] | None = None
        self.graph: dict[str, Any] = {}
        self._node: dict[str, dict[str, Any]] = {}
        self._succ_dicts: dict[str, dict[str, dict]] = {}
        self._pred: dict[str, dict[str, Any]] = {}

    def number_of_nodes(self) -> int:
        return len(self._node)

    @property
    def _succ(self) -> dict[str, dict[str, dict]]:
        if self.edges is not None:
            self.spread_edges()
        return self._succ_dicts

    def spread_edges(self) -> None:
        """``edges`` put in networkx's layout (``_succ[u][v][key] = data``, the key dict
        shared by ``_pred[v][u]``), each edge's dict made where it has its line."""
        edges, self.edges = self.edges, None
        self._succ_dicts, self._pred, nodes = {}, {}, self._node
        self._node = {}
        fill_adjacency(self._node, self._succ_dicts, self._pred, list(nodes.items()), [
            (u, v, key, {"from_port": key[0], "to_port": key[1], "line": data}
             if type(data) is int else data) for u, v, key, data in edges or ()])


def fill_adjacency(node_dict: dict, succ: dict, pred: dict, nodes: list[tuple[str, dict]],
                   edges: list[tuple]) -> None:
    """Add nodes and edges in bulk, in networkx's adjacency layout (what
    ``MultiDiGraph.add_edge`` builds: ``_succ[u][v][key] = data`` with the key dict shared
    by ``_pred[v][u]``), 3-5 times faster than ``add_nodes_from``/``add_edges_from``."""
    for n, attrs in nodes:
        node_dict[n] = attrs
        succ[n] = {}
        pred[n] = {}
    for u, v, key, attrs in edges:
        targets = succ[u]
        keydict = targets.get(v)
        if keydict is None:
            keydict = targets[v] = {}
            pred[v][u] = keydict
        keydict[key] = attrs


def as_networkx(g: LayerGraph) -> nx.MultiDiGraph:
    """A ``MultiDiGraph`` holding ``g``'s dicts (``g`` must not be used on its own after);
    a layer read into a record gets its dict here, which the graph keeps."""
    if g.records:
        nodes = g._node
        for n, attrs in nodes.items():
            if type(attrs) is not dict:
                nodes[n] = attrs.as_dict()
        g.records = False
    if g.edges is not None:
        g.spread_edges()
    G = nx.MultiDiGraph()
    G.graph = g.graph
    G._node = g._node
    G._adj = G._succ = g._succ
    G._pred = g._pred  # a new graph has no view or cache yet on the dicts it replaced
    return G


def new_layer(name: str, op_type: str, version: str | None, *,
              data: dict[str, str] | None = None, layer_attrs: dict[str, str] | None = None,
              inputs: list[Port] | None = None, outputs: list[Port] | None = None,
              rt_info: str | None = None, line: int | None = None) -> dict[str, Any]:
    """The attributes of one node, as the schema above lists them: the one place a layer
    dict is built (the reader, rewrite and extract call it; the compiled walk builds the
    same dict in C, which tests/ir/test_compiled.py holds equal to the careful walk's)."""
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
    if (node_id is None or not (node_id.isascii() and node_id.isdigit()) or len(node_id) > 19
            or node_id in taken or name is None or op_type is None):
        return node_id, None
    return node_id, new_layer(name, intern(op_type), None if version is None else intern(version),
                              layer_attrs=attrs, line=line)


def has_port(ports: list[dict[str, Any]], port_id: int, ids: dict | None = None,
              node: str | None = None) -> bool:
    """Whether ``port_id`` is among ``ports``: a scan for the usual few ports; with
    ``ids``, a set of the layer's port ids made once (reading stays linear in ports: a
    Concat with 40k inputs, a Split with 40k outputs). Both IR walks ask it."""
    if ids is None or len(ports) <= 8:
        for port in ports:
            if port["id"] == port_id:
                return True
        return False
    known = ids.get(node)
    if known is None:
        known = ids[node] = {port["id"] for port in ports}
    return port_id in known


def new_port(port_id: int, precision: str | None = None, dims: tuple[int, ...] = (),
             names: list[str] | None = None, rt_info: str | None = None,
             attrs: dict[str, str] | None = None) -> Port:
    """One ``Port`` dict, as the schema above lists it (the one place a port is built but
    the compiled walk's, held equal by tests/ir/test_compiled.py)."""
    return {"id": port_id, "precision": precision, "names": [] if names is None else names,
            "dims": dims, "rt_info": rt_info, "attrs": {} if attrs is None else attrs}


def op_spec(G: nx.MultiDiGraph, node: str) -> Any:
    """The ``ops.core.spec.OpSpec`` that the layer's ``type`` and ``version`` select, or None
    for an op ovgather does not know (UnsupportedOpError for an opset without the op)."""
    from ..ops.core.registry import find

    attrs = G.nodes[node]
    return find(attrs["type"], attrs.get("version"))


def layer(G: nx.MultiDiGraph, node: str) -> dict[str, Any]:
    """The attribute dict of layer ``node``."""
    return G.nodes[node]


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
