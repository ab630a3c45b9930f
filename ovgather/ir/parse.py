"""The hardened XML parse: lxml with no network, no DTD loading, no entity expansion and
no huge-tree mode, a DOCTYPE refused before lxml sees the bytes, a size limit checked
before reading, and a big IR's <layers> cut into pieces, each read from its bytes by the
compiled walk or parsed on one of two other threads (``ir.pieces``).

Limits: an .xml of at most :data:`MAX_XML_BYTES` (checked before reading it; lxml's tree
costs many bytes of memory per byte of XML). XML comments and processing instructions are
not kept. Line numbers are those of libxml2, exact up to :data:`LXML_MAX_LINE`
(``ir.lines`` makes those of layers and edges exact beyond).
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from lxml import etree

from ..errors import XMLSyntaxError
from . import compiled

__all__ = ["MAX_XML_BYTES", "MAX_LAYERS", "check_layer_count", "check_parsed_layer_count",
           "count_layer_tags", "STREAM_PIECE", "LXML_MAX_LINE",
           "xml_parser", "parse_xml", "check_prolog", "check_xml_size", "parse_in_pieces",
           "markup_in_ascii", "markup_counts", "markup_outside_pieces", "root_name",
           "document_root", "RootUnknown", "ROOT_LIMIT", "NOT_XML",
           "plain_names"]

#: An IR of more bytes is read in pieces (see parse_in_pieces), each at most an eighth
#: of this (smaller pieces, fewer trees alive at once: 40 MB less at 20k layers, as fast).
STREAM_PIECE = 1 << 20
PIECE_DIV = 8

#: The largest .xml read_ir and parse_ir take, in bytes. Reading costs up to ~53 bytes
#: of memory per byte of XML (the graph's ~2 KB a layer, for XML of bare layers; lxml's
#: tree of many small elements, as in a big rt_info, ~35), so this bounds a read near
#: 14 GB; real IRs are far smaller (an LLM's: tens of MB).
#: Pass ``max_xml_bytes`` to read a bigger one.
MAX_XML_BYTES = 256 << 20


def check_xml_size(size: int, limit: int | None, file: str | None) -> None:
    limit = MAX_XML_BYTES if limit is None else limit
    if size > limit:
        raise XMLSyntaxError(
            f"an IR's .xml may be at most {limit} bytes ({limit >> 20} MiB; reading costs "
            f"many times its size in memory), but this one has {size} bytes "
            "(read_ir(..., max_xml_bytes=N) reads a bigger one)", file=file)


#: The most layers read_ir and parse_ir take (bodies' layers count too). The graph costs
#: ~2.4 KB and ``check`` ~40 µs a layer (~60 with ``--json``): this bounds a check near
#: 0.7 GB and 15 s, where the 256 MiB size limit alone admits 5 million bare layers
#: (10 GB, minutes); real IRs have thousands (an LLM: 5k–20k layers). Counted as
#: <layer> element tags (never one in a comment, CDATA section or processing
#: instruction) in the bytes before anything is parsed, or in the parsed tree for a
#: document in an encoding that does not spell its markup in ASCII (UTF-16, say). Pass
#: ``max_layers`` to read a bigger one (the command line: ``--layer-limit N``).
MAX_LAYERS = 300_000

#: What count_layer_tags looks for: a <layer tag, or a stretch where none is one.
_QUIET_OR_LAYER = re.compile(rb"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)"
                             rb"|<layer[ \t\n\r\x0b\x0c/>]", re.DOTALL)


def count_layer_tags(xml_bytes: bytes) -> int:
    """The <layer> element tags in the bytes (of a document that spells its markup in
    ASCII): ``<layer`` followed by whitespace, ``/`` or ``>``, outside comments, CDATA
    sections and processing instructions (where ``<`` starts no tag; an attribute value
    holds none). What ``_fastwalk.markup_counts`` counts, without the compiled walk."""
    if b"<!--" not in xml_bytes and b"<?" not in xml_bytes and b"<![CDATA[" not in xml_bytes:
        return len(re.findall(rb"<layer[ \t\n\r\x0b\x0c/>]", xml_bytes))
    return sum(1 for found in _QUIET_OR_LAYER.finditer(xml_bytes)
               if found.group().startswith(b"<layer"))


def markup_counts(xml_bytes: bytes) -> tuple[int, bool, bool, int, bool] | None:
    """What :func:`check_layer_count`, :func:`check_prolog` and
    ``ir.bodies.may_hold_bodies`` search the raw bytes for, found in one pass by the
    compiled walk (``_fastwalk.markup_counts``; 20 ms for a 47 MB IR where their own five
    searches took 160); None without it (each then searches itself)."""
    fastwalk = compiled._fastwalk
    return None if fastwalk is None else fastwalk.markup_counts(xml_bytes)


def check_layer_count(xml_bytes: bytes, limit: int | None, file: str | None,
                      counts: tuple | None = None) -> None:
    """Refuse XML with more than ``limit`` (default :data:`MAX_LAYERS`) <layer>
    elements, counted in the raw bytes (a few ms for the biggest file taken: see
    :func:`count_layer_tags`); ``counts``: what :func:`markup_counts` found in them. A
    document whose bytes do not spell its markup in ASCII is counted once parsed
    (:func:`check_parsed_layer_count`)."""
    if not markup_in_ascii(xml_bytes):
        return
    count = count_layer_tags(xml_bytes) if counts is None else counts[0]
    _refuse_layers(count, limit, file)


def check_parsed_layer_count(root: Any, limit: int | None, file: str | None) -> None:
    """:func:`check_layer_count` for a document in another encoding (UTF-16, say), in
    its parsed tree: the <layer> elements, in any namespace (comments are no elements)."""
    _refuse_layers(sum(1 for _ in root.iter("{*}layer")), limit, file)


def _refuse_layers(count: int, limit: int | None, file: str | None) -> None:
    limit = MAX_LAYERS if limit is None else limit
    if count > limit:
        raise XMLSyntaxError(
            f"an IR may hold at most {limit:,} layers (reading and checking cost up to about 5 KB "
            f"and 0.1 ms a layer), but this one has {count:,} <layer> elements "
            "(--layer-limit N on the command line, read_ir(..., max_layers=N) in Python, "
            "reads a bigger one)", file=file)


#: libxml2 keeps exact line numbers up to 65535 only; beyond, lxml's ``sourceline`` is
#: estimated from neighbouring text nodes: a line or two off (far off if blank text were
#: removed, which is why the parser keeps it). Layers and edges get exact lines anyway
#: (``ir.lines``); other elements past that line, named only in error messages,
#: keep the estimate.
LXML_MAX_LINE = 65535



#: A CDATA section that is a <dim>'s first piece of text after nothing but comments and
#: processing instructions (a well-formed document: each ends at its first terminator).
_CDATA_IN_DIM = re.compile(rb"<dim[\s/>][^<]*(?:<(?:!--.*?-->|\?.*?\?>)[^<]*)*<!\[CDATA\[",
                           re.DOTALL)
#: Encodings in which every ASCII byte is that ASCII character, so that markup (``<!--``,
#: ``<?``, ``<![CDATA[``, a tag's name) is found by searching the bytes.
_ASCII_SUPERSETS = re.compile(rb"utf-?8|(?:us-)?ascii|iso-8859-\d+|latin-?1|(?:windows|cp)-?125\d")
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")


def markup_in_ascii(xml_bytes: bytes) -> bool:
    """True when the document spells its markup in ASCII bytes (UTF-8, or an encoding
    declared that keeps ASCII as it is), so that a search of the bytes finds every
    comment, processing instruction, CDATA section and tag; False for UTF-16, EBCDIC,
    UTF-7 and the like, which are then read from the parsed tree only."""
    head = xml_bytes[3:] if xml_bytes.startswith(b"\xef\xbb\xbf") else xml_bytes
    if not head.lstrip(b" \t\r\n").startswith(b"<") or b"\x00" in head[:4]:
        return False
    if head.startswith(b"<?xml"):
        declared = _ENCODING.search(head[:head.find(b"?>")])
        if declared and not _ASCII_SUPERSETS.fullmatch(declared.group(1).lower()):
            return False
    return True


def _has_declaration(xml_bytes: bytes) -> bool:
    head = xml_bytes[3:] if xml_bytes.startswith(b"\xef\xbb\xbf") else xml_bytes
    return re.match(rb"<\?xml[ \t\r\n]", head) is not None


def _drop_markup(root: etree._Element, xml_bytes: bytes, file: str | None) -> None:
    """Remove comments and processing instructions, reading a ``<dim>`` split by them
    as OpenVINO does: its first text piece that is not only whitespace
    (``<dim>3<!--c-->0</dim>`` is 3, ``<dim><!--c-->30</dim>`` is 30). Parsed with
    ``remove_comments`` lxml would join the pieces (30). A CDATA section inside a
    ``<dim>`` is refused, wherever it is."""
    _refuse_cdata_in_dims(root, xml_bytes, file)
    for dim in root.iter("dim"):
        if len(dim):
            pieces = [dim.text] + [child.tail for child in dim]
            dim.text = next((p for p in pieces if p is not None and p.strip()), None)
            for child in list(dim):
                dim.remove(child)
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, with_tail=False)


def _refuse_cdata_in_dims(root: etree._Element, xml_bytes: bytes, file: str | None) -> None:
    """A <dim> holding a CDATA section is refused (OpenVINO would read the text before it
    only). Found in the bytes when they spell markup in ASCII; else in the tree, parsed
    with its CDATA sections kept."""
    line = None
    if markup_in_ascii(xml_bytes):
        if b"<![CDATA[" in xml_bytes:
            found = _CDATA_IN_DIM.search(xml_bytes)
            line = None if found is None else xml_bytes.count(b"\n", 0, found.start()) + 1
    else:
        line = next((dim.sourceline for dim in root.iter("dim")
                     if b"<![CDATA[" in etree.tostring(dim, with_tail=False)), None)
    if line is not None:
        raise XMLSyntaxError(
            "a <dim> must be plain text, but got a CDATA section in one (refused: "
            "OpenVINO would read only the text before it)", file=file, line=line)


def xml_parser(keep_markup: bool = False, keep_cdata: bool = False) -> etree.XMLParser:
    """A fresh lxml parser that never touches the network, DTDs or entities.
    ``keep_markup`` keeps comments and processing instructions, ``keep_cdata`` CDATA
    sections as such (for ``_drop_markup``)."""
    return etree.XMLParser(
        strip_cdata=not keep_cdata,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=not keep_markup,
        remove_pis=not keep_markup,
        collect_ids=False,
        remove_blank_text=True,
    )


def _doctype_line(xml_bytes: bytes) -> int | None:
    """The line of a ``<!DOCTYPE`` in the prolog, or None.

    Scanned before lxml sees the bytes, because libxml2 still parses an internal DTD
    subset (and tries entity expansion in attributes) even with entities off. The prolog
    is an XML declaration, comments, processing instructions and whitespace; the scan
    stops at the first other markup. (Non-ASCII-compatible encodings such as UTF-16 get
    the same refusal from the check after parsing.)
    """
    pos = 3 if xml_bytes.startswith(b"\xef\xbb\xbf") else 0
    end = len(xml_bytes)
    while pos < end:
        while pos < end and xml_bytes[pos] in b" \t\r\n":
            pos += 1
        if xml_bytes.startswith(b"<?", pos):
            close = xml_bytes.find(b"?>", pos)
        elif xml_bytes.startswith(b"<!--", pos):
            close = xml_bytes.find(b"-->", pos)
        elif xml_bytes[pos:pos + 9].upper() == b"<!DOCTYPE":
            return xml_bytes.count(b"\n", 0, pos) + 1
        else:
            return None
        if close < 0:
            return None
        pos = close + 2
    return None


#: How much of a file :func:`root_name` reads at a time to find its root element.
ROOT_SNIFF = 64 << 10
#: The most bytes of prolog (declaration, comments, processing instructions, DOCTYPE)
#: read to find the root element; a file whose prolog is longer cannot be decided.
ROOT_LIMIT = 16 << 20
#: :class:`RootUnknown`'s ``why`` for a file that does not begin with markup
NOT_XML = "not an XML document"


class RootUnknown(Exception):
    """The root element of a file cannot be told: ``why``; ``not_xml``: the file does
    not begin with markup in any encoding (no XML document at all), else it does but the
    XML parser stops before the root (a broken prolog, an unknown encoding, a prolog
    longer than :data:`ROOT_LIMIT`, the end of the file)."""

    def __init__(self, why: str, not_xml: bool = False) -> None:
        super().__init__(why)
        self.why, self.not_xml = why, not_xml


def _begins_with_markup(head: bytes) -> bool:
    """The first byte that is no whitespace, NUL (UTF-16/32) or byte-order mark is ``<``."""
    text = head.lstrip(b" \t\r\n\x00\xef\xbb\xbf\xfe\xff")
    return text.startswith(b"<")


def document_root(path: str | os.PathLike[str], limit: int = ROOT_LIMIT
                  ) -> tuple[str, str, bool]:
    """The root element of the XML file ``path`` as OpenVINO's reader meets it: the first
    element after the prolog (XML declaration, comments, processing instructions, DOCTYPE,
    however long, up to ``limit`` bytes), in any encoding lxml accepts (UTF-8, UTF-16 or
    UTF-32 with or without a byte-order mark, a declared 8-bit one). ``(name as written,
    local name, DOCTYPE seen)``; RootUnknown when it cannot be told, OSError when the file
    cannot be read. The file is opened without blocking and must be a regular file (a
    FIFO, a socket or a device is an OSError): it is never waited on. Nothing of a DTD is
    loaded and no entity is expanded."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with open(fd, "rb", buffering=0) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"not a regular file: {os.fspath(path)}")
        head = f.read(ROOT_SNIFF)
        if not _begins_with_markup(head):
            raise RootUnknown(NOT_XML if head.strip() else f"{NOT_XML} (empty)", not_xml=True)
        bom = b""  # UTF-16 without a byte-order mark or a declaration: libxml2 needs the mark
        if head.startswith(b"<\x00") and not head.startswith(b"<\x00\x00\x00"):
            bom = b"\xff\xfe"
        elif head.startswith(b"\x00<"):
            bom = b"\xfe\xff"
        parser = etree.XMLPullParser(events=("start",), resolve_entities=False,
                                     no_network=True, load_dtd=False, huge_tree=False)
        seen, chunk = 0, bom + head
        try:
            while chunk:
                parser.feed(chunk)
                for _, element in parser.read_events():
                    return _names(element)
                seen += len(chunk)
                if seen >= limit:
                    raise RootUnknown(f"no root element in its first {limit >> 20} MiB")
                chunk = f.read(ROOT_SNIFF)
            parser.close()
        except etree.XMLSyntaxError as err:
            for _, element in parser.read_events():
                return _names(element)
            raise RootUnknown(f"the XML parser stops before the root element "
                              f"({_first_line(err)})") from None
    raise RootUnknown("the file ends before its root element")


