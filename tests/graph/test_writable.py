"""write_ir checks the graph against the schema in ovgather.graph before writing.

A graph built or edited by hand can break the schema in ways that would give an IR
nobody can read back (a cycle, an edge to a port that is not there, dims below -1,
non-numeric ids, attribute names with spaces, control characters, a bad ir_version) or
that used to raise a bare KeyError (a layer without ``type``, a port without ``id``).
Each is an OutputError naming the layer and what is wrong, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest

from ovgather import errors
from ovgather.ir import read_ir, write_ir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "mixed_ops.xml"


def gather_node(G: nx.MultiDiGraph) -> str:
    return next(n for n, t in G.nodes(data="type") if t == "GatherND")


def cycle(G):
    n = gather_node(G)
    result = next(iter(G.successors(n)))
    G.nodes[n]["inputs"].append({"id": 9, "precision": None, "names": [], "dims": (),
                                 "rt_info": None, "attrs": {}})
    G.nodes[result]["outputs"].append({"id": 8, "precision": None, "names": [], "dims": (),
                                       "rt_info": None, "attrs": {}})
    G.add_edge(result, n, key=(8, 9), from_port=8, to_port=9)


def missing_port(G):
    n = gather_node(G)
    u = next(iter(G.predecessors(n)))
    G.add_edge(u, n, key=(0, 42), from_port=0, to_port=42)


def bad_dim(G):
    G.nodes[gather_node(G)]["outputs"][0]["dims"] = (2, -5)


def text_id(G):
    n = gather_node(G)
    nx.relabel_nodes(G, {n: "gnd"}, copy=False)


def spaced_key(G):
    G.nodes[gather_node(G)]["data"]["batch dims"] = "1"


def control_char(G):
    G.nodes[gather_node(G)]["name"] = "gnd\x01"


def bad_version(G):
    G.graph["ir_version"] = "x"


def no_type(G):
    del G.nodes[gather_node(G)]["type"]


def no_port_id(G):
    del G.nodes[gather_node(G)]["outputs"][0]["id"]


def huge_dim(G):
    G.nodes[gather_node(G)]["outputs"][0]["dims"] = (2, 1 << 63)


def long_id(G):
    nx.relabel_nodes(G, {gather_node(G): "9" * 5000}, copy=False)


def long_port_id(G):
    n = gather_node(G)
    G.nodes[n]["outputs"][0]["id"] = 10 ** 19
    for u, v, k in list(G.out_edges(n, keys=True)):
        G.remove_edge(u, v, k)


def ports_not_a_list(G):
    n = gather_node(G)
    G.nodes[n]["outputs"] = 5
    for u, v, k in list(G.out_edges(n, keys=True)):
        G.remove_edge(u, v, k)


CASES: dict[str, tuple[Callable, str]] = {
    "cycle": (cycle, "acyclic"),
    "missing_port": (missing_port, "input port 42"),
    "dim_below_minus_one": (bad_dim, ">= -1"),
    "non_numeric_id": (text_id, "'gnd'"),
    "attribute_with_space": (spaced_key, "'batch dims'"),
    "control_character": (control_char, "U+0001"),
    "ir_version": (bad_version, "ir_version"),
    "missing_type": (no_type, "'type'"),
    "missing_port_id": (no_port_id, "'id'"),
    # what the reader refuses, the writer refuses too
    "dim_past_int64": (huge_dim, "9223372036854775807"),
    "id_past_19_digits": (long_id, "19 digits"),
    "port_id_past_19_digits": (long_port_id, "19 digits"),
    "ports_not_a_list": (ports_not_a_list, "list"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_write_ir_names_what_breaks_the_schema(case: str, tmp_path: Path) -> None:
    G = read_ir(SAMPLE)
    breaker, words = CASES[case]
    breaker(G)
    with pytest.raises(errors.OutputError) as info:
        write_ir(G, tmp_path / "out.xml")
    message = str(info.value)
    assert words in message
    assert "layer" in message or case == "ir_version"
    assert list(tmp_path.iterdir()) == []


def test_a_valid_graph_still_writes(tmp_path: Path) -> None:
    G = read_ir(SAMPLE)
    G.graph["ir_version"] = 10
    write_ir(G, tmp_path / "out.xml")
    assert read_ir(tmp_path / "out.xml").number_of_nodes() == G.number_of_nodes()
