"""reshape's row proof says when it could not run, and never turns its own failure into a
verdict on the model (``validate/rows.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o
import pytest

from ovgather.cli import main
from ovgather.errors import RuntimeBridgeError
from ovgather.ir import read_ir
from ovgather.passes.reshape import reshape
from ovgather.shapes import PartialShape
from ovgather.validate import rows
from ovgather.validate.rows import proof_sizes, prove_rows


def _scalar_model(path: Path) -> Path:
    x = o.parameter([], ov.Type.f32, name="x")
    y = o.multiply(o.relu(x), o.constant(np.float32(2.0)))
    ov.save_model(ov.Model([y], [x], "scalar"), str(path))
    return path


@pytest.mark.parametrize("new", ["[2,3,4,5]", "[3]", "[1,1]"])
def test_an_input_that_changes_rank_is_not_run_and_says_why(new):
    runs, why = proof_sizes({"x": PartialShape.parse("[]")}, {"x": PartialShape.parse(new)})
    assert runs == [] and "changes rank" in why and new in why


def test_reshape_of_a_scalar_input_writes_the_model_and_says_the_proof_could_not_run(
        tmp_path, capsys):
    path = _scalar_model(tmp_path / "scalar.xml")
    code = main(["reshape", str(path), "--shape", "x[2,3,4,5]", "-o", str(tmp_path / "o.xml")])
    out = capsys.readouterr().out
    assert code == 0 and (tmp_path / "o.xml").exists()
    assert "does not compute" not in out and "runtime proof: not run" in out


def test_the_original_failing_on_its_own_rows_is_the_proofs_failure(tmp_path, monkeypatch):
    """A run of the original that fails means the proof's inputs are wrong for it: not run,
    with the reason; the written model is not blamed."""
    x = o.parameter([1, 4], ov.Type.f32, name="x")
    ov.save_model(ov.Model([o.relu(x)], [x], "m"), str(tmp_path / "m.xml"))
    G = read_ir(tmp_path / "m.xml")
    old = {"x": PartialShape.parse("[1,4]")}
    reshape(G, {"x": "[?,4]"})
    real = rows._outputs
    calls = []

    def original_fails(compiled, names, feed):
        calls.append(names)
        if len(calls) == 1:  # the first run is the original's first row
            raise RuntimeBridgeError("the CPU plugin failed to run: made up")
        return real(compiled, names, feed)

    monkeypatch.setattr(rows, "_outputs", original_fails)
    proof = prove_rows(str(tmp_path / "m.xml"), old, G)
    assert not proof.ran and proof.differs is None
    assert proof.why.startswith("the proof could not run: the original fails on one row")
