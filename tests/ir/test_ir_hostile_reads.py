"""Hostile spellings that must not change what the reader reads: a body tag written with
whitespace, a second <layers> hidden from the piece reader, markup inside a <dim>, sizes that
OpenVINO refuses, a .bin replaced after the read, port maps OpenVINO refuses."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from ovgather.errors import IRError, IRStructureError, OutputError, WeightsError, XMLSyntaxError
from ovgather.graph import body_layers
from ovgather.ir import compiled, const_value, parse, parse_ir, read_ir, write_ir

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "ir_samples" / "loop_gather.xml"
IF = ROOT / "ir_samples" / "if_gather.xml"


@pytest.fixture(params=["compiled", "careful"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every case read by both walks (the compiled one when it is built)."""
    if request.param == "careful":
        monkeypatch.setattr(compiled, "_fastwalk", None)
    elif compiled._fastwalk is None:
        pytest.skip("the compiled walk is not built")
    return request.param


def _copy(src: Path, dst: Path, text: str) -> Path:
    dst.write_text(text)
    dst.with_suffix(".bin").write_bytes(src.with_suffix(".bin").read_bytes())
    return dst


def _body_consts(G) -> dict[str, list]:
    return {path: const_value(body, n).tolist()
            for _, _, body in _bodies(G) for n, path in _const_paths(body)}


def _bodies(G):
    for n, attrs in G.nodes(data=True):
        for name, body in (attrs.get("bodies") or {}).items():
            yield n, name, body


def _const_paths(body):
    return [(n, attrs["name"]) for n, attrs in body.nodes(data=True) if attrs["type"] == "Const"]


# -- 1. a body tag in any spelling is a body ----------------------------------------------------
@pytest.mark.parametrize("spelling", ["<body >", "<body\n>", "<body\t >"])
def test_a_loop_body_tag_with_whitespace_is_read_as_a_body(spelling: str, tmp_path: Path,
                                                           walk: str) -> None:
    text = LOOP.read_text().replace("<body>", spelling).replace("</body>", "</body >")
    G = read_ir(_copy(LOOP, tmp_path / "m.xml", text))
    plain = read_ir(LOOP)
    assert [p for p, *_ in body_layers(G)] == [p for p, *_ in body_layers(plain)]
    assert _body_consts(G) == _body_consts(plain)


def test_if_branch_tags_with_whitespace_are_read_as_bodies(tmp_path: Path) -> None:
    text = re.sub(r"<(then_body|else_body)>", r"<\1 >", IF.read_text())
    G = read_ir(_copy(IF, tmp_path / "m.xml", text))
    assert len(body_layers(G)) == len(body_layers(read_ir(IF))) > 0


def test_writing_a_spaced_body_repacks_its_consts(tmp_path: Path) -> None:
    """The body Consts are copied into the new .bin with the top-level ones, whatever the
    spelling of the body tag, so every Const reads the same values after the write."""
    text = LOOP.read_text().replace("<body>", "<body >")
    G = read_ir(_copy(LOOP, tmp_path / "m.xml", text))
    before = _body_consts(G)
    write_ir(G, tmp_path / "out.xml")
    assert _body_consts(read_ir(tmp_path / "out.xml")) == before


def test_a_body_kept_as_text_is_never_written_with_its_old_offsets(tmp_path: Path) -> None:
    """A body that was not read (kept as text) holds Const offsets into the source .bin,
    which the writer repacks: writing it would point them at other bytes."""
    G = read_ir(LOOP)
    loop = next(n for n, a in G.nodes(data=True) if a["type"] == "Loop")
    attrs = G.nodes[loop]
    attrs["extra_xml"] = ['<body><layers><layer id="1" name="c" type="Const">'
                          '<data element_type="i64" shape="" offset="17" size="8"/>'
                          '</layer></layers></body>']
    with pytest.raises(OutputError, match="offset"):
        write_ir(G, tmp_path / "out.xml")
    assert not (tmp_path / "out.xml").exists()


# -- 2. the piece reader reads the net's own <layers> -------------------------------------------
def _chain(n: int) -> tuple[str, str]:
    layers = ['<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,8" '
              'element_type="f32"/><output><port id="0" precision="FP32"><dim>1</dim><dim>8'
              '</dim></port></output></layer>\n']
    for i in range(1, n):
        layers.append(f'<layer id="{i}" name="r{i}" type="Relu" version="opset1"><input><port '
                      'id="0" precision="FP32"><dim>1</dim><dim>8</dim></port></input><output>'
                      '<port id="1" precision="FP32"><dim>1</dim><dim>8</dim></port></output>'
                      '</layer>\n')
    layers.append(f'<layer id="{n}" name="out" type="Result" version="opset1"><input><port '
                  'id="0" precision="FP32"><dim>1</dim><dim>8</dim></port></input></layer>\n')
    edges = ['<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>\n']
    edges += [f'<edge from-layer="{i}" from-port="1" to-layer="{i + 1}" to-port="0"/>\n'
              for i in range(1, n)]
    return "".join(layers), "".join(edges)


