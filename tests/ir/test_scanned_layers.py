"""A big IR read in pieces has its <layers> read straight from the bytes
(``_fastwalk.scan_layers``) instead of lxml's tree of each piece: the layers as OpenVINO's
serializer writes them, exactly as lxml and the walk over its tree read them, or that
piece (and every one after it) is parsed by lxml and read from its tree as before.

Every sample and corpus IR is read both ways (the node dicts equal, lines and rt_info
text included, and the scan really used on every piece); each unusual spelling below is
read with the scan, with the pieces parsed by lxml, and as one whole tree by the careful
walk: the same graph or the same error, and the scan reads the spellings it is meant to
read (a scan that gave up every time would pass the first test); and the scan alone
refuses each byte sequence XML or lxml would read otherwise.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from ir_variants import _model_xml, _same_graph

from ovgather.errors import IRError
from ovgather.ir import compiled, parse, parse_ir, pieces, read_ir
from ovgather.ir import reader as ir
from ovgather.ir.text import split_names
from ovgather.ir.weights import CONST_TYPES

pytestmark = pytest.mark.skipif(compiled._fastwalk is None, reason="no compiled walk")

ROOT = Path(__file__).resolve().parents[2]
IRS = sorted((ROOT / "ir_samples").rglob("*.xml")) + sorted((ROOT / "ir_corpus").rglob("*.xml"))


def _read(read, monkeypatch: pytest.MonkeyPatch, scan: bool, piece: int, calls: list):
    """``read()`` in pieces of about ``piece`` bytes, with the scan (each of its answers
    noted in ``calls``: read or not) or without it (every piece parsed by lxml); the graph
    or the error text."""
    original = pieces.scan_layers

    def scan_layers(*args):
        found = original(*args) if scan else None
        calls.append(found is not None)
        return found

    with monkeypatch.context() as m:
        m.setattr(pieces, "scan_layers", scan_layers)
        m.setattr(parse, "STREAM_PIECE", piece)
        try:
            return read()
        except IRError as err:
            return str(err)


def _attr_sizes(G) -> list[int]:
    """The bytes of each layer's and port's attribute dict: a dict that held the id, name
    and type before they were taken out keeps its bigger table (27 MB more at 100k
    layers)."""
    return [sys.getsizeof(d) for _, node in G.nodes(data=True)
            for d in [node["layer_attrs"], *(p["attrs"] for p in node["inputs"] + node["outputs"])]]


@pytest.mark.parametrize("path", IRS, ids=[str(p.relative_to(ROOT)) for p in IRS])
def test_scanned_layers_equal_the_parsed_ones(path: Path, monkeypatch) -> None:
    scanned: list = []
    got = _read(lambda: read_ir(path), monkeypatch, True, 97, scanned)
    want = _read(lambda: read_ir(path), monkeypatch, False, 97, [])
    _same_graph(got, want)  # the node dicts equal, lines and rt_info text too
    assert _attr_sizes(got) == _attr_sizes(want)  # no bigger either
    text = path.read_bytes()
    if not any(word in text for word in (b"body>", b"<!--", b"<?xml-")):
        assert len(scanned) > 1 and all(scanned)  # every piece read from its bytes


FIRST = '<layer id="0" name="x" type="Parameter" version="opset1">'
DATA = '<data shape="1..8,3,8" element_type="f32" />'
DIM = "<dim>3</dim>"


def _in_first(old: str, new: str):
    """An edit of the first occurrence of ``old`` (which is in the first layer)."""
    def edit(xml: str) -> str:
        assert old in xml
        return xml.replace(old, new, 1)
    return edit


def _named(name: str):
    return _in_first(FIRST, FIRST.replace('name="x"', name))


#: (what, an edit of mixed_ops.xml (text, or bytes for bytes that are no UTF-8),
#: whether the scan reads it: True, False (that piece is parsed), None (not called:
#: the document is parsed whole))
SPELLINGS = [
    ("as written", lambda x: x, True),
    ("the five entities in a name", _named('name="a&amp;b&lt;c&gt;d&quot;e&apos;f"'), True),
    ("an uppercase X in a character reference", _named('name="&#X7A;"'), False),
    ("character references, decimal and hex", _named('name="&#120;&#x79;&#x1F600;&#0065;"'),
     True),
    ("a character reference to a tab", _named('name="a&#9;b&#10;c&#13;"'), True),
    ("a character reference past Unicode", _named('name="&#x110000;"'), False),
    ("a character reference to no XML character", _named('name="&#xFFFE;"'), False),
    ("a character reference to NUL", _named('name="&#0;"'), False),
    ("an entity XML does not define", _named('name="a&nbsp;b"'), False),
    ("a bare ampersand", _named('name="a&b"'), False),
    ("single quotes", _named("name='x'"), True),
    ("single quotes around a double quote", _named("name='a\"b'"), True),
    ("a tab and a newline in a value", _named('name="a\tb\nc"'), True),
    ("a line break between attributes", _in_first(' name="x"', '\n\tname="x"'), True),
    ("a line break before the tag's end", _in_first('opset1">', 'opset1"\n\n>'), True),
    ("spaces around =", _named('name = "x"'), True),
    ("no space between attributes", _in_first('"0" name', '"0"name'), False),
    ("a CR line end everywhere", lambda x: x.replace("\n", "\r\n"), False),
    ("a lone CR in a value", _named('name="a\rb"'), False),
    ("a duplicate attribute", _named('name="x" name="y"'), False),
    ("a comment inside a layer", _in_first(DATA, DATA + "<!-- a note -->"), None),
    ("a processing instruction inside a layer", _in_first(DATA, DATA + "<?pi x?>"), None),
    ("bytes that are no UTF-8", lambda x: x.encode().replace(b'name="x"', b'name="x\xff"', 1),
     False),
    ("a surrogate in UTF-8", lambda x: x.encode().replace(b'name="x"', b'name="\xed\xa0\x80"',
                                                          1), False),
    ("U+FFFF in UTF-8", lambda x: x.encode().replace(b'name="x"', b'name="\xef\xbf\xbf"', 1),
     False),
    ("a control character", _named('name="a\x01b"'), False),
    ("a DEL and a C1 character", _named('name="a\x7fb\x85c"'), True),
    ("a < in a value", _named('name="a<b"'), False),
    ("a > in a value", _named('name="a>b"'), True),
    ("a <dim> with spaces", _in_first(DIM, "<dim> 3 </dim>"), False),
    ("a <dim> with a sign", _in_first(DIM, "<dim>+3</dim>"), False),
    ("a <dim> past int64", _in_first(DIM, "<dim>9223372036854775808</dim>"), False),
    ("a <dim> with a character reference", _in_first(DIM, "<dim>&#51;</dim>"), False),
    ("an empty <dim>", _in_first(DIM, "<dim/>"), False),
    ("a self-closing layer", _in_first("</layers>", '<layer id="99" name="z" type="Relu" '
                                       'version="opset1"/></layers>'), True),
    ("a layer without a name", _in_first("</layers>", '<layer id="99" type="Relu"/>'
                                         "</layers>"), False),
    ("attributes in another order", _in_first(FIRST + "\n\t\t\t" + DATA,
                                              '<layer version="opset1" type="Parameter" '
                                              'name="x" id="0"><data element_type="f32" '
                                              'shape="1..8,3,8"/>'), True),
    ("an extra layer attribute", _named('name="x" precision="FP32"'), True),
    ("an unknown child element", _in_first(DATA, DATA + '<note a="1"/>'), False),
    ("an unknown child of a port", _in_first(DIM, DIM + "<note/>"), False),
    ("text inside a layer", _in_first(DATA, DATA + "text"), False),
    ("a very long name", _named(f'name="{"x" * 100_000}"'), True),
    ("multi-byte UTF-8 names", _named('name="слой_层_😀"'), True),
    ("a close tag with a space", _in_first("</layer>", "</layer >"), True),
    ("a mismatched close tag", _in_first("</port>", "</prot>"), False),
    ("data with an end tag", _in_first(DATA, DATA.replace(" />", "></data>")), True),
    ("data with a child", _in_first(DATA, DATA.replace(" />", "><dim>1</dim></data>")), False),
    ("an empty rt_info", _in_first(DATA, DATA + "<rt_info/>"), True),
    ("a blank rt_info", _in_first(DATA, DATA + "<rt_info>\n\t</rt_info>"), True),
    ("an rt_info", _in_first(DATA, DATA + '<rt_info>\n<attribute name="a" version="0" '
                             "value='1'/>\n</rt_info>"), True),
    ("an rt_info child with an end tag", _in_first(DATA, DATA + '<rt_info><attribute '
                                                   'name="a"></attribute></rt_info>'), True),
    ("an rt_info value to escape", _in_first(DATA, DATA + '<rt_info><attribute '
                                             'value="a&gt;b"/></rt_info>'), False),
    ("an rt_info value with an entity", _in_first(DATA, DATA + '<rt_info><attribute '
                                                  'value="&#65;"/></rt_info>'), True),
    ("an rt_info with text", _in_first(DATA, DATA + "<rt_info>t</rt_info>"), False),
    ("a nested rt_info", _in_first(DATA, DATA + "<rt_info><a><b/></a></rt_info>"), False),
    ("an rt_info with an attribute", _in_first(DATA, DATA + '<rt_info a="1"/>'), False),
    ("a port rt_info", _in_first(DIM, DIM + '<rt_info><attribute name="layout" '
                                 'version="0" layout="[N,C]"/></rt_info>'), True),
    ("a port id with a leading zero", _in_first('<port id="0" precision="FP32" names="x">',
                                                '<port id="00" precision="FP32" names="x">'),
     True),
    ("a signed port id", _in_first('<port id="0" precision="FP32" names="x">',
                                   '<port id="+0" precision="FP32" names="x">'), False),
    ("escaped commas in names", _in_first('names="x"', 'names="a\\,b,c"'), True),
    ("a layer id with a leading zero", _in_first(FIRST, FIRST.replace('"0"', '"00"')), False),
    ("a layer id used twice", _in_first('<layer id="1" ', '<layer id="0" '), False),
    ("a namespace prefix", _named('name="x" a:b="1"'), False),
    ("an xmlns attribute", _named('name="x" xmlns="urn:x"'), None),
    ("a Const outside the weights", _in_first('offset="0" size="8"', 'offset="999999" '
                                              'size="8"'), False),
]


@pytest.mark.parametrize(("what", "edit", "scans"), SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_unusual_spellings_read_as_the_parsed_pieces_and_the_whole_tree(
        what, edit, scans, monkeypatch) -> None:
    xml = edit(_model_xml())
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()

    def read():
        return parse_ir(xml, bin_bytes, xml_path="m.xml")

    scanned: list = []
    got = _read(read, monkeypatch, True, 97, scanned)
    parsed = _read(read, monkeypatch, False, 97, [])
    with monkeypatch.context() as m:  # one tree, the careful walk
        m.setattr(compiled, "_fastwalk", None)
        m.setattr(parse, "STREAM_PIECE", 1 << 40)
        whole = _read(read, m, False, 1 << 40, [])
    for want in (parsed, whole):
        assert type(got) is type(want)
        if isinstance(want, str):
            assert got == want
        else:
            _same_graph(got, want)
    if scans is None:
        assert scanned == []
    elif scans:
        assert len(scanned) > 1 and all(scanned)
    else:
        assert scanned and scanned[-1] is False  # the scan gave up; lxml read the rest


def _scan(content: bytes, bin_size: int | None = None) -> list | None:
    """``scan_layers`` of <layers> content alone, into a fresh reader."""
    reader = ir._Reader("m.xml", bin_size, "m.bin", b"")
    return compiled._fastwalk.scan_layers(content, 0, len(content), 1, reader, split_names,
                                          CONST_TYPES)


LAYER = (b'<layer id="1" name="n" type="Relu" version="opset1"><data a="1"/><output>'
         b'<port id="0" precision="FP32"><dim>2</dim></port></output></layer>')

#: bytes the scan must leave to lxml (XML reads them otherwise, refuses them, or the
#: walk over the tree reads what the scan does not build)
REFUSED = [
    b'<layer id="1" name="n" type="Relu"><!-- c --></layer>',
    b'<layer id="1" name="n" type="Relu"><?pi?></layer>',
    b'<layer id="1" name="n" type="Relu"><![CDATA[x]]></layer>',
    LAYER.replace(b'"n"', b'"a\rb"'),
    LAYER.replace(b"</layer>", b"</layer>\r\n"),
    LAYER.replace(b'"n"', b'"a&lt"'),
    LAYER.replace(b'"n"', b'"a&#x;"'),
    LAYER.replace(b'"n"', b'"&#65"'),
    LAYER.replace(b'"n"', b'"&#99999999999;"'),
    LAYER.replace(b'"n"', b'"n" name="m"'),
    LAYER.replace(b'"n"', b'"n"\x0b'),
    LAYER.replace(b'"n"', b'"\xc3"'),
    LAYER.replace(b'"n"', b'"\xc0\xaf"'),
    LAYER.replace(b'"n"', b'"\xef\xbf\xbe"'),
    LAYER.replace(b'"n"', b'"n'),
    LAYER.replace(b'"n"', b'n'),
    LAYER.replace(b"</layer>", b""),
    LAYER.replace(b"</layer>", b"</layer"),
    LAYER.replace(b"</output>", b"</input>"),
    LAYER.replace(b"<dim>2", b"<dim>2 "),
    LAYER.replace(b"<dim>2", b"<dim>-2"),
    LAYER.replace(b"<dim>2", b"<dim>-0"),
    LAYER.replace(b"<dim>2", b"<dim>x"),
    LAYER.replace(b"<dim>", b'<dim a="1">'),
    LAYER.replace(b"<output>", b'<output a="1">'),
    LAYER.replace(b"<layer", b"<layer:x"),
    LAYER.replace(b"<layer", b"<Layer").replace(b"</layer", b"</Layer"),
    LAYER.replace(b"<data", b"<1data"),
    LAYER.replace(b'<data a="1"/>', b'<data xmlns:p="u"/>'),
    LAYER.replace(b'"opset1"', b'"opset01"'),
    LAYER.replace(b'<port id="0"', b'<port id="0"/><port id="0"'),
    b"x" + LAYER,
    LAYER + b"</layers>",
]


def test_the_scan_reads_the_usual_layer() -> None:
    """The control for the refusals below: the layer they are made of is read."""
    nodes = _scan(b"\n\t" + LAYER + b" \n")
    assert [(n, d["line"], d["outputs"][0]["dims"]) for n, d in nodes] == [("1", 2, (2,))]


@pytest.mark.parametrize("content", REFUSED, ids=range(len(REFUSED)))
def test_the_scan_refuses_what_it_cannot_read_exactly(content: bytes) -> None:
    assert _scan(content) is None


#: byte strings the random edits below insert: markup, quotes, references, whitespace,
#: control and non-UTF-8 bytes, names
_ATOMS = [b"<", b">", b"/", b'"', b"'", b"&", b"&amp;", b"&lt;", b"&#65;", b"&#x10FFFF;",
          b"&#0;", b";", b"=", b" ", b"\t", b"\n", b"\r", b"\r\n", b"\x00", b"\x01", b"\x7f",
          b"\xff", b"\xc3\xa9", b"\xc3", b"\xef\xbf\xbe", b"\xed\xa0\x80", b"<!--", b"-->",
          b"<?", b"?>", b"<![CDATA[", b"]]>", b":", b"x", b"0", b"-", b"-1", b"<dim>",
          b"</dim>", b"<layer", b"</layer>", b' id="9"', b' name="n"', b"xmlns", b"<rt_info/>",
          b"<port", b"</port>", b"<data/>"]


def test_the_scan_is_exact_or_nothing_on_random_edits() -> None:
    """Seeded random edits of real <layers> content (1-3 insertions, deletions or
    replacements of the bytes above): whenever the scan reads the bytes, lxml parses them
    and the walk over its tree reads the same layers and reader state; whenever lxml or
    that walk refuses them, the scan does too."""
    from lxml import etree

    rng = random.Random(40)
    text = (ROOT / "ir_samples" / "mixed_ops.xml").read_bytes()
    content = text[text.find(b"<layers>") + 8:text.find(b"</layers>")]
    bin_size = (ROOT / "ir_samples" / "mixed_ops.bin").stat().st_size
    read = 0
    for _ in range(3000):
        data = bytearray(content)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            edit = rng.random()
            if edit < 0.4:
                data[at:at] = rng.choice(_ATOMS)
            elif edit < 0.6:
                del data[at:at + rng.randint(1, 8)]
            else:
                data[at:at + 1] = rng.choice(_ATOMS)
        data = bytes(data)
        scanner = ir._Reader("m.xml", bin_size, "m.bin", b"")
        scanned = scanner.exactly(compiled._fastwalk.scan_layers, data, 0, len(data), 1,
                                  scanner, split_names, CONST_TYPES)
        walker = ir._Reader("m.xml", bin_size, "m.bin", b"")
        try:
            root = etree.fromstring(b"<net><layers>" + data + b"</layers></net>",
                                    parse.xml_parser())
            walked = walker.read_layers(root[0], 0)
        except (etree.XMLSyntaxError, IRError):
            assert scanned is None, data
            continue
        if scanned is not None:
            read += 1
            assert scanned == walked, data
            assert (scanner.nodes, scanner.slices, scanner.n_inputs) == \
                (walker.nodes, walker.slices, walker.n_inputs)
    assert read > 100  # the scan read some of them (not nothing every time)
