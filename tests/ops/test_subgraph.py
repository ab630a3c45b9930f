"""Loop-5 and TensorIterator-1 port maps, checked as OpenVINO checks them
(``ops/subgraph.py``): each mutant of a sample Loop is refused by ``read_model`` and
reported ``invalid`` by ovgather, naming the port-map rule it breaks."""

from __future__ import annotations

import shutil
from pathlib import Path

import openvino as ov
import pytest

from ovgather.infer import check
from ovgather.ir import read_ir

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "ir_samples" / "loop_gather.xml"
FIRST_INPUT = '<input external_port_id="2" internal_layer_id="0" />'
FIRST_OUTPUT = '<output external_port_id="4" internal_layer_id="10" />'
BACK_EDGE = '<edge from-layer="10" to-layer="1" />'

#: name -> (text in the sample, its replacement, words of the rule in ovgather's message)
MUTANTS = {
    "an input without a port-map entry": (FIRST_INPUT, "", "describe each of the layer's"),
    "a negative external port": (FIRST_INPUT, FIRST_INPUT.replace('"2"', '"-5"'),
                                 "describe each of the layer's"),
    "two outputs on one external port": (FIRST_OUTPUT, FIRST_OUTPUT.replace('"4"', '"5"'),
                                         "comes from several"),
    "a back edge into the current iteration": (BACK_EDGE, BACK_EDGE.replace('"1"', '"2"'),
                                               "a back edge must feed"),
    "a Loop's content labelled TensorIterator": (
        'type="Loop" version="opset5"', 'type="TensorIterator" version="opset1"',
        "describe each of the layer's"),
}


def _mutant(tmp_path: Path, old: str, new: str) -> Path:
    text = LOOP.read_text()
    assert old in text
    path = tmp_path / "mutant.xml"
    path.write_text(text.replace(old, new, 1))
    shutil.copy(LOOP.with_suffix(".bin"), path.with_suffix(".bin"))
    return path


@pytest.mark.parametrize("name", MUTANTS)
def test_a_port_map_openvino_refuses_makes_the_loop_invalid(tmp_path: Path, name: str):
    old, new, words = MUTANTS[name]
    path = _mutant(tmp_path, old, new)
    with pytest.raises(Exception):  # noqa: B017 - OpenVINO raises a plain RuntimeError kind
        ov.Core().read_model(str(path))
    report = check(read_ir(path))
    bad = [lr for lr in report.problems() if lr.status == "invalid"]
    assert [lr.type for lr in bad] in (["Loop"], ["TensorIterator"]), report.problems()
    assert words in bad[0].message


def test_the_sample_loop_is_valid_for_both(tmp_path: Path):
    ov.Core().read_model(str(LOOP))
    assert check(read_ir(LOOP)).ok


def test_a_loop_may_feed_its_trip_count_and_condition_to_the_body_too(tmp_path: Path):
    """Port-map entries for inputs 0 and 1 of a Loop are allowed (OpenVINO counts them)."""
    text = LOOP.read_text()
    extra = '<input external_port_id="0" internal_layer_id="2" />'
    current = '<input external_port_id="-1" internal_layer_id="2" purpose="current_iteration" />'
    assert current in text
    path = tmp_path / "m.xml"
    path.write_text(text.replace(current, extra, 1))
    shutil.copy(LOOP.with_suffix(".bin"), path.with_suffix(".bin"))
    try:
        ov.Core().read_model(str(path))
        openvino_reads = True
    except Exception:  # noqa: BLE001
        openvino_reads = False
    invalid = [lr for lr in check(read_ir(path)).problems() if lr.status == "invalid"
               and "port map" in lr.message]
    assert openvino_reads == (not invalid)
