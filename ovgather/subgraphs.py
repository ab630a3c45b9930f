"""The bodies of TensorIterator-1, Loop-5 and If-8: read, written and walked as graphs.

A layer of these types holds whole models: ``<body>`` (TensorIterator, Loop) or
``<then_body>`` and ``<else_body>`` (If), each with its own ``<layers>`` and ``<edges>``,
tied to the layer's ports by a port map (``<port_map>``, ``<then_port_map>``,
``<else_port_map>``) and, for the loops, ``<back_edges>`` that carry a body result to a
body parameter of the next iteration. ``ir.py`` hands such a layer here; each body is
read by the same reader as the top-level graph (``ir._Reader.read_graph``), so it is a
``networkx.MultiDiGraph`` of the schema in ``graph.py``, with the same checks and errors,
and its layers keep their real XML lines.

The node keys this module adds (documented in ``graph.py``):

``bodies``      ``{"body": G}`` or ``{"then_body": G, "else_body": G}``, in XML order.
``port_maps``   per body, ``{"inputs": [entry, ...], "outputs": [entry, ...]}``; an entry
                is a dict of the XML attributes: ``external_port_id`` and the slicing
                numbers (``axis``, ``start``, ``end``, ``stride``, ``part_size``) as ints,
                ``internal_layer_id`` as the body's node id (``str``), others as text
                (``purpose="current_iteration"`` / ``"execution_condition"``).
``back_edges``  per body, a list of dicts ``{"from-layer": id, "to-layer": id, ...}``
                (node ids of the body, as text).

``write_ir`` writes them back from these keys (a body edited from Python is written as
it now is). :func:`run_body` is how the shape walk (``infer.py``) runs a body for the
rules in ``ops/subgraph.py``, which see a body only through :class:`Body`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx

from .errors import IRStructureError, OutputError, ShapeInferenceError

__all__ = ["BODIES", "read_bodies", "body_lines", "Body", "bodies_of", "share_source",
           "fix_big_lines", "infer_nested", "locate", "walk_bodies", "body_size", "body_layers",
           "inside_words", "body_runs"]

#: The op types that hold bodies, and the bodies and port maps each one has.
BODIES = {"TensorIterator": (("body", "port_map"),),
          "Loop": (("body", "port_map"),),
          "If": (("then_body", "then_port_map"), ("else_body", "else_port_map"))}
#: Port map attributes read as integers (OpenVINO's reader does the same).
_INT_ATTRS = ("external_port_id", "axis", "start", "end", "stride", "part_size")
_TAGS = {tag for pairs in BODIES.values() for pair in pairs for tag in pair} | {"back_edges"}
_PLAIN = ("data", "input", "output", "rt_info")


# -- reading -------------------------------------------------------------------------------
def read_bodies(reader: Any, layers: Any) -> list[dict[str, Any]]:
    """Read the bodies of every TensorIterator, Loop and If among ``layers`` (the lxml
    ``<layers>`` element ``reader``, an ``ir._Reader``, has just read) into their node
    dicts; the texts the layer walk kept in ``extra_xml`` for them are dropped. Returns
    the node dicts that now hold bodies."""
    from .ir import _rt_text

    found = []
    for el in layers.xpath("layer[body or then_body or else_body]"):
        node_id = el.get("id")
        node = reader.nodes.get(node_id)
        if node is None or node["type"] not in BODIES:
            continue  # a custom op with a <body> keeps it as text
        bodies, port_maps, back_edges = {}, {}, {}
        kinds = BODIES[node["type"]]
        for body_tag, _ in kinds:
            if el.find(body_tag) is None:
                raise reader.error(IRStructureError,
                                   f"a {node['type']} needs a <{body_tag}>, but it is missing",
                                   el, node["name"], node_id)
        maps = dict(kinds)
        for body in el.iterchildren(*maps):  # document order: the order of their lines
            body_tag, map_tag = body.tag, maps.pop(body.tag, None)
            if map_tag is None:
                continue  # a second <body> of the same name stays in extra_xml
            bodies[body_tag] = _read_body(reader, body)
            port_maps[body_tag] = _read_port_map(reader, el.find(map_tag), node, node_id,
                                                 bodies[body_tag])
            back_edges[body_tag] = _read_back_edges(reader, el.find("back_edges"), node,
                                                    node_id, bodies[body_tag])
        node["bodies"], node["port_maps"] = bodies, port_maps
        if node["type"] != "If":
            node["back_edges"] = back_edges
        # the elements themselves, not their id(): an lxml proxy that is no longer
        # referenced is freed, and its id may come back on another element
        used = [kept for tag in _TAGS if (kept := el.find(tag)) is not None]
        extra = [_rt_text(child) for child in el
                 if child.tag not in _PLAIN and not any(child is u for u in used)]
        if extra:
            node["extra_xml"] = extra
        else:
            node.pop("extra_xml", None)
        found.append(node)
    return found


def _read_body(reader: Any, body: Any) -> nx.MultiDiGraph:
    from .graph import LayerGraph, as_networkx
    from .ir import _Reader

    G = LayerGraph()
    G.graph.update(name=None, rt_info=None, xml_path=None, bin_path=None, weights=None,
                   net_attrs=dict(body.attrib), extra_xml=[])
    inner = _Reader(reader.file, reader.bin_size, reader.bin_name, reader.xml_bytes,
                    has_bodies=True)
    inner.read_graph(body, G)
    reader.nested += inner.nested
    return as_networkx(G)


def _shown(el: Any) -> str:
    """An element's attributes for a message, each value cut to 40 characters."""
    from .ir import _short

    return str({key: _short(value) for key, value in el.items()})


