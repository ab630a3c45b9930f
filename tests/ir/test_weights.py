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


def _first_const(G):
    from ovgather.ir import const_value

    node = next(n for n, a in G.nodes(data=True) if a["type"] == "Const")
    return const_value(G, node)


def test_graphs_past_the_open_file_limit_keep_few_descriptors_and_read_right(tmp_path):
    # a notebook or test process holds hundreds of graphs: the descriptors stay bounded,
    # a graph whose file was closed reads it again, the same bytes
    import shutil

    fds = lambda: len(os.listdir("/proc/self/fd"))  # noqa: E731
    src = ROOT / "ir_samples" / "gather_nd8_bd3"
    before = fds()
    graphs, first = [], []
    for k in range(weights._OPEN_LIMIT * 3):
        for ext in (".xml", ".bin"):
            shutil.copy(src.with_suffix(ext), tmp_path / f"m{k}{ext}")
        G = read_ir(str(tmp_path / f"m{k}.xml"))
        first.append(_first_const(G).copy())
        graphs.append(G)
    assert fds() - before <= weights._OPEN_LIMIT
    for G, value in zip(graphs, first, strict=True):  # the early ones were closed and open again
        assert (_first_const(G) == value).all()
    # a file replaced while its graph's descriptor was closed is refused, not read
    (tmp_path / "m0.bin").unlink()
    shutil.copy(src.with_suffix(".bin"), tmp_path / "m0.bin")
    os.utime(tmp_path / "m0.bin", ns=(1, 1))
    for G in graphs[1:weights._OPEN_LIMIT + 1]:
        _first_const(G)  # graph 0's descriptor is the least recently read: closed
    from ovgather.errors import WeightsError

    with pytest.raises(WeightsError, match="replaced or changed"):
        _first_const(graphs[0])
