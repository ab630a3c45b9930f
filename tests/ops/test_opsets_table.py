"""The opset table (``ovgather/ops/core/opsets.json``) is the installed OpenVINO's, and every spec
serves exactly the opsets that hold its op version."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ovgather.errors import UnsupportedOpError
from ovgather.ops.core import registry
from ovgather.ops.core.opsets import OPSETS
from ovgather.ops.core.spec import opset_rows

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("list_opsets", ROOT / "tools" / "list_opsets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_is_what_the_installed_openvino_gives():
    assert (ROOT / "ovgather" / "ops" / "core" / "opsets.json").read_text() == _tool().generate()


def test_every_spec_serves_one_run_of_its_op_version():
    for op_type in registry.known_types():
        rows = opset_rows(op_type)
        for s in registry.specs(op_type):
            assert (s.since, s.until, s.version) in rows, (op_type, s.name, rows)
        assert len(registry.specs(op_type)) == len(rows), (op_type, rows)


def test_an_opset_without_the_op_is_refused_as_openvino_refuses_it():
    assert registry.find("Gelu", "opset2").version == 2
    assert registry.find("Relu", "opset16") is not None
    pairs = [("Gelu", 1), ("Relu", 17), ("Gelu", 7)]
    assert _tool().reader_takes(pairs) == [("Gelu", 7)]
    for op_type, n in pairs[:2]:
        with pytest.raises(UnsupportedOpError):
            registry.find(op_type, f"opset{n}")


def test_opset1_reads_three_ops_its_table_leaves_to_opset2():
    assert [OPSETS[t][0][0] for t in ("MVN", "ROIPooling", "ReorgYolo")] == [1, 1, 1]
