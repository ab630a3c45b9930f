"""Build one op through OpenVINO's IR reader, for the ops its Python API does not offer
(Xor-1, the ExperimentalDetectron ops): Parameters of the given partial shapes and
element types, the op with its attribute texts, one Result per output."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np
import openvino as ov


def _port(i: int, shape: str, precision: str = "FP32") -> str:
    """A port as the IR declares it: static dims as numbers, the others -1."""
    dims = "" if shape == "[...]" else "".join(
        f"<dim>{d.strip() if d.strip().isdigit() else -1}</dim>"
        for d in shape.strip("[]").split(",") if d.strip())
    return f'<port id="{i}" precision="{precision}">{dims}</port>'


def build_op(op_type: str, opset: int, shapes: list[str], attrs: dict[str, str],
             n_outputs: int = 1, etype: str = "f32"):
    """The op as ``read_model`` builds it (raises as OpenVINO's shape inference does)."""
    layers, edges = [], []
    for i, shape in enumerate(shapes):
        layers.append(f'<layer id="{i}" name="p{i}" type="Parameter" version="opset1">'
                      f'<data shape={quoteattr(shape.strip("[]") if shape != "[...]" else "...")} '
                      f'element_type="{etype}"/><output>{_port(0, shape)}</output></layer>')
        edges.append(f'<edge from-layer="{i}" from-port="0" to-layer="{len(shapes)}" '
                      f'to-port="{i}"/>')
    op_id = len(shapes)
    data = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
    inputs = "".join(_port(i, s) for i, s in enumerate(shapes))
    outputs = "".join(f'<port id="{len(shapes) + k}" precision="FP32"/>' for k in range(n_outputs))
    layers.append(f'<layer id="{op_id}" name="op" type="{op_type}" version="opset{opset}">'
                  f'<data {data}/><input>{inputs}</input><output>{outputs}</output></layer>')
    for k in range(n_outputs):
        rid = op_id + 1 + k
        layers.append(f'<layer id="{rid}" name="r{k}" type="Result" version="opset1">'
                      f'<input><port id="0"/></input></layer>')
        edges.append(f'<edge from-layer="{op_id}" from-port="{len(shapes) + k}" '
                     f'to-layer="{rid}" to-port="0"/>')
    xml = (f'<?xml version="1.0"?><net name="one" version="11"><layers>{"".join(layers)}'
           f'</layers><edges>{"".join(edges)}</edges></net>')
    model = ov.Core().read_model(xml.encode(), ov.Tensor(np.zeros([0], np.uint8)))
    return next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "op")
