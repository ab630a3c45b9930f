"""``reduce`` on faults put into real models of ir_corpus/: a weight perturbed
(``differs --against`` the original), a layer that crashes the runtime (a worker stub), a
NaN producer mid-model (``nonfinite``), a declared dim tampered (``mismatch``); and
``--command`` against a script. Each reduced model keeps the culprit, at most 3 layers
besides Parameters, Constants and Results, still fails and reads in OpenVINO.

The default run takes a sample of the (model, fault) grid; ``OVGATHER_REDUCE_GRID=1``
runs all of it."""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import openvino as ov
import pytest
import reduce_faults as faults

import ovgather as og
from ovgather.debug import runs, search
from ovgather.debug.cuts import counted_layers
from ovgather.ir import read_ir

MODELS = ["bert/pytorch_dynamic", "gpt2/onnx_static", "llama/pytorch_dynamic",
          "vit/pytorch_static", "resnet/pytorch_static", "convnext/onnx_static",
          "t5/onnx_static", "whisper/onnx_static"]
FAULTS = ["weight", "crash", "nan", "dim"]
#: the default run's share of the grid: every fault, every model family once
SAMPLE = {("resnet/pytorch_static", "weight"), ("resnet/pytorch_static", "dim"),
          ("vit/pytorch_static", "nan"), ("resnet/pytorch_static", "crash"),
          ("gpt2/onnx_static", "dim")}
FULL = os.environ.get("OVGATHER_REDUCE_GRID") == "1"


def _grid():
    for model in MODELS:
        for fault in FAULTS:
            marks = () if FULL or (model, fault) in SAMPLE else \
                (pytest.mark.skip(reason="OVGATHER_REDUCE_GRID=1 runs the whole grid"),)
            yield pytest.param(model, fault, marks=marks, id=f"{model}-{fault}")


def _reduce(model: str, fault: str, folder: str):
    src = str(faults.CORPUS / f"{model}.xml")
    if fault == "weight":
        path, culprit = faults.inject_weight(src, folder)
        return (*og.reduce(path, "differs", against=src), culprit)
    if fault == "nan":
        path, culprit = faults.inject_nan(src, folder)
        return (*og.reduce(path, "nonfinite"), culprit)
    if fault == "dim":
        path, culprit = faults.inject_dim(src, folder)
        return (*og.reduce(path, "mismatch"), culprit)
    culprit = faults.crash_layer(src)
    runs.RUN = functools.partial(faults.run_or_crash, marker=culprit)
    try:
        return (*og.reduce(src, "crashes"), culprit)
    finally:
        runs.RUN = None


@pytest.mark.parametrize(("model", "fault"), list(_grid()))
def test_reduce_finds_the_fault(model, fault, tmp_path):
    small, report, culprit = _reduce(model, fault, str(tmp_path))
    assert report.holds_on_model, report.model_evidence
    names = [d["name"] for d in report.layers]
    assert culprit in names, (names, report.evidence)
    assert counted_layers(small) <= 3, [a["type"] for _, a in small.nodes(data=True)]
    assert report.layers_after == counted_layers(small) < report.layers_before
    assert report.bisect_runs <= 2 * math.log2(report.order_length) + 10
    assert report.runs >= report.bisect_runs
    assert report.evidence
    out = tmp_path / "small.xml"
    og.write_ir(small, str(out))
    ov.Core().read_model(str(out))
    if fault == "dim":
        assert any(lr.status == "mismatch" for lr in og.check(read_ir(str(out))).layers)


def test_written_outputs_and_npz_feed_compare(tmp_path):
    src = str(faults.CORPUS / "resnet/pytorch_static.xml")
    path, culprit = faults.inject_weight(src, str(tmp_path))
    out = str(tmp_path / "small.xml")
    small, report = og.reduce(path, "differs", against=src, output=out)
    assert report.output == out and os.path.isfile(out)
    assert os.path.isfile(report.inputs_file) and report.passing_output
    ov.Core().read_model(report.passing_output)
    with np.load(report.inputs_file) as z:
        fed = set(z.files)
    assert fed == {a["name"] for _, a in small.nodes(data=True) if a["type"] == "Parameter"}
    # the small model on the saved inputs against the same cut of the original differs
    doc = report.to_dict()
    assert doc["layers_after"] <= 3 and doc["runs"] == report.runs
    assert doc["bisect_runs"] <= doc["bisect_bound"] + 10


SCRIPT = """\
import sys
text = open(sys.argv[1]).read()
if 'name="{culprit}"' in text:
    print("FATAL: kernel {culprit} failed")
    sys.exit(3)
if 'type="Convolution"' in text:
    print("warning only")
    sys.exit(4)
"""


def test_command_with_fail_regex(tmp_path):
    src = str(faults.CORPUS / "resnet/pytorch_static.xml")
    culprit = faults.crash_layer(src)
    script = tmp_path / "tool.py"
    script.write_text(textwrap.dedent(SCRIPT.format(culprit=culprit)))
    small, report = og.reduce(src, "command", command=f"{sys.executable} {script} {{model}}",
                              fail_regex="FATAL")
    assert [d["name"] for d in report.layers] == [culprit]
    assert "FATAL" in report.evidence and counted_layers(small) <= 3
    assert report.bisect_runs <= 2 * math.log2(report.order_length) + 10


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ovgather", "reduce", *args],
                          capture_output=True, text=True, check=False)


def test_cli_exit_codes_and_json(tmp_path):
    src = str(faults.CORPUS / "resnet/pytorch_static.xml")
    path, culprit = faults.inject_dim(src, str(tmp_path))
    out = str(tmp_path / "small.xml")
    done = _cli(path, "--until", "mismatch", "-o", out, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["condition"] == "mismatch" and doc["layers_after"] <= 3
    assert [d["name"] for d in doc["layers"]] == [culprit]
    assert os.path.isfile(out) and os.path.isfile(out[:-4] + ".npz")
    # the condition does not hold on the model itself: 1, nothing written
    done = _cli(src, "--until", "mismatch", "-o", str(tmp_path / "none.xml"))
    assert done.returncode == 1 and "does not hold" in done.stdout
    assert not os.path.exists(tmp_path / "none.xml")
    # unusable input: one error line, 2
    for bad in (["--until", "bogus"], ["--until", "differs"],
                ["--until", "command", "--command", "true"]):
        done = _cli(src, *bad, "-o", str(tmp_path / "x.xml"))
        assert done.returncode == 2 and done.stderr.startswith("error:"), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_bisect_bound():
    assert search.bisect_bound(4945) == 2 * 13 + 1
