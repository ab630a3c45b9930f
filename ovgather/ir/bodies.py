"""Reading and writing the bodies of TensorIterator-1, Loop-5 and If-8.

The reader hands each such layer's XML element here; every body is read by the same
reader as the top-level graph (a nested reader of the class of the one handed in), so
it is a ``MultiDiGraph`` of the same schema with the same checks and errors, and its
layers keep their real XML lines.
Port map entries keep the XML attributes: ``external_port_id`` and the slicing numbers
(``axis``, ``start``, ``end``, ``stride``, ``part_size``) as ints (OpenVINO's reader does
the same), ``internal_layer_id`` as the body's node id, others as text. ``write_ir``
(in ``writer.py``) writes them back from the node keys (a body edited from Python is
written as it now is).
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any

from .._lazy import networkx as nx
from ..errors import IRStructureError
from ..graph import LayerGraph, as_networkx
from ..graph.bodies import BODIES, edge_list
from . import compiled
from .lines import exact_lines
from .parse import LXML_MAX_LINE, markup_in_ascii
from .text import INT64_MAX, canonical_id, rt_text, short

__all__ = ["may_hold_bodies", "read_bodies", "check_no_body_needed", "fix_big_lines"]

#: Port map attributes read as integers (OpenVINO's reader does the same).
_INT_ATTRS = ("external_port_id", "axis", "start", "end", "stride", "part_size")
_TAGS = {tag for pairs in BODIES.values() for pair in pairs for tag in pair} | {"back_edges"}
_PLAIN = ("data", "input", "output", "rt_info")
#: The start of a body's tag in any spelling XML allows (``<body>``, ``<body >``,
#: ``<then_body\n>``, ``<else_body/>``).
_BODY_TAG = re.compile(rb"<(?:then_|else_)?body[\s>/]")
#: The layers read_bodies reads: those of a body-holding type, and any holding a body.
_BODY_LAYERS = ("layer[" + " or ".join(f"@type='{t}'" for t in BODIES)
                + " or body or then_body or else_body]")


def may_hold_bodies(xml_bytes: bytes, counts: tuple | None = None) -> bool:
    """False only when no element of the document can be a body: no body tag in any
    spelling, in a document whose bytes spell its markup in ASCII. A superset: a tag in a
    comment says True too, and the layers are then read with their bodies. (The plain
    search for ``body`` first: it is a few times faster than the pattern on a big file
    that has none.)"""
    if not markup_in_ascii(xml_bytes):
        return True
    if counts is not None:  # parse.markup_counts looked for the same tags
        return counts[4]
    return b"body" in xml_bytes and _BODY_TAG.search(xml_bytes) is not None


def check_no_body_needed(reader: Any, nodes: list[tuple[str, dict[str, Any]]]) -> None:
    """In a document without bodies, a TensorIterator, Loop or If is an error: OpenVINO
    refuses it ("has no body"), and ovgather would otherwise leave it unchecked."""
    if BODIES.keys().isdisjoint(map(itemgetter("type"), map(itemgetter(1), nodes))):
        return  # the usual file, looked through at C speed (a Python loop: 2% of a read)
    for node_id, node in nodes:
        kinds = BODIES.get(node["type"])
        if kinds is not None:
            raise reader.node_error(
                IRStructureError, f"a {node['type']} needs a <{kinds[0][0]}>, but it is "
                "missing", node_id)


# -- reading -------------------------------------------------------------------------------
def read_bodies(reader: Any, layers: Any) -> list[dict[str, Any]]:
    """Read the bodies of every TensorIterator, Loop and If among ``layers`` (the lxml
    ``<layers>`` element ``reader``, an ``ir.reader._Reader``, has just read) into their node
    dicts; the texts the layer walk kept in ``extra_xml`` for them are dropped. Returns
    the node dicts that now hold bodies."""
    found = []
    for el in layers.xpath(_BODY_LAYERS):
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
        extra = [rt_text(child) for child in el
                 if child.tag not in _PLAIN and not any(child is u for u in used)]
        if extra:
            node["extra_xml"] = extra
        else:
            node.pop("extra_xml", None)
        found.append(node)
    return found


def _read_body(reader: Any, body: Any) -> nx.MultiDiGraph:
    G = LayerGraph()
    G.graph.update(name=None, rt_info=None, xml_path=None, bin_path=None, weights=None,
                   net_attrs=dict(body.attrib), extra_xml=[])
    inner = type(reader)(reader.file, reader.bin_size, reader.bin_name, reader.xml_bytes,
                    has_bodies=True)
    inner.read_graph(body, G)
    reader.nested += inner.nested
    return as_networkx(G)


def _shown(el: Any) -> str:
    """An element's attributes for a message, each value cut to 40 characters."""
    return str({key: short(value) for key, value in el.items()})


_STOLL = re.compile(r"[ \t\n\r]*[+-]?[0-9]{1,40}")


def _int(reader: Any, el: Any, key: str, text: str, node: dict, node_id: str) -> int:
    """A port map integer as OpenVINO reads it (``std::stoll`` over the whole text):
    leading whitespace, an optional sign, then digits 0-9 within int64, nothing after
    (OpenVINO: "not a signed 64 bit integer")."""
    value = int(text) if _STOLL.fullmatch(text) else None
    if value is None or not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise reader.error(IRStructureError,
                           f"a port map's '{key}' must be an integer (leading whitespace, an "
                           f"optional sign, then digits 0-9, nothing after), but got "
                           f"'{short(text)}'", el, node["name"], node_id)
    return value


def _is(op_type: str, want: str) -> bool:
    """Whether a body layer of type ``op_type`` serves as the ``want`` (Parameter or
    Result) of a port map or back edge, as OpenVINO's reader decides: a Parameter in any
    case (``parameter``), a Result spelled exactly so (in another case it is no output
    of the body, and OpenVINO fails to find it)."""
    if op_type == want or want != "Parameter":
        return op_type == want
    from ..ops.core.spec import openvino_type  # here: the reader imports no op code

    return openvino_type(op_type) == want


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
        if "internal_layer_id" in entry:  # "01" is layer 1, as for OpenVINO
            entry["internal_layer_id"] = (canonical_id(entry["internal_layer_id"])
                                          or entry["internal_layer_id"])
        want = "Parameter" if el.tag == "input" else "Result"
        layer = entry.get("internal_layer_id")
        if "external_port_id" not in entry or layer not in body._node \
                or not _is(body._node[layer]["type"], want):
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
        for end in ("from-layer", "to-layer"):  # "01" is layer 1, as for OpenVINO
            if canonical_id(edge.get(end)) is not None:
                edge[end] = canonical_id(edge[end])
        src, dst = edge.get("from-layer"), edge.get("to-layer")
        if (el.tag != "edge" or src not in body._node or dst not in body._node
                or not _is(body._node[src]["type"], "Result")
                or not _is(body._node[dst]["type"], "Parameter")):
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
    layers: list[dict] = []
    edges: list[dict | None] = []
    _document_order(G, layers, edges)
    if all(a["line"] < LXML_MAX_LINE for a in layers) and all(
            e is None or e["line"] < LXML_MAX_LINE for e in edges):
        return
    fastwalk = compiled._fastwalk
    if fastwalk is None:
        nodes = list(G._node.items())
        exact_lines(xml_bytes, nodes, edge_list(G))
        return
    layer_lines, edge_lines = fastwalk.tag_lines(xml_bytes)
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
    edges.extend(e for _, _, _, e in edge_list(G))


# -- writing -------------------------------------------------------------------------------
