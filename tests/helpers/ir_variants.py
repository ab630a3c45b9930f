"""What the reader tests share: the samples, the two IR walks, odd layer sections that
both walks must read the same, and the check that lines point at their tags."""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx
import pytest
from graph_view import node_view

from ovgather.ir import compiled

ROOT = Path(__file__).resolve().parents[2]


def assert_lines_point_at_tags(G: nx.MultiDiGraph, lines: list[str]) -> None:
    """Every layer's and edge's ``line`` is the line of its own tag in ``lines``."""
    for n, line in G.nodes(data="line"):
        assert f'<layer id="{n}" ' in lines[line - 1]
    for u, v, k, d in G.edges(keys=True, data=True):
        assert (f'from-layer="{u}" from-port="{k[0]}" to-layer="{v}" to-port="{k[1]}"'
                in lines[d["line"] - 1])


SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))


WALKS = ("compiled", "careful")


def _only(walk: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave only ``walk`` switched on (the careful one is always there behind it)."""
    if walk != "compiled":
        monkeypatch.setattr(compiled, "_fastwalk", None)


def _same_graph(a, b) -> None:
    assert [(n, node_view(d)) for n, d in a.nodes(data=True)] == \
        [(n, node_view(d)) for n, d in b.nodes(data=True)]
    assert list(a.edges(keys=True, data=True)) == list(b.edges(keys=True, data=True))
    assert {k: v for k, v in a.graph.items() if k != "weights"} == \
        {k: v for k, v in b.graph.items() if k != "weights"}


PORT = '<port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port>'


#: (name, text replacing the first Parameter's output port section)
VARIANTS = [
    ("nested dim", '<output><port id="0" precision="FP32"><dim>2<dim>3</dim></dim></port>'
                   '</output>'),
    ("port in port", '<output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim>'
                     '<port id="1" precision="FP32"/></port></output>'),
    ("port outside a section", '<output/>' + PORT),
    ("rt_info in the port", '<output><port id="0" precision="FP32"><dim>2</dim>'
                            '<rt_info><attribute name="a" value="1"/></rt_info>'
                            '<dim>3</dim></port></output>'),
    ("rt_info in the layer", '<output>' + PORT + '</output><rt_info><attribute name="a" '
                             'version="0" value="x"/><dim>7</dim></rt_info>'),
    ("rt_info in the section", '<output>' + PORT + '<rt_info/></output>'),
    # the compiled walk serializes the usual rt_info itself: these must read as lxml's
    ("rt_info of plain attributes", '<output>' + PORT + '</output><rt_info>\n  <attribute '
                                    'name="decompression" version="0" />\n  <attribute '
                                    'name="b" version="0" value="dynamic:f16" v=""/></rt_info>'),
    ("rt_info with escaped values", '<output>' + PORT + '</output><rt_info><attribute name="a" '
                                    'value="&lt;&amp;&quot;&gt;&#9;&#10;&#13;\u00e9"/></rt_info>'),
    ("rt_info with text", '<output>' + PORT + '</output><rt_info>x<attribute name="a"/>'
                          '</rt_info>'),
    ("rt_info with a tail", '<output>' + PORT + '</output><rt_info><attribute name="a"/> y'
                            '</rt_info>'),
    ("rt_info nested", '<output>' + PORT + '</output><rt_info><attribute name="a"><b c="1"/>'
                       '</attribute></rt_info>'),
    ("rt_info of whitespace", '<output>' + PORT + '</output><rt_info>\n </rt_info>'),
    ("rt_info with attributes", '<output>' + PORT + '</output><rt_info k="v"><a/></rt_info>'),
    ("rt_info in a namespace", '<output>' + PORT + '</output><rt_info><x:a xmlns:x="urn:x" '
                               'x:b="1"/></rt_info>'),
    ("unknown child", '<output>' + PORT + '</output><extra a="1"><dim>1</dim></extra>'),
    ("data after the section", '<output>' + PORT + '</output><data shape="2,3" '
                               'element_type="f32"/>'),
    ("child of data", '<output>' + PORT + '</output>'),
    ("padded dim", '<output><port id="0" precision="FP32"><dim> 2 </dim><dim>3</dim>'
                   '</port></output>'),
    ("underscore dim", '<output><port id="0" precision="FP32"><dim>1_0</dim><dim>3</dim>'
                       '</port></output>'),
    ("interval dim", '<output><port id="0" precision="FP32"><dim>2..5</dim></port>'
                     '</output>'),
    ("negative dim", '<output><port id="0" precision="FP32"><dim>-3</dim></port></output>'),
    ("empty dim", '<output><port id="0" precision="FP32"><dim/></port></output>'),
    ("two ports with one id", '<output>' + PORT + PORT + '</output>'),
    ("a port id that is no number", '<output><port id="x"/></output>'),
]


def _model_xml() -> str:
    return (ROOT / "ir_samples" / "mixed_ops.xml").read_text()


def variant_xml(name: str, section: str) -> str:
    """mixed_ops.xml with the first Parameter's output section replaced by ``section``
    (one of VARIANTS)."""
    xml = _model_xml()
    first = re.search(r'(<layer id="0"[^>]*>\s*<data[^>]*/>\s*)(<output>.*?</output>)', xml,
                      flags=re.DOTALL)
    head = first.group(1)
    if name == "child of data":
        head = head.replace("/>", "><dim>1</dim></data>", 1)
    return xml[:first.start()] + head + section + xml[first.end():]
