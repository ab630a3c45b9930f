"""The runtime bridge: lazy openvino, many layers per compile, failures isolated, f32."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from ovgather.runtime import OpCase, cpu_config, run_cases, run_model_with_outputs
from ovgather.runtime import cases as runtime

ROOT = Path(__file__).resolve().parents[2]


def test_importing_ovgather_and_running_check_do_not_import_openvino():
    code = (
        "import sys\n"
        "import ovgather, ovgather.validate, ovgather.ops.reference, ovgather.runtime\n"
        "from ovgather.cli import main\n"
        "rc = main(['check', 'ir_samples/mixed_ops.xml', '--json'])\n"
        "assert rc == 0, rc\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'openvino')\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def _cases(n: int) -> list[OpCase]:
    rng = np.random.default_rng(1)
    return [OpCase("GatherND", 8, rng.standard_normal((3, 4, 5)).astype(np.float32),
                   rng.integers(0, 4, (3, 2, 1)).astype(np.int64), batch_dims=1)
            for _ in range(n)]


def test_many_layers_share_one_compile(monkeypatch):
    compiles = []
    real = runtime.compile_model
    monkeypatch.setattr(runtime, "compile_model",
                        lambda m, t, **k: compiles.append(m) or real(m, t, **k))
    runs = run_cases(_cases(60))
    assert len(compiles) == 1 and len(runs) == 60
    assert len(compiles[0].get_parameters()) == 120 and len(compiles[0].outputs) == 60
    assert all(r.output.shape == (3, 2, 5) for r in runs)
    compiles.clear()
    run_cases(_cases(60), batch_size=25)
    assert len(compiles) == 3


def test_a_failing_layer_costs_only_its_own_result():
    cases = _cases(9)
    bad = OpCase("GatherElements", 6, np.zeros((2, 3), np.float32),
                 np.array([[0, 7, 1], [1, 1, 1]], np.int32), axis=1)
    runs = run_cases(cases[:4] + [bad] + cases[4:])
    assert runs[4].output is None and "exceed" in runs[4].error
    assert all(r.error is None and r.output is not None for i, r in enumerate(runs) if i != 4)


def test_float_values_are_computed_in_f32_not_bf16():
    assert cpu_config()["INFERENCE_PRECISION_HINT"] == "f32"
    data = (1 + np.arange(64, dtype=np.float32) * 2.0 ** -20).reshape(8, 8)  # bf16 drops these
    idx = np.arange(8, dtype=np.int32)[::-1].reshape(8, 1)
    run = run_cases([OpCase("GatherND", 8, data, idx)])[0]
    np.testing.assert_array_equal(run.output, data[::-1])


def test_partial_shapes_are_kept_and_reported():
    case = OpCase("GatherND", 5, np.zeros((2, 3, 4), np.float32), np.zeros((2, 3, 1), np.int32),
                  batch_dims=2, data_shape="[?,2..5,4]", indices_shape="[2,?,1]")
    run = run_cases([case])[0]
    assert run.partial_shape == "[4..10]"  # GatherND-5 folds the batch dims: 2 * (2..5)
    assert run.output.shape == (6,)


def test_dynamic_output_rank_runs_on_static_shapes_with_a_note():
    case = OpCase("GatherND", 8, np.arange(6, dtype=np.float32).reshape(2, 3),
                  np.array([[1], [0]], np.int64), data_shape="[2,3]", indices_shape="[2,?]")
    run = run_cases([case])[0]
    assert run.partial_shape == "[...]" and "static" in run.note
    np.testing.assert_array_equal(run.output, [[3, 4, 5], [0, 1, 2]])


def test_whole_model_run_returns_inner_gather_outputs():
    xml = str(ROOT / "ir_samples" / "mixed_ops.xml")
    seen = {}

    def make_input(name, shape_text, dtype):
        seen[name] = shape_text
        sizes = [2 if d.strip() in ("?", "-1") or ".." in d else int(d)
                 for d in shape_text.strip("[]").split(",")]
        return np.zeros(sizes, dtype)

    run = run_model_with_outputs(xml, ["pick_rows_nd8", "ranked_ge"], make_input)
    assert set(run.outputs) == {"pick_rows_nd8", "ranked_ge"}
    assert seen["x"] == "[1..8,3,8]"
    assert run.outputs["ranked_ge"].ndim == 2
