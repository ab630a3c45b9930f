"""Graphs, check and compare reports and pictures display themselves in Jupyter; outside a
notebook nothing of it is imported."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from lxml import etree
from nbclient import NotebookClient

from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.views.notebook import check_html

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"


def tamper(src: Path, dst: Path, op: str = "MatMul") -> tuple[str, str]:
    """Copy the IR ``src`` to ``dst`` with the last declared output dim of its first
    ``op`` layer one larger; the layer's name and what it now declares (``-1`` as ``?``)."""
    tree = etree.parse(str(src))
    layer = tree.xpath(f"//layer[@type='{op}']")[0]
    dims = layer.xpath("output/port[1]/dim")
    dims[-1].text = str(int(dims[-1].text) + 1)
    dst.write_bytes(etree.tostring(tree, xml_declaration=True, encoding="utf-8"))
    dst.with_suffix(".bin").write_bytes(src.with_suffix(".bin").read_bytes())
    return layer.get("name"), "[" + ",".join("?" if d.text == "-1" else d.text
                                             for d in dims) + "]"


def openvino_shape(path: Path, name: str) -> str:
    """The output shape OpenVINO's reader infers for layer ``name`` (declared dims aside)."""
    import openvino as ov

    model = ov.Core().read_model(str(path))
    (op,) = [op for op in model.get_ops() if op.get_friendly_name() == name]
    return str(op.get_output_partial_shape(0))


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch) -> str:
    """A Jupyter kernel of the test's own Python (whatever ``python3`` means elsewhere)."""
    spec = tmp_path / "jupyter" / "kernels" / "ovgather-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ovgather test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "ovgather-test"


def _outputs(cell) -> dict[str, str]:
    data: dict[str, str] = {}
    for out in cell.outputs:
        assert out.output_type != "error", "\n".join(out.get("traceback", []))
        data.update(out.get("data", {}))
    return data


