# cython: language_level=3
"""The compiled read of <layers> and <edges>: the same dicts as ``ir.reader._Reader.layers``
builds (or, for ``check``, records that read as those dicts: ``LayerRecord``,
``PortRecord``), made straight from libxml2's tree without an lxml proxy object per element.

lxml creates a Python object for every element it hands out, and for an IR most of them
(<dim>, <port>) are read once and thrown away: that is most of a pure-Python reader's
time. Here the walk reads the C structs lxml's own tree is made of (``_Element._c_node``)
and creates only the objects the graph keeps.

Exact or nothing: anything this walk is not sure to read exactly as the careful Python
walk does (a namespace, an entity, a missing or odd id, an odd <dim>, a duplicate port)
makes it return None, and ``ir.reader`` reads the section again with the careful walk,
which also names every error. It is only used with the lxml it was compiled against
(``LXML_BUILT``), since it reads lxml's struct layout.
"""

from types import MappingProxyType

from ovgather.graph import has_port

cimport cython

from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcmp, strcmp, strlen

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

cetree.import_lxml__etree()

LXML_BUILT = (<bytes>cetree.LXML_VERSION_STRING).decode()

cdef long long INT64_MAX = 9223372036854775807


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL


cdef inline str _text(const tree.xmlChar* c):
    return PyUnicode_DecodeUTF8(<const char*>c, strlen(<const char*>c), NULL)


#: Short texts met before, by a hash of their bytes: attribute names, types, versions,
#: precisions, element types, port ids repeat on every layer of an IR, and one shared
#: str each (instead of one per occurrence) is most of what this walk saves in time
#: and memory. A slot holds the last text that hashed to it; a hit is checked byte by
#: byte, so a collision only costs a fresh str.
DEF _CACHE_SLOTS = 4096
DEF _CACHE_MAX_LEN = 32
DEF _FNV_START = 2166136261u
cdef list _cache = [None] * _CACHE_SLOTS


cdef str _short_text(const tree.xmlChar* c):
    return _short_bytes(<const char*>c, strlen(<const char*>c))


cdef str _short_bytes(const char* b, Py_ssize_t n):
    """The text of the ``n`` bytes at ``b`` (strict UTF-8), one shared str for a short one."""
    cdef Py_ssize_t i
    cdef unsigned int h = _FNV_START
    if n > _CACHE_MAX_LEN:
        return PyUnicode_DecodeUTF8(b, n, NULL)
    for i in range(n):
        h = _fnv(h, <unsigned char>b[i])
    return _short_hashed(b, n, h)


cdef inline unsigned int _fnv(unsigned int h, unsigned char c):
    """The hash of the texts in ``_cache`` (FNV-1a), one byte on."""
    return (h ^ c) * 16777619u


cdef str _short_hashed(const char* b, Py_ssize_t n, unsigned int h):
    """``_short_bytes`` of bytes whose hash ``h`` the caller computed as it read them."""
    cdef Py_ssize_t size
    cdef const char* seen
    cdef str text
    if n > _CACHE_MAX_LEN:
        return PyUnicode_DecodeUTF8(b, n, NULL)
    cdef object slot = <object>PyList_GET_ITEM(_cache, h & (_CACHE_SLOTS - 1))
    if slot is not None:
        seen = PyUnicode_AsUTF8AndSize(slot, &size)
        if size == n and memcmp(seen, b, n) == 0:
            return <str>slot
    text = PyUnicode_DecodeUTF8(b, n, NULL)
    _cache[h & (_CACHE_SLOTS - 1)] = text
    return text


cdef inline bint _is(xmlNode* node, const char* name):
    return strcmp(<const char*>node.name, name) == 0


cdef inline xmlNode* _next_element(xmlNode* node) except? NULL:
    """``node`` or the first element after it; NULL at the end. Raises _Unusual on a
    node lxml would hand out as an element but this walk does not read (entity, comment,
    processing instruction)."""
    while node is not NULL:
        if node.type == tree.XML_ELEMENT_NODE:
            if node.ns is not NULL:
                raise _Unusual
            return node
        if node.type != tree.XML_TEXT_NODE and node.type != tree.XML_CDATA_SECTION_NODE:
            raise _Unusual
        node = node.next
    return NULL


class _Unusual(Exception):
    pass


cdef inline bint _blank(const char* c):
    """Only XML whitespace (what ``rt_text`` drops)."""
    while c[0] != 0:
        if c[0] != b' ' and c[0] != b'\t' and c[0] != b'\n' and c[0] != b'\r':
            return False
        c += 1
    return True


cdef inline bint _plain_value(const char* c):
    """Printable ASCII that XML serializes as it is (no & < > " or control character)."""
    while c[0] != 0:
        if c[0] < 32 or c[0] > 126 or c[0] == b'&' or c[0] == b'<' or c[0] == b'>' \
                or c[0] == b'"':
            return False
        c += 1
    return True


cdef str _flat_rt(xmlNode* el):
    """``rt_text`` of the usual <rt_info> (elements with plain attributes, empty, side
    by side, with only whitespace between) built here, exactly as lxml serializes it;
    None for anything else (``rt_text`` then serializes it)."""
    cdef list out = ["<", _short_text(el.name), ">"]
    cdef xmlNode* child = el.children
    cdef xmlAttr* attr
    if el.properties is not NULL or el.ns is not NULL:
        return None
    while child is not NULL:
        if child.type == tree.XML_TEXT_NODE:
            if not _blank(<const char*>child.content):
                return None
        elif child.type != tree.XML_ELEMENT_NODE or child.ns is not NULL \
                or child.children is not NULL:
            return None
        else:
            out += ("<", _short_text(child.name))
            attr = child.properties
            while attr is not NULL:
                if attr.ns is not NULL:
                    return None
                if attr.children is NULL:
                    out += (" ", _short_text(attr.name), '=""')
                elif (attr.children.type != tree.XML_TEXT_NODE or attr.children.next is not NULL
                        or not _plain_value(<const char*>attr.children.content)):
                    return None
                else:
                    out += (" ", _short_text(attr.name), '="', _short_text(attr.children.content),
                            '"')
                attr = attr.next
            out.append("/>")
        child = child.next
    if len(out) == 3:
        return None
    out += ("</", _short_text(el.name), ">")
    return "".join(out)


cdef str _rt(object doc, xmlNode* el, object rt_text, dict strings):
    """``rt_text`` of ``el``: the usual <rt_info> built here, one str per distinct text."""
    cdef str text = _flat_rt(el)
    if text is None:
        return rt_text(cetree.elementFactory(doc, el))
    return strings.setdefault(text, text)


cdef str _value(xmlAttr* attr):
    """An attribute's value; one that is not one plain text node (an entity reference,
    say) or has a namespace is left to the careful walk."""
    cdef xmlNode* value = attr.children
    if attr.ns is not NULL:
        raise _Unusual
    if value is NULL:
        return ""
    if value.type != tree.XML_TEXT_NODE or value.next is not NULL:
        raise _Unusual
    return _short_text(value.content)


cdef dict _attrs(xmlNode* node):
    """The attributes in document order."""
    cdef dict out = {}
    cdef xmlAttr* attr = node.properties
    while attr is not NULL:
        out[_short_text(attr.name)] = _value(attr)
        attr = attr.next
    return out


cdef dict _attrs_but(xmlNode* el, tuple keys, list found):
    """The attributes of ``el`` in document order but those named in ``keys`` (bytes),
    whose values go to ``found`` at the key's place instead (None stays for one absent):
    what ``_attrs`` and a pop per key give, without putting them in the dict first."""
    cdef dict out = {}
    cdef xmlAttr* attr = el.properties
    cdef Py_ssize_t i, n = len(keys)
    while attr is not NULL:
        for i in range(n):
            if strcmp(<const char*>attr.name, <const char*><bytes>keys[i]) == 0:
                found[i] = _value(attr)
                break
        else:
            out[_short_text(attr.name)] = _value(attr)
        attr = attr.next
    return out


