"""Read an OpenVINO IR (``model.xml`` + ``model.bin``) as a ``networkx.MultiDiGraph``.

The graph follows the schema documented in :mod:`ovgather.graph`. The verbs, as networkx
names its I/O: :func:`read_ir` reads a file (and the .bin beside it), :func:`parse_ir`
reads bytes (``ir.writer`` writes the graph back, ``ir.weights`` gives a Const's data).
Every problem is an :class:`~ovgather.errors.IRError` naming the file, the XML line and
the layer.

Reading is linear in the file size: lxml parses (``ir.parse``, hardened), then one walk
over its tree builds the node and edge dicts, added to the graph in bulk, with the
garbage collector paused while millions of small objects are created (it would otherwise
rescan them again and again). A big IR is read in pieces (``ir.pieces``): its <layers>
and <edges>, as OpenVINO writes them, read straight from the bytes by the compiled walk
(``_fastwalk.scan_layers``, ``scan_edges``: exactly what lxml and the walk over its tree
read, or nothing), a piece it cannot read parsed by lxml on two other threads, and only
the small rest parsed whole. There are two walks over a tree: the compiled one
(``_fastwalk.pyx``, which reads lxml's C tree without a Python object per element: most
of a pure-Python reader's time) reads the usual IR and hands anything unusual to the
careful one (``_Reader.layers``, ``careful_edges``), which reads anything well-formed
and names every error. Without a C compiler at install only the careful one is there
(the same graphs, 1.5-2x slower). Bodies: ``ir.bodies``, with this same reader.

Every layer id, port id, edge end and the <net version> is read as OpenVINO reads it
(``ir.text.ov_index``: leading whitespace, a sign and zeros are read, anything after the
digits refused), so ``01`` and ``1`` are one id; the graph keys a layer by its id's one
spelling (``"1"``). A default namespace (``<net xmlns="…">``) is read by plain names.

Where ovgather is stricter or looser than OpenVINO's own reader:

* refused although OpenVINO reads them: a duplicate layer id, in any spelling (OpenVINO
  keeps the last),
  a ``<dim>`` that is not an integer >= -1 (OpenVINO reads ``2..5`` as 2, ``30`` followed
  by an em space as 30: only ASCII whitespace pads a dim here), a CDATA section in a
  ``<dim>``, an input port without an edge, Const slices of the .bin that overlap partly,
  a DOCTYPE;
* accepted as OpenVINO does: a Const ``size`` larger than its shape needs, whole slices
  shared by Consts of different types (OpenVINO's serializer stores equal bytes once),
  and any layer type or opset.

Line numbers are exact, also past line 65535 where libxml2 only estimates them (for
layers and edges, ``ir.lines``; an error inside a layer past that line: one or two off).
"""

from __future__ import annotations

import gc
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lxml import etree

from .._lazy import networkx as nx
from .._lazy import numpy as np
from ..errors import IRError, IRStructureError, WeightsError
from ..graph import LayerGraph, as_networkx, fill_adjacency, has_port, layer_of_xml, new_port
from ..graph.bodies import share_source
from . import compiled, parse, pieces
from .bodies import check_no_body_needed, fix_big_lines, may_hold_bodies, read_bodies
from .lines import exact_lines
from .parse import LXML_MAX_LINE, check_layer_count, check_xml_size
from .text import canonical_id, is_uint, odd_opset, ov_index, rt_text, short, split_names
from .weights import (
    CONST_TYPES,
    bin_identity,
    check_bin_location,
    check_slice,
    const_layout,
    const_nbytes,
    first_overlap,
)

__all__ = ["read_ir", "parse_ir", "read_layer_graph", "gc_paused"]

_INT64_MAX = (1 << 63) - 1