def test_the_example_notebook_shows_a_failing_layer_in_html_and_in_its_picture(tmp_path,
                                                                               kernel):
    model = tmp_path / "model.xml"
    name, declared = tamper(SAMPLES / "mixed_ops.xml", model)
    real = openvino_shape(model, name)
    assert real != declared  # the tampered dim contradicts what OpenVINO infers
    nb = nbformat.read(NOTEBOOK, as_version=4)
    (params,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    params.source = f"MODEL = {str(model)!r}\nSAMPLES = {str(SAMPLES)!r}"
    NotebookClient(nb, kernel_name=kernel, timeout=300,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    graph, report, picture, compared = (_outputs(c) for c in code[1:5])
    # the graph: its check table (the layer, its status, OpenVINO's shape) and its picture
    for shown in (graph["text/html"], report["text/html"]):
        rows = re.findall(r"<tr>(.*?)</tr>", shown, re.S)
        first = re.sub(r"<[^>]+>", "|", rows[1])  # rows[0] is the head
        assert "mismatch" in first and name in first and real in first, first
        assert declared in first
    assert "<svg" in graph["text/html"] and f">{name}</text>" in graph["text/html"]
    # the neighbourhood of the failing layer, as an image
    svg = picture["image/svg+xml"]
    assert svg.lstrip().startswith(("<?xml", "<svg", "<!--")) and f">{name}</text>" in svg
    assert ">mismatch</text>" in svg
    # two models on the runtime: every output OpenVINO sees listed, all ok
    import openvino as ov

    shown = compared["text/html"]
    assert "OK" in shown and "PROBLEMS" not in shown
    outputs = ov.Core().read_model(str(model)).outputs
    assert shown.count("<tr>") == 1 + len(outputs)
    assert all(f"<b>{out.any_name}</b>" in shown for out in outputs)


def test_failing_layers_come_first_whatever_their_place_in_the_model(tmp_path):
    model = tmp_path / "model.xml"
    name, _ = tamper(SAMPLES / "mixed_ops.xml", model, op="GatherElements")  # the last one
    report = check(read_ir(model))
    assert [lr.name for lr in report.layers].index(name) > 20
    rows = re.findall(r"<tr>(.*?)</tr>", check_html(report, all_layers=True), re.S)
    assert len(rows) == 1 + len(report.layers)
    assert name in rows[1] and "mismatch" in rows[1]
    assert all(">ok<" in row for row in rows[2:])


_OUTSIDE = """
import sys
import ovgather as og
report = og.check(og.read_ir(sys.argv[1]))
from ovgather.cli import main
main(["check", sys.argv[1]])
print(sorted(m for m in sys.modules if m.split(".")[0] in ("IPython", "ipykernel")
             or m == "ovgather.views.notebook"))
"""


def test_import_ovgather_and_a_check_leave_ipython_alone():
    run = subprocess.run([sys.executable, "-c", _OUTSIDE, str(SAMPLES / "mixed_ops.xml")],
                         capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout.splitlines()[-1] == "[]"


_SHELL = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
import networkx as nx
import ovgather as og  # a shell runs: its formatters learn ovgather's objects

G = og.read_ir(sys.argv[1])
fmt = shell.display_formatter.format
print(json.dumps({"graph": sorted(fmt(G)[0]), "report": sorted(fmt(og.check(G))[0]),
                  "other": sorted(fmt(nx.MultiDiGraph())[0]),
                  "view": sorted(fmt(og.view(G))[0]),
                  "picture": sorted(fmt(og.picture(G))[0])}))
"""


def test_in_an_ipython_shell_ovgathers_objects_get_html_and_other_graphs_do_not():
    run = subprocess.run([sys.executable, "-c", _SHELL, str(SAMPLES / "mixed_ops.xml")],
                         capture_output=True, text=True, timeout=120, check=True)
    shown = json.loads(run.stdout.splitlines()[-1])
    assert shown == {"graph": ["text/html", "text/plain"], "report": ["text/html", "text/plain"],
                     "other": ["text/plain"], "view": ["text/html", "text/plain"],
                     "picture": ["image/svg+xml", "text/plain"]}


# -- bounded displays ----------------------------------------------------------------------
def _big_check_report(n: int = 10_000):
    import random

    from ovgather.infer.report import CheckReport, LayerResult
    from ovgather.shapes import PartialShape

    rng = random.Random(3)
    layers = []
    for i in range(n):
        dims = tuple(rng.randint(1, 9) for _ in range(rng.randint(1, 6)))
        layers.append(LayerResult(
            str(i), f"block{i}/" + "x" * rng.choice([5, 50, 5000]), "Gather", "opset8",
            rng.choice(["mismatch", "invalid", "unknown"]), [dims] * rng.randint(1, 4),
            [PartialShape.parse("[" + ",".join(map(str, dims[::-1])) + "]")], i + 3,
            "the declared dims contradict the inferred shape " * rng.choice([1, 200])))
    return CheckReport("big_model.xml", 11, layers)


def _big_compare_report(n: int = 10_000):
    from ovgather.comparison.outputs import CompareReport, OutputComparison

    outputs = [OutputComparison(f"out{i}" + "y" * (i % 3000), f"out{i}", "differs",
                                shape="[1,2]", shape_b="[1,2]", max_abs=0.5, max_rel=0.25,
                                message="values differ " * 100) for i in range(n)]
    return CompareReport("a.xml", "b.xml", 0, 1e-4, 1e-5, outputs=outputs)


@pytest.mark.parametrize("make", [_big_check_report, _big_compare_report])
def test_a_report_of_ten_thousand_bad_layers_displays_in_bounded_size_and_time(make):
    import time

    import ovgather as og
    from ovgather.views.notebook import MAX_ROWS, compare_html

    tiny = check(read_ir(SAMPLES / "mixed_ops.xml"))
    check_html(tiny)  # the imports a first display makes, out of the timing
    compare_html(_big_compare_report(2))
    report = make()
    started = time.perf_counter()
    shown = og.view(report)._repr_html_()
    text = repr(og.view(report))
    spent = time.perf_counter() - started
    assert spent < 2.0 and len(shown.encode()) < 200_000 and len(text) < 1_000
    assert len(re.findall(r"<tr>", shown)) == 1 + MAX_ROWS
    assert f"… and {10_000 - MAX_ROWS} more" in shown
    if make is _big_check_report:
        assert len(check_html(report, all_layers=True).encode()) < 200_000


def test_ipython_shows_a_big_report_as_one_short_line_of_text():
    """IPython's text/plain of a report (always made beside the HTML) is not the
    dataclass's repr of every layer."""
    pytest.importorskip("IPython")
    script = ("import sys, time\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "from IPython.core.interactiveshell import InteractiveShell\n"
              "shell = InteractiveShell.instance()\n"
              "import ovgather\n"
              "from test_notebook import _big_check_report, _big_compare_report\n"
              "for make in (_big_check_report, _big_compare_report):\n"
              "    report = make()\n"
              "    t = time.perf_counter()\n"
              "    data, _ = shell.display_formatter.format(report)\n"
              "    print(round(time.perf_counter() - t, 2), len(data['text/html']),\n"
              "          repr(data['text/plain']))\n")
    run = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=300, check=True)
    lines = run.stdout.strip().splitlines()[-2:]
    for line in lines:
        spent, size, plain = line.split(" ", 2)
        assert float(spent) < 2.0 and int(size) < 200_000 and len(plain) < 1_000, line
    assert "<CheckReport big_model.xml: PROBLEMS: 10000 layers" in lines[0]
    assert "<CompareReport a.xml against b.xml: PROBLEMS: 10000 outputs" in lines[1]
