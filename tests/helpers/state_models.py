"""Stateful models built with OpenVINO's Python API for the tests of state keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset6, opset13


def state_named_like_its_input(folder: Path) -> Path:
    """``Concat(x [?,8], ReadValue "x" [?,8] (initial [5,8]))``: a Parameter and a state
    that share the name ``x``; the IR's path."""
    x = opset13.parameter(ov.PartialShape([-1, 8]), ov.Type.f32, name="x")
    state = opset6.read_value(opset13.constant(np.zeros([5, 8], np.float32)), "x",
                              ov.Type.f32, ov.PartialShape([-1, 8]))
    both = opset13.concat([x, state], 0)
    path = folder / "state.xml"
    ov.save_model(ov.Model([both.output(0)], [opset6.assign(state, "x")], [x], "state"),
                  str(path), compress_to_fp16=False)
    return path