# -- records ---------------------------------------------------------------------------
# What ``check`` reads a layer into: one object a layer and one a port, each with its
# fields in C slots, instead of the node and port dicts of the graph (a dict each, and a
# list and a dict inside each port): about a third of the memory, and objects made and
# read without a hash table. They read as the dicts they stand for (``rec["outputs"]``,
# ``rec.get("version")``), so the walk takes either; ``as_dict()`` makes the dict, which
# ``graph.as_networkx`` does for every layer before a caller sees a networkx graph.

cdef object _MISSING = object()
#: the producers of a layer without inputs, shared (and read-only) in check's graph
cdef object _NO_SOURCES = MappingProxyType({})
cdef tuple _PORT_FIELDS = ("id", "precision", "names", "dims", "rt_info", "attrs")
cdef tuple _LAYER_FIELDS = ("name", "type", "version", "data", "layer_attrs", "inputs",
                            "outputs", "rt_info", "line")


cdef class _Record:
    """What a record shares: read as a mapping of its ``keys()`` through ``field``."""

    cdef object field(self, object key):
        return _MISSING

    def __getitem__(self, key):
        value = self.field(key)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key, default=None):
        value = self.field(key)
        return default if value is _MISSING else value

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __contains__(self, key):
        return key in self.keys()

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def values(self):
        return [self[k] for k in self.keys()]

    def __eq__(self, other):
        """A record equals its dict, and a record of the same dict."""
        if isinstance(other, _Record):
            other = other.as_dict()
        return self.as_dict() == other

    def __repr__(self):
        return f"{type(self).__name__}({self.as_dict()!r})"

    __hash__ = None


cdef class PortRecord(_Record):
    """A <port> as ``check`` reads it: the keys of ``graph.new_port``'s dict as fields."""

    cdef public object id, precision, names, dims, rt_info, attrs, extra_xml

    cdef object field(self, object key):
        """The value at ``key``, else ``_MISSING``; a key spelled in code is the interned
        str, met by identity (a str made at run time is interned first)."""
        if key is "dims":
            return self.dims
        if key is "id":
            return self.id
        if key is "precision":
            return self.precision
        if key is "names":
            return [] if self.names is None else self.names
        if key is "rt_info":
            return self.rt_info
        if key is "attrs":
            return {} if self.attrs is None else self.attrs
        if key is "extra_xml":
            return _MISSING if self.extra_xml is None else self.extra_xml
        if type(key) is str and intern(key) is not key:
            return self.field(intern(key))
        return _MISSING



    def keys(self):
        return _PORT_FIELDS if self.extra_xml is None else _PORT_FIELDS + ("extra_xml",)

    def as_dict(self):
        """The port dict ``graph.new_port`` makes, keys in its order."""
        cdef dict port = {"id": self.id, "precision": self.precision,
                          "names": [] if self.names is None else self.names,
                          "dims": self.dims, "rt_info": self.rt_info,
                          "attrs": {} if self.attrs is None else self.attrs}
        if self.extra_xml is not None:
            port["extra_xml"] = self.extra_xml
        return port



cdef class LayerRecord(_Record):
    """A <layer> as ``check`` reads it: the keys of ``graph.new_layer``'s dict as fields,
    its ports :class:`PortRecord` s. ``line`` and ``rt_info`` may be set by key (the
    reader makes lines exact after the walk); nothing else changes a record."""

    cdef public object name, type, version, data, layer_attrs, inputs, outputs, rt_info, line
    cdef public object extra_xml

    cdef object field(self, object key):
        """As ``PortRecord.field``."""
        if key is "type":
            return self.type
        if key is "outputs":
            return self.outputs
        if key is "inputs":
            return self.inputs
        if key is "data":
            return self.data
        if key is "version":
            return self.version
        if key is "name":
            return self.name
        if key is "line":
            return self.line
        if key is "layer_attrs":
            return {} if self.layer_attrs is None else self.layer_attrs
        if key is "rt_info":
            return self.rt_info
        if key is "extra_xml":
            return _MISSING if self.extra_xml is None else self.extra_xml
        if type(key) is str and intern(key) is not key:
            return self.field(intern(key))
        return _MISSING


    def __setitem__(self, key, value):
        if key == "line":
            self.line = value
        elif key == "rt_info":
            self.rt_info = value
        else:
            raise TypeError(f"a layer record takes no new {key!r}: change the graph "
                            "read_ir returns instead")


    def keys(self):
        return _LAYER_FIELDS if self.extra_xml is None else _LAYER_FIELDS + ("extra_xml",)

    def as_dict(self):
        """The node dict ``graph.new_layer`` makes, keys in its order, ports as dicts."""
        cdef dict node = {
            "name": self.name, "type": self.type, "version": self.version,
            "data": self.data,
            "layer_attrs": {} if self.layer_attrs is None else self.layer_attrs,
            "inputs": [(<PortRecord>p).as_dict() for p in self.inputs],
            "outputs": [(<PortRecord>p).as_dict() for p in self.outputs],
            "rt_info": self.rt_info, "line": self.line}
        if self.extra_xml is not None:
            node["extra_xml"] = self.extra_xml
        return node



from collections.abc import Mapping as _Mapping
_Mapping.register(PortRecord)
_Mapping.register(LayerRecord)


def as_dicts(dict nodes):
    """Every :class:`LayerRecord` among the values of ``nodes`` replaced by its dict, in
    place (a graph read in pieces may hold dicts from the careful walk too)."""
    cdef object n, attrs
    for n, attrs in nodes.items():
        if type(attrs) is LayerRecord:
            nodes[n] = (<LayerRecord>attrs).as_dict()


cdef tuple _PORT_KEYS = (b"id", b"precision", b"names")
cdef tuple _LAYER_KEYS = (b"id", b"name", b"type", b"version")


cdef tuple _port_attrs(xmlNode* el):
    """A <port>'s ``(other attributes, id, precision, names)``."""
    cdef list found = [None, None, None]
    cdef dict out = _attrs_but(el, _PORT_KEYS, found)
    return out, _port_id(found[0]), found[1], found[2]


cdef long long _dim(xmlNode* node) except -2:
    """A <dim>'s value: ``-1`` or plain ASCII digits within int64, else _Unusual."""
    cdef xmlNode* text = node.children
    cdef const char* c
    cdef long long value = 0
    cdef int digit
    if text is NULL or text.type != tree.XML_TEXT_NODE or text.next is not NULL:
        raise _Unusual
    c = <const char*>text.content
    if c[0] == b'-' and c[1] == b'1' and c[2] == 0:
        return -1
    if c[0] == 0:
        raise _Unusual
    while c[0] != 0:
        digit = c[0] - 48
        if digit < 0 or digit > 9 or value > (INT64_MAX - digit) // 10:
            raise _Unusual
        value = value * 10 + digit
        c += 1
    return value


cdef object _port_id(str text):
    """Plain ASCII digits, at most 18 (no overflow past int64 to check): any other
    spelling OpenVINO may read (`` 1``, ``+1``) or refuse is the careful walk's."""
    if text is None or not text.isdigit() or not text.isascii() or len(text) > 18:
        raise _Unusual
    return int(text)


DEF _MAX_DIMS = 64


cdef tuple _dims_tuple(long long* dims, Py_ssize_t n, dict shared):
    """The dims as a tuple, one shared tuple per distinct dims (a model repeats a few
    hundred of them over thousands of ports; a tuple is immutable)."""
    cdef tuple out = PyTuple_New(n)
    cdef Py_ssize_t i
    cdef object d
    for i in range(n):
        d = dims[i]
        Py_INCREF(d)
        PyTuple_SET_ITEM(out, i, d)
    found = shared.get(out)
    if found is not None:
        return <tuple>found
    shared[out] = out
    return out


