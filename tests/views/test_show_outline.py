"""A picture of a whole model: constants folded into their readers, blocks, a bound.

The folded lines are compared with what OpenVINO's own graph says (``read_model``: the
constant inputs of each op, their shapes and element types); every layer OpenVINO counts
must be drawn, folded, collapsed or left out, never lost; a PNG of a 1,000-layer IR is
at most 20 megapixels (read from the PNG header).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from dot_text import dot_nodes, label_lines
from openvino import opset13

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.views.show import MAX_PIXELS, STATUS_COLOURS, draw, to_dot
from ovgather.views.show.groups import scope_path

ROOT = Path(__file__).resolve().parents[2]
SWIN = ROOT / "ir_corpus" / "swin" / "pytorch_static.xml"
BERT = ROOT / "ir_corpus" / "bert" / "pytorch_dynamic.xml"
MIXED = ROOT / "ir_samples" / "mixed_ops.xml"
WRONG = ROOT / "ir_samples" / "wrong_mixed_ops_nd8_dim.xml"
_KEPT = ("Parameter", "Result", "ReadValue", "Assign")


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MatMul whose weights are INT8, decompressed as frontends write it:
    u8 Const -> Convert f32 -> Subtract zero point -> Multiply scale."""
    rng = np.random.default_rng(7)
    x = opset13.parameter([2, 16], np.float32, name="x")
    q = opset13.constant(rng.integers(0, 255, (8, 16), dtype=np.uint8))
    zero = opset13.convert(opset13.constant(np.full((8, 1), 128, np.uint8)), "f32")
    scale = opset13.constant(rng.random((8, 1), dtype=np.float32))
    w = opset13.multiply(opset13.subtract(opset13.convert(q, "f32"), zero), scale)
    y = opset13.matmul(x, w, False, True, name="fc")
    path = tmp_path_factory.mktemp("int8") / "int8.xml"
    ov.save_model(ov.Model([y], [x], "int8"), str(path), compress_to_fp16=False)
    return path


def _constant_ops(model: ov.Model) -> set[str]:
    """OpenVINO's ops that are Constants or computed from Constants alone."""
    const: set[str] = set()
    for op in model.get_ordered_ops():
        sources = [i.get_source_output().get_node() for i in op.inputs()]
        if op.get_type_name() == "Constant" or (
                sources and op.get_type_name() not in _KEPT
                and all(s.get_friendly_name() in const for s in sources)):
            const.add(op.get_friendly_name())
    return const


def _expected_line(source: ov.Node, port: ov.Input) -> str:
    """The line a constant input should be: weights when Consts are converted to a real
    type through Convert/Subtract/Multiply only, with the largest one's stored type."""
    chain, todo = [], [source]
    while todo:
        op = todo.pop()
        chain.append(op)
        todo += [i.get_source_output().get_node() for i in op.inputs()]
    kinds = {op.get_type_name() for op in chain}
    stored = [op for op in chain if op.get_type_name() == "Constant" and any(
        t.get_node().get_type_name() == "Convert"
        and t.get_node().get_output_element_type(0).is_real()
        for t in op.output(0).get_target_inputs())]
    if not stored or not kinds <= {"Constant", "Convert", "Subtract", "Multiply"}:
        return f"const {port.get_partial_shape()} {port.get_element_type().get_type_name()}"
    root = max(stored, key=lambda op: op.get_byte_size())
    text = f"weights {port.get_partial_shape()} {root.get_element_type().get_type_name()}"
    return text + (" (zero point, scale)" if kinds & {"Subtract", "Multiply"} else "")


def _folded_lines(text: str) -> dict[str, Counter]:
    """Per drawn layer id, its label lines that stand for constant inputs."""
    return {n: Counter(x for x in label_lines(label) if x.startswith(("weights ", "const ")))
            for n, (label, _) in dot_nodes(text).items()}


@pytest.mark.parametrize("name", ["mixed", "bert", "swin", "int8"])
def test_constants_are_lines_of_their_readers_with_openvinos_shapes_and_types(
        name: str, int8_model: Path) -> None:
    path = {"mixed": MIXED, "bert": BERT, "swin": SWIN, "int8": int8_model}[name]
    G = read_ir(path)
    model = ov.Core().read_model(str(path))
    const = _constant_ops(model)
    ids = {G.nodes[n]["name"]: n for n in G}
    got = _folded_lines(to_dot(G, fold=True))
    drawn = {G.nodes[n]["name"] for n in got}
    assert drawn == {op.get_friendly_name() for op in model.get_ops()} - const
    for op in model.get_ops():
        if op.get_friendly_name() in const:
            continue
        want = Counter(_expected_line(i.get_source_output().get_node(), i)
                       for i in op.inputs()
                       if i.get_source_output().get_node().get_friendly_name() in const)
        assert got[ids[op.get_friendly_name()]] == want, op.get_friendly_name()


