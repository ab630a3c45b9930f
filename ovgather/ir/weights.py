"""Const data: a Const layer's ``<data>`` checked against its shape and the .bin, and its
bytes read when asked (:func:`const_value`), never before.

The .bin is read with ``pread``, never memory-mapped, so a .bin that shrinks while a graph
uses it is a WeightsError and not a SIGBUS (measured: ``infer_shapes`` on a 20k-layer IR
553 -> 646 ms, reading every Const the same 210 ms; ``read_ir`` itself does not touch the
.bin). A .bin that is a symbolic link must resolve into the model's folder (see
:func:`check_bin_location`).

Element types and the data :func:`const_value` returns: the numeric types map to the
numpy dtype of the same name (little-endian); ``boolean`` to ``bool``. Types numpy
cannot hold (``bf16``, the f8/f4/nf4 types and the packed sub-byte integers ``u1``,
``u2``, ``u3``, ``u4``, ``u6``, ``i4``) and ``string`` come back as the raw bytes, a
flat ``uint8`` array of ``size`` bytes (``ceil(elements * bits / 8)``), not unpacked
(u1 is most-significant-bit first, u4/i4 low nibble first, as OpenVINO packs them).

A Const ``size`` larger than its shape needs is accepted, as OpenVINO does (only the
first ``ceil(n * bits / 8)`` bytes are used, and ``write_ir`` writes only those). A
``string`` Const is packed (a 4-byte string count, offsets, characters): its size must
hold at least the count, whatever its shape, as OpenVINO checks.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import weakref
from collections import OrderedDict
from functools import cache
from operator import itemgetter
from typing import Any

from .._lazy import networkx as nx
from .._lazy import numpy as np
from ..element_types import ELEMENT_TYPES, ElementType
from ..errors import IRError, IRStructureError, OutputError, WeightsError
from .text import MAX_DIGITS, short

__all__ = ["CONST_TYPES", "const_nbytes", "const_layout", "const_shape", "check_slice",
           "check_bin_location", "bin_identity", "weights_source", "weights_bytes", "const_value",
           "element_type_of", "first_overlap"]

CONST_TYPES = ("Const", "Constant")
#: Bytes of the string count a packed string tensor starts with (then its offsets and
#: characters, which only the .bin holds).
_STRING_HEADER = 4


@cache
def _dtype_to_et() -> dict[Any, str]:
    """numpy dtype → element type text, for Const layers added in memory."""
    return {e.dtype: name for name, e in ELEMENT_TYPES.items() if not e.raw}


def _int_attr(value: str | None, what: str, minimum: int = 0) -> int:
    """An integer attribute ≥ ``minimum`` in ASCII digits, read as OpenVINO reads a
    Const's offset and size (leading whitespace, a sign, zeros; nothing after the
    digits); IRStructureError (without location) if not."""
    if (value is not None and value.isascii() and value.isdigit() and minimum <= 0
            and len(value) <= MAX_DIGITS):
        return int(value)
    if value is None:
        raise IRStructureError(f"{what} is required, but it is missing")
    text = value.lstrip(" \t\n\r")  # OpenVINO's stoll skips leading whitespace only
    digits = text.lstrip("+-").lstrip("0") or "0"  # int() counts leading zeros too
    number = None
    if re.fullmatch(r"[+-]?[0-9]+", text) and len(digits) <= 2 * MAX_DIGITS:
        number = -int(digits) if text.startswith("-") else int(digits)
    if number is None or number < minimum:
        raise IRStructureError(f"{what} must be an integer >= {minimum} (digits 0-9), but "
                               f"got '{short(value)}'")
    return number


_SHAPE_TEXT = re.compile(r"[ \t]*[0-9]{1,19}[ \t]*(?:,[ \t]*[0-9]{1,19}[ \t]*)*")


def const_shape(text: str | None) -> tuple[int, ...]:
    """A Const ``shape`` attribute (``"2, 1"``, ``""`` for a scalar) → ints."""
    if text is None:
        raise IRStructureError("a Const layer needs a 'shape' attribute in <data>")
    if not text or text.isspace():
        return ()
    if _SHAPE_TEXT.fullmatch(text) is None:
        raise IRStructureError(
            "a Const's shape must be a list of integers >= 0 (digits 0-9, at most 19 of "
            f"them), but got '{short(text)}'")
    return tuple(map(int, text.split(",")))


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


def const_layout(attrs: dict[str, Any]) -> tuple[ElementType, tuple[int, ...], int, int]:
    """(element type, shape, offset, size) of a Const layer's <data>, checked for kind
    and against shape × element size (OpenVINO accepts a larger size, so do we)."""
    data = attrs.get("data") or {}
    name = data.get("element_type")
    if name not in ELEMENT_TYPES:
        raise IRStructureError(
            f"a Const's element_type must be one of {', '.join(ELEMENT_TYPES)}, "
            f"but got {short(repr(name))}")
    et = ELEMENT_TYPES[name]
    shape = const_shape(data.get("shape"))
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
    if need is None and size < _STRING_HEADER:
        raise WeightsError(
            f"a string Const's size must hold at least the {_STRING_HEADER}-byte string "
            f"count its packed data starts with (OpenVINO refuses less), but got size={size}")
    return et, shape, offset, size


def check_slice(offset: int, size: int, bin_size: int | None, bin_name: str) -> None:
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


#: At most this many .bin files are kept open at once, whatever the number of graphs: a
#: notebook or a test process holds hundreds of graphs, and a descriptor per graph ran past
#: the usual limit of 1,024 (``select`` and ``open`` then fail elsewhere). The least
#: recently read is closed and opened again when next read (checked to be the same file).
_OPEN_LIMIT = 64
_OPEN: OrderedDict[int, weakref.ref] = OrderedDict()
#: Held while a descriptor is opened, read or closed: a descriptor closed by one thread
#: while another reads it could be reused by the next open and read another file.
_LOCK = threading.RLock()


class _BinFile:
    """A .bin read with ``pread``, never mapped: a file that shrinks or is rewritten
    while a graph still uses it (``cp`` over it in place) gives a WeightsError, where a
    memory map would end the process with SIGBUS. Each read checks the file's current
    size first and copies the bytes out (copy on read)."""

    def __init__(self, path: str, xml_path: str | None,
                 identity: tuple[int, ...] | None = None) -> None:
        self.path, self.xml_path, self.fd = path, xml_path, None
        self.identity = identity  # bin_identity() at the read, None: any file
        self.blocks: dict[int, bytes] = {}  # see raw()

    def _open(self) -> int:
        """The descriptor, opened (or opened again) when needed; call under ``_LOCK``."""
        if self.fd is not None:
            _OPEN.move_to_end(id(self))
            return self.fd
        while len(_OPEN) >= _OPEN_LIMIT:
            _, ref = _OPEN.popitem(last=False)
            oldest = ref()
            if oldest is not None and oldest.fd is not None:
                fd, oldest.fd = oldest.fd, None
                os.close(fd)
        if self.fd is None:
            if self.xml_path is not None:
                check_bin_location(self.xml_path, self.path)
            try:
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
                             | getattr(os, "O_NONBLOCK", 0))
            except OSError as err:
                raise WeightsError(f"the weights file cannot be read: {err.strerror}",
                                   file=self.path) from err
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                raise WeightsError("the weights must be a regular file, but this is a "
                                   "device, FIFO or folder", file=self.path)
            if self.identity is not None and _identity(st) != self.identity:
                os.close(fd)
                raise WeightsError(
                    "the weights must be the file the model was read with, but it was "
                    "replaced or changed since (another file, size or modification "
                    "time); read the model again", file=self.path)
            self.fd = fd
            _OPEN[id(self)] = weakref.ref(self)
        return self.fd

    def size(self) -> int:
        with _LOCK:
            return os.fstat(self._open()).st_size

    def raw(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset``, fewer where the file ends (the shape walk
        reads thousands of small constants this way): through a few cached blocks of
        ``_BLOCK`` bytes (read with ``pread``, never mapped: a file that shrinks later
        cannot fault; at most ``_BLOCKS`` of them kept), a large read directly."""
        if size <= 0:
            return b""
        with _LOCK:
            return self._raw(offset, size)

    def _raw(self, offset: int, size: int) -> bytes:
        try:
            first, last = offset // _BLOCK, (offset + size - 1) // _BLOCK
            if size > _BLOCK or last - first > 1:
                return os.pread(self._open(), size, offset)
            if first == last:  # the usual small constant
                start = offset - first * _BLOCK
                return self._block(first)[start:start + size]
            data = self._block(first) + self._block(last)
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
        with _LOCK:
            return self._read(offset, size)

    def _read(self, offset: int, size: int) -> np.ndarray:
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

    def __del__(self, _close=os.close, _open_files=_OPEN) -> None:
        # os.close and the table bound at definition: at interpreter exit the module's
        # globals may already be gone when the last graph is freed
        if self.fd is not None:
            _open_files.pop(id(self), None)
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


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def bin_identity(path: str) -> tuple[int, ...]:
    """(device, inode, modification time in ns, size) of the .bin at ``path``: what a
    read remembers, so that its Consts are never read from a file put there since (an
    atomic rename, as every careful writer and ovgather itself replace a model).
    The size is last (the reader's ``bin_size``)."""
    return _identity(os.stat(path))