cdef object _new_port(object port_id, object precision, object names, tuple dims,
                      object rt_info, dict attrs, object extra, dict strings,
                      object split_names, bint records):
    """The dict graph.new_port makes, built here (its keys in its order), or its
    :class:`PortRecord` (``records``)."""
    cdef PortRecord record
    if precision is not None:
        precision = strings.setdefault(precision, precision)
    names = [] if not names else (names.split(",") if "\\" not in names
                                  else split_names(names))
    if records:
        record = PortRecord.__new__(PortRecord)
        record.id = port_id
        record.precision = precision
        record.names = names or None
        record.dims = dims
        record.rt_info = rt_info
        record.attrs = attrs or None
        record.extra_xml = extra or None
        return record
    cdef dict port = {"id": port_id, "precision": precision, "names": names, "dims": dims,
                      "rt_info": rt_info, "attrs": attrs}
    if extra:
        port["extra_xml"] = extra
    return port


cdef Py_ssize_t _ports(list ports, xmlNode* section, object doc, dict strings, dict shared,
                       set seen, object rt_text, object split_names, bint records) except -1:
    """Append the <port>s of ``section`` to ``ports``; their number. ``shared``: the dims
    tuples met so far, each the one tuple of its dims."""
    cdef xmlNode* el = _next_element(section.children)
    cdef xmlNode* child
    cdef long long dims[_MAX_DIMS]
    cdef Py_ssize_t n_dims, count = 0
    cdef list extra_dims
    cdef dict attrs, port
    cdef object port_id, precision, names, rt_info, extra, dims_out
    while el is not NULL:
        if not _is(el, "port"):
            raise _Unusual
        attrs, port_id, precision, names = _port_attrs(el)
        if port_id in seen:
            raise _Unusual
        seen.add(port_id)
        n_dims = 0
        extra_dims = None
        rt_info = None
        extra = None
        child = _next_element(el.children)
        while child is not NULL:
            if _is(child, "dim"):
                if n_dims < _MAX_DIMS:
                    dims[n_dims] = _dim(child)
                    n_dims += 1
                else:
                    if extra_dims is None:
                        extra_dims = []
                    extra_dims.append(_dim(child))
            elif _is(child, "rt_info"):
                rt_info = _rt(doc, child, rt_text, strings)
            else:
                if extra is None:
                    extra = []
                extra.append(rt_text(cetree.elementFactory(doc, child)))
            child = _next_element(child.next)
        if extra_dims is None:
            dims_out = _dims_tuple(dims, n_dims, shared)
        else:  # a rank past 64: rare, built as a list
            dims_out = tuple([dims[i] for i in range(n_dims)] + extra_dims)
        ports.append(_new_port(port_id, precision, names, dims_out, rt_info, attrs, extra,
                               strings, split_names, records))
        count += 1
        el = _next_element(el.next)
    return count


cdef bint _is_layer_id(str text):
    """An id in the graph's one spelling: ASCII digits, 1 to 18 of them, no leading zero
    but in ``0`` itself. Any other (``01``, `` 1``, ``+1``: the same layer 1 to OpenVINO,
    or text it refuses) is the careful walk's, which reads it as OpenVINO does."""
    cdef Py_ssize_t size, i
    cdef const char* c = PyUnicode_AsUTF8AndSize(text, &size)
    if size == 0 or size > 18 or (c[0] == b'0' and size > 1):
        return False
    for i in range(size):
        if c[i] < b'0' or c[i] > b'9':
            return False
    return True


cdef class _Layer:
    """A <layer> being read: its tag's fields, checked, and its children's as they come;
    ``node()`` the node dict ``graph.new_layer`` makes (its keys in its order) or its
    :class:`LayerRecord`."""

    cdef object id, name, type, version, data, rt_info, extra
    cdef dict layer_attrs
    cdef list inputs, outputs
    cdef long line

    cdef object node(self, bint records):
        cdef LayerRecord record
        cdef dict node
        if records:
            record = LayerRecord.__new__(LayerRecord)
            record.name = self.name
            record.type = self.type
            record.version = self.version
            record.data = self.data
            record.layer_attrs = self.layer_attrs or None
            record.inputs = self.inputs
            record.outputs = self.outputs
            record.rt_info = self.rt_info
            record.line = self.line
            record.extra_xml = self.extra
            return record
        node = {"name": self.name, "type": self.type, "version": self.version,
                "data": self.data, "layer_attrs": self.layer_attrs, "inputs": self.inputs,
                "outputs": self.outputs, "rt_info": self.rt_info, "line": self.line}
        if self.extra is not None:
            node["extra_xml"] = self.extra
        return node


cdef _Layer _layer(xmlNode* el, long line, dict taken):
    """``graph.layer_of_xml`` of a <layer> tag, built here: ``id``, ``name``, ``type``
    and ``version`` taken out of the attributes and the rest kept as ``layer_attrs``;
    _Unusual for a tag that function refuses (the careful walk then names the error)."""
    cdef list found = [None, None, None, None]
    cdef dict layer_attrs = _attrs_but(el, _LAYER_KEYS, found)
    return _new_layer(layer_attrs, found[0], found[1], found[2], found[3], line, taken)


cdef _Layer _new_layer(dict layer_attrs, object node_id, object name, object op_type,
                       object version, long line, dict taken):
    """The :class:`_Layer` of a <layer> tag's attributes, ``id``, ``name``, ``type`` and
    ``version`` apart (None for one absent); _Unusual for a tag ``graph.layer_of_xml``
    refuses or does not read as it is."""
    if (node_id is None or name is None or op_type is None or not _is_layer_id(node_id)
            or node_id in taken or (version is not None and version.startswith("opset0"))):
        raise _Unusual
    cdef _Layer layer = _Layer.__new__(_Layer)
    layer.id = node_id
    layer.name = name
    layer.type = intern(op_type)
    layer.version = None if version is None else intern(version)
    layer.data = {}
    layer.layer_attrs = layer_attrs
    layer.inputs = []
    layer.outputs = []
    layer.line = line
    return layer


cdef long long _size_text(object text):
    """An offset or size attribute of plain ASCII digits (at most 18) as its value, else -1
    (the Python check then reads it)."""
    if type(text) is not str:
        return -1
    return _number(PyUnicode_AsUTF8AndSize(text, NULL))


cdef bint _usual_const(dict data, dict const_need, object bin_size, list slices,
                       object node_id) except -1:
    """``ir.reader._Reader.check_const``'s first case, here: a Const of a type and shape
    seen before, with a plain offset and size inside the .bin; its slice is noted. False
    for anything else (that method then checks it, and names any error)."""
    cdef long long offset, size, end
    need = const_need.get((data.get("element_type"), data.get("shape")))
    if need is None or bin_size is None:
        return False
    offset = _size_text(data.get("offset"))
    size = _size_text(data.get("size"))
    if offset < 0 or size < 0 or size < <long long>need:
        return False
    end = offset + size
    if end > <long long>bin_size:
        return False
    if size:
        slices.append((offset, end, data.get("element_type"), node_id))
    return True


