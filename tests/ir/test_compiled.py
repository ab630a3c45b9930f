"""The two walks of ``read_ir`` give the same graph: the compiled one
(``ovgather/ir/_fastwalk.pyx``) and the careful one (``ir._Reader.layers`` /
``careful_edges``), or the compiled one hands the file over to the careful one.

Every sample, generated model and hand-edited variant is read with each walk on its own;
the graphs (or the errors) must be equal. The variants are the shapes a fast walk could
misread: nested elements, a port outside a section, rt_info at port and layer level, odd
dims, unknown children.
"""

from __future__ import annotations

import os
from pathlib import Path

import gen_models
import openvino as ov
import pytest
from ir_variants import (
    SAMPLES,
    VARIANTS,
    WALKS,
    _only,
    _same_graph,
    assert_lines_point_at_tags,
    variant_xml,
)

from ovgather.errors import IRError
from ovgather.ir import compiled, parse_ir, read_ir
from ovgather.ir import reader as ir

ROOT = Path(__file__).resolve().parents[2]






def _careful(monkeypatch: pytest.MonkeyPatch) -> None:
    _only("careful", monkeypatch)


def test_the_compiled_walk_is_built() -> None:
    """`pip install` compiles it (setup.py); without it reading is 1.5-2x slower.

    .ci/run also installs ovgather with no C compiler reachable and sets
    OVGATHER_NO_COMPILER=1 there: then the install must have fallen back to the pure-Python
    walk, which the other tests of this file read with.
    """
    if os.environ.get("OVGATHER_NO_COMPILER") == "1":
        assert compiled._fastwalk is None, \
            "a compiled walk was built although no compiler was there"
    else:
        assert compiled._fastwalk is not None, "ovgather._fastwalk is missing: no C compiler?"




def _read_each(read, monkeypatch: pytest.MonkeyPatch) -> dict:
    """{walk: result} with each walk on its own; a result is a graph or the error."""
    def attempt():
        try:
            return read()
        except IRError as err:
            return str(err)
    results = {}
    for walk in WALKS:
        with monkeypatch.context() as m:
            _only(walk, m)
            results[walk] = attempt()
    return results


def _read_both(read, monkeypatch: pytest.MonkeyPatch):
    """(compiled result, careful result)."""
    results = _read_each(read, monkeypatch)
    return results["compiled"], results["careful"]


def _no_fallback(monkeypatch: pytest.MonkeyPatch, walk: str) -> None:
    """Fail if ``walk`` hands an OpenVINO-written IR over to the careful walk."""
    def refuse(*args):
        raise AssertionError(f"the {walk} walk fell back to the careful one")
    monkeypatch.setattr(ir._Reader, "layers", refuse)
    monkeypatch.setattr(ir._Reader, "careful_edges", refuse)


def _assert_walks_agree(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = {}
    for walk in WALKS:
        with monkeypatch.context() as m:
            _only(walk, m)
            if walk != "careful":
                _no_fallback(m, walk)
            results[walk] = read_ir(path)
    _same_graph(results["compiled"], results["careful"])


@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_samples_read_the_same_every_way(path: Path, monkeypatch) -> None:
    _assert_walks_agree(path, monkeypatch)


def test_generated_models_take_the_fast_walks_and_read_the_same(tmp_path, monkeypatch) -> None:
    for seed in range(30):
        path = tmp_path / f"m{seed}.xml"
        ov.save_model(gen_models.random_model(seed), str(path), compress_to_fp16=False)
        _assert_walks_agree(path, monkeypatch)
    path = gen_models.big_ir(4000, tmp_path / "big.xml")  # lines past 65535
    _assert_walks_agree(path, monkeypatch)








@pytest.mark.parametrize("name,section", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_unusual_layers_read_the_same_both_ways(name, section, monkeypatch) -> None:
    xml = variant_xml(name, section)
    bin_bytes = (ROOT / "ir_samples" / "mixed_ops.bin").read_bytes()
    fast, careful = _read_both(lambda: parse_ir(xml, bin_bytes, xml_path="m.xml"),
                               monkeypatch)
    assert type(fast) is type(careful)
    if isinstance(careful, str):
        assert fast == careful
    else:
        _same_graph(fast, careful)


def test_lines_stay_exact_when_a_comment_holds_a_layer_tag(tmp_path: Path) -> None:
    """Past line 65535 the lines come from the tag positions in the bytes; a `<layer`
    inside a comment must not shift them."""
    path = gen_models.big_ir(4000, tmp_path / "big.xml")
    text = path.read_text().replace("<layers>", '<layers>\n<!-- <layer id="x"> <edge -->', 1)
    path.write_text(text)
    G = read_ir(path)
    assert max(line for _, line in G.nodes(data="line")) > 65535
    assert_lines_point_at_tags(G, text.splitlines())


def test_the_compiled_overlap_check_finds_the_slices_the_python_one_finds() -> None:
    """``first_overlap`` (which Const slices of the .bin overlap partly) both ways, on
    seeded random slices: apart, shared whole, overlapping, with ties."""
    import random

    from ovgather.ir.weights import first_overlap

    rng = random.Random(40)
    found = 0
    for _ in range(3000):
        slices = []
        for j in range(rng.randint(0, 12)):
            offset = rng.randint(0, 40)
            if rng.random() < 0.5:  # shared whole, as OpenVINO's serializer shares
                offset -= offset % 8
                end = offset + 8
            else:
                end = offset + rng.randint(0, 12)
            slices.append((offset, end, rng.choice(["f32", "i64"]), str(j)))
        want = first_overlap(slices)
        assert compiled._fastwalk.first_overlap(slices) == want, slices
        found += want is not None
    assert 300 < found < 2700  # both answers were asked for often
