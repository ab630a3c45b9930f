"""``ovgather check`` reads an IR its own way (``read_layer_graph``: no networkx, a big IR
in pieces on other threads, its <edges> scanned from the bytes by the compiled walk);
``read_ir`` users get a networkx graph. Both must give the same check: here every
sample and corpus IR is read both ways, the fast one into records and cut into tiny
pieces so that each is read in pieces, the other into dicts as one tree by the careful
Python walk, and each layer's status, declared and inferred text, message and line, and
the values the walk carried (``all_tensors``), are compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ovgather.infer import all_tensors, check
from ovgather.ir import compiled, parse, read_ir, read_layer_graph
from ovgather.ir import reader as ir

LayerRecord = compiled._fastwalk.LayerRecord  # tests/ir/test_compiled.py: it is built
ROOT = Path(__file__).resolve().parents[2]
IRS = sorted((ROOT / "ir_samples").rglob("*.xml")) + sorted((ROOT / "ir_corpus").rglob("*.xml"))


def _results(report) -> list[tuple]:
    return [(lr.id, lr.name, lr.type, lr.version, lr.status, lr.declared, lr.inferred,
             lr.line, lr.message) for lr in report.layers]


def _values(G) -> dict:
    return {node: {port: (str(t.shape), t.etype, t.value if t._array is None else
                          t._array.tolist()) for port, t in outs.items()}
            for node, outs in all_tensors(G).items()}


@pytest.mark.parametrize("path", IRS, ids=[str(p.relative_to(ROOT)) for p in IRS])
def test_the_check_path_and_the_graph_path_agree(path: Path, monkeypatch) -> None:
    pieces: list = []
    original = ir._Reader.read_in_pieces

    def read_in_pieces(self, *args, **kwargs):
        found = original(self, *args, **kwargs)
        pieces.append(found is not None)
        return found

    with monkeypatch.context() as m:
        m.setattr(ir._Reader, "read_in_pieces", read_in_pieces)
        m.setattr(parse, "STREAM_PIECE", 4096)
        fast = read_layer_graph(path, records=True)
        fast_report, fast_values = check(fast), _values(fast)
    with monkeypatch.context() as m:
        m.setattr(compiled, "_fastwalk", None)
        m.setattr(parse, "STREAM_PIECE", 1 << 40)
        G = read_ir(path)
        report, values = check(G), _values(G)
    assert _results(fast_report) == _results(report)
    assert fast_values == values
    text = path.read_bytes()
    if not any(word in text for word in (b"body>", b"<!--", b"<?xml-")) and len(text) > 4096:
        assert pieces == [True]  # the check path really was the other path
    if b"body>" not in text:  # the layers were records (a graph with bodies keeps dicts)
        assert fast.records and LayerRecord in {type(a) for a in fast._node.values()}