def _names(element: etree._Element) -> tuple[str, str, bool]:
    tag = str(element.tag)
    local = tag.rpartition("}")[2] if tag.startswith("{") else tag.rpartition(":")[2]
    name = f"{element.prefix}:{local}" if element.prefix else tag.rpartition("}")[2]
    return name, local, bool(element.getroottree().docinfo.doctype)


def _first_line(err: BaseException) -> str:
    text = str(getattr(err, "msg", None) or err).strip()
    return text.splitlines()[0].rstrip(", ") if text else type(err).__name__


def root_name(path: str | os.PathLike[str]) -> str | None:
    """The local name of the root element of the XML file at ``path`` (``net`` for an
    IR), as :func:`document_root` finds it; None when that cannot tell (a file that cannot
    be read or is no regular file, that does not start as XML, or whose prolog holds a
    DOCTYPE, which is never parsed). ``check --skip-non-ir`` skips an .xml whose root is
    another element (a Maven ``<project>``, an Android manifest)."""
    try:
        _, local, doctype = document_root(path)
    except (OSError, RootUnknown):
        return None
    return None if doctype else local


def parse_xml(xml_bytes: bytes, file: str | None, markup: bool) -> etree._Element:
    """Parse the bytes into an element tree, refusing DTDs; lxml errors become ours.
    ``markup``: what :func:`check_prolog` returned (comments or PIs to drop)."""
    try:
        parser = xml_parser(keep_markup=markup,
                            keep_cdata=markup and not markup_in_ascii(xml_bytes))
        root = etree.fromstring(xml_bytes, parser)
    except etree.XMLSyntaxError as err:
        raise _syntax_error(err, file) from err
    _check_no_doctype(root, file)
    if markup:
        _drop_markup(root, xml_bytes, file)
    return root


