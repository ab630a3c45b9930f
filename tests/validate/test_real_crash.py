"""A real model that kills OpenVINO's CPU plugin: ``torch.nn.functional.unfold`` (kernel
2×2) converted by OpenVINO's PyTorch frontend and reshaped to a 1×1 image, where the
patch count is 0. OpenVINO reads it; compiling it ends the process with SIGFPE (the test
shows that in a child process of its own). ``validate`` must report the layers the runtime
crashed on, exit 1, and live."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openvino as ov

MODEL = Path(__file__).resolve().parents[1] / "data" / "crash" / "unfold_1x1.xml"

_COMPILE = """
import numpy as np, openvino as ov
core = ov.Core()
compiled = core.compile_model(core.read_model({path!r}), "CPU",
                              {{"INFERENCE_PRECISION_HINT": "f32"}})
compiled(np.ones((1, 2, 1, 1), np.float32))
"""


def test_the_model_really_crashes_openvino():
    assert str(ov.Core().read_model(str(MODEL)).output(0).get_partial_shape()) == "[1,8,0]"
    done = subprocess.run([sys.executable, "-c", _COMPILE.format(path=str(MODEL))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode < 0, (done.returncode, done.stderr[-500:])


def test_validate_all_layers_reports_the_crash_and_lives():
    done = subprocess.run([sys.executable, "-m", "ovgather", "validate", "--all-layers",
                           "--json", str(MODEL)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr[-800:]
    model = json.loads(done.stdout)["models"][0]
    crashed = [layer["name"] for layer in model["layers"] if layer["status"] == "crashed"]
    assert "aten::im2col/Gather" in crashed
    assert all("crashed" in layer["message"] for layer in model["layers"]
               if layer["status"] == "crashed")


def test_validate_of_the_gathers_reports_the_crash_and_lives():
    done = subprocess.run([sys.executable, "-m", "ovgather", "validate", "--json", str(MODEL)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr[-800:]
    layers = json.loads(done.stdout)["models"][0]["layers"]
    statuses = {layer["name"]: layer["status"] for layer in layers}
    assert statuses["aten::im2col/Gather"] == "crashed"
    assert "SIG" in next(layer["message"] for layer in layers
                         if layer["name"] == "aten::im2col/Gather")
