"""Exact lines for layers and edges past line 65535, where libxml2 only estimates them
(see :data:`~ovgather.ir.parse.LXML_MAX_LINE`)."""

from __future__ import annotations

import re

from .._lazy import numpy as np
from . import compiled
from .parse import LXML_MAX_LINE

__all__ = ["exact_lines"]


def exact_lines(xml_bytes: bytes, nodes: list[tuple[str, dict]], edges: list[tuple],
                start: int = 0) -> None:
    """Replace libxml2's estimated lines (>= 65535) of layers and edges with exact ones.

    One pass over the bytes from ``start`` on (which ``nodes`` and ``edges`` all follow:
    layers read in pieces have exact lines already, and only their edges are looked
    for, after ``</layers>``) lists the line of every ``<layer``/``<edge`` tag outside
    comments, CDATA sections and processing instructions (the compiled walk's
    ``tag_lines``, or :func:`_tag_lines`); in document order they are the layers and
    edges (read in that order too) when the counts agree. Otherwise (a <layer> element
    somewhere else, in an rt_info say) :func:`_walk_lines` finds each tag as OpenVINO
    writes it. Linear either way, whatever the comments and the attribute order.
    """
    fastwalk = compiled._fastwalk
    found = (fastwalk.tag_lines(memoryview(xml_bytes)[start:]) if fastwalk is not None
             else _tag_lines(xml_bytes, start))
    before = xml_bytes.count(b"\n", 0, start)
    if before:
        found = tuple([line + before for line in lines] for lines in found)
    newlines = None
    for items, tags_of, lines in ((nodes, _layer_tags, found[0]), (edges, _edge_tags, found[1])):
        if lines is not None and len(lines) == len(items):
            for item, line in zip(items, lines, strict=True):
                item[-1]["line"] = line
            continue
        if newlines is None:
            newlines = np.flatnonzero(np.frombuffer(xml_bytes, dtype=np.uint8) == 10)
        _walk_lines(xml_bytes, newlines, tags_of(items))


#: A comment, CDATA section or PI (where no tag is), or a <layer or <edge tag.
_QUIET_OR_TAG = re.compile(rb"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)"
                           rb"|<(layer|edge)[ \t\n\r\x0b\x0c/>]", re.DOTALL)


def _tag_lines(xml_bytes: bytes, start: int) -> tuple[list[int], list[int]]:
    """``_fastwalk.tag_lines`` of ``xml_bytes[start:]`` without the compiled walk."""
    layers: list[int] = []
    edges: list[int] = []
    line, pos = 1, start
    for found in _QUIET_OR_TAG.finditer(xml_bytes, start):
        name = found.group(1)
        if name is None:
            continue
        line += xml_bytes.count(b"\n", pos, found.start())
        pos = found.start()
        (layers if name == b"layer" else edges).append(line)
    return layers, edges


def _layer_tags(nodes: list[tuple[str, dict]]) -> list[tuple[bytes, dict]]:
    """Each layer's opening tag as OpenVINO writes it, with its node dict."""
    return [(f'<layer id="{n}"'.encode(), attrs) for n, attrs in nodes]


def _edge_tags(edges: list[tuple]) -> list[tuple[bytes, dict]]:
    """Each edge's tag as OpenVINO writes it, with its edge dict."""
    return [(f'<edge from-layer="{u}" from-port="{k[0]}" to-layer="{v}" '
             f'to-port="{k[1]}"'.encode(), attrs) for u, v, k, attrs in edges]


def _walk_lines(xml_bytes: bytes, newlines: np.ndarray,
                items: list[tuple[bytes, dict]]) -> None:
    """Find each tag from the last exactly known line on, counting the newlines in
    between; once a tag is written otherwise (attributes in another order), it and every
    later one keep their estimates: searching on from the same place for each would read
    the rest of the file again and again."""
    pos = line = 1
    for tag, attrs in items:
        if attrs["line"] < LXML_MAX_LINE:
            line = attrs["line"]
            pos = 0 if line == 1 else int(newlines[line - 2]) + 1
            continue
        found = xml_bytes.find(tag, pos)
        if found < 0:
            return
        line += xml_bytes.count(b"\n", pos, found)
        pos = found
        attrs["line"] = line