def read_layers(layers, reader, rt_text, split_names, const_types, long line_offset=0):
    """``[(id, node dict), ...]`` of the <layers> element ``layers`` (an lxml element),
    filling ``reader.nodes`` and adding to ``reader.n_inputs`` as the careful walk does;
    None when the careful walk must read them. ``line_offset`` is added to every layer's
    line (a piece parsed on its own starts at line 1).
    ``reader.check_const`` may raise, as it does there."""
    cdef cetree._Element proxy = <cetree._Element?>layers
    cdef object doc = proxy._doc
    cdef xmlNode* el
    cdef xmlNode* child
    cdef dict nodes = reader.nodes
    cdef dict strings = reader.strings
    cdef dict shared = reader.dims
    cdef list out = []
    cdef _Layer layer
    cdef object node
    cdef set seen
    cdef Py_ssize_t n_inputs = 0
    cdef dict const_need = reader.const_need
    cdef list slices = reader.slices
    cdef object bin_size = reader.bin_size
    cdef bint records = reader.records
    try:
        el = _next_element(proxy._c_node.children)
        while el is not NULL:
            if not _is(el, "layer"):
                return None
            layer = _layer(el, el.line + line_offset, nodes)
            seen = set()
            child = _next_element(el.children)
            while child is not NULL:
                if _is(child, "data"):
                    layer.data = _attrs(child)
                elif _is(child, "output"):
                    _ports(layer.outputs, child, doc, strings, shared, seen, rt_text,
                           split_names, records)
                elif _is(child, "input"):
                    n_inputs += _ports(layer.inputs, child, doc, strings, shared, seen,
                                       rt_text, split_names, records)
                elif _is(child, "rt_info"):
                    layer.rt_info = _rt(doc, child, rt_text, strings)
                else:
                    if layer.extra is None:
                        layer.extra = []
                    layer.extra.append(rt_text(cetree.elementFactory(doc, child)))
                child = _next_element(child.next)
            node = nodes[layer.id] = layer.node(records)
            if layer.type in const_types and not _usual_const(
                    <dict>layer.data, const_need, bin_size, slices, layer.id):
                reader.check_const(layer.id)
            out.append((layer.id, node))
            el = _next_element(el.next)
    except _Unusual:
        return None
    reader.n_inputs += n_inputs
    return out


cdef long long _number(const char* c) except -2:
    """Plain ASCII digits (at most 18, so no overflow) as their value, else -1."""
    cdef long long value = 0
    cdef int n = 0, digit
    if c[0] == 0:
        return -1
    while c[n] != 0:
        digit = c[n] - 48
        if digit < 0 or digit > 9 or n == 18:
            return -1
        value = value * 10 + digit
        n += 1
    return value


cdef inline Py_ssize_t _id_bound(dict nodes):
    return 2 * len(nodes) + 1024


cdef list _ids_by_number(dict nodes, Py_ssize_t* position=NULL):
    """``[id or None, ...]`` indexed by the number a layer id spells, for the ids in
    canonical form (no leading zero) below ``_id_bound(nodes)``: an edge then names its
    layers with the very strings the node dicts are keyed by, without a new str per edge.
    ``position``, when given (that many slots), gets each such id's place in ``nodes``."""
    cdef Py_ssize_t bound = _id_bound(nodes), size, i = 0
    cdef list out = [None] * bound
    cdef const char* c
    cdef long long value
    for key in nodes:
        c = PyUnicode_AsUTF8AndSize(key, &size)
        value = _number(c)
        if 0 <= value < bound and (c[0] != b'0' or size == 1):
            out[value] = key
            if position is not NULL:
                position[value] = i
        i += 1
    return out


cdef inline object _layer_id(const tree.xmlChar* text, list by_number):
    cdef const char* c = <const char*>text
    cdef long long value = _number(c)
    cdef object known
    if 0 <= value < PyList_GET_SIZE(by_number) and (c[0] != b'0' or c[1] == 0):
        known = <object>PyList_GET_ITEM(by_number, value)
        if known is not None:
            return known
    return _text(text)


cdef inline bint _has_port(list ports, object port_id, dict ids, object node) except -1:
    """``graph.has_port``, with the usual few ports scanned here."""
    if PyList_GET_SIZE(ports) > 8:
        return has_port(ports, port_id, ids, node)
    for port in ports:
        if port["id"] == port_id:
            return True
    return False


cdef bint _take_edge(list out, set fed, dict nodes, dict out_ids, dict in_ids, object src,
                     object dst, object fp, object tp, long line, object ports=None,
                     bint records=False) except -1:
    """Append the edge ``src:fp -> dst:tp`` when both ports exist and ``dst:tp`` has no
    edge yet (in ``fed``; None: the caller saw to it); False (the caller gives up on the
    fast read) otherwise. ``ports``: the edge's key ``(fp, tp)``, when the caller has it;
    ``records``: the edge's line stands for its dict (``graph.LayerGraph`` makes it)."""
    if not _has_port(nodes[src]["outputs"], fp, out_ids, src):
        return False
    if not _has_port(nodes[dst]["inputs"], tp, in_ids, dst):
        return False
    if fed is not None:
        key = (dst, tp)
        if key in fed:
            return False
        fed.add(key)
    if records:
        out.append((src, dst, (fp, tp) if ports is None else ports, line))
    else:
        out.append((src, dst, (fp, tp) if ports is None else ports,
                    {"from_port": fp, "to_port": tp, "line": line}))
    return True


def read_edges(edges, dict nodes, Py_ssize_t n_inputs):
    """``[(from, to, (from-port, to-port), {"from_port", "to_port", "line"}), ...]`` of
    the <edges> element, every edge between existing ports and every input port fed
    once; None when any edge is unusual or breaks a rule (the careful walk names it)."""
    cdef cetree._Element proxy = <cetree._Element?>edges
    cdef xmlNode* el
    cdef xmlAttr* a
    cdef list out = []
    cdef list by_number = _ids_by_number(nodes)
    cdef const tree.xmlChar* values[4]
    cdef set fed = set()
    cdef dict out_ids = {}, in_ids = {}
    cdef int i
    cdef long long port
    cdef const char* names[4]
    cdef object src, dst, fp, tp
    names[0] = "from-layer"
    names[1] = "from-port"
    names[2] = "to-layer"
    names[3] = "to-port"
    try:
        el = _next_element(proxy._c_node.children)
        while el is not NULL:
            if not _is(el, "edge"):
                return None
            a = el.properties
            for i in range(4):
                if (a is NULL or a.ns is not NULL or strcmp(<const char*>a.name, names[i]) != 0
                        or a.children is NULL or a.children.type != tree.XML_TEXT_NODE
                        or a.children.next is not NULL):
                    return None
                values[i] = a.children.content
                a = a.next
            if a is not NULL:
                return None
            port = _number(<const char*>values[1])
            if port < 0:
                return None
            fp = port
            port = _number(<const char*>values[3])
            if port < 0:
                return None
            tp = port
            src = _layer_id(values[0], by_number)
            dst = _layer_id(values[2], by_number)
            if src not in nodes or dst not in nodes:
                return None
            if not _take_edge(out, fed, nodes, out_ids, in_ids, src, dst, fp, tp, el.line):
                return None
            el = _next_element(el.next)
    except _Unusual:
        return None
    if len(fed) != n_inputs:
        return None
    return out


cdef inline Py_ssize_t _spaces(const unsigned char* p, Py_ssize_t i, Py_ssize_t n):
    """The index of the first byte at or after ``i`` that is no space or tab."""
    while i < n and (p[i] == 32 or p[i] == 9):
        i += 1
    return i


cdef Py_ssize_t _digits_attr(const unsigned char* p, Py_ssize_t i, Py_ssize_t n,
                             const char* name, long long* value):
    """``name="digits"`` at ``p[i:]``, the digits 1 to 18 of them: the index past the
    closing quote, the value in ``value``; -1 for anything else (``name = "1"`` too)."""
    cdef Py_ssize_t k = strlen(name), start
    if i + k + 2 > n or memcmp(p + i, name, k) != 0 or p[i + k] != 61 or p[i + k + 1] != 34:
        return -1
    i += k + 2
    start = i
    value[0] = 0
    while i < n and 48 <= p[i] <= 57:
        if i - start == 18:
            return -1
        value[0] = value[0] * 10 + (p[i] - 48)
        i += 1
    if i == start or i >= n or p[i] != 34:
        return -1
    return i + 1


cdef object _canonical_layer(const unsigned char* p, Py_ssize_t at, long long value,
                             list by_number):
    """The node id str a layer number spelled at ``p[at]`` names (no leading zero), or
    None (a spelling or a layer the careful walk must see)."""
    if p[at] == 48 and p[at + 1] != 34:  # a leading zero: "01"
        return None
    if value >= PyList_GET_SIZE(by_number):
        return None
    return <object>PyList_GET_ITEM(by_number, value)


