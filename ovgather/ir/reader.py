"""Read and write OpenVINO IR (``model.xml`` + ``model.bin``) as a ``networkx.MultiDiGraph``.

The graph follows the schema documented in :mod:`ovgather.graph`. This module is the
only user of lxml. Three verbs, as networkx names its I/O:

* :func:`read_ir` reads a file (and the .bin beside it), :func:`parse_ir` reads bytes;
* :func:`write_ir` writes the graph back, losslessly for what it read;
* :func:`const_value` gives a Const layer's data, lazily, as a numpy array.

The parse is hardened (docs/safety.md): no network, no DTD loading, no entity expansion, no
huge-tree mode, and any DOCTYPE is refused outright. Every problem is an
:class:`~ovgather.errors.IRError` naming the file, the XML line and the layer.

Reading is linear in the file size: lxml parses, then one walk over its tree builds the
node and edge dicts, added to the graph in bulk, with the garbage collector paused while
millions of small objects are created (it would otherwise rescan them again and again).
There are two walks: the compiled one (``_fastwalk.pyx``, which reads lxml's C tree
without a Python object per element: most of a pure-Python reader's time) reads the
usual IR and hands anything unusual to the careful one (``_Reader.layers``,
``careful_edges``), which reads anything well-formed and names every error. Without a
C compiler at install only the careful one is there (the same graphs, 1.5-2x slower).

Limits: an .xml of at most :data:`MAX_XML_BYTES` (checked before reading it; lxml's tree
costs many bytes of memory per byte of XML); a .bin that is a symbolic link must resolve
into the model's folder (see ``_check_bin_location``); the .bin is read with ``pread``,
never memory-mapped, so a .bin that shrinks while a graph uses it is a WeightsError and
not a SIGBUS (measured: ``infer_shapes`` on a 20k-layer IR 553 -> 646 ms, reading every
Const the same 210 ms; ``read_ir`` itself does not touch the .bin).

Element types and the data :func:`const_value` returns: the numeric types map to the
numpy dtype of the same name (little-endian); ``boolean`` to ``bool``. Types numpy
cannot hold (``bf16``, the f8/f4/nf4 types and the packed sub-byte integers ``u1``,
``u2``, ``u3``, ``u4``, ``u6``, ``i4``) and ``string`` come back as the raw bytes, a
flat ``uint8`` array of ``size`` bytes (``ceil(elements * bits / 8)``), not unpacked
(u1 is most-significant-bit first, u4/i4 low nibble first, as OpenVINO packs them).

Where ovgather is stricter or looser than OpenVINO's own reader:

* refused although OpenVINO reads them: a duplicate layer id (OpenVINO keeps the last),
  a ``<dim>`` that is not an integer >= -1 (OpenVINO reads ``2..5`` as 2), an input port
  without an edge, Const slices of the .bin that overlap partly, a DOCTYPE;
* accepted as OpenVINO does: a Const ``size`` larger than its shape needs (only the
  first ``ceil(n * bits / 8)`` bytes are used, and ``write_ir`` writes only those), whole
  slices shared by Consts of different types (OpenVINO's serializer stores equal bytes
  once), and any layer type or opset.

XML comments and processing instructions are not kept. Line numbers are exact, also past
line 65535 where libxml2 only estimates them (for layers and edges; an error inside a
layer past that line names the estimated line, one or two off).
"""

from __future__ import annotations

import gc
import os
import re
import stat
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from lxml import etree

from .._lazy import networkx as nx
from .._lazy import numpy as np
from ..element_types import ELEMENT_TYPES, ElementType
from ..errors import (
    IRError,
    IRStructureError,
    OutputError,
    WeightsError,
    XMLSyntaxError,
)
from ..graph import LayerGraph, as_networkx, has_port, layer_of_xml, new_port

try:  # the compiled walk (setup.py builds it when a C compiler is there)
    from . import _fastwalk
except ImportError:  # pragma: no cover - an install without a compiler
    _fastwalk = None
if _fastwalk is not None and _fastwalk.LXML_BUILT != etree.__version__:
    _fastwalk = None  # it reads lxml's structs: only with the lxml it was built against

__all__ = [
    "read_ir",
    "parse_ir",
    "write_ir",
    "const_value",
    "weights_bytes",
    "const_nbytes",
    "element_type_of",
    "split_names",
    "join_names",
    "ELEMENT_TYPES",
    "ElementType",
]

IR_VERSIONS = (10, 11)
CONST_TYPES = ("Const", "Constant")

@cache
def _dtype_to_et() -> dict[Any, str]:
    """numpy dtype → element type text, for Const layers added in memory."""
    return {e.dtype: name for name, e in ELEMENT_TYPES.items() if not e.raw}


# ---------------------------------------------------------------------------------------
# The hardened XML parse
# ---------------------------------------------------------------------------------------
_CDATA_IN_DIM = re.compile(rb"<dim\s*>[^<]*(?:<(?:!--|\?)[^>]*>[^<]*)*<!\[CDATA\[")


def _drop_markup(root: etree._Element) -> None:
    """Remove comments and processing instructions, reading a ``<dim>`` split by them
    as OpenVINO does: its first text piece that is not only whitespace
    (``<dim>3<!--c-->0</dim>`` is 3, ``<dim><!--c-->30</dim>`` is 30). Parsed with
    ``remove_comments`` lxml would join the pieces (30)."""
    for dim in root.iter("dim"):
        if len(dim):
            pieces = [dim.text] + [child.tail for child in dim]
            dim.text = next((p for p in pieces if p is not None and p.strip()), None)
            for child in list(dim):
                dim.remove(child)
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, with_tail=False)


