"""Write a graph back as an OpenVINO IR: the .xml as lines of text, the Const bytes
copied into a new .bin (repacked densely, identical slices once), both files at once
through :class:`ovgather.atomic.AtomicOutput`. Lossless for what ``ir.reader`` read;
rt_info and other kept elements are checked to be well-formed XML again."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lxml import etree

from .._lazy import networkx as nx
from .._lazy import numpy as np
from ..element_types import ELEMENT_TYPES
from ..errors import IRError, OutputError
from ..graph import BODIES, check_writable
from .parse import xml_parser
from .text import join_names, xml_attrs
from .weights import (
    CONST_TYPES,
    check_slice,
    const_layout,
    const_nbytes,
    const_shape,
    element_type_of,
    weights_source,
)

__all__ = ["write_ir"]


def _check_fragment(text: str, where: str, kept: bool = False) -> None:
    """An rt_info or extra fragment must itself be safe, well-formed XML. A ``kept``
    element (read as text, not as graph) must hold no Const layer: its offsets point into
    the source .bin, which this write repacks, so the copy would read other bytes (a
    body the reader did not read as a graph is refused here, never written stale)."""
    try:
        fragment = etree.fromstring(text.encode("utf-8"), xml_parser())
    except etree.XMLSyntaxError as err:
        raise OutputError(f"{where} must be well-formed XML text, but got {text[:60]!r}: "
                          f"{err.msg}") from err
    if kept and fragment.xpath("descendant-or-self::layer[data/@offset]"):
        raise OutputError(
            f"{where} must not hold layers with .bin offsets (kept as text, they would "
            f"point into the repacked .bin at other bytes), but got {text[:60]!r}")


#: Bytes of a Const copied at a time by write_ir (a 2 GB Const is not held whole).
_COPY_CHUNK = 64 << 20


class _BinWriter:
    """Appends Const bytes to the new .bin; identical source slices are stored once."""

    def __init__(self, f, G: nx.MultiDiGraph) -> None:
        self.f = f
        self.G = G
        self.pos = 0
        self.copied: dict[tuple[int, int], int] = {}

    def add(self, data: memoryview | bytes) -> int:
        offset = self.pos
        self.f.write(data)
        self.pos += len(data)
        return offset

    def const_data(self, node: str, attrs: dict[str, Any]) -> tuple[dict[str, str], tuple | None]:
        """The <data> attributes to write for Const ``node`` and, for an in-memory value,
        the dims and precision of its output port."""
        data = dict(attrs.get("data") or {})
        value = attrs.get("value")
        if value is not None:
            return self.value_data(data, np.asarray(value))
        try:
            et, shape, offset, size = const_layout(attrs)
            src = weights_source(self.G)
            check_slice(offset, size, None if src is None else src.size(), "the weights")
            need = const_nbytes(et.name, shape)
            size = size if need is None else need
            key = (offset, size)
            if key not in self.copied:
                self.copied[key] = self.pos
                for start in range(offset, offset + size, _COPY_CHUNK):
                    n = min(_COPY_CHUNK, offset + size - start)
                    self.add(memoryview(src.read(start, n)))
        except IRError as err:
            raise err.located(file=self.G.graph.get("xml_path"), line=attrs.get("line"),
                              layer_name=attrs.get("name"), layer_id=node) from None
        data["offset"], data["size"] = str(self.copied[key]), str(size)
        return data, None

    def value_data(self, data: dict[str, str], value: np.ndarray) -> tuple[dict, tuple]:
        declared = ELEMENT_TYPES.get(data.get("element_type", ""))
        if declared is not None and declared.raw and value.dtype == np.uint8:
            et_name = declared.name  # raw bytes of a packed type, shape kept from <data>
            shape = const_shape(data.get("shape"))
        else:
            et_name = element_type_of(value.dtype)
            shape = tuple(int(d) for d in value.shape)
            value = value.astype(ELEMENT_TYPES[et_name].dtype, copy=False)
        raw = np.ascontiguousarray(value).tobytes()
        data["element_type"] = et_name
        data["shape"] = ", ".join(str(d) for d in shape)
        data["offset"] = str(self.add(raw))
        data["size"] = str(len(raw))
        return data, (shape, ELEMENT_TYPES[et_name].precision)


def _port_xml(port: dict[str, Any], indent: str, override: tuple | None = None) -> list[str]:
    attrs: dict[str, Any] = {"id": port["id"]}
    dims = port.get("dims", ())
    precision = port.get("precision")
    if override is not None:
        dims, precision = override
    if precision is not None:
        attrs["precision"] = precision
    if port.get("names"):
        attrs["names"] = join_names(port["names"])
    attrs.update(port.get("attrs") or {})
    children = [f"{indent}\t<dim>{int(d)}</dim>" for d in dims]
    for text in ([port["rt_info"]] if port.get("rt_info") else []) + list(
            port.get("extra_xml") or ()):
        _check_fragment(text, "a port's rt_info")
        children.append(f"{indent}\t{text}")
    if not children:
        return [f"{indent}<port{xml_attrs(attrs)} />"]
    return [f"{indent}<port{xml_attrs(attrs)}>", *children, f"{indent}</port>"]


def _layer_xml(node: str, attrs: dict[str, Any], bins: _BinWriter) -> list[str]:
    head = {"id": node, "name": attrs.get("name", node), "type": attrs["type"]}
    if attrs.get("version") is not None:
        head["version"] = attrs["version"]
    head.update(attrs.get("layer_attrs") or {})
    data = attrs.get("data") or {}
    override = None
    if attrs["type"] in CONST_TYPES:
        data, override = bins.const_data(node, attrs)
    lines = [f"\t\t<layer{xml_attrs(head)}>"]
    if data:
        lines.append(f"\t\t\t<data{xml_attrs(data)} />")
    if attrs.get("rt_info"):
        _check_fragment(attrs["rt_info"], f"the rt_info of layer {node}")
        lines.append(f"\t\t\t{attrs['rt_info']}")
    for tag, key in (("input", "inputs"), ("output", "outputs")):
        ports = attrs.get(key) or []
        if ports:
            lines.append(f"\t\t\t<{tag}>")
            for i, port in enumerate(ports):
                lines.extend(_port_xml(port, "\t\t\t\t",
                                       override if key == "outputs" and i == 0 else None))
            lines.append(f"\t\t\t</{tag}>")
    if override is not None and not attrs.get("outputs"):
        lines.append("\t\t\t<output>")
        lines.extend(_port_xml({"id": 0}, "\t\t\t\t", override))
        lines.append("\t\t\t</output>")
    if attrs.get("bodies") is not None:  # TensorIterator, Loop, If
        lines.extend(body_lines(node, attrs, lambda body: _graph_lines(body, bins)))
    elif attrs["type"] in BODIES:
        raise OutputError(f"a {attrs['type']} must hold its bodies as graphs to be written, "
                          "but it has none", layer_name=attrs.get("name"), layer_id=node)
    for text in attrs.get("extra_xml") or ():
        _check_fragment(text, f"an extra element of layer {node}", kept=True)
        lines.append(f"\t\t\t{text}")
    lines.append("\t\t</layer>")
    return lines


def _net_xml(G: nx.MultiDiGraph, bins: _BinWriter) -> str:
    net_attrs = dict(G.graph.get("net_attrs") or {})
    net_attrs["name"] = G.graph.get("name") or net_attrs.get("name") or "model"
    net_attrs["version"] = str(G.graph.get("ir_version") or net_attrs.get("version") or 11)
    head = {"name": net_attrs.pop("name"), "version": net_attrs.pop("version"), **net_attrs}
    lines = ['<?xml version="1.0"?>', f"<net{xml_attrs(head)}>", *_graph_lines(G, bins),
             "</net>"]
    return "\n".join(lines) + "\n"


def _graph_lines(G: nx.MultiDiGraph, bins: _BinWriter) -> list[str]:
    """The children of a <net> (or of a body): layers, edges, extra elements, rt_info.
    Const bytes are read from ``G``'s weights while it is written."""
    outer, bins.G = bins.G, G
    lines = ["\t<layers>"]
    for node, attrs in G.nodes(data=True):
        lines.extend(_layer_xml(str(node), attrs, bins))
    lines.append("\t</layers>")
    lines.append("\t<edges>")
    for u, v, key, e in G.edges(keys=True, data=True):
        fp = e.get("from_port", key[0] if isinstance(key, tuple) else None)
        tp = e.get("to_port", key[1] if isinstance(key, tuple) else None)
        if fp is None or tp is None:
            raise OutputError(f"the edge {u} -> {v} must carry from_port and to_port")
        edge = {"from-layer": u, "from-port": int(fp), "to-layer": v, "to-port": int(tp)}
        lines.append(f"\t\t<edge{xml_attrs(edge)} />")
    lines.append("\t</edges>")
    for text in G.graph.get("extra_xml") or ():
        _check_fragment(text, "an extra <net> element", kept=True)
        lines.append(f"\t{text}")
    if G.graph.get("rt_info"):
        _check_fragment(G.graph["rt_info"], "the net's rt_info")
        lines.append(f"\t{G.graph['rt_info']}")
    bins.G = outer
    return lines


