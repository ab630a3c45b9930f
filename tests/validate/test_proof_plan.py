"""How ``validate --all-layers`` spends its compiles: one with every output exposed where
the memory budget allows, run at every size; an IR v10 whose legacy output names collide
with tensor names compiled once too; a chunk the plugin refuses split once, not again at
each size; and the statuses of every sample and corpus layer as they were recorded
before the plan changed (all_layers_statuses.json), with a progress line counting layers
and compiles on a terminal."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from pathlib import Path

import openvino as ov
import pytest

from ovgather.ir import read_ir
from ovgather.validate import prove_all_layers, runner

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECORDED = json.loads((HERE / "all_layers_statuses.json").read_text(encoding="utf-8"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.crashing import shapes_refusing_many  # noqa: E402
from helpers.terminal import on_terminal, terminal_env  # noqa: E402
from int8_detector import save  # noqa: E402


@pytest.fixture(scope="module")
def detector(tmp_path_factory) -> tuple[Path, Path]:
    return save(tmp_path_factory.mktemp("detector"), blocks=1)


@pytest.mark.parametrize("rel", sorted(RECORDED))
def test_every_layer_keeps_its_recorded_status(rel: str) -> None:
    """Every layer's status and real shapes at every size, as recorded before the plan
    of compiles changed (a digest of them all, and the statuses other than ok in full)."""
    want = RECORDED[rel]
    report = prove_all_layers(read_ir(str(ROOT / rel)))
    got = {lp.id: [lp.status, json.loads(json.dumps(lp.real))] for lp in report.layers}
    assert list(report.sizes) == want["sizes"] and len(got) == want["layers"]
    assert {i: s for i, (s, _) in got.items() if s != "ok"} == want["not ok"]
    digest = hashlib.sha256(json.dumps(sorted([i, s, r] for i, (s, r) in got.items()),
                                       sort_keys=True)
                            .encode()).hexdigest()[:16]
    assert digest == want["digest"]
    assert report.compiles <= want["compiles"]


def test_the_detector_exercises_the_legacy_name_collision(detector) -> None:
    """OpenVINO refuses the IR v10 with every layer exposed as it is."""
    _, v10 = detector
    model = ov.Core().read_model(str(v10))
    assert model.get_rt_info("version").astype(int) == 10
    model.add_outputs([o for op in model.get_ordered_ops()
                       if op.get_type_name() not in ("Result", "Constant")
                       for o in op.outputs()])
    with pytest.raises(RuntimeError, match="collisions with tensor names"):
        ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def test_an_ir_v10_with_colliding_names_is_proved_in_one_compile(detector) -> None:
    v11, v10 = (prove_all_layers(read_ir(str(p))) for p in detector)
    assert v11.compiles == v10.compiles == 1 and list(v10.sizes) == ["low", "mid", "high"]
    assert v11.summary["proved"] == v11.summary["layers"] and v11.ok
    status = {lp.name: lp.status for lp in v11.layers}
    proved = {lp.name: lp.status for lp in v10.layers if lp.status != "not run"}
    assert len(proved) >= 0.95 * len(status) and set(proved.values()) == {"ok"}
    assert all(status[n] == "ok" for n in proved)
    # the ones left: weight FakeQuantizes OpenVINO's v10 reader folds away
    assert {lp.type for lp in v10.layers if lp.status == "not run"} <= {"FakeQuantize"}


def test_a_refused_chunk_is_split_once_not_at_every_size(detector, monkeypatch) -> None:
    monkeypatch.setattr(runner, "RUN_SHAPES", functools.partial(shapes_refusing_many,
                                                                limit=40))
    calls: list[tuple[int, bool]] = []
    call = runner.Runs._call

    def counted(self, part, cut, sizes, feed):
        try:
            out = call(self, part, cut, sizes, feed)
        except Exception:
            calls.append((len(part), False))
            raise
        calls.append((len(part), True))
        return out

    monkeypatch.setattr(runner.Runs, "_call", counted)
    report = prove_all_layers(read_ir(str(detector[0])))
    assert report.ok and list(report.sizes) == ["low", "mid", "high"]
    refused = [n for n, ok in calls if not ok and n]
    ran = [n for n, ok in calls if ok and n]
    pieces = len(ran) // 3
    assert len(ran) == 3 * pieces  # each piece that compiles runs at each size once
    assert len(refused) == pieces - 1  # the halving happened at the first size only
    assert report.summary["proved"] == report.summary["layers"]


def test_progress_counts_layers_and_compiles_on_a_terminal(detector) -> None:
    code, shown = on_terminal(["validate", "--all-layers", str(detector[1])], cwd=str(ROOT),
                              env=terminal_env(None, OVGATHER_PROGRESS_DELAY="0"))
    assert code == 0, shown
    layers = len([lp for lp in prove_all_layers(read_ir(str(detector[1]))).layers
                  if lp.status != "not run"])
    assert re.search(r"compiles 0/1, layers: +0%.*\| 0/\d+ \[", shown), shown
    assert re.search(rf"compiles 1/1, layers: .*\| {layers}/\d+ \[\d\d:\d\d<", shown), shown
    assert "1 compile(s)" in shown
