"""The compile screen of ``runtime/core.py``: models that would end the process inside the
CPU plugin's compile are refused with the reason, in every validate mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import pytest

from ovgather.errors import RuntimeBridgeError
from ovgather.runtime.core import compile_crash, compile_model


def _gather(shape, axis: int) -> ov.Model:
    data = o8.parameter(shape, np.float32, name="data")
    out = o8.gather(data, o8.constant(np.array([0, 1], np.int32)), o8.constant(np.int64(axis)))
    return ov.Model([out], [data])


@pytest.mark.parametrize(("shape", "axis", "crashes"), [
    ([0, 3, 8], 1, True), ([3, 0, 8], 0, True), ([3, 8, 0], -3, True),
    ([0, 3, 8], 0, False), ([0, 3, 8], -3, False), ([-1, 3, 8], 1, False), ([2, 3, 8], 1, False),
])
def test_a_gather_on_data_with_a_static_zero_dim_off_its_axis_is_screened(shape, axis, crashes):
    model = _gather(shape, axis)
    assert (compile_crash(model) is not None) == crashes
    if crashes:
        with pytest.raises(RuntimeBridgeError, match="floating point exception"):
            compile_model(model, None)
    else:
        compile_model(model, None)


def _zero_gather_ir(tmp_path: Path) -> Path:
    """data [0,3,8] -> Gather-8 on axis 1 -> Result, as ``reshape --shape x[0,3,8]`` makes."""
    model = _gather([0, 3, 8], 1)
    path = tmp_path / "zero.xml"
    ov.save_model(model, str(path))
    return path


@pytest.mark.parametrize("mode", [[], ["--whole-model"], ["--all-layers"]])
def test_validate_answers_instead_of_dying_on_a_zero_dim_gather(tmp_path, mode):
    path = _zero_gather_ir(tmp_path)
    done = subprocess.run([sys.executable, "-m", "ovgather", "validate", "--json", *mode,
                           str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), (done.returncode, done.stderr)
    assert "floating point exception" in " ".join(done.stdout.split()), done.stdout
    assert "Traceback" not in done.stderr


def test_the_plain_bytes_of_the_screened_ir_are_what_openvino_reads(tmp_path):
    """The screen looks at the model as OpenVINO reads it: the saved IR keeps the zero."""
    path = _zero_gather_ir(tmp_path)
    read = ov.Core().read_model(str(path))
    assert compile_crash(read) is not None


def test_tensor_values_reads_strings_as_strings_even_empty_ones():
    import numpy as np
    import openvino as ov

    from ovgather.runtime.core import tensor_values

    words = np.array([["", "ab"], ["c", ""]], dtype=object)
    tensor = ov.Tensor(words.astype(str))
    got = tensor_values(tensor)
    assert got.shape == (2, 2) and got.tolist() == words.tolist()
    floats = ov.Tensor(np.arange(4, dtype=np.float32))
    assert tensor_values(floats).tolist() == [0.0, 1.0, 2.0, 3.0]
