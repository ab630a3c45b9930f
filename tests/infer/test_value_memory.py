"""Memory of the values the walk carries, as docs/safety.md states it: a chain of ops on
one 1,024-element constant keeps every layer's value for the whole walk, and ``check`` of
such a model stays within the memory per byte of XML documented for bare layers (~55).
Measured as ``tests/ir/test_reader_memory.py`` measures it: whole processes, their peak
resident set less that of the same command on a small model."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as o
from bench_check import measured_run  # tools/, on the path through conftest.py

#: The documented figure (docs/safety.md), with room for the noise of one run.
PER_BYTE = 55 * 1.1


def _chain(path: Path, n: int) -> Path:
    """``n`` chained Adds of one 1,024-element i64 Const (each layer a new value)."""
    c = o.constant(np.arange(1024, dtype=np.int64))
    x = c
    for _ in range(n):
        x = o.add(x, c)
    ov.save_model(ov.Model([x.output(0)], [], "chain"), str(path), compress_to_fp16=False)
    return path


def _peak_bytes(path: Path) -> int:
    _, peak_mib, code = measured_run([sys.executable, "-m", "ovgather", "check", str(path)])
    assert code == 0
    return int(peak_mib * 2**20)


def test_check_of_a_value_chain_stays_within_the_documented_memory(tmp_path) -> None:
    small = _chain(tmp_path / "small.xml", 10)
    big = _chain(tmp_path / "big.xml", 4000)
    grown = _peak_bytes(big) - _peak_bytes(small)
    per_byte = grown / big.stat().st_size
    assert per_byte <= PER_BYTE, f"{per_byte:.0f} bytes of memory per byte of XML"