@cython.boundscheck(False)
@cython.wraparound(False)
def scan_edges(const unsigned char[:] xml, Py_ssize_t start, Py_ssize_t end, long line,
               dict nodes, Py_ssize_t n_inputs, bint records=False):
    """``read_edges`` of the bytes ``xml[start:end]`` (the content of <edges>, whose first
    byte is on line ``line``) without parsing them: the same list, with exact lines, when
    they hold only whitespace (space, tab, newline) and edges as OpenVINO writes them,
    each on one line: ``<edge from-layer="1" from-port="0" to-layer="2" to-port="0"/>``
    (digits only, layer ids without leading zero, the attributes in that order). Such
    bytes are well-formed XML that lxml would read as those elements; None for any other
    byte, and for an edge that breaks a rule (the careful walk then names it).

    Returned with whether every edge goes forward in the order of ``nodes`` (what
    ``in_order`` says of them and that order), as ``(edges, forward)``. ``records``: each
    edge's line in place of its dict, as ``graph.LayerGraph`` keeps edges for ``check``."""
    cdef Py_ssize_t bound = _id_bound(nodes)
    cdef Py_ssize_t* position = <Py_ssize_t*>malloc(bound * sizeof(Py_ssize_t))
    cdef unsigned long long* fed = <unsigned long long*>calloc(bound, 8)
    try:
        if position is NULL or fed is NULL:
            raise MemoryError()
        return _scan_edges(xml, start, end, line, nodes, n_inputs, position, fed, records)
    finally:
        free(position)
        free(fed)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef object _scan_edges(const unsigned char[:] xml, Py_ssize_t start, Py_ssize_t end,
                        long line, dict nodes, Py_ssize_t n_inputs, Py_ssize_t* position,
                        unsigned long long* fed_bits, bint records):
    """``scan_edges``; ``fed_bits[n]``: the input ports 0-63 of layer ``n`` fed so far."""
    cdef const unsigned char* p
    cdef Py_ssize_t i = start, at_src, at_dst, n_fed = 0
    cdef long long src_n, fp_n, dst_n, tp_n
    cdef unsigned long long bit
    cdef list out = []
    cdef list by_number = _ids_by_number(nodes, position)
    cdef list keys = [None] * 256  # the edge key (fp, tp) of ports below 16, made once
    cdef bint forward = True
    cdef set fed = set()  # (layer, port) fed so far, of ports from 64 on
    cdef dict out_ids = {}, in_ids = {}
    cdef object src, dst, fp, tp
    cdef unsigned char c
    if end <= start:
        return (out, True) if n_inputs == 0 else None
    p = &xml[0]
    while i < end:
        c = p[i]
        if c == 10:
            line += 1
            i += 1
            continue
        if c == 32 or c == 9:
            i += 1
            continue
        if c != 60 or i + 6 > end or memcmp(p + i, b"<edge", 5) != 0 \
                or (p[i + 5] != 32 and p[i + 5] != 9):
            return None
        i = _spaces(p, i + 5, end)
        at_src = i + 12  # the first digit of from-layer="
        i = _digits_attr(p, i, end, "from-layer", &src_n)
        if i < 0 or (p[i] != 32 and p[i] != 9):
            return None
        i = _digits_attr(p, _spaces(p, i, end), end, "from-port", &fp_n)
        if i < 0 or (p[i] != 32 and p[i] != 9):
            return None
        i = _spaces(p, i, end)
        at_dst = i + 10  # the first digit of to-layer="
        i = _digits_attr(p, i, end, "to-layer", &dst_n)
        if i < 0 or (p[i] != 32 and p[i] != 9):
            return None
        i = _digits_attr(p, _spaces(p, i, end), end, "to-port", &tp_n)
        if i < 0:
            return None
        i = _spaces(p, i, end)
        if i + 2 > end or p[i] != 47 or p[i + 1] != 62:  # '/>'
            return None
        i += 2
        src = _canonical_layer(p, at_src, src_n, by_number)
        dst = _canonical_layer(p, at_dst, dst_n, by_number)
        if src is None or dst is None:
            return None
        if position[src_n] >= position[dst_n]:  # both set: by_number names them
            forward = False
        fp = fp_n
        tp = tp_n
        if tp_n < 64:  # dst_n < bound: by_number names it
            bit = 1ULL << tp_n
            if fed_bits[dst_n] & bit:
                return None
            fed_bits[dst_n] |= bit
            n_fed += 1
            if fp_n < 16 and tp_n < 16:
                key = <object>PyList_GET_ITEM(keys, fp_n * 16 + tp_n)
                if key is None:
                    key = keys[fp_n * 16 + tp_n] = (fp, tp)
            else:
                key = (fp, tp)
            if not _take_edge(out, None, nodes, out_ids, in_ids, src, dst, fp, tp, line, key,
                              records):
                return None
        elif not _take_edge(out, fed, nodes, out_ids, in_ids, src, dst, fp, tp, line, None,
                            records):
            return None
    if n_fed + len(fed) != n_inputs:
        return None
    return out, forward


@cython.boundscheck(False)
@cython.wraparound(False)
def tag_lines(const unsigned char[:] xml):
    """(lines of every ``<layer``, lines of every ``<edge``) in the bytes, a tag being the
    name followed by whitespace, ``/`` or ``>``, never one inside a comment, CDATA section
    or processing instruction: one pass counting newlines. The caller uses them only
    when the counts equal the layers and edges read."""
    cdef Py_ssize_t i, n = xml.shape[0], quiet = 0
    cdef long line = 1
    cdef list layers = [], edges = []
    cdef unsigned char c
    cdef const unsigned char* p
    if n == 0:
        return layers, edges
    p = &xml[0]
    for i in range(n):
        c = xml[i]
        if c == 10:
            line += 1
        elif c == 60 and i + 6 < n and i >= quiet:  # '<' outside a comment, CDATA or PI
            if (xml[i + 1] == 108 and xml[i + 2] == 97 and xml[i + 3] == 121   # l a y
                    and xml[i + 4] == 101 and xml[i + 5] == 114 and _ends(xml[i + 6])):
                layers.append(line)
            elif (xml[i + 1] == 101 and xml[i + 2] == 100 and xml[i + 3] == 103  # e d g
                    and xml[i + 4] == 101 and _ends(xml[i + 5])):
                edges.append(line)
            elif xml[i + 1] == 33:  # '!'
                if _at(p, i + 1, n, "!--"):
                    quiet = _end_of(p, i + 4, n, "-->")
                elif _at(p, i + 1, n, "![CDATA["):
                    quiet = _end_of(p, i + 9, n, "]]>")
            elif xml[i + 1] == 63:  # '?'
                quiet = _pi_end(p, i + 2, n)
    return layers, edges


cdef inline bint _ends(unsigned char c):
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 47 or c == 62


def in_order(list nodes, list edges):
    """True when every edge goes forward in layer order (so the graph has no cycle)."""
    cdef dict position = {}
    cdef Py_ssize_t i = 0
    cdef object n, u, v, rest
    for n, rest in nodes:
        position[n] = i
        i += 1
    for u, v, rest, rest in edges:
        if <Py_ssize_t>position[u] >= <Py_ssize_t>position[v]:
            return False
    return True


cdef struct _Slice:
    long long offset, end
    Py_ssize_t index


cdef int _slice_order(const void* a, const void* b) noexcept nogil:
    """By offset, then end, then the order read (a stable sort, as the Python twin's)."""
    cdef const _Slice* x = <const _Slice*>a
    cdef const _Slice* y = <const _Slice*>b
    if x.offset != y.offset:
        return -1 if x.offset < y.offset else 1
    if x.end != y.end:
        return -1 if x.end < y.end else 1
    return -1 if x.index < y.index else (1 if x.index > y.index else 0)


