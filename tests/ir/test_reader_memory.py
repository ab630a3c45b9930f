"""Reading memory per byte of XML, as docs/safety.md states it: ``check`` of a file of bare
layers (the most layers a byte of XML can hold) peaks at ~55 bytes of memory per byte of
XML, ~85 with ``--json``. Measured on whole processes (their peak resident set, less that
of the same command on a ten-layer file)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from bench_check import measured_run  # tools/, on the path through conftest.py

#: The documented figures (docs/safety.md), with room for the noise of one run.
PER_BYTE = {(): 55 * 1.1, ("--json",): 85 * 1.1}


def _bare_layers(path: Path, n: int) -> Path:
    with path.open("w") as f:
        f.write('<?xml version="1.0"?>\n<net name="m" version="11"><layers>\n')
        for i in range(n):
            f.write(f'<layer id="{i}" name="{i}" type="Foo"/>\n')
        f.write("</layers><edges/></net>\n")
    return path


def _peak_bytes(args: list[str]) -> int:
    """The peak resident set of ``ovgather check ARGS`` in a process of its own, measured
    as the check benchmark measures it."""
    _, peak_mib, code = measured_run([sys.executable, "-m", "ovgather", "check", *args])
    assert code == 0
    return int(peak_mib * 2**20)


@pytest.mark.parametrize("options", list(PER_BYTE), ids=["human", "json"])
def test_check_memory_per_byte_of_xml_is_what_the_docs_say(tmp_path, options):
    small = _bare_layers(tmp_path / "small.xml", 10)
    big = _bare_layers(tmp_path / "big.xml", 100_000)
    grown = _peak_bytes([*options, str(big)]) - _peak_bytes([*options, str(small)])
    per_byte = grown / big.stat().st_size
    assert per_byte <= PER_BYTE[options], f"{per_byte:.0f} bytes of memory per byte of XML"