def write_ir(G: nx.MultiDiGraph, path: str | os.PathLike[str]) -> None:
    """Write ``G`` as ``path`` (the .xml) and the .bin beside it.

    Const layers read from an IR have their bytes copied (repacked densely, identical
    slices once); Const layers with a ``value`` have it appended, with element_type,
    shape, offset and size set from it. ``G`` itself is not changed.

    The graph is checked against the schema (:mod:`ovgather.graph`) first, and an
    OutputError names the layer and attribute that would make an unreadable IR. The
    destination must not be a file of the model ``G`` was read from in another role
    (its .bin as the .xml, say); writing an IR over its own .xml and .bin is allowed.

    All or nothing, through :class:`ovgather.atomic.AtomicOutput`: both files are
    written under private temporary names and renamed at the end, the .bin first, so any
    failure or signal leaves the old files byte for byte and no temporary file behind.
    """
    from ..atomic import AtomicOutput  # here: ``check`` reads, it never pays for writing

    xml_path = Path(path)
    bin_path = xml_path.with_suffix(".bin")
    _check_destination(G, xml_path, bin_path)
    check_writable(G)
    with AtomicOutput([bin_path, xml_path], "the IR") as out:
        with out.open(bin_path, "wb") as f:
            text = _net_xml(G, _BinWriter(f, G))
        with out.open(xml_path, "w") as f:
            f.write(text)