def first_overlap(list slices):
    """``ir.weights.first_overlap`` at C speed (a C sort of the two numbers): the same
    answer."""
    cdef Py_ssize_t i, n = len(slices), reach = -1
    cdef _Slice* order = <_Slice*>malloc((n or 1) * sizeof(_Slice))
    if order is NULL:
        raise MemoryError()
    try:
        for i in range(n):
            slice_ = <tuple>slices[i]
            order[i].offset = slice_[0]
            order[i].end = slice_[1]
            order[i].index = i
        qsort(order, n, sizeof(_Slice), _slice_order)
        for i in range(n):
            if reach >= 0 and order[i].offset < order[reach].end and (
                    order[i].offset != order[reach].offset or order[i].end != order[reach].end):
                return slices[order[reach].index], slices[order[i].index]
            if reach < 0 or order[i].end > order[reach].end:
                reach = i
        return None
    finally:
        free(order)


def fill_sources(dict node_dict, dict pred, list nodes, list edges):
    """The nodes (unless ``node_dict`` is None: the caller's dict holds them), and for
    each layer the keys ``(from_port, to_port)`` of the edges from each producer as
    ``pred[v][u]``, a tuple: what ``check`` reads of the edges (``graph.LayerGraph`` keeps
    the edges themselves)."""
    cdef object n, attrs, u, v, key, sources
    for n, attrs in nodes:
        if node_dict is not None:
            node_dict[n] = attrs
        pred[n] = _NO_SOURCES  # a layer without inputs (a Const, a Parameter) keeps it
    for u, v, key, attrs in edges:
        sources = pred[v]
        if sources is _NO_SOURCES:
            sources = pred[v] = {}
        keys = (<dict>sources).get(u)
        (<dict>sources)[u] = (key,) if keys is None else keys + (key,)


def fill_graph(dict node_dict, dict succ, dict pred, list nodes, list edges):
    """``ir.reader._fill_graph`` at C speed: the nodes, then the edges in networkx's
    adjacency layout (``succ[u][v][key] = data``, the key dict shared by ``pred[v][u]``)."""
    cdef object n, attrs, u, v, key
    cdef dict targets, keydict
    for n, attrs in nodes:
        node_dict[n] = attrs
        succ[n] = {}
        pred[n] = {}
    for u, v, key, attrs in edges:
        targets = <dict>succ[u]
        keydict = targets.get(v)
        if keydict is None:
            keydict = targets[v] = {}
            (<dict>pred[v])[u] = keydict
        keydict[key] = attrs


cdef extern from "string.h":
    const void* memchr(const void* s, int c, size_t n) nogil


cdef inline bint _at(const unsigned char* p, Py_ssize_t i, Py_ssize_t n, const char* word):
    """Whether ``word`` is spelled at ``p[i:]`` (within ``n`` bytes)."""
    cdef Py_ssize_t k = 0
    while word[k] != 0:
        if i + k >= n or p[i + k] != <unsigned char>word[k]:
            return False
        k += 1
    return True


cdef inline Py_ssize_t _pi_end(const unsigned char* p, Py_ssize_t i, Py_ssize_t n):
    """The index just past the first ``?>`` at or after ``i``; ``n`` when there is none."""
    cdef const unsigned char* found
    while i + 1 < n:
        found = <const unsigned char*>memchr(p + i, 63, n - i - 1)  # '?'
        if found is NULL:
            return n
        i = found - p
        if p[i + 1] == 62:  # '>'
            return i + 2
        i += 1
    return n


cdef inline bint _tag_end(const unsigned char* p, Py_ssize_t i, Py_ssize_t n):
    """A byte that ends a tag name as ``\\s``, ``>`` or ``/`` does in a bytes pattern."""
    return i < n and (p[i] == 32 or (9 <= p[i] <= 13) or p[i] == 62 or p[i] == 47)


cdef inline Py_ssize_t _end_of(const unsigned char* p, Py_ssize_t i, Py_ssize_t n,
                               const char* close):
    """The index just past the first ``close`` (3 bytes) at or after ``i``; ``n`` when
    there is none (an unterminated comment: the parse refuses the file anyway)."""
    cdef const unsigned char* found
    while i + 2 < n:
        found = <const unsigned char*>memchr(p + i, close[0], n - i - 2)
        if found is NULL:
            return n
        i = found - p
        if p[i + 1] == <unsigned char>close[1] and p[i + 2] == <unsigned char>close[2]:
            return i + 3
        i += 1
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def markup_counts(const unsigned char[:] xml):
    """What the reader asks of the raw bytes before parsing, in one pass over each ``<``:
    ``(<layer> element tags, whether <!-- occurs, whether <![CDATA[ occurs,
    <? occurrences, whether a body tag occurs)``, a tag being its name followed by
    whitespace, ``>`` or ``/``. The four last are what ``bytes.count``/``in`` and
    ``ir.bodies._BODY_TAG`` give; the first counts only tags, never a ``<layer`` inside a
    comment, CDATA section or processing instruction (``parse.count_layer_tags``
    counts the same), nor ``<layers``: five scans fewer."""
    cdef Py_ssize_t n = xml.shape[0], i = 0, layers = 0, pis = 0, quiet = 0
    cdef bint comment = False, cdata = False, body = False
    cdef const unsigned char* p
    cdef const unsigned char* found
    cdef unsigned char c
    if n == 0:
        return 0, False, False, 0, False
    p = &xml[0]
    while True:
        found = <const unsigned char*>memchr(p + i, 60, n - i)  # '<'
        if found is NULL:
            break
        i = found - p + 1
        if i >= n:
            break
        c = p[i]
        if c == 108:  # l
            if i >= quiet and _at(p, i, n, "layer") and _tag_end(p, i + 5, n):
                layers += 1
        elif c == 33:  # !
            if _at(p, i, n, "!--"):
                comment = True
                if i >= quiet:  # no <layer counted up to its end
                    quiet = _end_of(p, i + 3, n, "-->")
            elif _at(p, i, n, "![CDATA["):
                cdata = True
                if i >= quiet:
                    quiet = _end_of(p, i + 8, n, "]]>")
        elif c == 63:  # ?
            pis += 1
            if i >= quiet:
                quiet = _pi_end(p, i + 1, n)
        elif not body:
            if c == 98:  # b
                body = _at(p, i, n, "body") and _tag_end(p, i + 4, n)
            elif c == 116:  # t
                body = _at(p, i, n, "then_body") and _tag_end(p, i + 9, n)
            elif c == 101:  # e
                body = _at(p, i, n, "else_body") and _tag_end(p, i + 9, n)
    return layers, comment, cdata, pis, body


# -- <layers> read straight from the bytes ---------------------------------------------


cdef inline bint _name_start(unsigned char c):
    return (65 <= c <= 90) or (97 <= c <= 122) or c == 95  # A-Z a-z _


cdef inline bint _name_char(unsigned char c):
    return _name_start(c) or (48 <= c <= 57) or c == 45 or c == 46  # 0-9 - .


cdef inline int _utf8(unsigned long code, char* out):
    """``code`` (a valid XML character) encoded as UTF-8 at ``out``; its length."""
    if code < 0x80:
        out[0] = <char>code
        return 1
    if code < 0x800:
        out[0] = <char>(0xC0 | (code >> 6))
        out[1] = <char>(0x80 | (code & 0x3F))
        return 2
    if code < 0x10000:
        out[0] = <char>(0xE0 | (code >> 12))
        out[1] = <char>(0x80 | ((code >> 6) & 0x3F))
        out[2] = <char>(0x80 | (code & 0x3F))
        return 3
    out[0] = <char>(0xF0 | (code >> 18))
    out[1] = <char>(0x80 | ((code >> 12) & 0x3F))
    out[2] = <char>(0x80 | ((code >> 6) & 0x3F))
    out[3] = <char>(0x80 | (code & 0x3F))
    return 4


