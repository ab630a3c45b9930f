"""The walk's memo of rule answers (``infer/memo.py``) gives exactly what running every
rule gives: on every sample and corpus IR, and on questions that differ only in the data
of Consts not read yet (which the memo must read before it answers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as ops
import pytest

from ovgather.infer import all_tensors, check, walk
from ovgather.ir import read_ir
from ovgather.ops.core.spec import Attrs

ROOT = Path(__file__).resolve().parents[2]
IRS = sorted(ROOT.glob("ir_samples/*.xml")) + sorted(ROOT.glob("ir_corpus/*/*.xml"))


class _EveryRule:
    """The memo's interface, answering every question by running the rule."""

    def run(self, spec, op, version, data, n_outputs, ins):
        return spec.rule(ins, Attrs.of(data, spec.version, n_outputs), None)


def _seen(G) -> tuple[list, dict]:
    report = check(G)
    layers = [(r.id, r.status, r.inferred, r.declared, r.message) for r in report.layers]
    values = {node: {port: (str(t.shape), t.etype, t.value) for port, t in outs.items()}
              for node, outs in all_tensors(G).items()}
    return layers, values


@pytest.mark.parametrize("xml", IRS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_memo_answers_as_every_rule_does(xml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    G = read_ir(xml)
    remembered = _seen(G)
    monkeypatch.setattr(walk, "RuleMemo", _EveryRule)
    assert _seen(G) == remembered


def _reshapes(tmp_path: Path, targets: list[list[int]], convert: bool) -> Path:
    """One Parameter reshaped by each target, every target a Const of the same type and
    shape (the same question but for the Const's data); ``convert``: each target an i32
    Const converted to i64, as the PyTorch frontend writes shape constants."""
    x = ops.parameter([2, 12], np.float32, name="x")
    outs = []
    for target in targets:
        if convert:
            t = ops.convert(ops.constant(np.array(target, np.int32)), "i64")
        else:
            t = ops.constant(np.array(target, np.int64))
        outs.append(ops.result(ops.reshape(x, t, special_zero=False)))
    path = tmp_path / "reshapes.xml"
    ov.save_model(ov.Model(outs, [x]), path, compress_to_fp16=False)
    return path


@pytest.mark.parametrize("convert", [False, True], ids=["const", "converted-const"])
def test_consts_that_differ_only_in_data_get_their_own_answers(tmp_path: Path,
                                                               convert: bool) -> None:
    targets = [[3, 8], [4, 6], [3, 8], [24, 1], [2, 12], [4, 6], [6, 4], [1, 24]]
    path = _reshapes(tmp_path, targets, convert)
    model = ov.Core().read_model(path)
    theirs = sorted(str(r.get_input_partial_shape(0)) for r in model.get_results())
    assert theirs == sorted(f"[{a},{b}]" for a, b in targets)  # the model is what we meant
    G = read_ir(path)
    report = check(G)
    assert report.ok
    by_name = {r.name: r for r in report.layers}
    for result in model.get_results():
        reshape = result.input_value(0).get_node()
        assert by_name[reshape.get_friendly_name()].inferred == [
            str(reshape.get_output_partial_shape(0)).replace(" ", "")]