def _int(reader: Any, el: Any, key: str, text: str, node: dict, node_id: str) -> int:
    from .ir import _short

    value = text.strip()
    digits = value[1:] if value[:1] in "+-" else value
    if not (digits.isascii() and digits.isdigit() and len(digits) < 19):
        raise reader.error(IRStructureError,
                           f"a port map's '{key}' must be an integer (digits 0-9), but got "
                           f"'{_short(text)}'", el, node["name"], node_id)
    return int(value)


def _read_port_map(reader: Any, port_map: Any, node: dict, node_id: str,
                   body: nx.MultiDiGraph) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"inputs": [], "outputs": []}
    if port_map is None:
        return out
    for el in port_map:
        if el.tag not in ("input", "output"):
            raise reader.error(IRStructureError,
                               f"a port map may only hold <input> and <output>, but got "
                               f"<{el.tag}>", el, node["name"], node_id)
        entry: dict[str, Any] = {}
        for key, text in el.items():
            entry[key] = _int(reader, el, key, text, node, node_id) if key in _INT_ATTRS \
                else text
        want = "Parameter" if el.tag == "input" else "Result"
        layer = entry.get("internal_layer_id")
        if "external_port_id" not in entry or layer not in body._node \
                or body._node[layer]["type"] != want:
            raise reader.error(
                IRStructureError,
                f"a port map <{el.tag}> needs an external_port_id and an internal_layer_id "
                f"naming a {want} of the body, but got {_shown(el)}",
                el, node["name"], node_id)
        out[el.tag + "s"].append(entry)
    return out


def _read_back_edges(reader: Any, back_edges: Any, node: dict, node_id: str,
                     body: nx.MultiDiGraph) -> list[dict[str, str]]:
    out = []
    for el in () if back_edges is None else back_edges:
        edge = dict(el.items())
        src, dst = edge.get("from-layer"), edge.get("to-layer")
        if (el.tag != "edge" or src not in body._node or dst not in body._node
                or body._node[src]["type"] != "Result"
                or body._node[dst]["type"] != "Parameter"):
            raise reader.error(
                IRStructureError,
                "a back edge must lead from a Result of the body to a Parameter of the "
                f"body, but got <{el.tag}> {_shown(el)}", el, node["name"], node_id)
        out.append(edge)
    return out