cdef inline bint _xml_char(unsigned long code):
    """A character XML 1.0 allows (what a character reference may name)."""
    return (code == 9 or code == 10 or code == 13 or 0x20 <= code <= 0xD7FF
            or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF)


@cython.final
cdef class _Bytes:
    """A cursor over the bytes of <layers> content, reading the XML OpenVINO's serializer
    writes, exactly as libxml2 reads it, or raising _Unusual: tags with names of ASCII
    letters, digits, ``_ - .``; attributes quoted, each once a tag, their values decoded
    as XML does (the five predefined entities, character references, a literal tab or
    newline read as a space); whitespace (space, tab, newline) between elements. A CR, a
    control character, ``<`` in a value, any other ``&``, comments, processing
    instructions, CDATA, namespaces (``:`` in a name, ``xmlns``), bytes that are not UTF-8
    or not XML characters: _Unusual."""
    cdef const unsigned char* p
    cdef Py_ssize_t i, n
    cdef long line
    #: the line of the end of the last start tag read: libxml2's line of its element
    cdef long tag_line
    #: the ``_cache`` hash of the last name read
    cdef unsigned int name_hash

    cdef int blank(self) except -1:
        """Skip whitespace; whether there was any."""
        cdef Py_ssize_t at = self.i
        cdef unsigned char c
        while self.i < self.n:
            c = self.p[self.i]
            if c == 10:
                self.line += 1
            elif c != 32 and c != 9:
                if c == 13:
                    raise _Unusual  # XML's line-end normalization is the parser's
                break
            self.i += 1
        return self.i > at

    cdef Py_ssize_t name(self) except -1:
        """A name at the cursor, consumed; its length (its start: the cursor before)."""
        cdef Py_ssize_t at = self.i
        cdef unsigned int h = _FNV_START
        if at >= self.n or not _name_start(self.p[at]):
            raise _Unusual
        while self.i < self.n and _name_char(self.p[self.i]):
            h = _fnv(h, self.p[self.i])
            self.i += 1
        self.name_hash = h
        return self.i - at

    cdef bint is_name(self, Py_ssize_t at, Py_ssize_t size, const char* word):
        return <Py_ssize_t>strlen(word) == size and memcmp(self.p + at, word, size) == 0

    cdef int open_tag(self) except -1:
        """Past whitespace, the ``<`` of a start tag (0) or of an end tag (1)."""
        self.blank()
        if self.i + 1 >= self.n or self.p[self.i] != 60:  # '<'
            raise _Unusual
        if self.p[self.i + 1] == 47:  # '/'
            self.i += 2
            return 1
        self.i += 1
        return 0

    cdef int close(self, const char* word) except -1:
        """The rest of an end tag ``</word>`` (the ``</`` read)."""
        cdef Py_ssize_t at = self.i
        if not self.is_name(at, self.name(), word):
            raise _Unusual
        self.blank()
        if self.i >= self.n or self.p[self.i] != 62:  # '>'
            raise _Unusual
        self.i += 1
        return 0

    cdef int attributes(self, dict attrs, tuple keys=None, list found=None) except -1:
        """The attributes of the start tag whose name was read, into ``attrs`` in document
        order (None: the tag must have none), but those named in ``keys`` (bytes), whose
        values go to ``found`` at the key's place instead (as ``_attrs_but``: a dict that
        never held them is smaller), up to its end: 1 for an empty-element tag (``/>``),
        else 0."""
        cdef bint spaced
        cdef Py_ssize_t at, size, k, index
        cdef unsigned char c
        cdef str key
        while True:
            spaced = self.blank()
            if self.i >= self.n:
                raise _Unusual
            c = self.p[self.i]
            if c == 62 or c == 47:  # '>', '/'
                self.tag_line = self.line
                if c == 47:
                    if self.i + 1 >= self.n or self.p[self.i + 1] != 62:
                        raise _Unusual
                    self.i += 2
                    return 1
                self.i += 1
                return 0
            if not spaced or attrs is None:
                raise _Unusual
            at = self.i
            size = self.name()
            if self.is_name(at, size, "xmlns"):
                raise _Unusual
            index = -1
            if keys is not None:
                for k in range(len(keys)):
                    if self.is_name(at, size, <bytes>keys[k]):
                        index = k
                        break
            key = None if index >= 0 else _short_hashed(<const char*>self.p + at, size,
                                                        self.name_hash)
            self.blank()
            if self.i >= self.n or self.p[self.i] != 61:  # '='
                raise _Unusual
            self.i += 1
            self.blank()
            if index >= 0:
                if found[index] is not None:
                    raise _Unusual  # an attribute twice: not well-formed
                found[index] = self.value()
                continue
            size = len(attrs)
            attrs[key] = self.value()
            if len(attrs) == size:
                raise _Unusual

    cdef str value(self):
        """A quoted attribute value, consumed, as XML reads it."""
        cdef Py_ssize_t start, end
        cdef unsigned char quote, c
        cdef bint plain = True
        cdef unsigned int h = _FNV_START
        if self.i >= self.n:
            raise _Unusual
        quote = self.p[self.i]
        if quote != 34 and quote != 39:  # '"', "'"
            raise _Unusual
        self.i += 1
        start = self.i
        while True:
            if self.i >= self.n:
                raise _Unusual
            c = self.p[self.i]
            if c == quote:
                break
            if c < 32 or c > 126 or c == 38 or c == 60:  # control, non-ASCII, '&', '<'
                if c == 60 or (c < 32 and c != 9 and c != 10):
                    raise _Unusual
                if c == 10:
                    self.line += 1
                plain = False
            h = _fnv(h, c)
            self.i += 1
        end = self.i
        self.i += 1
        if plain:
            return _short_hashed(<const char*>self.p + start, end - start, h)
        return _decoded(self.p + start, end - start)


cdef str _decoded(const unsigned char* p, Py_ssize_t n):
    """An attribute value's raw bytes as XML reads them: the predefined entities and
    character references decoded, a literal tab or newline a space, strict UTF-8 without
    U+FFFE or U+FFFF; _Unusual for another ``&``."""
    cdef char* out = <char*>malloc(n + 1)
    cdef Py_ssize_t i = 0, k = 0, j
    cdef unsigned long code
    cdef unsigned char c
    if out is NULL:
        raise MemoryError
    try:
        while i < n:
            c = p[i]
            if c == 9 or c == 10:
                out[k] = 32
                k += 1
                i += 1
            elif c == 0xEF and i + 2 < n and p[i + 1] == 0xBF and (p[i + 2] == 0xBE
                                                                or p[i + 2] == 0xBF):
                raise _Unusual  # U+FFFE, U+FFFF: no XML characters
            elif c != 38:  # '&'
                out[k] = <char>c
                k += 1
                i += 1
            else:
                j = i + 1
                while j < n and j - i <= 12 and p[j] != 59:  # ';'
                    j += 1
                if j >= n or p[j] != 59:
                    raise _Unusual
                code = _reference(p + i + 1, j - i - 1)
                k += _utf8(code, out + k)
                i = j + 1
        return PyUnicode_DecodeUTF8(out, k, NULL)
    finally:
        free(out)