def weights_source(G: nx.MultiDiGraph) -> _BinFile | _BufferSource | None:
    """Where the Const bytes come from: the in-memory ``weights`` buffer, else the .bin
    (a reader opened on first use and kept in ``G.graph["bin_reader"]``; the file must
    still be the one of ``G.graph["bin_stat"]`` when there is one), else None."""
    buf = G.graph.get("weights")
    if buf is not None:
        return _BufferSource(buf)
    path = G.graph.get("bin_path")
    if path is None:
        return None
    reader = G.graph.get("bin_reader")
    if reader is None or reader.path != path:
        reader = G.graph["bin_reader"] = _BinFile(path, G.graph.get("xml_path"),
                                                  G.graph.get("bin_stat"))
    return reader


def weights_bytes(G: nx.MultiDiGraph, offset: int, size: int) -> bytes:
    """Up to ``size`` raw bytes of the weights at ``offset`` (fewer where they end, none
    without weights), unchecked: for the shape walk's small constants, which
    :func:`const_value` reads again, checked, when these bytes do not add up."""
    src = weights_source(G)
    return b"" if src is None else src.raw(offset, size)


def const_value(G: nx.MultiDiGraph, node: str) -> np.ndarray:
    """The data of Const layer ``node`` as a numpy array (read-only for read layers).

    A Const added in memory returns its ``value``. A Const read from an IR is read from
    the .bin when asked (nothing is loaded before), with the element type and shape of
    its ``<data>``; raw ``uint8`` bytes for the types numpy cannot hold (see the module
    docstring). Offset and size are checked again against the file as it is now: a
    .bin that shrank meanwhile is a WeightsError.
    """
    attrs = G._node[node]  # a MultiDiGraph or the reader's LayerGraph
    if attrs.get("value") is not None:
        return np.asarray(attrs["value"])
    try:
        et, shape, offset, size = const_layout(attrs)
        src = weights_source(G)
        check_slice(offset, size, None if src is None else src.size(),
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


def check_bin_location(xml_path: str, bin_path: str) -> None:
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


def first_overlap(slices: list[tuple[int, int, str, str]]) -> tuple[tuple, tuple] | None:
    """The first two Const slices ``(offset, end, element type, layer)`` of the .bin that
    overlap partly, in the order of offset and end (ties in the order read), as ``(the
    earlier, the later)``; None when every two are apart or the same slice. The compiled
    walk has the same function at C speed (the sort by a 2-int key, not the whole tuple,
    which a model's thousands of shared slices make compare strings)."""
    reach = None  # the slice seen so far that ends last
    for slice_ in sorted(slices, key=_OFFSET_END):
        if reach is not None and slice_[0] < reach[1] and slice_[:2] != reach[:2]:
            return reach, slice_
        if reach is None or slice_[1] > reach[1]:
            reach = slice_
    return None


_OFFSET_END = itemgetter(0, 1)
