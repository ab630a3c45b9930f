"""A big IR read in pieces has its <edges> read from the bytes (``_fastwalk.scan_edges``)
instead of a parsed tree: the edges as OpenVINO writes them, or the whole document is
parsed again, and the careful walk reads it (and names any error).

Each variant of the edges below is read with the scan (tiny pieces) and as a whole tree
with the careful walk: the same graph, lines included, or the same error; and the usual
spellings really are scanned (a scan that gave up every time would pass the first test).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from ir_variants import _model_xml, _same_graph

from ovgather.errors import IRError
from ovgather.ir import compiled, parse, parse_ir
from ovgather.ir import reader as ir

pytestmark = pytest.mark.skipif(compiled._fastwalk is None, reason="no compiled walk")

ROOT = Path(__file__).resolve().parents[2]
FIRST = '<edge from-layer="0" from-port="0" to-layer="6" to-port="0" />'

#: (name, the first edge's replacement, whether the scan reads it)
EDGES = [
    ("as written", FIRST, True),
    ("no space before />", FIRST.replace('" />', '"/>'), True),
    ("tabs between attributes", FIRST.replace(" ", "\t"), True),
    ("two on one line", FIRST + FIRST.replace('to-layer="6"', 'to-layer="4"'), None),
    ("a port with a leading zero", FIRST.replace('from-port="0"', 'from-port="00"'), True),
    ("spaces around =", FIRST.replace('from-port="0"', 'from-port = "0"'), False),
    ("spaces around = of a layer", FIRST.replace('to-layer="6"', 'to-layer ="6"'), False),
    ("a layer id with a leading zero", FIRST.replace('from-layer="0"', 'from-layer="00"'),
     False),
    ("a signed port", FIRST.replace('to-port="0"', 'to-port="+0"'), False),
    ("single quotes", FIRST.replace('"', "'"), False),
    ("attributes in another order", '<edge from-port="0" from-layer="0" to-layer="6" '
     'to-port="0" />', False),
    ("an extra attribute", FIRST.replace(" />", ' x="1" />'), False),
    ("a close tag", FIRST.replace(" />", "></edge>"), False),
    ("a line break inside the tag", FIRST.replace(" from-port", "\n from-port"), False),
    ("a carriage return", FIRST + "\r", False),
    ("a missing layer", FIRST.replace('to-layer="6"', 'to-layer="9999"'), False),
    ("a missing port", FIRST.replace('to-port="0"', 'to-port="7"'), False),
    ("an input fed twice", FIRST + FIRST, False),
    ("an input not fed", "", False),
    ("a 19-digit port", FIRST.replace('to-port="0"', 'to-port="0000000000000000000"'),
     False),
    ("not an edge", "<edgy/>", False),
    ("text", FIRST + "x", False),
    ("an entity", FIRST.replace('to-port="0"', 'to-port="&#48;"'), False),
]


def _variant(edge: str) -> str:
    xml = _model_xml()
    assert FIRST in xml
    return xml.replace(FIRST, edge, 1)


def _read(xml: str, monkeypatch: pytest.MonkeyPatch, scanned: list) -> object:
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()
    original = ir._Reader.read_in_pieces

    def read_in_pieces(self, *args, **kwargs):
        found = original(self, *args, **kwargs)
        scanned.append(found is not None and self.scanned is not None)
        return found

    with monkeypatch.context() as m:
        m.setattr(ir._Reader, "read_in_pieces", read_in_pieces)
        m.setattr(parse, "STREAM_PIECE", 97)
        try:
            return parse_ir(xml, bin_bytes, xml_path="m.xml")
        except IRError as err:
            return str(err)


def _whole(xml: str, monkeypatch: pytest.MonkeyPatch) -> object:
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()
    with monkeypatch.context() as m:
        m.setattr(compiled, "_fastwalk", None)  # the careful walk over the whole tree
        m.setattr(parse, "STREAM_PIECE", 1 << 40)
        try:
            return parse_ir(xml, bin_bytes, xml_path="m.xml")
        except IRError as err:
            return str(err)


def _read_both_ways(xml: str, monkeypatch) -> list:
    """Read ``xml`` as check reads it and as one whole tree; assert the same graph (or the
    same error); return whether each read scanned its edges from the bytes."""
    scanned: list = []
    got, want = _read(xml, monkeypatch, scanned), _whole(xml, monkeypatch)
    assert type(got) is type(want)
    if isinstance(want, str):
        assert got == want
    else:
        _same_graph(got, want)
    return scanned


@pytest.mark.parametrize(("name", "edge", "scans"), EDGES, ids=[e[0] for e in EDGES])
def test_edges_scanned_as_a_whole_tree_reads_them(name, edge, scans, monkeypatch) -> None:
    scanned = _read_both_ways(_variant(edge), monkeypatch)
    if scans is not None:
        assert scanned == [scans]


def test_scanned_lines_are_exact_past_65535(monkeypatch) -> None:
    """Blank lines push the edges past libxml2's last exact line: the scan counts them."""
    xml = _model_xml().replace("<edges>", "<edges>" + "\n" * 70000, 1)
    scanned: list = []
    got, want = _read(xml, monkeypatch, scanned), _whole(xml, monkeypatch)
    assert scanned == [True]
    _same_graph(got, want)
    lines = [d["line"] for *_, d in got.edges(keys=True, data=True)]
    text = xml.splitlines()
    assert all(text[line - 1].lstrip().startswith("<edge ") for line in lines)
    assert min(lines) > 70000