def fix_big_lines(xml_bytes: bytes, G: nx.MultiDiGraph) -> None:
    """Exact lines for layers and edges past line 65535 (libxml2 only estimates them) in
    a model with bodies: every ``<layer`` and ``<edge`` tag in document order is matched
    with the layers and edges read in that order (a body's layers follow its layer's
    tag, its back edges come before its body as OpenVINO writes them); when the counts
    differ (a tag in a comment, another order) the estimates stay."""
    from .ir import _LXML_MAX_LINE, _fastwalk, _fix_big_lines

    layers: list[dict] = []
    edges: list[dict | None] = []
    _document_order(G, layers, edges)
    if all(a["line"] < _LXML_MAX_LINE for a in layers) and all(
            e is None or e["line"] < _LXML_MAX_LINE for e in edges):
        return
    if _fastwalk is None:
        nodes = list(G._node.items())
        _fix_big_lines(xml_bytes, nodes, _edges(G))
        return
    layer_lines, edge_lines = _fastwalk.tag_lines(xml_bytes)
    if len(layer_lines) == len(layers):
        for attrs, line in zip(layers, layer_lines, strict=True):
            attrs["line"] = line
    if len(edge_lines) == len(edges):
        for attrs, line in zip(edges, edge_lines, strict=True):
            if attrs is not None:
                attrs["line"] = line


def _document_order(G: nx.MultiDiGraph, layers: list, edges: list) -> None:
    for attrs in G._node.values():
        layers.append(attrs)
        for back in (attrs.get("back_edges") or {}).values():
            edges.extend([None] * len(back))
        for body in (attrs.get("bodies") or {}).values():
            _document_order(body, layers, edges)
    edges.extend(e for _, _, _, e in _edges(G))


def _edges(G: Any) -> list[tuple[str, str, Any, dict]]:
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
        for key in ("xml_path", "bin_path", "weights"):
            body.graph[key] = G.graph.get(key)
        share_source(body)


# -- writing -------------------------------------------------------------------------------
def body_lines(node: str, attrs: dict[str, Any], graph_lines: Callable[[nx.MultiDiGraph], list[str]]
               ) -> list[str]:
    """The XML lines of a layer's port maps, back edges and bodies (indented for a layer
    child); ``graph_lines(G)`` gives the lines of a body's layers and edges."""
    from .graph import validate_graph
    from .ir import _attrs

    bodies = attrs["bodies"]
    port_maps = attrs.get("port_maps") or {}
    lines = []
    kinds = BODIES.get(attrs["type"], tuple((name, "port_map") for name in bodies))
    for body_tag, map_tag in kinds:
        pm = port_maps.get(body_tag) or {}
        lines.append(f"\t\t\t<{map_tag}>")
        for tag in ("input", "output"):
            for entry in pm.get(tag + "s") or ():
                lines.append(f"\t\t\t\t<{tag}{_attrs(entry)} />")
        lines.append(f"\t\t\t</{map_tag}>")
    back = [e for edges in (attrs.get("back_edges") or {}).values() for e in edges]
    if back or attrs["type"] in ("TensorIterator", "Loop"):
        lines.append("\t\t\t<back_edges>")
        lines.extend(f"\t\t\t\t<edge{_attrs(e)} />" for e in back)
        lines.append("\t\t\t</back_edges>")
    for body_tag, body in bodies.items():
        try:
            validate_graph(body)
        except OutputError as err:
            raise OutputError(f"the {body_tag} of layer {node} ('{attrs.get('name')}'): "
                              f"{err.message}", layer_name=err.layer_name,
                              layer_id=err.layer_id) from None
        lines.append(f"\t\t\t<{body_tag}{_attrs(body.graph.get('net_attrs') or {})}>")
        lines.extend("\t\t\t" + line for line in graph_lines(body))
        lines.append(f"\t\t\t</{body_tag}>")
    return lines


# -- the shape walk through bodies -----------------------------------------------------------
class _Results(dict):
    """Result id -> the tensor reaching that Result; a missing id is a broken port map."""

    def __missing__(self, key: str) -> Any:
        raise ShapeInferenceError(f"a port map must name a Result of the body, but "
                                  f"{key!r} is none")