def check_prolog(xml_bytes: bytes, file: str | None, counts: tuple | None = None) -> bool:
    """Refuse what must be refused before lxml sees the bytes; True when the document
    may hold comments, processing instructions or CDATA sections (to be dropped or
    refused as ``_drop_markup`` does; always for a document whose bytes do not spell its
    markup in ASCII). ``counts``: what :func:`markup_counts` found in the bytes."""
    if not xml_bytes or xml_bytes.isspace():
        raise XMLSyntaxError("an IR must be an XML document, but the file is empty",
                             file=file, line=1)
    line = _doctype_line(xml_bytes)
    if line is not None:
        raise XMLSyntaxError(
            "an IR must not contain a DOCTYPE, DTD or entity declarations (refused for "
            "safety: they could read other files or expand without bound)", file=file,
            line=line)
    if not markup_in_ascii(xml_bytes):
        return True  # markup the bytes do not show: found in the tree
    if counts is not None:
        _, comment, cdata, pis, _ = counts
        return comment or cdata or pis > _has_declaration(xml_bytes)
    return (b"<!--" in xml_bytes or b"<![CDATA[" in xml_bytes
            or xml_bytes.count(b"<?") > _has_declaration(xml_bytes))


def markup_outside_pieces(xml_bytes: bytes) -> bool:
    """True when the comments, processing instructions and CDATA sections of a document
    that spells its markup in ASCII all lie outside the bytes :func:`parse_in_pieces`
    would cut into pieces (from the first ``<layers>`` to the first ``</layers>`` after
    it): a note before the layers then leaves a big IR read in pieces, whose rest is
    parsed without its comments and PIs, as the whole parse drops them. A comment that
    only looks like it holds ``<layers>`` makes the cut fail its checks, and the document
    is parsed whole."""
    start = xml_bytes.find(b"<layers>")
    end = xml_bytes.find(b"</layers>", start)
    if start < 0 or end < 0 or not markup_in_ascii(xml_bytes):
        return False
    return all(xml_bytes.find(mark, start, end) < 0 for mark in (b"<!--", b"<?", b"<![CDATA["))