def _check_destination(G: nx.MultiDiGraph, xml_path: Path, bin_path: Path) -> None:
    """Refuse an .xml that would be its own .bin, or a destination that is a file of
    the source model in the other role (``write_ir(G, "model.bin")`` would put XML over
    the weights it is about to copy)."""
    from ..atomic import same_file

    if xml_path.suffix.lower() == ".bin" or same_file(xml_path, bin_path):
        raise OutputError("an IR's path must be the .xml (the .bin goes beside it), but "
                          "got a .bin path", file=str(xml_path))
    src_xml, src_bin = G.graph.get("xml_path"), G.graph.get("bin_path")
    pairs = []
    if src_bin:
        pairs.append((xml_path, Path(src_bin), "weights (.bin)"))
    if src_xml:
        pairs.append((bin_path, Path(src_xml), "IR (.xml)"))
    if src_bin and same_file(bin_path, Path(src_bin)) and not (
            src_xml and same_file(xml_path, Path(src_xml))):
        pairs.append((bin_path, Path(src_bin), "weights (.bin) without its .xml"))
    for dest, src, role in pairs:
        if same_file(dest, src):
            raise OutputError(f"the destination must not overwrite the source model's "
                              f"{role}, but {dest} is {src}", file=str(xml_path))


def _check_port_map(body: nx.MultiDiGraph, port_map: dict[str, Any], back_edges: Any) -> None:
    """Every layer the port map and the back edges name is a Parameter (an input) or a
    Result (an output) of the body: an edit that removed or replaced one would otherwise
    write an IR OpenVINO cannot read (its reader fails with ``unordered_map::at``)."""
    named = [(entry.get("internal_layer_id"), want, f"port map <{tag[:-1]}>")
             for tag, want in (("inputs", "Parameter"), ("outputs", "Result"))
             for entry in port_map.get(tag) or ()]
    named += [(edge.get(end), want, "back edge") for edge in back_edges
              for end, want in (("from-layer", "Result"), ("to-layer", "Parameter"))]
    for layer, want, what in named:
        if layer not in body or body.nodes[layer]["type"] != want:
            found = f"a {body.nodes[layer]['type']}" if layer in body else "no layer"
            raise OutputError(f"a {what} must name a {want} of the body, but internal layer "
                              f"{layer!r} is {found} (an edit removed or replaced it)")


def body_lines(node: str, attrs: dict[str, Any], graph_lines: Callable[[nx.MultiDiGraph], list[str]]
               ) -> list[str]:
    """The XML lines of a layer's port maps, back edges and bodies (indented for a layer
    child); ``graph_lines(G)`` gives the lines of a body's layers and edges."""
    bodies = attrs["bodies"]
    port_maps = attrs.get("port_maps") or {}
    lines = []
    kinds = BODIES.get(attrs["type"], tuple((name, "port_map") for name in bodies))
    for body_tag, map_tag in kinds:
        pm = port_maps.get(body_tag) or {}
        lines.append(f"\t\t\t<{map_tag}>")
        for tag in ("input", "output"):
            for entry in pm.get(tag + "s") or ():
                lines.append(f"\t\t\t\t<{tag}{xml_attrs(entry)} />")
        lines.append(f"\t\t\t</{map_tag}>")
    back = [e for edges in (attrs.get("back_edges") or {}).values() for e in edges]
    if back or attrs["type"] in ("TensorIterator", "Loop"):
        lines.append("\t\t\t<back_edges>")
        lines.extend(f"\t\t\t\t<edge{xml_attrs(e)} />" for e in back)
        lines.append("\t\t\t</back_edges>")
    for body_tag, body in bodies.items():
        try:
            check_writable(body)
            _check_port_map(body, port_maps.get(body_tag) or {},
                            (attrs.get("back_edges") or {}).get(body_tag) or ())
        except OutputError as err:
            raise OutputError(f"the {body_tag} of layer {node} ('{attrs.get('name')}'): "
                              f"{err.message}", layer_name=err.layer_name,
                              layer_id=err.layer_id) from None
        lines.append(f"\t\t\t<{body_tag}{xml_attrs(body.graph.get('net_attrs') or {})}>")
        lines.extend("\t\t\t" + line for line in graph_lines(body))
        lines.append(f"\t\t\t</{body_tag}>")
    return lines
