"""`show` draws shapes on edges and check status as colours, and Graphviz renders it.

Labels are compared with OpenVINO's own output partial shapes (``read_model``), colours
with the status the checker gives; ``dot -Tsvg`` must accept every sample's DOT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import openvino as ov
import pytest
from dot_text import EDGE, dot_nodes

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.views.show import STATUS_COLOURS, to_dot

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
# .ci/run installs Graphviz, so under CI a missing `dot` fails these tests instead of skipping.
HAS_DOT = shutil.which("dot") is not None or bool(os.environ.get("CI"))

@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_edge_labels_are_openvinos_shapes(path: Path) -> None:
    G = read_ir(path)
    text = to_dot(G)
    ops = {op.get_friendly_name(): op for op in ov.Core().read_model(str(path)).get_ops()}
    edges = list(EDGE.finditer(text))
    assert len(edges) == G.number_of_edges()
    for m in edges:
        u = m["u"]
        shape = m["label"].split("\\n")[0]
        pos = {k[0] for _, v, k in G.out_edges(u, keys=True) if v == m["v"]}
        port_ids = [p["id"] for p in G.nodes[u]["outputs"]]
        theirs = {str(ops[G.nodes[u]["name"]].get_output_partial_shape(port_ids.index(p)))
                  for p in pos}
        assert shape in theirs, (G.nodes[u]["name"], shape, theirs)


def test_colours_follow_the_check_status() -> None:
    G = read_ir(ROOT / "ir_samples" / "wrong_gather_nd8_bd3_v5_layout.xml")
    nodes = dot_nodes(to_dot(G))
    gnd = next(n for n in G if G.nodes[n]["type"] == "GatherND")
    label, fill = nodes[gnd]
    assert fill == STATUS_COLOURS["mismatch"] and "mismatch" in label
    assert all(f == STATUS_COLOURS["ok"] for n, (_, f) in nodes.items() if n != gnd)
    assert "declared [4096,1]" in to_dot(G)  # the contradicted edge shows both shapes


def test_invalid_unchecked_and_unknown_layers_get_their_colours(tmp_path: Path) -> None:
    G = read_ir(ROOT / "ir_samples" / "gather_nd8_bd2.xml")
    gnd = next(n for n in G if G.nodes[n]["type"] == "GatherND")
    G.nodes[gnd]["data"]["batch_dims"] = "3"  # b + k = 4 > rank D: invalid
    assert dot_nodes(to_dot(G))[gnd][1] == STATUS_COLOURS["invalid"]
    G.nodes[gnd]["type"] = "MyCustomOp"  # an op OpenVINO's reader does not know
    assert dot_nodes(to_dot(G))[gnd][1] == STATUS_COLOURS["unknown"]
    G.nodes[gnd]["type"], G.nodes[gnd]["version"] = "GroupedMatMul", "opset17"  # no rule
    assert dot_nodes(to_dot(G))[gnd][1] == STATUS_COLOURS["unchecked"]


def test_a_neighbourhood_shows_cut_inputs_as_points() -> None:
    G = read_ir(ROOT / "ir_samples" / "mixed_ops.xml")
    target = next(n for n in G if G.nodes[n]["name"] == "pick_rows_nd8")
    from ovgather.edit.extract import neighbourhood

    text = to_dot(G, neighbourhood(G, target, 1))
    assert "shape=point" in text and "style=dashed" in text
    assert len(dot_nodes(text)) == len(neighbourhood(G, target, 1))


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz is not installed")
@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_graphviz_renders_every_sample(path: Path) -> None:
    run = subprocess.run(["dot", "-Tsvg"], input=to_dot(read_ir(path)).encode(),
                         capture_output=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr.decode()
    assert b"<svg" in run.stdout and not run.stderr.strip()


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz is not installed")
def test_cli_show_svg_of_a_neighbourhood(tmp_path: Path, capsys) -> None:
    out = tmp_path / "n.svg"
    code = main(["show", str(ROOT / "ir_samples" / "mixed_ops.xml"), "--layer",
                 "pick_rows_nd8", "--depth", "2", "--format", "svg", "-o", str(out)])
    assert code == 0
    assert "pick_rows_nd8" in out.read_text()


def test_cli_show_dot_needs_no_graphviz(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot program anywhere
    out = tmp_path / "m.dot"
    assert main(["show", str(ROOT / "ir_samples" / "gather_nd5_bd3.xml"), "-o", str(out)]) == 0
    assert out.read_text().startswith("digraph")
    code = main(["show", str(ROOT / "ir_samples" / "gather_nd5_bd3.xml"), "--format", "png",
                 "-o", str(tmp_path / "m.png")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and "apt-get install graphviz" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.png").exists()