@contextmanager
def _quick_gil_handoff() -> Iterator[None]:
    """Python's GIL switch interval at 0.5 ms instead of 5 ms while pieces are parsed.
    The parse thread needs the GIL now and then (lxml takes it around the parse), and
    the walk on this thread holds it meanwhile; at 5 ms a turn the parse thread waits
    so long that the two hardly overlap (measured: a 20k-layer read took as long as
    parse plus walk; at 0.5 ms, about the walk alone)."""
    with _HANDOFF.lock:  # reads in several threads: the first sets it, the last restores
        if _HANDOFF.reads == 0:
            _HANDOFF.saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_HANDOFF.saved, 0.0005))
        _HANDOFF.reads += 1
    try:
        yield
    finally:
        with _HANDOFF.lock:
            _HANDOFF.reads -= 1
            if _HANDOFF.reads == 0:
                sys.setswitchinterval(_HANDOFF.saved)


class _Handoff:
    """The reads in pieces under way, and the switch interval from before the first."""
    lock = threading.Lock()
    reads = 0
    saved = 0.005


_HANDOFF = _Handoff()


#: Threads that parse pieces, taking turns (piece 0 on the first, 1 on the second, …):
#: one alone left the walk waiting for pieces a third of a big read, since lxml parses
#: a piece more slowly than the compiled walk reads it.
PARSERS = 2