#: (where, the document, whether its edges are scanned)
ELSEWHERE = [
    ("edges twice", lambda x: x.replace("</edges>", "</edges><edges></edges>", 1), True),
    ("edges in an rt_info before the net's", lambda x: x.replace(
        "</layers>", "</layers><rt_info><edges>" + FIRST + "</edges></rt_info>", 1), False),
    ("edges in a comment before the net's", lambda x: x.replace(
        "</layers>", "</layers><!-- <edges> -->", 1), False),
    ("edges in a processing instruction", lambda x: x.replace(
        "</layers>", "</layers><?x <edges> ?>", 1), False),
]


@pytest.mark.parametrize(("where", "edit", "scans"), ELSEWHERE, ids=[e[0] for e in ELSEWHERE])
def test_only_the_nets_first_edges_are_scanned(where, edit, scans, monkeypatch) -> None:
    """An <edges> that is not the <net>'s first child of that name is never the one read
    from the bytes: the read is that of the whole tree."""
    xml = edit(_model_xml())
    assert _read_both_ways(xml, monkeypatch) == [scans]
    assert re.search(r"<edges>\s*<edge ", xml)


IRS = sorted((ROOT / "ir_samples").rglob("*.xml")) + sorted((ROOT / "ir_corpus").rglob("*.xml"))


def _forward(G) -> bool:
    """Whether every edge of ``G`` goes forward in the order its layers were read in."""
    position = {n: i for i, n in enumerate(G._node)}
    return all(position[u] < position[v] for u, targets in G._succ.items() for v in targets)


def _in_order_of(read, monkeypatch) -> tuple:
    """(``read()``'s graph, whether its edges were scanned, whether ``in_order`` ran)."""
    fastwalk = compiled._fastwalk
    ran: list = []
    scanned: list = []
    original_in_order, original_pieces = fastwalk.in_order, ir._Reader.read_in_pieces

    def in_order(*args):
        ran.append(True)
        return original_in_order(*args)

    def read_in_pieces(self, *args, **kwargs):
        found = original_pieces(self, *args, **kwargs)
        scanned.append(found is not None and self.scanned is not None)
        return found

    with monkeypatch.context() as m:
        m.setattr(fastwalk, "in_order", in_order)
        m.setattr(ir._Reader, "read_in_pieces", read_in_pieces)
        m.setattr(parse, "STREAM_PIECE", 97)
        G = read()
    return G, scanned == [True], bool(ran)


