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