class _Pieces(threading.Thread):
    """Documents of :func:`parse_in_pieces` (every :data:`PARSERS`-th piece, or the rest)
    parsed one after the other on a thread of their own, each as soon as the one before
    is done, with at most ``AHEAD`` parsed pieces waiting to be read (a tree each).
    Parsing a piece only once the walk took the one before left the walk waiting for
    each while the pieces grew (43 ms of a 200 ms read of a 5k-layer Llama). Each piece
    gets a parser of its own, as lxml asks. A plain thread, not a ``concurrent.futures``
    pool: importing that (and the logging it brings) would cost a check ~12 ms."""

    AHEAD = 1

    def __init__(self, texts: list[Callable[[], bytes]]) -> None:
        super().__init__(daemon=True)
        self.texts = texts
        self.ready: queue.Queue = queue.Queue(maxsize=self.AHEAD)
        self.stopped = False
        self.start()

    def run(self) -> None:
        for text in self.texts:
            if self.stopped:
                return
            try:
                item = (etree.fromstring(text(), xml_parser()), None)
            except BaseException as err:  # raised again on the reading thread
                item = (None, err)
            self.ready.put(item)
            if item[1] is not None:
                return

    def next(self) -> etree._Element:
        """The next piece's root, once parsed (its parse error, raised here)."""
        root, error = self.ready.get()
        if error is not None:
            raise error
        return root

    def stop(self) -> None:
        """End the thread early (a piece failed): it parses nothing more."""
        self.stopped = True
        while self.is_alive():
            try:
                self.ready.get(timeout=0.01)
            except queue.Empty:
                pass