def test_int8_weights_say_so_and_the_brief_example_reads_as_promised(int8_model: Path) -> None:
    G = read_ir(int8_model)
    fc = next(n for n in G if G.nodes[n]["name"] == "fc")
    assert _folded_lines(to_dot(G, fold=True))[fc] == Counter(
        {"weights [8,16] u8 (zero point, scale)": 1})
    G = read_ir(BERT)
    query = next(n for n in G if G.nodes[n]["name"].endswith("self.query/aten::linear/MatMul"))
    assert "weights [32,32] f16" in _folded_lines(to_dot(G, fold=True))[query]


@pytest.mark.parametrize("path,bound", [(SWIN, 200), (SWIN, 40), (SWIN, 4), (BERT, 30),
                                        (BERT, 12), (MIXED, 5)])
def test_every_layer_is_drawn_folded_or_in_a_closed_block_within_the_bound(
        path: Path, bound: int) -> None:
    G = read_ir(path)
    drawing = draw(G, fold=True, max_layers=bound)
    plan = drawing.plan
    parts = [set(plan.drawn), plan.folded, {n for v in plan.collapsed.values() for n in v},
             set(plan.left_out)]
    assert len(plan.left_out) == len(parts[3])
    assert sum(map(len, parts)) == len(set().union(*parts))  # no layer twice
    assert set().union(*parts) == set(G)
    assert len(G) == len(ov.Core().read_model(str(path)).get_ops())
    assert plan.left_out == []  # the whole model, always
    top = len(plan.groups.blocks[0].items)  # the root is always open
    assert len(plan.drawn) + len(plan.collapsed) <= max(bound, top)
    nodes = dot_nodes(drawing.dot)
    assert set(nodes) == set(plan.drawn) | {plan.node_of(v[0]) for v in plan.collapsed.values()}
    if plan.collapsed:
        assert "the HTML page (--format html) opens them" in drawing.dot


def test_identical_blocks_are_one_closed_block_and_boxes_share_a_module_path() -> None:
    G = read_ir(SWIN)
    plan = draw(G, fold=True, max_layers=200).plan
    assert plan.collapsed  # the later blocks are closed
    for key, members in plan.clusters.items():
        if "part" in key or "×" in key:
            continue
        for n in members:  # a layer without a scope joins its neighbours' block
            name = G.nodes[n]["name"]
            assert name.startswith(key) or not scope_path(name)


def test_a_faulted_layer_is_never_folded_collapsed_or_left_out() -> None:
    G = read_ir(WRONG)
    drawing = draw(G, fold=True, max_layers=1)
    bad = [n for n, row in drawing.rows.items() if row["status"] == "mismatch"]
    assert bad and set(bad) <= set(drawing.plan.drawn)
    assert not drawing.plan.left_out  # nothing is left out
    nodes = dot_nodes(drawing.dot)
    assert all(nodes[n][1] == STATUS_COLOURS["mismatch"] for n in bad)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def big_ir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "tools"))
    from gen_models import big_ir

    return big_ir(1000, tmp_path_factory.mktemp("big") / "big.xml", seed=3)


@pytest.mark.parametrize("which,bound", [("swin", None), ("big", "200"), ("big", "0")])
def test_a_png_of_a_thousand_layer_ir_is_at_most_20_megapixels(
        which: str, bound: str | None, big_ir: Path, tmp_path: Path, capsys) -> None:
    """At Graphviz's 96 dpi both layouts are about 26 megapixels (Swin folded to 146
    nodes; the 1,000-layer chain unbounded, 564 nodes, 821 × 32,539): the resolution
    must come down to fit."""
    path = SWIN if which == "swin" else big_ir
    assert len(ov.Core().read_model(str(path)).get_ops()) >= (780 if which == "swin" else 1000)
    out = tmp_path / "m.png"
    args = ["show", str(path), "-o", str(out), "--json"]
    assert main(args + (["--max-layers", bound] if bound else [])) == 0
    width, height = _png_size(out)
    assert width * height <= MAX_PIXELS
    assert min(width, height) > 300  # still a picture
    counts = json.loads(capsys.readouterr().out)
    assert counts["drawn"] + counts["folded"] + counts["collapsed"] + counts["left_out"] == \
        len(read_ir(path))


def test_the_cli_knows_every_format_the_library_writes() -> None:
    from ovgather.cli.show import _FORMATS
    from ovgather.views.show import FORMATS

    assert _FORMATS == FORMATS


FOLDED = [*sorted((ROOT / "ir_samples").rglob("*.xml")), SWIN, BERT,
          ROOT / "ir_corpus" / "resnet" / "pytorch_static.xml",
          ROOT / "ir_corpus" / "llama_kv" / "pytorch_stateful.xml"]


@pytest.mark.parametrize("path", FOLDED, ids=[str(p.relative_to(ROOT)) for p in FOLDED])
def test_graphviz_draws_every_folded_picture_without_a_word(path: Path) -> None:
    G = read_ir(path)
    for bound in (None, 10):  # every block open, and blocks collapsed and layers left out
        run = subprocess.run(["dot", "-Tsvg"], capture_output=True, timeout=120, check=False,
                             input=to_dot(G, fold=True, max_layers=bound).encode())
        assert run.returncode == 0 and b"<svg" in run.stdout
        assert not run.stderr.strip(), (bound, run.stderr.decode())
