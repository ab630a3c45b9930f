"""``check``'s layer loop (``walk._check_fast``, which takes the usual layer inline) gives
the very verdicts of the plain walk it shortcuts (``walk._check_layers``: the walk, then
each layer's comparison): every status, message and shape, on every sample and corpus IR
as read, with seeded declared dims tampered (mismatches, contradicting input ports, in
bodies too), and with a Parameter reshaped."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ovgather.infer import walk
from ovgather.ir import read_ir
from ovgather.ops.core.spec import openvino_type

ROOT = Path(__file__).resolve().parents[2]
IRS = sorted(ROOT.glob("ir_samples/*.xml")) + sorted(ROOT.glob("ir_corpus/*/*.xml"))
IDS = [f"{p.parent.name}/{p.stem}" for p in IRS]


def _rows(report) -> list[tuple]:
    return [(r.id, r.name, r.type, r.version, r.status, r.declared, r.inferred, r.line,
             r.message) for r in report.layers]


def _both(G, shapes=None) -> tuple[list, list]:
    """(the fast loop's rows, the plain walk's rows) of one model."""
    fast = walk._check(G, shapes, None)
    plain = walk._check(G, shapes, None, walk._check_layers)
    return _rows(fast), _rows(plain)


def _ports(G) -> list[dict]:
    """Every port that declares dims, in bodies too."""
    found = []
    for attrs in G._node.values():
        found += [p for p in [*attrs["outputs"], *attrs["inputs"]] if p.get("dims")]
        for body in (attrs.get("bodies") or {}).values():
            found += _ports(body)
    return found


def _tamper(G, rng: random.Random) -> int:
    """Change one declared dim of one port in eight, at least of three (some to -1, some
    given as a list, as a graph built in Python may hold them), and the rank of one; the
    number changed."""
    ports = _ports(G)
    chosen = rng.sample(ports, min(len(ports), max(3, len(ports) // 8)))
    for port in chosen[1:]:
        dims = port["dims"]
        i = rng.randrange(len(dims))
        new = (*dims[:i], rng.choice((dims[i] + 1, -1, 0)), *dims[i + 1:])
        port["dims"] = list(new) if rng.random() < 0.1 else new
    chosen[0]["dims"] = (*chosen[0]["dims"], 1)  # a rank no shape of known rank fits
    return len(chosen)


@pytest.mark.parametrize("xml", IRS, ids=IDS)
def test_check_gives_the_plain_walks_verdicts(xml: Path) -> None:
    fast, plain = _both(read_ir(xml))
    assert fast == plain


@pytest.mark.parametrize("xml", IRS, ids=IDS)
def test_check_gives_the_plain_walks_verdicts_on_tampered_dims(xml: Path) -> None:
    G = read_ir(xml)
    assert _tamper(G, random.Random(xml.name)) > 0
    fast, plain = _both(G)
    assert fast == plain
    assert any(row[4] == "mismatch" for row in fast)  # the tampering shows


@pytest.mark.parametrize("xml", IRS, ids=IDS)
def test_check_gives_the_plain_walks_verdicts_at_other_input_shapes(xml: Path) -> None:
    """The first Parameter at every dim dynamic (same rank): the rules meet new shapes,
    and the declared dims meet shapes that contradict or fit them otherwise."""
    G = read_ir(xml)
    param = next((a for a in G._node.values() if openvino_type(a["type"]) == "Parameter"
                  and a["outputs"] and a["outputs"][0]["dims"]), None)
    if param is None:
        pytest.skip("no Parameter of known rank")  # not a core test: the two above are
    shapes = {param["name"]: "[" + ",".join("?" for _ in param["outputs"][0]["dims"]) + "]"}
    fast, plain = _both(G, shapes)
    assert fast == plain


def _graph(layers: list[tuple], edges: list[tuple]):
    """A graph built in Python: ``(id, type, data, inputs dims, outputs dims)`` per layer
    (port ids: inputs from 0, outputs after them), edges ``(u, v, from_port, to_port)``."""
    import networkx as nx

    G = nx.MultiDiGraph()
    for node, op, data, ins, outs in layers:
        G.add_node(node, name=f"l{node}", type=op, version="opset1", data=data, line=None,
                   inputs=[{"id": i, "dims": d} for i, d in enumerate(ins)],
                   outputs=[{"id": len(ins) + i, "dims": d, "precision": "FP32"}
                            for i, d in enumerate(outs)])
    for u, v, from_port, to_port in edges:
        G.add_edge(u, v, key=(from_port, to_port), from_port=from_port, to_port=to_port)
    return G


X = {"shape": "2,3", "element_type": "f32"}
ODD_GRAPHS = {
    # a Const that declares an input port with dims and has no edge to it
    "const with an input port": _graph(
        [("0", "Const", {**X, "offset": "0", "size": "24"}, [(2, 3)], [(2, 3)])], []),
    # two edges into one input port: the second producer's tensor contradicts it
    "two edges into one port": _graph(
        [("0", "Parameter", X, [], [(2, 3)]), ("1", "Parameter", {**X, "shape": "4,3"}, [],
                                                  [(4, 3)]),
         ("2", "Relu", {}, [(2, 3)], [(2, 3)])],
        [("0", "2", 0, 0), ("1", "2", 0, 0)]),
    # an input port without an edge: invalid, and no contradiction is looked for
    "an unconnected input": _graph(
        [("0", "Parameter", X, [], [(2, 3)]), ("1", "Add", {}, [(2, 3), (2, 3)], [(2, 3)])],
        [("0", "1", 0, 0)]),
    # an edge from an output port the producer does not have
    "an edge from a missing port": _graph(
        [("0", "Parameter", X, [], [(2, 3)]), ("1", "Relu", {}, [(2, 3)], [(2, 3)])],
        [("0", "1", 7, 0)]),
    # declared output and input dims given as lists (unhashable), one of them wrong
    "dims as lists": _graph(
        [("0", "Parameter", X, [], [[2, 3]]), ("1", "Relu", {}, [[2, 4]], [[2, 3]])],
        [("0", "1", 0, 0)]),
    # a layer declaring two outputs where the op has one
    "two declared outputs": _graph(
        [("0", "Parameter", X, [], [(2, 3)]), ("1", "Relu", {}, [(2, 3)], [(2, 3), (2, 3)])],
        [("0", "1", 0, 0)]),
}


@pytest.mark.parametrize("name", ODD_GRAPHS)
def test_check_gives_the_plain_walks_verdicts_on_odd_graphs(name: str) -> None:
    fast, plain = _both(ODD_GRAPHS[name])
    assert fast == plain
