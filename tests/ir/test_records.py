"""``ovgather check`` reads layers into records (``ir/_fastwalk.pyx``: one C object a layer
and one a port, no dict for either), ``read_ir`` into the graph's dicts. A record must read
as the dict it stands for, key by key and in the same key order, and turn into exactly
that dict when a caller asks for the networkx graph: here on every sample and corpus IR,
each read whole and in tiny pieces, against the same IR read into dicts.
(tests/ir/test_check_paths.py compares the checks of the two paths.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ovgather.graph import as_networkx
from ovgather.ir import compiled, parse, read_ir, read_layer_graph

LayerRecord = compiled._fastwalk.LayerRecord  # tests/ir/test_compiled.py: it is built
PortRecord = compiled._fastwalk.PortRecord
ROOT = Path(__file__).resolve().parents[2]
IRS = sorted((ROOT / "ir_samples").rglob("*.xml")) + sorted((ROOT / "ir_corpus").rglob("*.xml"))


def _assert_reads_as(record, want: dict) -> None:
    """Every way a mapping is read gives what the dict gives."""
    assert list(record) == list(want) and list(record.keys()) == list(want)
    assert len(record) == len(want)
    for key, value in want.items():
        assert key in record
        got = record[key]
        if key in ("inputs", "outputs"):
            assert len(got) == len(value)
            for port, port_dict in zip(got, value, strict=True):
                assert type(port) in (PortRecord, dict)
                _assert_reads_as(port, port_dict)
        else:
            assert got == value and record.get(key) == value
    assert "no such key" not in record and record.get("no such key", 7) == 7
    with pytest.raises(KeyError):
        record["no such key"]  # noqa: B018
    assert record == want


@pytest.mark.parametrize("piece", [1 << 40, 4096], ids=["whole", "in pieces"])
@pytest.mark.parametrize("path", IRS, ids=[str(p.relative_to(ROOT)) for p in IRS])
def test_records_read_as_the_dicts_they_stand_for(path: Path, piece: int,
                                                  monkeypatch) -> None:
    monkeypatch.setattr(parse, "STREAM_PIECE", piece)
    records = read_layer_graph(path, records=True)
    dicts = read_layer_graph(path, records=False)
    assert list(records._node) == list(dicts._node)
    kinds = {type(a) for a in records._node.values()}
    if b"body>" in path.read_bytes():
        assert kinds == {dict}  # bodies are read into dicts, their graph and all
        return
    assert LayerRecord in kinds and not any(type(a) is LayerRecord
                                            for a in dicts._node.values())
    for node, attrs in records._node.items():
        _assert_reads_as(attrs, dicts._node[node])
    G = as_networkx(records)
    want = read_ir(path)
    assert all(type(a) is dict for _, a in G.nodes(data=True))
    assert dict(G.nodes(data=True)) == dict(want.nodes(data=True))
    assert list(G.edges(keys=True, data=True)) == list(want.edges(keys=True, data=True))
    assert G.graph.keys() == want.graph.keys()


def test_a_record_takes_only_the_edits_the_reader_makes() -> None:
    G = read_layer_graph(ROOT / "ir_samples" / "mixed_ops.xml", records=True)
    node, attrs = next(iter(G._node.items()))
    assert type(attrs) is LayerRecord
    attrs["line"] = 12345  # the reader makes lines past 65535 exact
    assert attrs["line"] == 12345 and attrs.as_dict()["line"] == 12345
    with pytest.raises(TypeError, match="read_ir"):
        attrs["name"] = "renamed"
    assert as_networkx(G).nodes[node]["line"] == 12345