def _bad_dim(text: str | None) -> str:
    if text is not None and re.fullmatch(r"\s*\d+\s*\.\..*", text):
        return (f"a port <dim> must be an integer >= -1, but got '{short(text)}' (OpenVINO would "
                "silently read it as its lower bound; intervals belong in a Parameter's "
                "shape attribute)")
    return (f"a port <dim> must be an integer >= -1 (digits 0-9, at most {_INT64_MAX}), but "
            f"got '{short(text or '')}'")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small objects (a graph
    here, a check report in ``infer``).

    Left running, the collector rescans the young graph again and again as it grows
    (what made a naive reader 2-3 times slower than OpenVINO's). At the end the new
    objects are promoted straight to the oldest generation (``freeze`` + ``unfreeze``,
    both O(1)) instead of being scanned once more at the next allocation (0.2 s after
    a check of 100k layers): long-lived by nature, and still scanned by full collections.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def read_ir(path: str | os.PathLike[str], *, max_xml_bytes: int | None = None,
            max_layers: int | None = None) -> nx.MultiDiGraph:
    """Read ``model.xml`` and, when present, the ``model.bin`` beside it.

    Const data is not loaded: :func:`~ovgather.ir.weights.const_value` reads it on
    demand. The .xml may be at most ``max_xml_bytes`` (default
    :data:`~ovgather.ir.parse.MAX_XML_BYTES`), checked before it is read, and hold at
    most ``max_layers`` layers (default :data:`~ovgather.ir.parse.MAX_LAYERS`), checked
    before it is parsed; a .bin that is a symbolic link must point into the model's folder.
    """
    return as_networkx(read_layer_graph(path, max_xml_bytes=max_xml_bytes,
                                        max_layers=max_layers, records=_records(False)))


def read_layer_graph(path: str | os.PathLike[str], *, max_xml_bytes: int | None = None,
                     max_layers: int | None = None,
                     meanwhile: Callable[[], object] | None = None,
                     records: bool | None = None) -> LayerGraph:
    """:func:`read_ir` without networkx, in a :class:`LayerGraph`: what ``check`` needs
    (``as_networkx`` makes it the MultiDiGraph ``read_ir`` returns). ``records``: layers
    read into records rather than dicts where the compiled walk reads them (the default;
    ``OVGATHER_READ_PATH=graph`` or ``=records`` chooses for every read).

    ``meanwhile`` is called once during the read, while a big file's first piece is
    parsed on another thread (before the parse for a small one): the CLI imports the
    shape rules there, in time it would otherwise spend waiting for that piece."""
    xml_path = str(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below)
        fd = os.open(xml_path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
        with open(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):  # a FIFO blocks, /dev/zero never ends
                raise IRError("an IR must be a regular file, but this is a device, FIFO or "
                              "folder", file=xml_path)
            check_xml_size(st.st_size, max_xml_bytes, xml_path)
            xml_bytes = f.read(st.st_size + 1)
        check_xml_size(len(xml_bytes), max_xml_bytes, xml_path)  # it grew meanwhile
        counts = parse.markup_counts(xml_bytes)
        check_layer_count(xml_bytes, max_layers, xml_path, counts)
    except OSError as err:
        raise IRError(f"the IR file cannot be read: {err.strerror or err}",
                      file=xml_path) from err
    bin_path = os.path.splitext(xml_path)[0] + ".bin"
    bin_stat = bin_identity(bin_path) if os.path.isfile(bin_path) else None
    if bin_stat is None and os.path.exists(bin_path):
        raise WeightsError("the weights must be a regular file, but this is a device, FIFO "
                           "or folder", file=bin_path)
    if bin_stat is not None:
        check_bin_location(xml_path, bin_path)
    return _build(xml_bytes, xml_path, bin_path if bin_stat is not None else None,
                  None if bin_stat is None else bin_stat[3], os.path.basename(bin_path),
                  bin_stat=bin_stat, meanwhile=meanwhile, counts=counts,
                  max_layers=max_layers,
                  records=_records(True) if records is None else records)


def parse_ir(xml_bytes: bytes | str, bin_bytes: bytes | None = None, *,
             xml_path: str | None = None, max_xml_bytes: int | None = None,
             max_layers: int | None = None) -> nx.MultiDiGraph:
    """Parse IR XML from memory; ``bin_bytes`` is the weights (None when there is none).

    ``xml_path`` only names the source in error messages and in ``G.graph``;
    ``max_xml_bytes`` and ``max_layers`` as for :func:`read_ir`.
    """
    if isinstance(xml_bytes, str):
        xml_bytes = xml_bytes.encode("utf-8")
    check_xml_size(len(xml_bytes), max_xml_bytes, xml_path)
    counts = parse.markup_counts(xml_bytes)
    check_layer_count(xml_bytes, max_layers, xml_path, counts)
    bin_size = None if bin_bytes is None else len(bin_bytes)
    weights = None if bin_bytes is None else np.frombuffer(bin_bytes, dtype=np.uint8)
    return as_networkx(_build(xml_bytes, xml_path, None, bin_size, "the weights (.bin)",
                              weights, counts=counts, max_layers=max_layers,
                              records=_records(False)))


def _build(xml_bytes: bytes, file: str | None, bin_path: str | None, bin_size: int | None,
           bin_name: str, weights: np.ndarray | None = None,
           bin_stat: tuple[int, ...] | None = None,
           meanwhile: Callable[[], object] | None = None,
           counts: tuple | None = None, max_layers: int | None = None,
           records: bool = False) -> LayerGraph:
    """The graph of ``xml_bytes``; ``counts``: what ``parse.markup_counts`` found in them;
    ``max_layers``: the limit, checked here in the parsed tree of a document whose bytes
    do not spell its markup in ASCII (the caller counted the others' bytes)."""
    reader = _Reader(file, bin_size, bin_name, xml_bytes,
                     has_bodies=may_hold_bodies(xml_bytes, counts), records=records)
    once = _once(meanwhile)
    with gc_paused():
        # parsed whole: a file of one piece, one with comments, PIs or CDATA among its
        # layers (dropped or refused in the whole tree), one with bodies (TensorIterator,
        # Loop, If: ir.bodies reads them from the tree), one with a namespace and one the
        # pieces cannot take (which words its errors)
        markup = parse.check_prolog(xml_bytes, file, counts)
        parsed = None
        if not (len(xml_bytes) <= parse.STREAM_PIECE or reader.has_bodies
                or reader.namespaced
                or (markup and not parse.markup_outside_pieces(xml_bytes))):
            parsed = reader.read_in_pieces(xml_bytes, once)
            if parsed is None:  # a fresh reader: the pieces may have left layers in it
                reader = _Reader(file, bin_size, bin_name, xml_bytes, has_bodies=False,
                                 records=records)
        if parsed is None:
            once()
        root, streamed = parsed or (parse.parse_xml(xml_bytes, file, markup=markup), None)
        if not parse.markup_in_ascii(xml_bytes):  # UTF-16 and the like: counted in the tree
            parse.check_parsed_layer_count(root, max_layers, file)
        G = reader.read(root, streamed)
        del root  # free the lxml tree while the collector is still paused
    G.graph["xml_path"] = file
    G.graph["bin_path"] = bin_path
    G.graph["weights"] = weights
    G.graph["bin_stat"] = bin_stat  # the .bin of this read: const_value reads no other
    if reader.nested:  # bodies read the same weights; their lines past 65535 made exact
        share_source(G)
        fix_big_lines(xml_bytes, G)
    return G


def _records(default: bool) -> bool:
    """Records or dicts: ``default``, or what ``OVGATHER_READ_PATH`` says for all reads."""
    path = os.environ.get("OVGATHER_READ_PATH")
    return default if path not in ("graph", "records") else path == "records"


def _once(fn: Callable[[], object] | None) -> Callable[[], None]:
    """``fn`` made to run at most once, however often the result is called."""
    pending = [] if fn is None else [fn]

    def call() -> None:
        while pending:
            pending.pop()()

    return call


def _fill_graph(G: LayerGraph, nodes: list[tuple[str, dict]], edges: list[tuple]) -> None:
    """``graph.fill_adjacency``, at C speed when the compiled walk is there."""
    fastwalk = compiled._fastwalk
    fill = fill_adjacency if fastwalk is None else fastwalk.fill_graph
    fill(G._node, G._succ, G._pred, nodes, edges)


class _Reader:
    """One pass over the <net> tree: net attributes, layers, edges, checks."""

    def __init__(self, file: str | None, bin_size: int | None, bin_name: str,
                 xml_bytes: bytes, has_bodies: bool | None = None, records: bool = False
                 ) -> None:
        self.file = file
        self.xml_bytes = xml_bytes
        #: whether the document may hold TensorIterator/Loop/If bodies (scanned once; a
        #: body's reader is told): a superset, any tag of a body's name in any spelling
        self.has_bodies = may_hold_bodies(xml_bytes) if has_bodies is None else has_bodies
        #: whether a default namespace may be declared (``<net xmlns="…">``): OpenVINO's
        #: reader knows no namespaces, so its elements are read by their plain names
        self.namespaced = b"xmlns" in xml_bytes or not parse.markup_in_ascii(xml_bytes)
        #: whether the compiled walk reads layers into records (not for bodies' graphs)
        self.records = records and not self.has_bodies and compiled._fastwalk is not None
        self.bin_size = bin_size
        self.bin_name = bin_name
        self.nodes: dict[str, dict[str, Any]] = {}
        self.strings: dict[str, str] = {}  # one copy of each precision text
        self.dims: dict[tuple, tuple] = {}  # one tuple of each port dims (compiled walk)
        self.slices: list[tuple[int, int, str, str]] = []  # Const (offset, end, type, id)
        self.n_inputs = 0
        #: bytes a Const needs, by (element_type, shape) text: for the fast check
        self.const_need: dict[tuple[str | None, str | None], int] = {}
        #: the layers of this graph (and of bodies within) that hold bodies
        self.nested: list[dict[str, Any]] = []
        #: the edges ``_fastwalk.scan_edges`` read from the bytes of a read in pieces
        #: (exact lines; <edges> in the parsed rest is then empty), else None; ``forward``:
        #: whether they all go forward in the order of ``nodes`` (``_fastwalk.in_order``)
        self.scanned: list[tuple] | None = None
        self.forward = False

    def error(self, cls: type[IRError], message: str, el: etree._Element | None = None,
              name: str | None = None, node: str | None = None) -> IRError:
        return cls(message, file=self.file, line=None if el is None else el.sourceline,
                   layer_name=name, layer_id=node)

    def node_error(self, cls: type[IRError], message: str, node: str) -> IRError:
        attrs = self.nodes[node]
        return cls(message, file=self.file, line=attrs["line"], layer_name=attrs["name"],
                   layer_id=node)

    # -- the net -------------------------------------------------------------------
    def read(self, root: etree._Element, streamed: list | None = None) -> LayerGraph:
        """The graph of the parsed ``root``; ``streamed``: the layers
        :meth:`read_in_pieces` read (``root``'s <layers> is then empty)."""
        if self.namespaced:
            parse.plain_names(root)
        if root.tag != "net":
            raise self.error(IRStructureError,
                             f"an IR's root element must be <net>, but got <{root.tag}>", root)
        version_text = root.get("version")
        version = ov_index(version_text)  # " 11", "011" and "+11" are 11 to OpenVINO
        if version not in (10, 11):
            raise self.error(IRStructureError,
                             "an IR's <net version> must be 10 or 11, but got "
                             f"{short(repr(version_text))}", root)
        G = LayerGraph()
        G.graph.update(name=root.get("name"), ir_version=version, rt_info=None,
                       xml_path=None, bin_path=None, weights=None,
                       net_attrs=dict(root.attrib), extra_xml=[])
        return self.read_graph(root, G, streamed)

    def read_graph(self, root: etree._Element, G: LayerGraph | nx.MultiDiGraph,
                   streamed: list | None = None) -> LayerGraph | nx.MultiDiGraph:
        """Layers, edges, rt_info and other children of ``root`` (the <net>, or the body
        of a TensorIterator, Loop or If, which ``ir.bodies`` reads with this too)."""
        layers = edges = None
        for child in root:
            tag = child.tag
            if tag == "layers" and layers is None:
                layers = child
            elif tag == "edges" and edges is None:
                edges = child
            elif tag == "rt_info" and G.graph["rt_info"] is None:
                G.graph["rt_info"] = rt_text(child)
            else:
                G.graph["extra_xml"].append(rt_text(child))
        if layers is None:
            raise self.error(IRStructureError,
                             f"an IR's <{root.tag}> must contain <layers>", root)
        nodes = self.read_layers(layers)
        if streamed:
            nodes = streamed + nodes
        if self.has_bodies:  # TensorIterator, Loop, If: their bodies as graphs
            self.nested += read_bodies(self, layers)
        else:  # no body tag anywhere: a layer that needs one is wrong
            check_no_body_needed(self, nodes)
        self.check_overlaps()
        if self.scanned is not None and root.tag == "net":
            edge_list = self.scanned
        elif edges is not None:
            edge_list = self.edges(edges)
        else:
            edge_list = []
            self.check_fed({})
        fastwalk = compiled._fastwalk
        in_order = (self.forward if edge_list is self.scanned and len(nodes) == len(self.nodes)
                    else fastwalk is not None and fastwalk.in_order(nodes, edge_list))
        if self.records and isinstance(G, LayerGraph):  # check's read: see LayerGraph
            if len(nodes) == len(self.nodes):  # the reader's dict holds them, in order
                G._node = self.nodes
            fastwalk.fill_sources(None if G._node is self.nodes else G._node, G._pred, nodes,
                                  edge_list)
            G.edges, G.in_order, G.records = edge_list, in_order, True
            if not in_order:
                G.spread_edges()  # the general order and the cycle check need _succ
        else:
            _fill_graph(G, nodes, edge_list)
            if isinstance(G, LayerGraph):
                G.in_order = in_order
        if not in_order:
            self.check_acyclic(G)  # OpenVINO writes layers in order: then there is no cycle
        if self.nested or root.tag != "net":  # lines of nested layers: ir.bodies
            return G
        if streamed:  # the pieces' lines are exact: only edges may need it, after them
            if (self.scanned is None and edge_list
                    and edge_list[-1][3]["line"] >= LXML_MAX_LINE):
                exact_lines(self.xml_bytes, [], edge_list, self.xml_bytes.find(b"</layers>"))
        elif nodes and nodes[-1][1]["line"] >= LXML_MAX_LINE or (
                edge_list and edge_list[-1][3]["line"] >= LXML_MAX_LINE):
            exact_lines(self.xml_bytes, nodes, edge_list)
        return G

    def read_in_pieces(self, xml_bytes: bytes, meanwhile: Callable[[], object] | None = None
                       ) -> tuple[etree._Element, list] | None:
        """The document read in pieces (:func:`~ovgather.ir.pieces.read_in_pieces`);
        None (with this reader's state undefined) when the caller must parse it whole."""
        return pieces.read_in_pieces(self, xml_bytes, meanwhile)

    # -- layers --------------------------------------------------------------------
    def read_layers(self, layers: etree._Element, line_offset: int = 0
                    ) -> list[tuple[str, dict[str, Any]]]:
        """The children of ``layers`` as ``(id, node dict)``: by the compiled walk when it
        can, else (and for every error) the careful one. ``line_offset``: added to the
        layers' lines (a piece parsed on its own)."""
        nodes = self.fast_layers(layers, line_offset)
        return self.layers(layers, line_offset) if nodes is None else nodes

    def fast_layers(self, layers: etree._Element, line_offset: int = 0
                    ) -> list[tuple[str, dict[str, Any]]] | None:
        """The layers read by the compiled walk; None (and the reader as it was before)
        when it is not built, not sure, or met an error: then the careful walk reads them."""
        fastwalk = compiled._fastwalk
        if fastwalk is None:
            return None
        return self.exactly(fastwalk.read_layers, layers, self, rt_text, split_names,
                            CONST_TYPES, line_offset)

    def exactly(self, read: Callable[..., list | None], *args: Any
                ) -> list[tuple[str, dict[str, Any]]] | None:
        """``read(*args)``, a compiled read of layers into this reader; None (and the
        reader as it was before) when it returns None or raises an IRError."""
        n_nodes, n_slices, n_inputs = len(self.nodes), len(self.slices), self.n_inputs
        try:
            nodes = read(*args)
        except IRError:
            nodes = None
        if nodes is None:  # forget what this part added (dicts keep insertion order)
            for node_id in list(self.nodes)[n_nodes:]:
                del self.nodes[node_id]
            del self.slices[n_slices:]
            self.n_inputs = n_inputs
        return nodes

    def layers(self, layers: etree._Element, line_offset: int = 0
               ) -> list[tuple[str, dict[str, Any]]]:
        """Every <layer> as ``(id, node dict)``, in XML order, each element checked.

        The careful walk: the compiled one reads the usual IR faster and hands anything
        unusual, and every error, to this one."""
        out: list[tuple[str, dict[str, Any]]] = []
        nodes = self.nodes
        for el in layers:
            if el.tag != "layer":
                raise self.error(IRStructureError,
                                 f"<layers> may only hold <layer> elements, but got <{el.tag}>",
                                 el)
            attrs = dict(el.items())
            node_id = canonical_id(attrs.pop("id", None))
            if node_id is not None:  # "01" and " +1" are layer 1 to OpenVINO
                attrs["id"] = node_id
            node_id, node = layer_of_xml(attrs, el.sourceline + line_offset, nodes)
            if node is not None and odd_opset(node["version"]):
                raise self.error(
                    IRStructureError,
                    f"a layer's version must name an opset OpenVINO knows, but got "
                    f"{short(repr(node['version']))} (opset names have no leading zero)",
                    el, node["name"], node_id)
            if node is None:
                raise self.layer_error(el, node_id, el.get("name"), el.get("type"))
            op_type = node["type"]
            nodes[node_id] = node
            seen: set[int] = set()
            for child in el:
                tag = child.tag
                if tag == "data":
                    node["data"] = dict(child.items())
                elif tag == "output":
                    self.ports(child, node["outputs"], node, node_id, seen)
                elif tag == "input":
                    before = len(node["inputs"])
                    self.ports(child, node["inputs"], node, node_id, seen)
                    self.n_inputs += len(node["inputs"]) - before
                elif tag == "rt_info":
                    node["rt_info"] = rt_text(child)
                else:
                    node.setdefault("extra_xml", []).append(rt_text(child))
            if op_type in CONST_TYPES:
                self.check_const(node_id)
            out.append((node_id, node))
        return out

    def ports(self, section: etree._Element, ports: list[dict[str, Any]],
              node: dict[str, Any], node_id: str, seen: set[int]) -> None:
        """Append the <port>s of an <input> or <output> section to ``ports``; ``seen``
        holds the port ids already declared in the layer."""
        strings = self.strings
        for el in section:
            if el.tag != "port":
                raise self.error(IRStructureError,
                                 f"<input>/<output> may only hold <port>, but got <{el.tag}>",
                                 el, node["name"], node_id)
            attrs = dict(el.items())
            port_text = attrs.pop("id", None)
            port_id = ov_index(port_text)  # "01", " 1" and "+1" are port 1 to OpenVINO
            if port_id is None:
                raise self.error(IRStructureError,
                                 "a port id must be an integer >= 0 (an optional sign and "
                                 "digits 0-9, at most 2^63-1, nothing after them), but got "
                                 f"{short(repr(port_text))}", el, node["name"], node_id)
            precision = attrs.pop("precision", None)
            names = attrs.pop("names", None)
            dims: list[int] = []
            rt_info = None
            extra = None
            for child in el:
                if child.tag == "dim":
                    text = child.text
                    try:
                        value = int(text) if text and text.isascii() and len(text) < 40 else -2
                    except ValueError:
                        value = -2
                    if value < -1 or value > _INT64_MAX or "_" in text:
                        value = self.odd_dim(child, node, node_id)
                    dims.append(value)
                elif child.tag == "rt_info":
                    rt_info = rt_text(child)
                else:
                    extra = extra or []
                    extra.append(rt_text(child))
            port = new_port(
                port_id, None if precision is None else strings.setdefault(precision, precision),
                tuple(dims), None if names is None else split_names(names), rt_info, attrs)
            if extra:
                port["extra_xml"] = extra
            if port_id in seen:
                raise self.error(
                    IRStructureError,
                    f"port ids must be unique within a layer, but port {port_id} "
                    "is declared twice", el, node["name"], node_id)
            seen.add(port_id)
            ports.append(port)

    def layer_error(self, el: etree._Element, node_id: str | None, name: str | None,
                    op_type: str | None) -> IRError:
        if canonical_id(node_id) is None:
            return self.error(IRStructureError,
                              "a layer id must be an integer >= 0 (an optional sign and "
                              "digits 0-9, at most 2^63-1, nothing after them), but got "
                              f"{short(repr(el.get('id')))}",
                              el, name)
        if node_id in self.nodes:
            spelled = el.get("id")
            also = "" if spelled == node_id else f" (spelled {short(repr(spelled))})"
            return self.error(
                IRStructureError,
                f"layer ids must be unique, but id {node_id} is used again{also} (first at line "
                f"{self.nodes[node_id]['line']}; OpenVINO would keep the last one, other "
                "readers the first)", el, name, node_id)
        missing = "name" if name is None else "type"
        return self.error(IRStructureError,
                          f"a <layer> needs a '{missing}' attribute, but it is missing",
                          el, name, node_id)

    def odd_dim(self, el: etree._Element, node: dict[str, Any], node_id: str) -> int:
        """A <dim> that is not plain digits: ``-1`` and integers padded with ASCII
        whitespace are fine (as for OpenVINO's stream parser, which refuses a no-break
        space), anything else is an error."""
        text = el.text or ""
        stripped = text.strip(" \t\n\r")
        negative = stripped.startswith("-")
        value = ov_index(stripped[1:] if negative and stripped[1:2].isdigit() else stripped)
        if value is not None and value >= 0 and (not negative or value <= 1):
            # "+5", "007", "-01" too, and the padding skipped: as OpenVINO's stream parser
            return -value if negative else value
        raise self.error(IRStructureError, _bad_dim(el.text), el, node["name"], node_id)

    def check_const(self, node_id: str) -> None:
        node = self.nodes[node_id]
        data = node["data"]
        offset, size = data.get("offset"), data.get("size")
        key = (data.get("element_type"), data.get("shape"))
        need = self.const_need.get(key)
        if (need is not None and offset is not None and size is not None
                and is_uint(offset) and is_uint(size) and self.bin_size is not None):
            # the usual Const: a type and shape seen before, plain offset and size
            offset, size = int(offset), int(size)
            if size >= need and offset + size <= self.bin_size:
                if size:
                    self.slices.append((offset, offset + size, key[0], node_id))
                return
        try:
            et, shape, offset, size = const_layout(node)
            check_slice(offset, size, self.bin_size, self.bin_name)
            if et.bits is not None:
                self.const_need[key] = const_nbytes(et.name, shape)
            if size:
                self.slices.append((offset, offset + size, et.name, node_id))
        except IRError as err:
            raise err.located(file=self.file, line=node["line"], layer_name=node["name"],
                              layer_id=node_id) from None

    # -- edges ---------------------------------------------------------------------
    def edges(self, edges: etree._Element) -> list[tuple]:
        """Every <edge> as ``(from, to, (from-port, to-port), attrs)``, each checked."""
        fastwalk = compiled._fastwalk
        if fastwalk is not None:
            out = fastwalk.read_edges(edges, self.nodes, self.n_inputs)
            if out is not None:
                return out
        return self.careful_edges(edges)

    def careful_edges(self, edges: etree._Element) -> list[tuple]:
        out: list[tuple] = []
        fed: dict[tuple[str, int], int] = {}
        nodes = self.nodes
        out_ids: dict[str, set[int]] = {}
        in_ids: dict[str, set[int]] = {}
        for el in edges:
            # "01" and " +1" name layer 1 and port 1, as for OpenVINO
            src, dst = canonical_id(el.get("from-layer")), canonical_id(el.get("to-layer"))
            fp, tp = ov_index(el.get("from-port")), ov_index(el.get("to-port"))
            if fp is None or tp is None or src not in nodes or dst not in nodes:
                raise self.edge_error(el)
            outputs, inputs = nodes[src]["outputs"], nodes[dst]["inputs"]
            if fp < 0 or tp < 0 or el.tag != "edge":
                raise self.edge_error(el)
            if not (has_port(outputs, fp, out_ids, src) and has_port(inputs, tp, in_ids, dst)):
                raise self.edge_error(el)
            key = (dst, tp)
            if key in fed:
                raise self.edge_error(el, fed)
            fed[key] = line = el.sourceline
            out.append((src, dst, (fp, tp), {"from_port": fp, "to_port": tp, "line": line}))
        self.check_fed(fed)
        return out

    def edge_error(self, el: etree._Element, fed: dict | None = None) -> IRError:
        """The first rule the <edge> ``el`` breaks, as an error at its line, naming the
        layer whose port is missing or fed twice."""
        def fail(message: str, node: str | None = None) -> IRError:
            name = None if node is None else self.nodes[node]["name"]
            return self.error(IRStructureError, message, el, name, node)
        if el.tag != "edge":
            return fail(f"<edges> may only hold <edge> elements, but got <{el.tag}>")
        for attr in ("from-layer", "to-layer"):
            lid = el.get(attr)
            if canonical_id(lid) not in self.nodes:
                return fail(f"an edge's {attr} must name a layer id, but there is no "
                            f"layer {short(repr(lid))}")
        src, dst = canonical_id(el.get("from-layer")), canonical_id(el.get("to-layer"))
        for attr, node in (("from-port", src), ("to-port", dst)):
            if ov_index(el.get(attr)) is None:  # as OpenVINO reads it
                return fail(f"an edge's {attr} must be an integer >= 0 (an optional sign and "
                            "digits 0-9, at most 2^63-1, nothing after them), but got "
                            f"{short(repr(el.get(attr)))}", node)
        fp, tp = ov_index(el.get("from-port")), ov_index(el.get("to-port"))
        if not has_port(self.nodes[src]["outputs"], fp):
            return fail(f"an edge must start at an output port, but layer {src} "
                        f"('{self.nodes[src]['name']}') has no output port {fp}", src)
        if not has_port(self.nodes[dst]["inputs"], tp):
            return fail(f"an edge must end at an input port, but layer {dst} "
                        f"('{self.nodes[dst]['name']}') has no input port {tp}", dst)
        return fail(f"an input port takes one edge, but port {tp} of layer {dst} "
                    f"('{self.nodes[dst]['name']}') is fed again (first at line "
                    f"{(fed or {}).get((dst, tp))})", dst)

    def check_fed(self, fed: dict[tuple[str, int], int]) -> None:
        """Every declared input port has its edge (OpenVINO refuses a model without)."""
        if len(fed) == self.n_inputs:
            return  # every edge ends at a distinct declared input port: all are fed
        for node_id, node in self.nodes.items():
            for port in node["inputs"]:
                if (node_id, port["id"]) not in fed:
                    raise self.node_error(
                        IRStructureError,
                        f"every input port needs an edge, but port {port['id']} has none",
                        node_id)

    def check_overlaps(self) -> None:
        """Const slices of the .bin may be shared whole (same offset and size: OpenVINO's
        serializer stores equal bytes once, even for Consts of different types), never
        overlap partly (a sign of a corrupt or hand-edited IR)."""
        fastwalk = compiled._fastwalk
        found = (first_overlap if fastwalk is None else fastwalk.first_overlap)(self.slices)
        if found is not None:
            (off1, end1, et1, n1), (off2, end2, et2, n2) = found
            other = self.nodes[n1]
            raise self.node_error(
                WeightsError,
                "Const data may share whole slices only, but bytes "
                f"[{off2}, {end2}) as {et2} overlap [{off1}, {end1}) as {et1} of "
                f"layer {n1} ('{other['name']}', line {other['line']})", n2)

    def check_acyclic(self, G: LayerGraph) -> None:
        """Kahn's algorithm over the adjacency dicts; on a cycle, report a layer on it."""
        succ, pred = G._succ, G._pred
        indegree = {n: len(p) for n, p in pred.items()}
        ready = [n for n, d in indegree.items() if d == 0]
        done = 0
        while ready:
            n = ready.pop()
            done += 1
            for v in succ[n]:
                indegree[v] -= 1
                if indegree[v] == 0:
                    ready.append(v)
        if done == len(indegree):
            return
        left = as_networkx(G).subgraph(n for n, d in indegree.items() if d)
        cycle = nx.find_cycle(left)
        path = " -> ".join(u for u, *_ in cycle) + f" -> {cycle[0][0]}"
        raise self.node_error(
            IRStructureError, f"an IR must be acyclic, but its edges form the cycle {path}",
            cycle[0][1])