def _plain_head(head: bytes) -> bool:
    """True when the bytes before ``<layers>`` (the prolog and the <net> tag) declare no
    namespace and no encoding but UTF-8: a piece parsed on its own then reads the same."""
    if b"xmlns" in head or b"\xef\xbb\xbf" in head[:3]:
        return False
    if head.startswith(b"<?xml"):
        declaration = head[:head.find(b"?>")].lower()
        return b"encoding" not in declaration or b"utf-8" in declaration
    return head.lstrip().startswith(b"<net")


def _syntax_error(err: etree.XMLSyntaxError, file: str | None) -> XMLSyntaxError:
    return XMLSyntaxError(f"the file is not well-formed XML: {err.msg or err}", file=file,
                          line=err.lineno or None)


def _check_no_doctype(root: etree._Element, file: str | None) -> None:
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise XMLSyntaxError(
            "an IR must not contain a DOCTYPE, DTD or entity declarations (refused for "
            f"safety), but got '{docinfo.doctype or '<!DOCTYPE>'}'", file=file, line=1)


def parse_in_pieces(xml_bytes: bytes, file: str | None,
                    read_layers: Callable[[etree._Element, int], list],
                    meanwhile: Callable[[], object] | None = None, cut_edges: bool = False,
                    scan_layers: Callable[[int, int, int], list | None] | None = None
                    ) -> tuple[etree._Element, list, tuple[int, int, int] | None] | None:
    """Read the <layers> section as pieces of about ``STREAM_PIECE`` bytes (the first
    ones smaller), each cut after a ``</layer>``. ``scan_layers(start, end, line_offset)``
    reads the layers of the bytes ``xml_bytes[start:end]`` without parsing them, on this
    thread, piece after piece as long as it can (None: it cannot read that piece); each
    piece from there on is parsed as a document of its own by one of :data:`PARSERS`
    threads while ``read_layers(layers, line_offset)`` reads the layers of the pieces
    before on this one. The rest of the file is parsed meanwhile
    on a thread of its own, with an empty <layers> in their place (the same number of
    lines, so every line stays exact). lxml lets go of the GIL while it parses, so
    parsing, about half of a read, overlaps the walk, and the whole tree of a big IR
    (~13 bytes of memory per byte of XML) never exists. Returns the root, which
    holds everything but the layers, the layers read, and with ``cut_edges`` the
    ``(start, end, line)`` of the content of <edges> when it was cut out of the rest too
    (the caller reads those bytes itself: ``_fastwalk.scan_edges``; <edges> in the root
    is then empty; None when it was not cut); or None (with the reader's
    state undefined) when the document is not the usual IR this takes apart safely, or
    anything in it fails: the caller then parses it whole, which words the errors.
    ``meanwhile`` is called once the rest is being parsed, before any piece is read:
    work this thread can do while it parses.

    Pieces are cut with byte searches, which is exact here because the caller only
    calls this for a document without comments, PIs, CDATA or bodies, whose prolog
    declares no other encoding and whose head declares no namespace: then ``<`` only
    starts a tag and the first ``</layers>`` closes the first ``<layers>``. A piece
    that is not well-formed on its own, or a <layers> that turns out not to be the
    <net>'s first child of that name (proved in the parsed rest of the document, where a
    mark of a random name stands in for the layers cut out), sends it back to the
    whole-tree parse: both reads always read the same layers.
    """
    start = xml_bytes.find(b"<layers>")
    end = xml_bytes.find(b"</layers>", start)
    if start < 0 or end < 0 or not _plain_head(xml_bytes[:start]):
        return None
    start += len(b"<layers>")
    cuts = [start]
    step = STREAM_PIECE // 8
    while True:  # the first pieces small, each twice the last: the walk waits for the
        # first alone, and reads each while the next (parsed faster than read) is parsed
        cut = xml_bytes.find(b"</layer>", cuts[-1] + step, end)
        step = min(2 * step, STREAM_PIECE // PIECE_DIV)
        if cut < 0:
            break
        cuts.append(cut + len(b"</layer>"))
    cuts.append(end)
    line = xml_bytes.count(b"\n", 0, start)  # lines before the first piece
    pieces = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        lines = xml_bytes.count(b"\n", a, b)
        if lines >= LXML_MAX_LINE:  # libxml2's lines would be estimates
            return None
        pieces.append((a, b, line))
        line += lines
    padding = line - xml_bytes.count(b"\n", 0, start)  # the lines of <layers>
    edges = _edges_span(xml_bytes, end) if cut_edges else None

    # a child no document can hold marks the <layers> cut out: the one the rest must
    # show as the <net>'s first <layers>, or the pieces were some other element's
    mark = f"ovgather-cut-{os.urandom(8).hex()}"  # no import of secrets: ~4 ms a check

    def text(i: int) -> bytes:  # the document of piece i; the rest after the last
        if i < len(pieces):  # inside <net><layers>: each element at its depth in the file
            return (b"<net><layers>" + xml_bytes[pieces[i][0]:pieces[i][1]]
                    + b"</layers></net>")
        rest = [xml_bytes[:start], f"<{mark}/>".encode(), b"\n" * padding]
        if edges is None:
            return b"".join([*rest, xml_bytes[end:]])
        e_start, e_end, _ = edges  # its content cut out too, its lines kept
        return b"".join([*rest, xml_bytes[end:e_start], f"<{mark}/>".encode(),
                         b"\n" * xml_bytes.count(b"\n", e_start, e_end), xml_bytes[e_end:]])

    streamed: list[tuple[str, dict[str, Any]]] = []
    with _quick_gil_handoff():
        # the rest parsed from the start on a thread of its own: its tree is needed at
        # the end, when the graph is whole anyway, and the walk need not wait for it then
        rest = _Pieces([partial(text, len(pieces))])
        parsing: list[_Pieces] = []
        try:
            if meanwhile is not None:
                meanwhile()
            scanned = 0  # the pieces read from their bytes on this thread, while they can be
            while scan_layers is not None and scanned < len(pieces):
                nodes = scan_layers(*pieces[scanned])
                if nodes is None:
                    break
                streamed += nodes
                scanned += 1
            # the others parsed by PARSERS threads in turn, each one ahead of the walk
            texts = [partial(text, i) for i in range(scanned, len(pieces))]
            parsing = [_Pieces(texts[k::PARSERS]) for k in range(min(PARSERS, len(texts)))]
            for i, (_, _, line) in enumerate(pieces[scanned:]):
                layers = parsing[i % PARSERS].next()[0]
                streamed += read_layers(layers, line)
                del layers
            root = rest.next()
        except Exception:  # parsed whole again, which words the error
            for thread in (*parsing, rest):
                thread.stop()
            return None
    layers = root.find("layers")
    if not (_streamable(root) and layers is not None and len(layers) == 1
            and layers[0].tag == mark):
        return None
    layers.remove(layers[0])
    if edges is not None:  # the cut content must have been the <net>'s first <edges>'
        cut = root.find("edges")
        if cut is None or len(cut) != 1 or cut[0].tag != mark:
            return None
        cut.remove(cut[0])
    _check_no_doctype(root, file)
    return root, streamed, edges


def _edges_span(xml_bytes: bytes, after: int) -> tuple[int, int, int] | None:
    """``(start, end, line)`` of the content of the first ``<edges>`` tag after ``after``
    (OpenVINO writes it without attributes), ``line`` that of its first byte; None when
    there is no such tag (the rest of the document, edges and all, is then parsed)."""
    start = xml_bytes.find(b"<edges>", after)
    if start < 0:
        return None
    start += len(b"<edges>")
    end = xml_bytes.find(b"</edges>", start)
    if end < 0 or xml_bytes.find(b"\r", start, end) >= 0:  # a lone CR breaks a line
        return None
    return start, end, xml_bytes.count(b"\n", 0, start) + 1


def _streamable(root: etree._Element) -> bool:
    """True when ``root`` is a ``<net version="10|11">`` (whose first ``<layers>``
    child the reader reads as the layers)."""
    return root.tag == "net" and root.get("version") in ("10", "11")


def plain_names(root: etree._Element) -> None:
    """Elements in a default namespace (``<net xmlns="…">``) renamed to their plain
    names, as OpenVINO's reader (pugixml, which knows no namespaces) reads them; an
    element with a prefix (``<a:layers>``) keeps it, and is no <layers> there either."""
    renamed = False
    for el in root.iter():
        tag = el.tag
        if isinstance(tag, str) and tag[:1] == "{" and el.prefix is None:
            el.tag = tag[tag.index("}") + 1:]
            renamed = True
    if renamed:
        etree.cleanup_namespaces(root)
