"""``read_ir`` cuts a big IR's <layers> into pieces, parses them on two other threads and
reads its layers while the next is parsed, so that a big IR's whole tree never sits in
memory; a document the pieces cannot take is parsed whole.

The streamed read must give what a read of the whole tree gives: the same graph (lines
included) or the same error. Here the pieces are made tiny (97 bytes) so that every
sample and every hand-edited variant is cut in many places, inside tags and layers too,
and each is compared with the whole-tree read, with each walk (compiled and careful).
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import gen_models
import pytest
from ir_variants import SAMPLES, VARIANTS, WALKS, _model_xml, _only, _same_graph, variant_xml

from ovgather.errors import IRError
from ovgather.ir import parse, parse_ir, pieces, read_ir
from ovgather.ir import reader as ir

ROOT = Path(__file__).resolve().parents[2]
TINY_PIECE = 97


@pytest.fixture(autouse=True)
def streaming(monkeypatch) -> list:
    """The results of ``read_in_pieces`` during a test (None: it gave up, and the
    document was parsed whole)."""
    results: list = []
    original = ir._Reader.read_in_pieces

    def read_in_pieces(self, xml_bytes, meanwhile=None):
        results.append(original(self, xml_bytes, meanwhile))
        return results[-1]
    monkeypatch.setattr(ir._Reader, "read_in_pieces", read_in_pieces)
    return results


def _whole_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as before streaming: the whole tree first (the path comments take)."""
    original = parse.check_prolog
    monkeypatch.setattr(parse, "check_prolog",
                        lambda data, file, counts=None: original(data, file, counts) or True)


def _counting(calls: list, m: pytest.MonkeyPatch) -> None:
    """``_Reader.read_layers`` and ``pieces.scan_layers`` (a piece read from its bytes)
    made to record each call in ``calls``."""
    original, scan = ir._Reader.read_layers, pieces.scan_layers

    def read_layers(self, *args):
        calls.append(args)
        return original(self, *args)

    def scan_layers(*args):
        calls.append(args)
        return scan(*args)
    m.setattr(ir._Reader, "read_layers", read_layers)
    m.setattr(pieces, "scan_layers", scan_layers)


def _results(read, monkeypatch: pytest.MonkeyPatch, walk: str) -> tuple:
    """(streamed in tiny pieces, whole tree): each a graph or the error text."""
    out = []
    for streamed in (True, False):
        with monkeypatch.context() as m:
            _only(walk, m)
            if streamed:
                m.setattr(parse, "STREAM_PIECE", TINY_PIECE)
                calls: list = []
                _counting(calls, m)
            else:
                _whole_tree(m)
            try:
                out.append(read())
            except IRError as err:
                out.append(str(err))
            if streamed:
                out.append(len(calls))
    return out[0], out[2], out[1]


