"""The inputs an extract adds at the cut get tensor names no other tensor of the extract
has, so OpenVINO reads every name as written (it renames a clash: an output ``y`` would
come back as ``y_1``). Seeded cases, each judged by ``read_model`` of the written IR."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset8

from ovgather.edit.extract import write_extract
from ovgather.runtime import from_openvino


def _model(seed: int) -> tuple[ov.Model, str]:
    """x -> a (friendly name ``clash``, no tensor names) -> b (output tensor ``clash``)
    -> c; sometimes a second unnamed producer named ``clash_1`` too. Returns the model
    and the layer to extract (b or c)."""
    rng = random.Random(seed)
    x = opset8.parameter([2, 3], np.float32, name="x")
    x.output(0).set_names({"x"})
    a = opset8.relu(x)
    a.set_friendly_name("clash")
    a.output(0).set_names(set())
    b = opset8.exp(a)
    b.set_friendly_name("b")
    b.output(0).set_names({"clash"})
    feeds = [b]
    if rng.random() < 0.5:
        a2 = opset8.negative(x)
        a2.set_friendly_name("clash_1")
        a2.output(0).set_names(set())
        feeds.append(a2)
    c = opset8.add(*feeds) if len(feeds) == 2 else opset8.sigmoid(b)
    c.set_friendly_name("c")
    c.output(0).set_names({rng.choice(["clash_1", "out", "clash_2"])})
    return ov.Model([c], [x], "m"), rng.choice(["b", "c"])


@pytest.mark.parametrize("seed", range(8))
def test_extract_inputs_never_take_a_name_the_extract_already_has(seed: int,
                                                                   tmp_path: Path) -> None:
    model, layer = _model(seed)
    G = from_openvino(model)
    H = write_extract(G, layer, tmp_path / "cut.xml", depth=1 if layer == "c" else 0)
    written = sorted(sorted(port["names"]) for _, attrs in H.nodes(data=True)
                     for port in attrs["outputs"] if port["names"])
    read = ov.Core().read_model(str(tmp_path / "cut.xml"))
    # every tensor name is read as written: none renamed by OpenVINO for a clash
    assert sorted(sorted(out.get_names()) for op in read.get_ops() for out in op.outputs()
                  if out.get_names() and op.get_type_name() != "Result") == written
