"""A big IR read in pieces (``parse.parse_in_pieces`` cuts its <layers> after a
``</layer>``): each piece read straight from its bytes by the compiled walk
(``_fastwalk.scan_layers``) when it holds layers as OpenVINO's serializer writes them,
else parsed by lxml on other threads and read from its tree; the <edges> read from
their bytes too (``_fastwalk.scan_edges``). Only the small rest of the document (the
<net> tag, its rt_info) is parsed whole.

Exact or nothing: a piece the scan is not sure to read exactly as lxml and the walk
over its tree would (an entity it does not know, a CR, a comment, a child it does not
read, bytes that are not UTF-8, an error) is read the tree's way, from the first such
piece on; an <edges> it cannot read sends the document to the whole-tree parse, which
words every error.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from . import compiled, parse
from .text import split_names
from .weights import CONST_TYPES

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["read_in_pieces", "scan_layers"]


def read_in_pieces(reader: Any, xml_bytes: bytes,
                   meanwhile: Callable[[], object] | None = None
                   ) -> tuple[etree._Element, list] | None:
    """The document read in pieces by ``reader`` (an ``ir.reader._Reader``): the root,
    which holds everything but the layers, and the layers read; or None (with the
    reader's state undefined) when the caller must parse it whole."""
    fastwalk = compiled._fastwalk
    scan = None if fastwalk is None else partial(scan_layers, reader, xml_bytes)
    parsed = parse.parse_in_pieces(xml_bytes, reader.file, reader.read_layers, meanwhile,
                                   cut_edges=fastwalk is not None, scan_layers=scan)
    if parsed is None:
        return None
    root, streamed, edges = parsed
    if edges is not None:  # <edges> cut out of the rest: read from its bytes
        scanned = fastwalk.scan_edges(xml_bytes, *edges, reader.nodes, reader.n_inputs,
                                      reader.records)
        if scanned is None:  # unusual, or an error: the careful walk names it
            return None
        # whether they go forward in the order of reader.nodes, which is streamed's
        reader.scanned, reader.forward = scanned
    return root, streamed


def scan_layers(reader: Any, xml_bytes: bytes, start: int, end: int, line_offset: int
                ) -> list[tuple[str, dict[str, Any]]] | None:
    """The layers of the <layers> content ``xml_bytes[start:end]`` (lines
    ``line_offset`` past those of a piece parsed on its own), read from the bytes by the
    compiled walk: the list ``reader.read_layers`` gives for those bytes parsed; None
    (and the reader as it was before) when the scan is not sure or met an error."""
    fastwalk = compiled._fastwalk
    return reader.exactly(fastwalk.scan_layers, xml_bytes, start, end, line_offset + 1,
                          reader, split_names, CONST_TYPES)