def _parser(keep_markup: bool = False) -> etree.XMLParser:
    """A fresh lxml parser that never touches the network, DTDs or entities.
    ``keep_markup`` keeps comments and processing instructions (for ``_drop_markup``)."""
    return etree.XMLParser(
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


def _parse_xml(xml_bytes: bytes, file: str | None, markup: bool) -> etree._Element:
    """Parse the bytes into an element tree, refusing DTDs; lxml errors become ours.
    ``markup``: what :func:`_check_prolog` returned (comments or PIs to drop)."""
    try:
        root = etree.fromstring(xml_bytes, _parser(keep_markup=markup))
    except etree.XMLSyntaxError as err:
        raise _syntax_error(err, file) from err
    if markup:
        _drop_markup(root)
    _check_no_doctype(root, file)
    return root


def _check_prolog(xml_bytes: bytes, file: str | None) -> bool:
    """Refuse what must be refused before lxml sees the bytes; True when the document
    holds comments or processing instructions (to be dropped as ``_drop_markup`` does)."""
    if not xml_bytes or xml_bytes.isspace():
        raise XMLSyntaxError("an IR must be an XML document, but the file is empty",
                             file=file, line=1)
    line = _doctype_line(xml_bytes)
    if line is not None:
        raise XMLSyntaxError(
            "an IR must not contain a DOCTYPE, DTD or entity declarations (refused for "
            "safety: they could read other files or expand without bound)", file=file,
            line=line)
    markup = b"<!--" in xml_bytes or xml_bytes.count(b"<?") > 1
    cdata = _CDATA_IN_DIM.search(xml_bytes) if b"<![CDATA[" in xml_bytes else None
    if cdata is not None:
        raise XMLSyntaxError(
            "a <dim> must be plain text, but got a CDATA section in one (refused: "
            "OpenVINO would read only the text before it)", file=file,
            line=xml_bytes.count(b"\n", 0, cdata.start()) + 1)
    return markup


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


def _parse_piece(xml_bytes: bytes) -> etree._Element:
    """One piece of :meth:`_Reader.read_in_pieces`, on its parse thread (an lxml parser
    is used by one thread only, so each piece gets its own)."""
    return etree.fromstring(xml_bytes, _parser())


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


def _rt_text(el: etree._Element) -> str:
    """An element as compact XML text, whitespace-only text and tails removed, so the
    same content always gives the same string (for lossless and comparable rt_info)."""
    for sub in el.iter():
        if sub.text is not None and not sub.text.strip():
            sub.text = None
        if sub.tail is not None and not sub.tail.strip():
            sub.tail = None
    return etree.tostring(el, encoding="unicode", with_tail=False)


# ---------------------------------------------------------------------------------------
# Small value parsers
# ---------------------------------------------------------------------------------------
_NAME_SPLIT = re.compile(r"(?<!\\),")


def split_names(text: str) -> list[str]:
    """Port ``names`` text → tensor names; ``\\,`` is a comma inside a name.

    >>> split_names(r"a\\,b,c")
    ['a,b', 'c']
    """
    if not text:
        return []
    if "\\" not in text:
        return text.split(",")
    return [part.replace("\\,", ",") for part in _NAME_SPLIT.split(text)]


def join_names(names: list[str]) -> str:
    """Tensor names → port ``names`` text, escaping commas as ``\\,``."""
    return ",".join(n.replace(",", "\\,") for n in names)


_INT64_MAX = (1 << 63) - 1


def _bad_dim(text: str | None) -> str:
    if text is not None and re.fullmatch(r"\s*\d+\s*\.\..*", text):
        return (f"a port <dim> must be an integer >= -1, but got '{_short(text)}' (OpenVINO would "
                "silently read it as its lower bound; intervals belong in a Parameter's "
                "shape attribute)")
    return (f"a port <dim> must be an integer >= -1 (digits 0-9, at most {_INT64_MAX}), but "
            f"got '{_short(text or '')}'")


#: Digits of the longest integer an IR field may hold (int64 has 19): longer text is an
#: error, never handed to ``int()`` (which also stops at 4300 digits with a ValueError).
_MAX_DIGITS = 19


def _short(value: str) -> str:
    """``value`` for a message, cut to 40 characters."""
    return value if len(value) <= 40 else value[:40] + f"… ({len(value)} characters)"


def _int_attr(value: str | None, what: str, minimum: int = 0) -> int:
    """An integer attribute ≥ ``minimum`` in ASCII digits within int64; IRStructureError
    (without location) if not."""
    if (value is not None and value.isascii() and value.isdigit() and minimum <= 0
            and len(value) <= _MAX_DIGITS):
        return int(value)
    if value is None:
        raise IRStructureError(f"{what} is required, but it is missing")
    text = value.strip()
    digits = text.lstrip("+-").lstrip("0") or "0"  # int() counts leading zeros too
    number = None
    if re.fullmatch(r"[+-]?[0-9]+", text) and len(digits) <= 2 * _MAX_DIGITS:
        number = -int(digits) if text.startswith("-") else int(digits)
    if number is None or number < minimum:
        raise IRStructureError(f"{what} must be an integer >= {minimum} (digits 0-9), but "
                               f"got '{_short(value)}'")
    return number


_SHAPE_TEXT = re.compile(r"[ \t]*[0-9]{1,19}[ \t]*(?:,[ \t]*[0-9]{1,19}[ \t]*)*")


def _const_shape(text: str | None) -> tuple[int, ...]:
    """A Const ``shape`` attribute (``"2, 1"``, ``""`` for a scalar) → ints."""
    if text is None:
        raise IRStructureError("a Const layer needs a 'shape' attribute in <data>")
    if not text or text.isspace():
        return ()
    if _SHAPE_TEXT.fullmatch(text) is None:
        raise IRStructureError(
            "a Const's shape must be a list of integers >= 0 (digits 0-9, at most 19 of "
            f"them), but got '{_short(text)}'")
    return tuple(map(int, text.split(",")))


# ---------------------------------------------------------------------------------------
# Const data
# ---------------------------------------------------------------------------------------
def const_nbytes(element_type: str, shape: tuple[int, ...]) -> int | None:
    """Bytes that ``shape`` elements of ``element_type`` need: ``ceil(n * bits / 8)``.

    None for ``string`` (variable length). Python ints, so no overflow.

    >>> const_nbytes("f32", (2, 3)), const_nbytes("u4", (3,)), const_nbytes("u1", ())
    (24, 2, 1)
    """
    et = ELEMENT_TYPES[element_type]
    if et.bits is None:
        return None
    count = 1
    for d in shape:
        count *= d
    return (count * et.bits + 7) // 8


def _const_layout(attrs: dict[str, Any]) -> tuple[ElementType, tuple[int, ...], int, int]:
    """(element type, shape, offset, size) of a Const layer's <data>, checked for kind
    and against shape × element size (OpenVINO accepts a larger size, so do we)."""
    data = attrs.get("data") or {}
    name = data.get("element_type")
    if name not in ELEMENT_TYPES:
        raise IRStructureError(
            f"a Const's element_type must be one of {', '.join(ELEMENT_TYPES)}, "
            f"but got {_short(repr(name))}")
    et = ELEMENT_TYPES[name]
    shape = _const_shape(data.get("shape"))
    try:
        offset = _int_attr(data.get("offset"), "a Const's offset")
        size = _int_attr(data.get("size"), "a Const's size")
    except IRStructureError as err:
        raise WeightsError(err.message) from None
    need = const_nbytes(name, shape)
    if need is not None and size < need:
        raise WeightsError(
            f"a Const's size must hold its shape × element size ({need} bytes for "
            f"{name} {list(shape)}), but got size={size}")
    return et, shape, offset, size


def _check_slice(offset: int, size: int, bin_size: int | None, bin_name: str) -> None:
    if bin_size is None:
        if size:
            raise WeightsError(
                f"a Const needs the weights file {bin_name}, but there is none")
        return
    if offset + size > bin_size:
        raise WeightsError(
            f"a Const's bytes must lie inside {bin_name} ({bin_size} bytes), but got "
            f"offset={offset} size={size} (ends at {offset + size})")


#: The shape walk reads small constants through at most _BLOCKS cached blocks (2 MiB).
_BLOCK, _BLOCKS = 64 << 10, 32


class _BinFile:
    """A .bin read with ``pread``, never mapped: a file that shrinks or is rewritten
    while a graph still uses it (``cp`` over it in place) gives a WeightsError, where a
    memory map would end the process with SIGBUS. Each read checks the file's current
    size first and copies the bytes out (copy on read)."""

    def __init__(self, path: str, xml_path: str | None) -> None:
        self.path, self.xml_path, self.fd = path, xml_path, None
        self.blocks: dict[int, bytes] = {}  # see raw()

    def _open(self) -> int:
        if self.fd is None:
            if self.xml_path is not None:
                _check_bin_location(self.xml_path, self.path)
            try:
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
                             | getattr(os, "O_NONBLOCK", 0))
            except OSError as err:
                raise WeightsError(f"the weights file cannot be read: {err.strerror}",
                                   file=self.path) from err
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise WeightsError("the weights must be a regular file, but this is a "
                                   "device, FIFO or folder", file=self.path)
            self.fd = fd
        return self.fd

    def size(self) -> int:
        return os.fstat(self._open()).st_size

    def raw(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset``, fewer where the file ends (the shape walk
        reads thousands of small constants this way): through a few cached blocks of
        ``_BLOCK`` bytes (read with ``pread``, never mapped: a file that shrinks later
        cannot fault; at most ``_BLOCKS`` of them kept), a large read directly."""
        try:
            first, last = offset // _BLOCK, (offset + size - 1) // _BLOCK
            if size > _BLOCK or last - first > 1:
                return os.pread(self._open(), size, offset)
            data = b"".join(self._block(n) for n in range(first, last + 1))
            start = offset - first * _BLOCK
            return data[start:start + size]
        except OSError as err:
            raise WeightsError(f"the weights file cannot be read: {err.strerror}",
                               file=self.path) from err

    def _block(self, n: int) -> bytes:
        block = self.blocks.pop(n, None)
        if block is None:
            block = os.pread(self._open(), _BLOCK, n * _BLOCK)
            if len(self.blocks) >= _BLOCKS:
                del self.blocks[next(iter(self.blocks))]  # the least recently used
        self.blocks[n] = block
        return block

    def read(self, offset: int, size: int) -> np.ndarray:
        """``size`` bytes at ``offset`` as a new read-only uint8 array."""
        fd = self._open()
        out = np.empty(size, np.uint8)
        view, done = memoryview(out), 0
        while done < size:
            try:
                if hasattr(os, "preadv"):
                    got = os.preadv(fd, [view[done:done + (1 << 30)]], offset + done)
                else:  # pragma: no cover - systems without preadv
                    piece = os.pread(fd, min(size - done, 1 << 30), offset + done)
                    got = len(piece)
                    view[done:done + got] = piece
            except OSError as err:
                raise WeightsError(f"the weights file cannot be read: {err.strerror}",
                                   file=self.path) from err
            if got <= 0:
                raise WeightsError(
                    "the weights file changed while the model was in use: it now ends at "
                    f"byte {offset + done}, but a Const needs bytes [{offset}, "
                    f"{offset + size})", file=self.path)
            done += got
        out.flags.writeable = False
        return out

    def __del__(self, _close=os.close) -> None:
        # os.close bound at definition: at interpreter exit the module's globals may
        # already be gone when the last graph is freed
        if self.fd is not None:
            try:
                _close(self.fd)
            except OSError:
                pass

    def __copy__(self) -> _BinFile:
        return self

    def __deepcopy__(self, memo: dict) -> _BinFile:
        return self


class _BufferSource:
    """Weights already in memory (``parse_ir``'s bytes)."""

    def __init__(self, buf: np.ndarray) -> None:
        self.buf = buf

    def size(self) -> int:
        return int(self.buf.size)

    def read(self, offset: int, size: int) -> np.ndarray:
        return self.buf[offset:offset + size]

    def raw(self, offset: int, size: int) -> bytes:
        return self.buf[offset:offset + size].tobytes()


def _weights(G: nx.MultiDiGraph) -> _BinFile | _BufferSource | None:
    """Where the Const bytes come from: the in-memory ``weights`` buffer, else the .bin
    (a reader opened on first use and kept in ``G.graph["bin_reader"]``), else None."""
    buf = G.graph.get("weights")
    if buf is not None:
        return _BufferSource(buf)
    path = G.graph.get("bin_path")
    if path is None:
        return None
    reader = G.graph.get("bin_reader")
    if reader is None or reader.path != path:
        reader = G.graph["bin_reader"] = _BinFile(path, G.graph.get("xml_path"))
    return reader


def weights_bytes(G: nx.MultiDiGraph, offset: int, size: int) -> bytes:
    """Up to ``size`` raw bytes of the weights at ``offset`` (fewer where they end, none
    without weights), unchecked: for the shape walk's small constants, which
    :func:`const_value` reads again, checked, when these bytes do not add up."""
    src = _weights(G)
    return b"" if src is None else src.raw(offset, size)


def const_value(G: nx.MultiDiGraph, node: str) -> np.ndarray:
    """The data of Const layer ``node`` as a numpy array (read-only for read layers).

    A Const added in memory returns its ``value``. A Const read from an IR is read from
    the .bin when asked (nothing is loaded before), with the element type and shape of
    its ``<data>``; raw ``uint8`` bytes for the types numpy cannot hold (see the module
    docstring). Offset and size are checked again against the file as it is now: a
    .bin that shrank meanwhile is a WeightsError.
    """
    attrs = G.nodes[node]
    if attrs.get("value") is not None:
        return np.asarray(attrs["value"])
    try:
        et, shape, offset, size = _const_layout(attrs)
        src = _weights(G)
        _check_slice(offset, size, None if src is None else src.size(),
                     G.graph.get("bin_path") or "the weights")
        if et.raw:
            return src.read(offset, size) if size else np.zeros(0, np.uint8)
        count = 1
        for d in shape:
            count *= d
        nbytes = count * et.dtype.itemsize
        raw = src.read(offset, nbytes) if nbytes else np.zeros(0, np.uint8)
    except IRError as err:
        raise err.located(file=G.graph.get("xml_path"), line=attrs.get("line"),
                          layer_name=attrs.get("name"), layer_id=node) from None
    return raw.view(et.dtype).reshape(shape)


def element_type_of(dtype: np.dtype) -> str:
    """The IR element type text for a numpy dtype (``float32`` → ``"f32"``)."""
    table = _dtype_to_et()
    et = table.get(np.dtype(dtype).newbyteorder("<"))
    if et is None:
        et = table.get(np.dtype(dtype))
    if et is None:
        raise OutputError(f"a Const value must have a numeric or bool dtype, but got {dtype}")
    return et


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------
@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small objects.

    Left running, the collector rescans the young graph again and again as it grows
    (what made a naive reader 2-3 times slower than OpenVINO's). At the end the new
    objects are promoted straight to the oldest generation (``freeze`` + ``unfreeze``,
    both O(1)) instead of being scanned once more at the next allocation: the graph is
    long-lived by nature, and it is still scanned by later full collections.
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


#: Bytes of <layers> in one piece of a read in pieces (see _Reader.read_in_pieces).
_STREAM_PIECE = 1 << 20

#: The largest .xml read_ir and parse_ir take, in bytes. Reading costs up to ~35 bytes
#: of memory per byte of XML (lxml's tree of many small elements, as in a big rt_info),
#: so this bounds a read near 9 GB; real IRs are far smaller (an LLM's: tens of MB).
#: Pass ``max_xml_bytes`` to read a bigger one.
MAX_XML_BYTES = 256 << 20


def _check_xml_size(size: int, limit: int | None, file: str | None) -> None:
    limit = MAX_XML_BYTES if limit is None else limit
    if size > limit:
        raise XMLSyntaxError(
            f"an IR's .xml may be at most {limit} bytes ({limit >> 20} MiB; reading costs "
            f"many times its size in memory), but this one has {size} bytes "
            "(read_ir(..., max_xml_bytes=N) reads a bigger one)", file=file)


def _check_bin_location(xml_path: str, bin_path: str) -> None:
    """A .bin reached through a symbolic link must resolve into the model's folder (as
    written, or the folder the .xml itself resolves to), or below it: a model from
    elsewhere cannot make ovgather read, copy into its outputs or quote another file
    (``model.bin -> /etc/passwd``). Model caches that link both files to one blob
    folder are fine."""
    real = os.path.realpath(bin_path)
    roots = {os.path.realpath(os.path.dirname(os.path.abspath(xml_path))),
             os.path.dirname(os.path.realpath(xml_path))}
    for root in roots:
        try:
            if os.path.commonpath([root, real]) == root:
                return
        except ValueError:  # different drives
            continue
    raise WeightsError(
        "a .bin that is a symbolic link must point into the model's folder, but it "
        "points outside it (refused, so that a model cannot make ovgather read another "
        "file); copy the weights beside the .xml", file=bin_path)


def read_ir(path: str | os.PathLike[str], *, max_xml_bytes: int | None = None
            ) -> nx.MultiDiGraph:
    """Read ``model.xml`` and, when present, the ``model.bin`` beside it.

    Const data is not loaded: :func:`const_value` reads it on demand. The .xml may be at
    most ``max_xml_bytes`` (default :data:`MAX_XML_BYTES`), checked before it is read;
    a .bin that is a symbolic link must point into the model's folder.
    """
    return as_networkx(read_layer_graph(path, max_xml_bytes=max_xml_bytes))


def read_layer_graph(path: str | os.PathLike[str], *, max_xml_bytes: int | None = None
                     ) -> LayerGraph:
    """:func:`read_ir` without networkx: the same dicts in a :class:`LayerGraph`, what
    ``check`` needs (``as_networkx`` makes it the MultiDiGraph ``read_ir`` returns)."""
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
            _check_xml_size(st.st_size, max_xml_bytes, xml_path)
            xml_bytes = f.read(st.st_size + 1)
        _check_xml_size(len(xml_bytes), max_xml_bytes, xml_path)  # it grew meanwhile
    except OSError as err:
        raise IRError(f"the IR file cannot be read: {err.strerror or err}",
                      file=xml_path) from err
    bin_path = str(Path(xml_path).with_suffix(".bin"))
    bin_size = os.path.getsize(bin_path) if os.path.isfile(bin_path) else None
    if bin_size is None and os.path.exists(bin_path):
        raise WeightsError("the weights must be a regular file, but this is a device, FIFO "
                           "or folder", file=bin_path)
    if bin_size is not None:
        _check_bin_location(xml_path, bin_path)
    G = _build(xml_bytes, xml_path, bin_path if bin_size is not None else None, bin_size,
               Path(bin_path).name)
    return G


def parse_ir(xml_bytes: bytes | str, bin_bytes: bytes | None = None, *,
             xml_path: str | None = None, max_xml_bytes: int | None = None
             ) -> nx.MultiDiGraph:
    """Parse IR XML from memory; ``bin_bytes`` is the weights (None when there is none).

    ``xml_path`` only names the source in error messages and in ``G.graph``;
    ``max_xml_bytes`` as for :func:`read_ir`.
    """
    if isinstance(xml_bytes, str):
        xml_bytes = xml_bytes.encode("utf-8")
    _check_xml_size(len(xml_bytes), max_xml_bytes, xml_path)
    bin_size = None if bin_bytes is None else len(bin_bytes)
    weights = None if bin_bytes is None else np.frombuffer(bin_bytes, dtype=np.uint8)
    return as_networkx(_build(xml_bytes, xml_path, None, bin_size, "the weights (.bin)",
                              weights))


def _build(xml_bytes: bytes, file: str | None, bin_path: str | None, bin_size: int | None,
           bin_name: str, weights: np.ndarray | None = None) -> LayerGraph:
    reader = _Reader(file, bin_size, bin_name, xml_bytes)
    with _gc_paused():
        # parsed whole: a file of one piece, one with comments or PIs (dropped from the
        # whole tree), one with bodies (TensorIterator, Loop, If: subgraphs.py reads them
        # from the tree) and one the pieces cannot take (which words its errors as well)
        markup = _check_prolog(xml_bytes, file)
        parsed = None
        if not (markup or len(xml_bytes) <= _STREAM_PIECE or reader.has_bodies):
            parsed = reader.read_in_pieces(xml_bytes)
            if parsed is None:  # a fresh reader: the pieces may have left layers in it
                reader = _Reader(file, bin_size, bin_name, xml_bytes, has_bodies=False)
        root, streamed = parsed or (_parse_xml(xml_bytes, file, markup=markup), None)
        G = reader.read(root, streamed)
        del root  # free the lxml tree while the collector is still paused
    G.graph["xml_path"] = file
    G.graph["bin_path"] = bin_path
    G.graph["weights"] = weights
    if reader.nested:  # bodies read the same weights; their lines past 65535 made exact
        from ..graph.bodies import share_source
        from .bodies import fix_big_lines
        share_source(G)
        fix_big_lines(xml_bytes, G)
    return G


#: libxml2 keeps exact line numbers up to 65535 only; beyond, lxml's ``sourceline`` is
#: estimated from neighbouring text nodes: a line or two off (far off if blank text were
#: removed, which is why the parser keeps it). Layers and edges get exact lines anyway
#: (``_fix_big_lines``); other elements past that line, named only in error messages,
#: keep the estimate.
_LXML_MAX_LINE = 65535
def _fix_big_lines(xml_bytes: bytes, nodes: list[tuple[str, dict]], edges: list[tuple]) -> None:
    """Replace libxml2's estimated lines (>= 65535) of layers and edges with exact ones.

    The usual way: the compiled walk lists the line of every ``<layer``/``<edge`` tag in
    one pass over the bytes; in document order they are the layers and edges (read in
    that order too) when the counts agree. Otherwise (a tag inside a comment, or no
    compiled walk) :func:`_walk_lines` finds each tag as OpenVINO writes it.
    """
    found = _fastwalk.tag_lines(xml_bytes) if _fastwalk is not None else (None, None)
    newlines = None
    for items, tags_of, lines in ((nodes, _layer_tags, found[0]), (edges, _edge_tags, found[1])):
        if lines is not None and len(lines) == len(items):
            for item, line in zip(items, lines, strict=True):
                item[-1]["line"] = line
            continue
        if newlines is None:
            newlines = np.flatnonzero(np.frombuffer(xml_bytes, dtype=np.uint8) == 10)
        _walk_lines(xml_bytes, newlines, tags_of(items))


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
    between; a tag written otherwise keeps its estimate."""
    pos = line = 1
    for tag, attrs in items:
        if attrs["line"] < _LXML_MAX_LINE:
            line = attrs["line"]
            pos = 0 if line == 1 else int(newlines[line - 2]) + 1
            continue
        found = xml_bytes.find(tag, pos)
        if found >= 0:
            line += xml_bytes.count(b"\n", pos, found)
            pos = found
            attrs["line"] = line


def _is_uint(text: str | None) -> bool:
    """True for a plain ASCII decimal integer (what ``int()`` parses exactly as OpenVINO)."""
    return (text is not None and text.isascii() and text.isdigit()
            and len(text) <= _MAX_DIGITS)


def _edge_port(text: str | None) -> bool:
    """An edge's port text as OpenVINO reads it: ASCII digits, maybe a ``+`` and spaces."""
    value = (text or "").strip()
    return _is_uint(value) or (value.startswith("+") and _is_uint(value[1:]))


def _fill_graph(G: LayerGraph, nodes: list[tuple[str, dict]], edges: list[tuple]) -> None:
    """Add nodes and edges in bulk, in networkx's adjacency layout (what
    ``MultiDiGraph.add_edge`` builds: ``_succ[u][v][key] = data`` with the key dict shared
    by ``_pred[v][u]``), 3-5 times faster than ``add_nodes_from``/``add_edges_from``."""
    node_dict, succ, pred = G._node, G._succ, G._pred
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


class _Reader:
    """One pass over the <net> tree: net attributes, layers, edges, checks."""

    def __init__(self, file: str | None, bin_size: int | None, bin_name: str,
                 xml_bytes: bytes, has_bodies: bool | None = None) -> None:
        self.file = file
        self.xml_bytes = xml_bytes
        #: whether the document may hold TensorIterator/Loop/If bodies (scanned once; a
        #: body's reader is told)
        self.has_bodies = b"body>" in xml_bytes if has_bodies is None else has_bodies
        self.bin_size = bin_size
        self.bin_name = bin_name
        self.nodes: dict[str, dict[str, Any]] = {}
        self.strings: dict[str, str] = {}  # one copy of each precision text
        self.slices: list[tuple[int, int, str, str]] = []  # Const (offset, end, type, id)
        self.n_inputs = 0
        #: bytes a Const needs, by (element_type, shape) text: for the fast check
        self.const_need: dict[tuple[str | None, str | None], int] = {}
        #: the layers of this graph (and of bodies within) that hold bodies
        self.nested: list[dict[str, Any]] = []

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
        if root.tag != "net":
            raise self.error(IRStructureError,
                             f"an IR's root element must be <net>, but got <{root.tag}>", root)
        version_text = root.get("version")
        if version_text not in ("10", "11"):
            raise self.error(IRStructureError,
                             "an IR's <net version> must be 10 or 11, but got "
                             f"{_short(repr(version_text))}", root)
        G = LayerGraph()
        G.graph.update(name=root.get("name"), ir_version=int(version_text), rt_info=None,
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
                G.graph["rt_info"] = _rt_text(child)
            else:
                G.graph["extra_xml"].append(_rt_text(child))
        if layers is None:
            raise self.error(IRStructureError,
                             f"an IR's <{root.tag}> must contain <layers>", root)
        nodes = self.read_layers(layers)
        if streamed:
            nodes = streamed + nodes
        if self.has_bodies:  # TensorIterator, Loop, If: their bodies as graphs
            from .bodies import read_bodies
            self.nested += read_bodies(self, layers)
        self.check_overlaps()
        if edges is not None:
            edge_list = self.edges(edges)
        else:
            edge_list = []
            self.check_fed({})
        _fill_graph(G, nodes, edge_list)
        in_order = _fastwalk is not None and _fastwalk.in_order(nodes, edge_list)
        if not in_order:
            self.check_acyclic(G)  # OpenVINO writes layers in order: then there is no cycle
        if isinstance(G, LayerGraph):
            G.in_order = in_order
        if self.nested or root.tag != "net":  # lines of nested layers: ir.bodies
            return G
        if nodes and nodes[-1][1]["line"] >= _LXML_MAX_LINE or (
                edge_list and edge_list[-1][3]["line"] >= _LXML_MAX_LINE):
            _fix_big_lines(self.xml_bytes, nodes, edge_list)
        return G

    def read_in_pieces(self, xml_bytes: bytes) -> tuple[etree._Element, list] | None:
        """Parse the <layers> section as pieces of about ``_STREAM_PIECE`` bytes, each cut
        after a ``</layer>`` and parsed as a document of its own on a second thread while
        this one reads the layers of the piece before; the rest of the file is parsed
        with an empty <layers> in their place (the same number of lines, so every line
        stays exact). lxml lets go of the GIL while it parses, so parsing, about half of
        a read, overlaps the walk, and the whole tree of a big IR (~13 bytes of memory per
        byte of XML) never exists. Returns the root, which holds everything but the
        layers, and the layers read; or None (with this reader's state undefined) when
        the document is not the usual IR this takes apart safely, or anything in it
        fails: the caller then parses it whole, which words the errors.

        Pieces are cut with byte searches, which is exact here because the caller only
        calls this for a document without comments, PIs, CDATA or bodies, whose prolog
        declares no other encoding and whose head declares no namespace: then ``<`` only
        starts a tag and the first ``</layers>`` closes the first ``<layers>``. A piece
        that is not well-formed on its own, or a <layers> that turns out not to be the
        <net>'s first, sends it back to the whole-tree parse.
        """
        start = xml_bytes.find(b"<layers>")
        end = xml_bytes.find(b"</layers>", start)
        if start < 0 or end < 0 or not _plain_head(xml_bytes[:start]):
            return None
        start += len(b"<layers>")
        cuts = [start]
        while True:
            cut = xml_bytes.find(b"</layer>", cuts[-1] + _STREAM_PIECE, end)
            if cut < 0:
                break
            cuts.append(cut + len(b"</layer>"))
        cuts.append(end)
        line = xml_bytes.count(b"\n", 0, start)  # lines before the first piece
        pieces = []
        for a, b in zip(cuts, cuts[1:], strict=False):
            lines = xml_bytes.count(b"\n", a, b)
            if lines >= _LXML_MAX_LINE:  # libxml2's lines would be estimates
                return None
            pieces.append((a, b, line))
            line += lines
        padding = line - xml_bytes.count(b"\n", 0, start)  # the lines of <layers>

        def text(i: int) -> bytes:  # the document of piece i; the rest after the last
            if i < len(pieces):  # inside <net><layers>: each element at its depth in the file
                return (b"<net><layers>" + xml_bytes[pieces[i][0]:pieces[i][1]]
                        + b"</layers></net>")
            return xml_bytes[:start] + b"\n" * padding + xml_bytes[end:]

        streamed: list[tuple[str, dict[str, Any]]] = []
        with ThreadPoolExecutor(1) as pool, _quick_gil_handoff():
            # one piece parsed ahead of the one read: two pieces' trees at most
            parsing = pool.submit(_parse_piece, text(0))
            try:
                for i, (_, _, line) in enumerate(pieces):
                    layers = parsing.result()[0]
                    parsing = pool.submit(_parse_piece, text(i + 1))
                    streamed += self.read_layers(layers, line)
                    del layers
                root = parsing.result()
            except Exception:  # parsed whole again, which words the error
                parsing.cancel()
                return None
        layers = root.find("layers")
        if layers is None or len(layers) or not self.streamable(layers):
            return None
        _check_no_doctype(root, self.file)
        return root, streamed

    @staticmethod
    def streamable(layers: etree._Element) -> bool:
        """True when ``layers`` is the first ``<layers>`` of a ``<net version="10|11">``
        root (what :meth:`read` would read as the layers)."""
        root = layers.getparent()
        return (root is not None and root.getparent() is None and root.tag == "net"
                and root.get("version") in ("10", "11") and root.find("layers") is layers)

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
        if _fastwalk is None:
            return None
        n_nodes, n_slices, n_inputs = len(self.nodes), len(self.slices), self.n_inputs
        try:
            nodes = _fastwalk.read_layers(layers, self, _rt_text, split_names, CONST_TYPES,
                                          line_offset)
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
            node_id, node = layer_of_xml(dict(el.items()), el.sourceline + line_offset,
                                         nodes)
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
                    node["rt_info"] = _rt_text(child)
                else:
                    node.setdefault("extra_xml", []).append(_rt_text(child))
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
            stripped = (port_text or "").strip()
            port_id = int(stripped) if _is_uint(stripped) else -1
            if port_id < 0:
                raise self.error(IRStructureError,
                                 "a port id must be an integer >= 0 (digits 0-9), but got "
                                 f"{_short(repr(port_text))}", el, node["name"], node_id)
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
                    rt_info = _rt_text(child)
                else:
                    extra = extra or []
                    extra.append(_rt_text(child))
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
        if not _is_uint(node_id):
            return self.error(IRStructureError,
                              "a layer id must be an integer >= 0 (digits 0-9), but got "
                              f"{_short(repr(node_id))}",
                              el, name)
        if node_id in self.nodes:
            return self.error(
                IRStructureError,
                f"layer ids must be unique, but id {node_id} is used again (first at line "
                f"{self.nodes[node_id]['line']}; OpenVINO would keep the last one, other "
                "readers the first)", el, name, node_id)
        missing = "name" if name is None else "type"
        return self.error(IRStructureError,
                          f"a <layer> needs a '{missing}' attribute, but it is missing",
                          el, name, node_id)

    def odd_dim(self, el: etree._Element, node: dict[str, Any], node_id: str) -> int:
        """A <dim> that is not plain digits: ``-1`` and padded integers are fine (as for
        OpenVINO's stream parser), anything else is an error."""
        text = el.text or ""
        stripped = text.strip()
        if stripped == "-1":
            return -1
        if _is_uint(stripped) and int(stripped) <= _INT64_MAX:
            return int(stripped)  # OpenVINO's stream parser skips the padding too
        raise self.error(IRStructureError, _bad_dim(el.text), el, node["name"], node_id)

    def check_const(self, node_id: str) -> None:
        node = self.nodes[node_id]
        data = node["data"]
        offset, size = data.get("offset"), data.get("size")
        key = (data.get("element_type"), data.get("shape"))
        need = self.const_need.get(key)
        if (need is not None and offset is not None and size is not None
                and _is_uint(offset) and _is_uint(size) and self.bin_size is not None):
            # the usual Const: a type and shape seen before, plain offset and size
            offset, size = int(offset), int(size)
            if size >= need and offset + size <= self.bin_size:
                if size:
                    self.slices.append((offset, offset + size, key[0], node_id))
                return
        try:
            et, shape, offset, size = _const_layout(node)
            _check_slice(offset, size, self.bin_size, self.bin_name)
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
        if _fastwalk is not None:
            out = _fastwalk.read_edges(edges, self.nodes, self.n_inputs)
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
            src, dst = el.get("from-layer"), el.get("to-layer")
            fp, tp = el.get("from-port"), el.get("to-port")
            if not (_edge_port(fp) and _edge_port(tp)) or src not in nodes or dst not in nodes:
                raise self.edge_error(el)
            fp, tp = int(fp), int(tp)
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
            if lid not in self.nodes:
                return fail(f"an edge's {attr} must name a layer id, but there is no "
                            f"layer {_short(repr(lid))}")
        src, dst = el.get("from-layer"), el.get("to-layer")
        for attr, node in (("from-port", src), ("to-port", dst)):
            if not _edge_port(el.get(attr)):
                return fail(f"an edge's {attr} must be an integer >= 0 (digits 0-9), but got "
                            f"{_short(repr(el.get(attr)))}", node)
        fp, tp = int(el.get("from-port")), int(el.get("to-port"))
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
        reach = None  # the slice seen so far that ends last
        for off2, end2, et2, n2 in sorted(self.slices):
            if reach is not None:
                off1, end1, et1, n1 = reach
                if off2 < end1 and (off1, end1) != (off2, end2):
                    other = self.nodes[n1]
                    raise self.node_error(
                        WeightsError,
                        "Const data may share whole slices only, but bytes "
                        f"[{off2}, {end2}) as {et2} overlap [{off1}, {end1}) as {et1} of "
                        f"layer {n1} ('{other['name']}', line {other['line']})", n2)
            if reach is None or end2 > reach[1]:
                reach = (off2, end2, et2, n2)

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


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                          "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


_XML_NS = "http://www.w3.org/XML/1998/namespace"
#: Prefixes to write for namespaces every reader knows (others get ns0, ns1, …).
_PREFIXES = {_XML_NS: "xml", "http://www.w3.org/2001/XMLSchema-instance": "xsi"}


def _attrs(items: dict[str, Any]) -> str:
    """`` k="v"`` pairs in order, values escaped for XML attributes.

    A namespaced name as lxml reads it (``{uri}local``) is written back as
    ``prefix:local``, with ``xmlns:prefix="uri"`` declared on the same element (the
    ``xml`` prefix needs no declaration)."""
    if not any(k[:1] == "{" for k in items):
        return "".join(f' {k}="{str(v).translate(_ESCAPES)}"' for k, v in items.items())
    out, declared = [], {}
    for k, v in items.items():
        if k[:1] == "{":
            uri, _, local = k[1:].partition("}")
            prefix = declared.get(uri) or _PREFIXES.get(uri)
            if prefix is None or (uri not in declared and prefix in declared.values()):
                prefix = f"ns{len(declared)}"
            if uri != _XML_NS and uri not in declared:
                out.append(f' xmlns:{prefix}="{uri.translate(_ESCAPES)}"')
            declared[uri] = prefix
            k = f"{prefix}:{local}"
        out.append(f' {k}="{str(v).translate(_ESCAPES)}"')
    return "".join(out)


def _check_fragment(text: str, where: str) -> None:
    """An rt_info or extra fragment must itself be safe, well-formed XML."""
    try:
        etree.fromstring(text.encode("utf-8"), _parser())
    except etree.XMLSyntaxError as err:
        raise OutputError(f"{where} must be well-formed XML text, but got {text[:60]!r}: "
                          f"{err.msg}") from err


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
            et, shape, offset, size = _const_layout(attrs)
            src = _weights(self.G)
            _check_slice(offset, size, None if src is None else src.size(), "the weights")
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
            shape = _const_shape(data.get("shape"))
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
        return [f"{indent}<port{_attrs(attrs)} />"]
    return [f"{indent}<port{_attrs(attrs)}>", *children, f"{indent}</port>"]


def _layer_xml(node: str, attrs: dict[str, Any], bins: _BinWriter) -> list[str]:
    head = {"id": node, "name": attrs.get("name", node), "type": attrs["type"]}
    if attrs.get("version") is not None:
        head["version"] = attrs["version"]
    head.update(attrs.get("layer_attrs") or {})
    data = attrs.get("data") or {}
    override = None
    if attrs["type"] in CONST_TYPES:
        data, override = bins.const_data(node, attrs)
    lines = [f"\t\t<layer{_attrs(head)}>"]
    if data:
        lines.append(f"\t\t\t<data{_attrs(data)} />")
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
        from .bodies import body_lines
        lines.extend(body_lines(node, attrs, lambda body: _graph_lines(body, bins)))
    for text in attrs.get("extra_xml") or ():
        _check_fragment(text, f"an extra element of layer {node}")
        lines.append(f"\t\t\t{text}")
    lines.append("\t\t</layer>")
    return lines


def _net_xml(G: nx.MultiDiGraph, bins: _BinWriter) -> str:
    net_attrs = dict(G.graph.get("net_attrs") or {})
    net_attrs["name"] = G.graph.get("name") or net_attrs.get("name") or "model"
    net_attrs["version"] = str(G.graph.get("ir_version") or net_attrs.get("version") or 11)
    head = {"name": net_attrs.pop("name"), "version": net_attrs.pop("version"), **net_attrs}
    lines = ['<?xml version="1.0"?>', f"<net{_attrs(head)}>", *_graph_lines(G, bins),
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
        lines.append(f"\t\t<edge{_attrs(edge)} />")
    lines.append("\t</edges>")
    for text in G.graph.get("extra_xml") or ():
        _check_fragment(text, "an extra <net> element")
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
    from ..atomic import AtomicOutput
    from ..graph import check_writable

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