def _summary(path: Path) -> str:
    try:
        G = read_ir(path)
    except IRError as err:
        return f"{type(err).__name__}: {err}"
    return f"{G.number_of_nodes()} layers"


@pytest.mark.parametrize("first", ["<layers/>", "<layers ></layers>", '<layers a="1"/>'])
def test_the_piece_reader_reads_what_the_whole_read_reads(first: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The net's first <layers> is empty; a full one hides in another element. Read in
    pieces (the file is over a piece) or whole, the file reads the same."""
    layers, edges = _chain(4000)
    path = tmp_path / "m.xml"
    path.write_text(f'<?xml version="1.0"?>\n<net name="m" version="11">\n{first}\n<hidden>\n'
                    f'<layers>\n{layers}</layers>\n</hidden>\n<edges>\n{edges}</edges>\n</net>\n')
    assert path.stat().st_size > parse.STREAM_PIECE
    in_pieces = _summary(path)
    monkeypatch.setattr(parse, "STREAM_PIECE", 1 << 40)
    assert in_pieces == _summary(path)
    assert "4001 layers" not in in_pieces


# -- 3. one reading of a <dim> -----------------------------------------------------------------
DIM_DOC = ('{decl}<net name="m" version="11"><layers>\n'
           '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,30" '
           'element_type="f32"/><output><port id="0" precision="FP32"><dim>1</dim>{dim}</port>'
           '</output></layer>\n<layer id="1" name="out" type="Result" version="opset1"><input>'
           '<port id="0" precision="FP32"><dim>1</dim><dim>30</dim></port></input></layer>\n'
           '</layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
           '</edges></net>\n')


@pytest.mark.parametrize("decl", ["", '<?xml version="1.0"?>\n'])
@pytest.mark.parametrize(("dim", "value"), [
    ("<dim>3<?x y?>0</dim>", 3),
    ("<dim>3<!--c-->0</dim>", 3),
    ('<dim a="1">3<!--c-->0</dim>', 3),
    ("<dim>30</dim>", 30),
    ("<dim> 30\n</dim>", 30),
])
def test_a_dim_split_by_markup_reads_the_same_with_or_without_a_declaration(
        decl: str, dim: str, value: int, walk: str) -> None:
    G = parse_ir(DIM_DOC.format(decl=decl, dim=dim))
    assert G.nodes["0"]["outputs"][0]["dims"] == (1, value)


@pytest.mark.parametrize("dim", ['<dim a="1">3<![CDATA[0]]></dim>', "<dim><![CDATA[30]]></dim>",
                                 "<dim>3<!--c--><![CDATA[0]]></dim>",
                                 "<dim>3<!-- > --><![CDATA[0]]></dim>",
                                 "<dim\n>3<![CDATA[0]]></dim>"])
def test_cdata_in_a_dim_is_refused_in_every_spelling(dim: str, walk: str) -> None:
    with pytest.raises(XMLSyntaxError, match="CDATA"):
        parse_ir(DIM_DOC.format(decl="", dim=dim))


@pytest.mark.parametrize("pad", ["\u00a0", "\u2003", "\u3000", "\u0085"])
def test_only_ascii_whitespace_pads_a_dim(pad: str, walk: str) -> None:
    """OpenVINO refuses a dim that starts with a no-break space; ovgather refuses every
    padding that is not ASCII whitespace, before or after the digits."""
    for dim in (f"<dim>{pad}30</dim>", f"<dim>30{pad}</dim>"):
        with pytest.raises(IRStructureError, match="<dim>"):
            parse_ir(DIM_DOC.format(decl="", dim=dim))


# -- 4. a string Const needs its string count ---------------------------------------------------
STRING_DOC = ('<net name="m" version="11"><layers>\n'
              '<layer id="0" name="s" type="Const" version="opset1"><data element_type="string" '
              'shape="{shape}" offset="0" size="{size}"/><output><port id="0" precision="STRING">'
              '<dim>{shape}</dim></port></output></layer>\n'
              '<layer id="1" name="out" type="Result" version="opset1"><input><port id="0" '
              'precision="STRING"><dim>{shape}</dim></port></input></layer>\n'
              '</layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
              '</edges></net>\n')


@pytest.mark.parametrize(("shape", "size"), [(1 << 40, 0), (0, 0), (2, 3)])
def test_a_string_const_without_its_count_is_refused(shape: int, size: int) -> None:
    """OpenVINO reads a packed string tensor's first 4 bytes as its string count and
    refuses a Const too small to hold them."""
    with pytest.raises(WeightsError, match="string"):
        parse_ir(STRING_DOC.format(shape=shape, size=size), bytes(16))


def test_a_packed_string_const_is_read() -> None:
    blob = struct.pack("<3i", 1, 0, 2) + b"hi"
    G = parse_ir(STRING_DOC.format(shape=1, size=len(blob)), blob)
    assert const_value(G, "0").tobytes() == blob


# -- 5. the .bin is the one of the read --------------------------------------------------------
def test_a_bin_replaced_after_the_read_is_refused(tmp_path: Path) -> None:
    src = ROOT / "ir_samples" / "gather_nd8_bd3.xml"
    path = _copy(src, tmp_path / "m.xml", src.read_text())
    G = read_ir(path)
    node = next(n for n, a in G.nodes(data=True) if a["type"] == "Const")
    size = path.with_suffix(".bin").stat().st_size
    new = tmp_path / "new.bin"
    new.write_bytes(np.full(size // 4, 12345, np.int32).tobytes())
    os.replace(new, path.with_suffix(".bin"))  # as every atomic writer does
    with pytest.raises(WeightsError, match="m.bin") as info:
        const_value(G, node)
    assert "replaced" in str(info.value) or "changed" in str(info.value)


def test_a_bin_opened_before_the_swap_keeps_working_until_it_changes(tmp_path: Path) -> None:
    src = ROOT / "ir_samples" / "gather_nd8_bd3.xml"
    path = _copy(src, tmp_path / "m.xml", src.read_text())
    G = read_ir(path)
    node = next(n for n, a in G.nodes(data=True) if a["type"] == "Const")
    first = const_value(G, node).tolist()
    assert const_value(read_ir(path), node).tolist() == first


# -- 6. port maps as OpenVINO reads them -------------------------------------------------------
@pytest.mark.parametrize("value", [" 2 ", "2 ", "2\t"])
def test_a_port_map_integer_with_spaces_after_it_is_refused(value: str) -> None:
    text = LOOP.read_text().replace('<input external_port_id="2"',
                                    f'<input external_port_id="{value}"')
    with pytest.raises(Exception):  # noqa: B017 - any refusal of OpenVINO's
        _openvino_reads(text)
    with pytest.raises(IRStructureError, match="external_port_id"):
        parse_ir(text, LOOP.with_suffix(".bin").read_bytes())


@pytest.mark.parametrize("value", [" 2", "\t2", "02"])
def test_a_port_map_integer_with_spaces_before_it_is_read(value: str) -> None:
    """OpenVINO's stoll skips leading whitespace: " 2" is port 2 to it, and to ovgather."""
    text = LOOP.read_text().replace('<input external_port_id="2"',
                                    f'<input external_port_id="{value}"')
    _openvino_reads(text)
    G = parse_ir(text, LOOP.with_suffix(".bin").read_bytes())
    loop = next(a for _, a in G.nodes(data=True) if a["type"] == "Loop")
    assert 2 in [e["external_port_id"] for e in loop["port_maps"]["body"]["inputs"]]


def _openvino_reads(text: str) -> None:
    import openvino as ov

    weights = np.frombuffer(LOOP.with_suffix(".bin").read_bytes(), dtype=np.uint8).copy()
    ov.Core().read_model(text.encode(), ov.Tensor(weights))


def test_a_port_map_integer_with_a_plus_sign_is_read() -> None:
    text = LOOP.read_text().replace('<input external_port_id="2"', '<input external_port_id="+2"')
    G = parse_ir(text, LOOP.with_suffix(".bin").read_bytes())
    loop = next(a for _, a in G.nodes(data=True) if a["type"] == "Loop")
    assert 2 in [e["external_port_id"] for e in loop["port_maps"]["body"]["inputs"]]


@pytest.mark.parametrize("kind", ["Loop", "TensorIterator"])
def test_a_loop_without_its_body_is_refused(kind: str) -> None:
    text = LOOP.read_text().replace("<body>", "<bodyx>").replace("</body>", "</bodyx>")
    text = text.replace('type="Loop" version="opset5"', f'type="{kind}" version="opset5"')
    with pytest.raises(IRStructureError, match="body") as info:
        parse_ir(text, LOOP.with_suffix(".bin").read_bytes())
    assert info.value.layer_name == "row_loop"


def test_an_if_without_its_else_body_is_refused() -> None:
    text = IF.read_text()
    text = text[:text.index("<else_body>")] + text[text.index("</else_body>") + 12:]
    with pytest.raises(IRStructureError, match="else_body"):
        parse_ir(text, IF.with_suffix(".bin").read_bytes())


# -- markup the bytes do not show: another encoding --------------------------------------------
def _utf16(text: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-16"?>\n' + text).encode("utf-16")


@pytest.mark.parametrize(("dim", "value"), [("<dim>3<!--c-->0</dim>", 3),
                                            ("<dim>3<?x y?>0</dim>", 3), ("<dim>30</dim>", 30)])
def test_a_utf16_dim_reads_as_in_utf8(dim: str, value: int, walk: str) -> None:
    G = parse_ir(_utf16(DIM_DOC.format(decl="", dim=dim)))
    assert G.nodes["0"]["outputs"][0]["dims"] == (1, value)


def test_a_utf16_dim_with_cdata_is_refused(walk: str) -> None:
    with pytest.raises(XMLSyntaxError, match="CDATA"):
        parse_ir(_utf16(DIM_DOC.format(decl="", dim="<dim>3<![CDATA[0]]></dim>")))


def test_a_utf16_loop_has_its_body(walk: str) -> None:
    text = LOOP.read_text()
    text = text[text.index("?>") + 2:]
    G = parse_ir(_utf16(text), LOOP.with_suffix(".bin").read_bytes())
    assert len(body_layers(G)) == len(body_layers(read_ir(LOOP))) > 0