def _assert_same(read, monkeypatch, walk, min_reads: int = 2) -> None:
    streamed, whole, reads = _results(read, monkeypatch, walk)
    assert type(streamed) is type(whole)
    if isinstance(whole, str):
        assert streamed == whole
    else:
        _same_graph(streamed, whole)
        assert reads >= min_reads  # the layers really were read in parts


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_samples_stream_to_the_same_graph(path: Path, walk: str, monkeypatch,
                                         streaming) -> None:
    _assert_same(lambda: read_ir(path), monkeypatch, walk)
    assert None not in streaming  # a usual IR is never parsed whole again


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("name,section", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_unusual_layers_stream_to_the_same_graph_or_error(name, section, walk,
                                                          monkeypatch) -> None:
    xml = variant_xml(name, section)
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()
    _assert_same(lambda: parse_ir(xml, bin_bytes, xml_path="m.xml"), monkeypatch, walk,
                 min_reads=0)


#: Documents whose layers must not be streamed, or only in part: the errors and the
#: graph must still be those of a whole-tree read.
ODD_DOCUMENTS = {
    "a root that is not net": lambda x: x.replace("<net ", "<network ", 1).replace(
        "</net>", "</network>"),
    "an unknown IR version": lambda x: re.sub(r'(<net [^>]*version=")\d+"', r'\g<1>7"', x,
                                              count=1),
    "two layers sections": lambda x: x.replace("</layers>", "</layers><layers><layer "
                                               'id="99" name="z" type="Relu"/></layers>', 1),
    "a broken layer near the end": lambda x: x[::-1].replace(
        '"0"=di trop<', '"x"=di trop<', 1)[::-1],
    "a layer after the edges": lambda x: x.replace("</net>", '<layer id="77"/></net>'),
    "a non-layer in layers": lambda x: x.replace("</layers>", "<dim>1</dim></layers>", 1),
    "a truncated file": lambda x: x[: len(x) * 2 // 3],
    "an id used twice far apart": lambda x: x.replace("</layers>", '<layer id="0" name="d" '
                                                      'type="Relu" version="opset1"/>'
                                                      "</layers>", 1),
    "a default namespace on net": lambda x: x.replace("<net ", '<net xmlns="urn:x" ', 1),
    "a Latin-1 document": lambda x: re.sub(r"^<\?xml[^>]*\?>", "<?xml version='1.0' "
                                           "encoding='ISO-8859-1'?>", x),
    "layers with an attribute": lambda x: x.replace("<layers>", '<layers n="1">', 1),
    "a layers element inside a layer": lambda x: x.replace("</data>", "</data><layers/>", 1),
    "a stray close tag in layers": lambda x: x.replace("</layer>", "</layer></port>", 3),
    "edges inside layers": lambda x: x.replace("</layers>", "<edges/></layers>", 1),
}


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("name", ODD_DOCUMENTS)
def test_odd_documents_read_as_a_whole_tree_would(name, walk, monkeypatch) -> None:
    xml = ODD_DOCUMENTS[name](_model_xml())
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()
    _assert_same(lambda: parse_ir(xml, bin_bytes, xml_path="m.xml"), monkeypatch, walk,
                 min_reads=0)


def test_the_samples_are_read_in_pieces(monkeypatch, streaming) -> None:
    monkeypatch.setattr(parse, "STREAM_PIECE", TINY_PIECE)
    for path in SAMPLES:
        read_ir(path)
    # all but those with comments or bodies (read as a whole tree)
    assert len(streaming) >= len(SAMPLES) - 3 and None not in streaming


def test_a_big_model_streams_with_exact_lines(tmp_path, monkeypatch) -> None:
    """Lines past 65535 (libxml2's limit) and pieces of the default size."""
    path = gen_models.big_ir(4000, tmp_path / "big.xml")
    for walk in WALKS:
        streamed, whole, reads = _results(lambda: read_ir(path), monkeypatch, walk)
        _same_graph(streamed, whole)
    with monkeypatch.context() as m:
        calls: list = []
        _counting(calls, m)
        read_ir(path)
    assert len(calls) >= 2, "a 2 MB IR is read in more than one part"


def test_reads_in_pieces_in_several_threads_restore_the_switch_interval(tmp_path) -> None:
    """Each read in pieces shortens Python's GIL switch interval while it runs; reads in
    several threads at once must leave it as it was, and read the same graphs."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    path = gen_models.big_ir(4000, tmp_path / "big.xml")
    before = sys.getswitchinterval()
    alone = read_ir(path)
    with ThreadPoolExecutor(3) as pool:
        graphs = list(pool.map(lambda _: read_ir(path), range(6)))
    assert sys.getswitchinterval() == before
    for G in graphs:
        _same_graph(G, alone)


#: pieces of markup the one-pass byte scan must tell apart (and near misses of each)
_MARKUP_ATOMS = [b"<layer", b"<layers", b"<!--", b"<![CDATA[", b"<?", b"<?xml ", b"<body ",
                 b"<body>", b"<body", b"<then_body/", b"<else_body\t", b"<else_bod",
                 b"<bodyx", b"<then_body\x0b", b"<l", b"<!-", b"<![CDAT", b"<", b"x", b" ",
                 b"\n", b"<lay", b"<b", b"<!", b"<t", b"<e", b"-->", b"]]>", b"?>", b"<layer>",
                 b"<layer/", b"<layer\t", b"-", b"]", b"?", b">"]


def test_the_one_pass_byte_scan_finds_what_the_searches_find() -> None:
    """``parse.markup_counts`` (the compiled walk's one pass) against the searches the
    reader makes without it, on 20,000 seeded random documents of markup pieces. Without
    a compiled walk (``.ci/run``'s install with no compiler) there is no pass: None, and
    the reader searches itself."""
    from ovgather.ir.bodies import _BODY_TAG

    if os.environ.get("OVGATHER_NO_COMPILER") == "1":
        assert parse.markup_counts(b"<net><layers/></net>") is None
        return
    rng = random.Random(28)
    for _ in range(20_000):
        data = b"".join(rng.choice(_MARKUP_ATOMS) for _ in range(rng.randint(0, 14)))
        searched = (parse.count_layer_tags(data), b"<!--" in data, b"<![CDATA[" in data,
                    data.count(b"<?"), _BODY_TAG.search(data) is not None)
        assert parse.markup_counts(data) == searched, data
