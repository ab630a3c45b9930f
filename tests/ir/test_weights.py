"""``weights_bytes``: the raw bytes the shape walk reads for small constants, through a
few cached blocks of the .bin, equal to the file's own bytes wherever a read falls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ovgather.ir import read_ir, weights, weights_bytes

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "ir_samples" / "mixed_ops.xml"


@pytest.fixture()
def model(tmp_path: Path):
    """mixed_ops with a .bin of 2.5 blocks of counting bytes: reads at every boundary."""
    xml = tmp_path / "m.xml"
    xml.write_bytes(MODEL.read_bytes())
    size = weights._BLOCK * 5 // 2
    data = bytes(i * 7 % 251 for i in range(size))
    xml.with_suffix(".bin").write_bytes(data)
    return read_ir(xml), data


def test_small_reads_equal_the_file_at_every_block_boundary(model):
    G, data = model
    block = weights._BLOCK
    for offset in (0, 1, block - 3, block - 1, block, block + 5, 2 * block - 2, len(data) - 4,
                   len(data) - 1):
        for size in (0, 1, 2, 4, 8, 64):
            assert weights_bytes(G, offset, size) == data[offset:offset + size], (offset, size)


def test_a_read_past_the_end_gives_what_is_there(model):
    G, data = model
    assert weights_bytes(G, len(data) - 2, 8) == data[-2:]
    assert weights_bytes(G, len(data) + 10, 4) == b""


def test_a_read_larger_than_a_block_is_whole(model):
    G, data = model
    size = weights._BLOCK + 10
    assert weights_bytes(G, 3, size) == data[3:3 + size]
    assert os.path.getsize(G.graph["bin_path"]) == len(data)