#: The id prefixes of the bodies being run, outermost first (nested bodies).
_RUNNING: list[str] = []
#: While :func:`body_runs` is active: path id prefix of a body -> (body graph, the
#: tensors of its last run by node and port), as ``infer._walk`` fills ``produced``.
_CAPTURED: dict[str, tuple[nx.MultiDiGraph, dict]] | None = None


def body_runs(G: nx.MultiDiGraph, shapes: Any = None) -> tuple[Any, dict]:
    """``check(G, shapes)`` and, per body (by its path id prefix, ``4/body/``), its graph
    and the tensors its last run gave each layer: what ``explain`` shows for a body
    layer, the very inputs ``check`` inferred it from."""
    global _CAPTURED
    from .infer import check

    _CAPTURED = captured = {}
    try:
        return check(G, shapes=shapes), captured
    finally:
        _CAPTURED = None


class Body:
    """One body of a layer, as the rules in ``ops/subgraph.py`` see it.

    ``port_map`` and ``back_edges`` are the layer's (``graph.py`` schema). :meth:`run`
    re-infers the body with some Parameters given (the others keep their own ``shape``
    attribute) and keeps the checked layers of that run in ``layers``, named by their
    path (``Loop_3/body/Add_7``, ids ``3/body/5``): the last run is the one reported.
    """

    def __init__(self, G: nx.MultiDiGraph, name: str, port_map: dict, back_edges: list,
                 owner: str, owner_name: str) -> None:
        self.G, self.name = G, name
        self.port_map = {"inputs": port_map.get("inputs") or [],
                         "outputs": port_map.get("outputs") or []}
        self.back_edges = back_edges
        self.id_path, self.name_path = f"{owner}/{name}/", f"{owner_name}/{name}/"
        self.layers: list[Any] = []

    def declared_type(self, param: str) -> str:
        """The element type a body Parameter declares."""
        return (self.G._node[param].get("data") or {}).get("element_type", "dynamic")

    def declared(self, param: str) -> Any:
        """The tensor a body Parameter declares (its ``shape`` attribute)."""
        from .infer import _parameter

        attrs = self.G._node[param]
        return _parameter(attrs, attrs.get("data") or {}, None)

    def source_parameter(self, result: str) -> str | None:
        """The Parameter that feeds Result ``result`` directly, else None."""
        for u in self.G._pred.get(result, ()):
            if self.G._node[u]["type"] == "Parameter":
                return u
        return None

    def run(self, params: dict[str, Any]) -> dict[str, Any]:
        from .infer import _check_layers, _inputs

        G, produced, found, nested = self.G, {}, [], {}
        _RUNNING.append(self.id_path)
        try:
            _check_layers(G, None, G._node, found.append, params=params, produced=produced,
                          nested=nested)
        finally:
            _RUNNING.pop()
        if _CAPTURED is not None:  # explain wants the tensors this run gave each layer
            _CAPTURED["".join(_RUNNING) + self.id_path] = (G, produced)
        layers = []
        for lr in found:
            for r in (lr, *nested.get(lr.id, ())):
                r.id, r.name = self.id_path + r.id, self.name_path + r.name
                layers.append(r)
        self.layers = layers
        return _Results((n, _inputs(attrs, G._pred[n], produced)[0])
                        for n, attrs in G._node.items() if attrs["type"] == "Result")


def infer_nested(node: str, attrs: dict[str, Any], spec: Any, ins: list, rule_attrs: Any,
                 nested: dict | None) -> tuple[str, list | None]:
    """Run the rule of a layer with bodies (the walk's hook in ``infer.py``); the checked
    layers of its bodies go to ``nested[node]`` when the walk collects them."""
    bodies = attrs.get("bodies")
    if not bodies:
        return "unchecked", None  # built without bodies: nothing to infer from
    port_maps, back_edges = attrs.get("port_maps") or {}, attrs.get("back_edges") or {}
    rule_attrs.bodies = {
        name: Body(body, name, port_maps.get(name) or {}, back_edges.get(name) or [], node,
                   attrs["name"])
        for name, body in bodies.items()}
    try:
        return "ok", spec.rule(ins, rule_attrs, None)
    finally:
        if nested is not None:
            nested[node] = [lr for b in rule_attrs.bodies.values() for lr in b.layers]
