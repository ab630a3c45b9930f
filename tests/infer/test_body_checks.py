"""An op's validation runs in a Loop body as on the outer graph: a ScatterUpdate in a body
whose updates no longer fit the data once the inputs take new shapes is refused by
``read_model`` and by ``reshape``; ovgather must refuse it too (not report it ``ok``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import pytest

from ovgather.errors import ReshapeError
from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.passes.reshape import reshape


def _scatter_loop(x_shape: str, y_shape: str, op: str = "update") -> ov.Model:
    """``x`` and ``y`` enter a Loop body unchanged; the body scatters ``y`` into row 0
    of ``x`` (ScatterUpdate), or into ``x`` elementwise (ScatterElementsUpdate), or by
    index tuples (ScatterNDUpdate)."""
    x = o8.parameter(ov.PartialShape(x_shape), ov.Type.f32, name="x")
    y = o8.parameter(ov.PartialShape(y_shape), ov.Type.f32, name="y")
    d = o8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="d")
    u = o8.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="u")
    zero = o8.constant(np.array([0], dtype=np.int64))
    if op == "update":
        scattered = o8.scatter_update(d, zero, u, o8.constant(np.int64(0)))
    elif op == "elements":
        idx = o8.convert(o8.multiply(o8.convert(u, ov.Type.i64),
                                     o8.constant(np.int64(0))), ov.Type.i64)
        scattered = o8.scatter_elements_update(d, idx, u, o8.constant(np.int64(1)))
    else:
        scattered = o8.scatter_nd_update(d, o8.constant(np.array([[0]], dtype=np.int64)), u)
    scattered.set_friendly_name("scatter")
    results = [o8.result(scattered), o8.result(o8.constant(np.array(True)))]
    body = ov.Model(results, [d, u], "body")
    loop = o8.loop(o8.constant(np.int64(2)), o8.constant(np.array(True)))
    loop.set_friendly_name("loop")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_invariant_input(d, x.output(0))
    loop.set_invariant_input(u, y.output(0))
    out = loop.get_iter_value(results[0].output(0), -1)
    return ov.Model([o8.result(o8.relu(out, name="after"))], [x, y], "m")


def _with_parameter_shape(path: Path, name: str, dims: list[int]) -> Path:
    """The saved IR with Parameter ``name`` declared ``dims`` (as a hand-edited IR would)."""
    text = path.read_text()
    layer = re.search(rf'<layer id="\d+" name="{name}" type="Parameter".*?</layer>', text, re.S)
    new = re.sub(r'shape="[^"]*"', f'shape="{",".join(map(str, dims))}"', layer.group(0))
    new = re.sub(r"(<port id=\"0\" precision=\"FP32\"[^>]*>).*?(</port>)",
                 lambda m: m.group(1) + "".join(f"<dim>{d}</dim>" for d in dims) + m.group(2),
                 new, flags=re.S)
    out = path.parent / "x".join(map(str, dims)) / path.name
    out.parent.mkdir(exist_ok=True)
    out.write_text(text.replace(layer.group(0), new))
    out.with_suffix(".bin").write_bytes(path.with_suffix(".bin").read_bytes())
    return out


CASES = [  # (op, x, y that fits, y that does not)
    ("update", "[?,15376]", [1, 15376], [1, 30752]),
    ("elements", "[?,8]", [1, 8], [1, 9, 1]),
    ("nd", "[?,6]", [1, 6], [1, 7]),
]


@pytest.mark.parametrize(("op", "x", "fits", "misfit"), CASES, ids=[c[0] for c in CASES])
def test_a_body_scatter_that_no_longer_fits_is_refused_as_read_model_refuses(
        tmp_path: Path, op, x, fits, misfit):
    path = tmp_path / f"{op}.xml"
    ov.save_model(_scatter_loop(x, "[1,?]", op), str(path))
    core = ov.Core()
    for dims, valid in ((fits, True), (misfit, False)):
        edited = _with_parameter_shape(path, "y", dims)
        try:
            core.read_model(str(edited))
            theirs = True
        except RuntimeError:
            theirs = False
        assert theirs is valid, (dims, theirs)
        report = check(read_ir(edited))
        assert report.ok is valid, [lr.to_dict() for lr in report.problems()]
        if not valid:
            assert any(lr.name == "loop/body/scatter" for lr in report.problems())


@pytest.mark.parametrize(("op", "x", "fits", "misfit"), CASES, ids=[c[0] for c in CASES])
def test_reshape_refuses_a_new_shape_that_breaks_a_body(tmp_path: Path, op, x, fits, misfit):
    path = tmp_path / f"{op}.xml"
    ov.save_model(_scatter_loop(x, "[1,?]", op), str(path))
    for dims, valid in ((fits, True), (misfit, False)):
        model = ov.Core().read_model(str(path))
        try:
            model.reshape({"y": ov.PartialShape(dims)})
            theirs = True
        except RuntimeError:
            theirs = False
        assert theirs is valid
        G = read_ir(path)
        if valid:
            reshape(G, {"y": str(dims).replace(" ", "")})
        else:
            with pytest.raises(ReshapeError):
                reshape(G, {"y": str(dims).replace(" ", "")})