cdef unsigned long _reference(const unsigned char* p, Py_ssize_t n) except 0:
    """The character the reference ``&p[:n];`` names: one of the five predefined
    entities, ``#`` decimal digits or ``#x`` hexadecimal ones; _Unusual for any other."""
    cdef unsigned long code = 0
    cdef Py_ssize_t i
    cdef unsigned char c
    if n == 2 and memcmp(p, b"lt", 2) == 0:
        return 60
    if n == 2 and memcmp(p, b"gt", 2) == 0:
        return 62
    if n == 3 and memcmp(p, b"amp", 3) == 0:
        return 38
    if n == 4 and memcmp(p, b"quot", 4) == 0:
        return 34
    if n == 4 and memcmp(p, b"apos", 4) == 0:
        return 39
    if n < 2 or p[0] != 35:  # '#'
        raise _Unusual
    if p[1] == 120:  # 'x'
        if n == 2 or n > 10:
            raise _Unusual
        for i in range(2, n):
            c = p[i]
            if 48 <= c <= 57:
                code = code * 16 + (c - 48)
            elif 97 <= c <= 102:
                code = code * 16 + (c - 87)
            elif 65 <= c <= 70:
                code = code * 16 + (c - 55)
            else:
                raise _Unusual
    else:
        if n > 11:
            raise _Unusual
        for i in range(1, n):
            c = p[i]
            if not 48 <= c <= 57:
                raise _Unusual
            code = code * 10 + (c - 48)
    if not _xml_char(code):
        raise _Unusual
    return code


cdef long long _scan_dim(_Bytes s) except -2:
    """A <dim>'s content and end tag (the start tag read): ``-1`` or plain ASCII digits
    within int64, as ``_dim`` takes them; _Unusual for any other."""
    cdef long long value = 0
    cdef int digit
    cdef Py_ssize_t start = s.i
    if s.i + 1 < s.n and s.p[s.i] == 45 and s.p[s.i + 1] == 49:  # "-1"
        s.i += 2
        value = -1
    else:
        while s.i < s.n and 48 <= s.p[s.i] <= 57:
            digit = s.p[s.i] - 48
            if value > (INT64_MAX - digit) // 10:
                raise _Unusual
            value = value * 10 + digit
            s.i += 1
        if s.i == start:
            raise _Unusual
    if s.i + 1 >= s.n or s.p[s.i] != 60 or s.p[s.i + 1] != 47:  # "</"
        raise _Unusual
    s.i += 2
    s.close("dim")
    return value


cdef str _scan_rt(_Bytes s, dict strings):
    """``rt_text`` of an <rt_info> (its start tag's name read) as ``_flat_rt`` builds it:
    empty elements with plain attribute values side by side, or nothing; _Unusual for
    anything else."""
    cdef list out = ["<rt_info>"]
    cdef dict attrs
    cdef Py_ssize_t at, size
    cdef str name, text
    if s.attributes(None):
        return strings.setdefault("<rt_info/>", "<rt_info/>")
    while not s.open_tag():
        at = s.i
        size = s.name()
        name = _short_hashed(<const char*>s.p + at, size, s.name_hash)
        attrs = {}
        if not s.attributes(attrs):  # <x ...></x>: nothing between
            if s.i + 1 >= s.n or s.p[s.i] != 60 or s.p[s.i + 1] != 47:
                raise _Unusual
            s.i += 2
            s.close(PyUnicode_AsUTF8AndSize(name, NULL))
        out += ("<", name)
        for key, value in attrs.items():
            if not _plain_value(PyUnicode_AsUTF8AndSize(<str>value, NULL)):
                raise _Unusual
            out += (" ", key, '="', value, '"')
        out.append("/>")
    s.close("rt_info")
    if len(out) == 1:
        return strings.setdefault("<rt_info/>", "<rt_info/>")
    out.append("</rt_info>")
    text = "".join(out)
    return strings.setdefault(text, text)


cdef Py_ssize_t _scan_ports(_Bytes s, const char* section, list ports, dict strings,
                            dict shared, set seen, object split_names, bint records
                            ) except -1:
    """The <port>s of an <input> or <output> section (its start tag's name read) appended
    to ``ports``; their number."""
    cdef long long dims[_MAX_DIMS]
    cdef Py_ssize_t n_dims, count = 0, at, size
    cdef dict attrs
    cdef list found
    cdef object port_id, rt_info
    if s.attributes(None):
        return 0
    while not s.open_tag():
        at = s.i
        if not s.is_name(at, s.name(), "port"):
            raise _Unusual
        attrs = {}
        found = [None, None, None]
        n_dims = 0
        rt_info = None
        if not s.attributes(attrs, _PORT_KEYS, found):
            while not s.open_tag():
                at = s.i
                size = s.name()
                if s.is_name(at, size, "dim"):
                    if n_dims == _MAX_DIMS or s.attributes(None):
                        raise _Unusual
                    dims[n_dims] = _scan_dim(s)
                    n_dims += 1
                elif s.is_name(at, size, "rt_info"):
                    rt_info = _scan_rt(s, strings)
                else:
                    raise _Unusual
            s.close("port")
        port_id = _port_id(found[0])
        if port_id in seen:
            raise _Unusual
        seen.add(port_id)
        ports.append(_new_port(port_id, found[1], found[2], _dims_tuple(dims, n_dims, shared),
                               rt_info, attrs, None, strings, split_names, records))
        count += 1
    s.close(section)
    return count


cdef dict _scan_data(_Bytes s):
    """A <data> element's attributes (its start tag's name read); only whitespace in it."""
    cdef dict attrs = {}
    if not s.attributes(attrs):
        if not s.open_tag():
            raise _Unusual
        s.close("data")
    return attrs


@cython.boundscheck(False)
@cython.wraparound(False)
def scan_layers(const unsigned char[:] xml, Py_ssize_t start, Py_ssize_t end, long line,
                reader, split_names, const_types):
    """``read_layers`` of the bytes ``xml[start:end]`` (<layers> content, whose first
    byte is on line ``line``) without parsing them: the same list, lines and reader state
    as ``read_layers`` gives for the parsed bytes, when they hold only <layer> elements
    as OpenVINO's serializer writes them (see ``_Bytes``; children <data>, <input>,
    <output>, <rt_info>; <port>s with <dim>s and a flat <rt_info>); None for anything
    else (nothing added to the reader then but what ``read_layers`` also leaves: the
    caller forgets the layers added, as after it). ``reader.check_const`` may raise."""
    cdef _Bytes s = _Bytes()
    cdef dict nodes = reader.nodes
    cdef dict strings = reader.strings
    cdef dict shared = reader.dims
    cdef dict const_need = reader.const_need
    cdef list slices = reader.slices
    cdef object bin_size = reader.bin_size
    cdef list out = []
    cdef dict attrs
    cdef object node
    cdef _Layer layer
    cdef list found
    cdef set seen
    cdef Py_ssize_t n_inputs = 0, at, size
    cdef bint records = reader.records
    if end <= start:
        return out
    s.p = &xml[0]
    s.i = start
    s.n = end
    s.line = line
    try:
        while True:
            s.blank()
            if s.i == s.n:
                break
            if s.open_tag():
                return None
            at = s.i
            if not s.is_name(at, s.name(), "layer"):
                return None
            attrs = {}
            found = [None, None, None, None]
            empty = s.attributes(attrs, _LAYER_KEYS, found)
            layer = _new_layer(attrs, found[0], found[1], found[2], found[3], s.tag_line,
                               nodes)
            seen = set()
            if not empty:
                while not s.open_tag():
                    at = s.i
                    size = s.name()
                    if s.is_name(at, size, "data"):
                        layer.data = _scan_data(s)
                    elif s.is_name(at, size, "output"):
                        _scan_ports(s, "output", layer.outputs, strings, shared, seen,
                                    split_names, records)
                    elif s.is_name(at, size, "input"):
                        n_inputs += _scan_ports(s, "input", layer.inputs, strings,
                                                shared, seen, split_names, records)
                    elif s.is_name(at, size, "rt_info"):
                        layer.rt_info = _scan_rt(s, strings)
                    else:
                        return None
                s.close("layer")
            node = nodes[layer.id] = layer.node(records)
            if layer.type in const_types and not _usual_const(
                    <dict>layer.data, const_need, bin_size, slices, layer.id):
                reader.check_const(layer.id)
            out.append((layer.id, node))
    except (_Unusual, UnicodeDecodeError):
        return None
    reader.n_inputs += n_inputs
    return out