@pytest.mark.parametrize("path", IRS, ids=[str(p.relative_to(ROOT)) for p in IRS])
def test_scanned_edges_say_in_order_as_in_order_does(path: Path, monkeypatch) -> None:
    """The order the scan of the edges finds equals ``in_order`` over the layers read and
    the edges, for every sample and corpus IR (the scan's answer used: no second pass)."""
    G, scanned, ran = _in_order_of(lambda: ir.read_layer_graph(path), monkeypatch)
    edges = [(u, v, k, d) for u, t in G._succ.items() for v, kd in t.items()
             for k, d in kd.items()]
    assert G.in_order == _forward(G) == compiled._fastwalk.in_order(list(G._node.items()),
                                                                    edges)
    if scanned:
        assert not ran


@pytest.mark.parametrize("seed", range(12))
def test_scanned_edges_see_layers_out_of_order(seed, monkeypatch) -> None:
    """The layers of mixed_ops shuffled (seeded; seed 0 keeps their order): the scan says
    whether every edge still goes forward, as the order of the layers read says, and the
    graph is the one the whole tree gives (an edge backwards: the cycle check runs)."""
    xml = _model_xml()
    layers = re.findall(r"<layer .*?</layer>\s*", xml, flags=re.DOTALL)
    start, end = xml.index(layers[0]), xml.index(layers[-1]) + len(layers[-1])
    assert "".join(layers) == xml[start:end]
    if seed:
        random.Random(seed).shuffle(layers)
    shuffled = xml[:start] + "".join(layers) + xml[end:]
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()
    G, scanned, ran = _in_order_of(
        lambda: ir._build(shuffled.encode(), "m.xml", None, len(bin_bytes), "m.bin"),
        monkeypatch)
    assert scanned and not ran
    assert G.in_order == _forward(G)
    assert G.in_order == (seed == 0)  # mixed_ops has no pair of layers that may swap places
    assert _read_both_ways(shuffled, monkeypatch) == [True]


def _concat_xml(n: int) -> str:
    """A Parameter feeding all ``n`` inputs of a Concat: input ports past 16 and 64."""
    dims = "<dim>1</dim>"
    ports = "".join(f'<port id="{i}" precision="FP32">{dims}</port>' for i in range(n))
    edges = "".join(f'<edge from-layer="0" from-port="0" to-layer="1" to-port="{i}" />\n'
                    for i in range(n))
    return (f'<?xml version="1.0"?>\n<net name="c" version="11">\n<layers>\n'
            f'<layer id="0" name="p" type="Parameter" version="opset1">'
            f'<data shape="1" element_type="f32" /><output><port id="0" precision="FP32">'
            f'{dims}</port></output></layer>\n'
            f'<layer id="1" name="c" type="Concat" version="opset1"><data axis="0" />'
            f'<input>{ports}</input><output><port id="{n}" precision="FP32"><dim>{n}</dim>'
            f'</port></output></layer>\n'
            f'<layer id="2" name="r" type="Result" version="opset1"><input>'
            f'<port id="0" precision="FP32"><dim>{n}</dim></port></input></layer>\n'
            f'</layers>\n<edges>\n{edges}'
            f'<edge from-layer="1" from-port="{n}" to-layer="2" to-port="0" />\n'
            f'</edges>\n</net>\n')


@pytest.mark.parametrize(("edit", "scans"), [
    (lambda x: x, True),
    (lambda x: x.replace('to-port="70"', 'to-port="69"'), False),  # 69 twice, 70 unfed
    (lambda x: x.replace('to-port="17"', 'to-port="16"'), False),
    (lambda x: x.replace('to-port="64"', 'to-port="63"'), False),
    (lambda x: x.replace('to-port="3"', 'to-port="71"'), False),
], ids=["as written", "a port past 64 twice", "a port past 16 twice",
        "a port below 64 twice", "a port that is not there"])
def test_many_input_ports_scanned_as_a_whole_tree_reads_them(edit, scans, monkeypatch) -> None:
    """Ports fed are noted per layer up to port 63, in a set after: either way each port
    is fed once, as the whole tree's careful walk finds."""
    xml = edit(_concat_xml(72))
    assert _read_both_ways(xml, monkeypatch) == [scans]
