"""Inputs fed as the compiled model asks (``runtime.core.input_tensor``): an IR v10 keeps
f32 at an input declared f16, and NumPy holds no bf16, f8, f4, nf4 or packed integer; every
validate mode runs such a model, or says why the runtime cannot, never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as o13
import pytest

from ovgather.cli import main
from ovgather.runtime.core import compile_model, cpu_config, run_request

#: Every element type a Parameter may have that OpenVINO converts to f32, NumPy's included.
INPUT_TYPES = ("f16", "bf16", "f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1", "nf4", "u4", "i4",
               "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f64", "boolean")


def _converted(etype: str, shape=(2, 3)) -> ov.Model:
    """x (``etype``) -> Convert to f32 -> Gather of two rows -> Result."""
    x = o13.parameter(list(shape), getattr(ov.Type, etype), name="x")
    f = o13.convert(x, "f32")
    g = o13.gather(f, o13.constant(np.array([1, 0], np.int32)), o13.constant(np.int64(0)))
    return ov.Model([g], [x], "typed")


def _validate(capsys, path: Path, *mode: str) -> tuple[int, dict]:
    code = main(["validate", "--json", *mode, str(path)])
    out = capsys.readouterr().out
    return code, (json.loads(out)["models"][0] if out.strip() else {})


@pytest.mark.parametrize("etype", INPUT_TYPES)
@pytest.mark.parametrize("mode", [["--all-layers"], ["--whole-model"]])
def test_every_input_element_type_is_fed_as_the_compiled_model_asks(tmp_path, capsys, etype,
                                                                    mode):
    path = tmp_path / f"{etype}.xml"
    ov.save_model(_converted(etype), str(path), compress_to_fp16=False)
    code, report = _validate(capsys, path, *mode)
    assert code == 0, (code, report)
    statuses = {lp["status"] for lp in report["layers"]}
    assert statuses == {"ok"}, report["layers"]


def test_an_ir_v10_with_f16_inputs_is_fed_f32_as_openvino_compiles_it(tmp_path, capsys):
    """OpenVINO reads an IR v10's f16 Parameter as f32 (its v10 compatibility): the arrays
    made for the declared f16 must be fed as f32."""
    v11 = tmp_path / "v11.xml"
    ov.save_model(_converted("f16"), str(v11), compress_to_fp16=False)
    v10 = tmp_path / "v10.xml"
    v10.write_text(v11.read_text().replace('version="11"', 'version="10"', 1))
    (tmp_path / "v10.bin").write_bytes((tmp_path / "v11.bin").read_bytes())
    compiled = ov.Core().compile_model(str(v10), "CPU", cpu_config())
    assert compiled.inputs[0].get_element_type() == ov.Type.f32  # the premise
    assert 'element_type="f16"' in v10.read_text()
    for mode in ([], ["--whole-model"], ["--all-layers"]):
        code, report = _validate(capsys, v10, *mode)
        assert code == 0 and report["layers"], (mode, report)
        assert all(lp["status"] == "ok" for lp in report["layers"]), (mode, report)


def test_bf16_inputs_carry_the_f32_values_cut_to_bf16():
    """OpenVINO's own Convert reads back what was fed: the f32 values with the lower half
    of their bits dropped."""
    x = o13.parameter([64], ov.Type.bf16, name="x")
    compiled = compile_model(ov.Model([o13.convert(x, "f32")], [x]), None)
    values = np.random.default_rng(7).standard_normal(64).astype(np.float32)
    out = run_request(compiled, [values]).get_output_tensor(0).data
    cut = (values.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    np.testing.assert_array_equal(out, cut)


@pytest.mark.parametrize("etype", ["u1", "u2", "u3", "u6", "dynamic"])
def test_an_input_the_plugin_cannot_take_is_not_run_with_its_reason(tmp_path, capsys, etype):
    """The CPU plugin compiles no u1, u2, u3 or u6 input, and makes no request for an input
    of dynamic element type: every layer is ``not run`` with the plugin's words."""
    x = o13.parameter([2, 8], getattr(ov.Type, etype), name="x")
    path = tmp_path / f"{etype}.xml"
    ov.save_model(ov.Model([o13.shape_of(x), o13.concat([x, x], 0)], [x]), str(path))
    code, report = _validate(capsys, path, "--all-layers")
    assert code == 1 and {lp["status"] for lp in report["layers"]} == {"not run"}  # nothing proved
    assert report["layers"][0]["message"].startswith("not run: the CPU plugin could not") or \
        "is_static" in report["layers"][0]["message"]


def test_a_string_input_is_fed_empty_strings(tmp_path, capsys):
    x = o13.parameter([2, 8], ov.Type.string, name="x")
    path = tmp_path / "string.xml"
    ov.save_model(ov.Model([o13.shape_of(x), o13.concat([x, x], 0)], [x]), str(path))
    code = main(["validate", "--json", "--all-layers", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""  # no warning that strings are copied
    assert {lp["status"] for lp in json.loads(out)["models"][0]["layers"]} == {"ok"}
