"""Every bad input is an ovgather error naming the file, the XML line and the layer.

Each case edits one thing in a valid IR (checked valid by OpenVINO itself below) and
expects one exception type, a message naming the file and the line of the culprit
(``file.xml:LINE``), and, for layer problems, the layer.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovgather.errors import IRError, IRStructureError, WeightsError, XMLSyntaxError
from ovgather.ir import const_value, parse_ir, read_ir

#: A valid IR v11: Parameter, Const (8 bytes of i32), GatherND-8, Result.
GOOD = """<?xml version="1.0"?>
<net name="good" version="11">
	<layers>
		<layer id="0" name="data" type="Parameter" version="opset1">
			<data shape="2,3,4" element_type="f32" />
			<output>
				<port id="0" precision="FP32" names="data">
					<dim>2</dim>
					<dim>3</dim>
					<dim>4</dim>
				</port>
			</output>
		</layer>
		<layer id="1" name="indices" type="Const" version="opset1">
			<data element_type="i32" shape="2, 1" offset="0" size="8" />
			<output>
				<port id="0" precision="I32">
					<dim>2</dim>
					<dim>1</dim>
				</port>
			</output>
		</layer>
		<layer id="2" name="gnd" type="GatherND" version="opset8">
			<data batch_dims="1" />
			<input>
				<port id="0" precision="FP32">
					<dim>2</dim>
					<dim>3</dim>
					<dim>4</dim>
				</port>
				<port id="1" precision="I32">
					<dim>2</dim>
					<dim>1</dim>
				</port>
			</input>
			<output>
				<port id="2" precision="FP32" names="out">
					<dim>2</dim>
					<dim>4</dim>
				</port>
			</output>
		</layer>
		<layer id="3" name="result" type="Result" version="opset1">
			<input>
				<port id="0" precision="FP32">
					<dim>2</dim>
					<dim>4</dim>
				</port>
			</input>
		</layer>
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="2" to-port="0" />
		<edge from-layer="1" from-port="0" to-layer="2" to-port="1" />
		<edge from-layer="2" from-port="2" to-layer="3" to-port="0" />
	</edges>
</net>
"""
BIN = np.array([1, 2], np.int32).tobytes()


def line_of(text: str, marker: str, nth: int = 0) -> int:
    """The 1-based line of the ``nth`` occurrence of ``marker`` in ``text``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(marker, pos + 1)
    return text.count("\n", 0, pos) + 1


def write(tmp: Path, xml: str, bin_bytes: bytes | None = BIN, name: str = "model") -> Path:
    path = tmp / f"{name}.xml"
    path.write_text(xml)
    if bin_bytes is not None:
        path.with_suffix(".bin").write_bytes(bin_bytes)
    return path


def expect(tmp: Path, xml: str, error: type[IRError], line: int | None,
           bin_bytes: bytes | None = BIN, layer: str | None = None,
           words: str | None = None) -> IRError:
    """read_ir raises ``error`` whose message names the file, ``line`` and ``layer``."""
    path = write(tmp, xml, bin_bytes)
    with pytest.raises(error) as info:
        read_ir(path)
    err = info.value
    text = str(err)
    assert str(path) in text
    if line is not None:
        assert err.line == line, text
        assert f"{path}:{line}" in text
    if layer is not None:
        assert f"'{layer}'" in text
    if words is not None:
        assert words in text, text
    return err


def test_good_ir_is_valid_for_openvino_and_ovgather(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    model = ov.Core().read_model(str(path))
    assert str(model.output(0).get_partial_shape()) == "[2,4]"
    G = read_ir(path)
    assert np.array_equal(const_value(G, "1"), [[1], [2]])


# -- XML itself ----------------------------------------------------------------------------
def test_empty_file(tmp_path: Path) -> None:
    expect(tmp_path, "", XMLSyntaxError, 1, words="empty")


def test_whitespace_only_file(tmp_path: Path) -> None:
    expect(tmp_path, "  \n\n ", XMLSyntaxError, 1, words="empty")


def test_not_xml(tmp_path: Path) -> None:
    expect(tmp_path, "\n\nthis is not xml\n", XMLSyntaxError, 3, words="not well-formed")


def test_truncated_xml(tmp_path: Path) -> None:
    cut = GOOD[: GOOD.index('<layer id="2"')]
    err = expect(tmp_path, cut, XMLSyntaxError, None, words="not well-formed")
    assert err.line is not None and err.line >= cut.count("\n")


def test_doctype_with_internal_entity_is_refused(tmp_path: Path) -> None:
    xml = GOOD.replace('<net name="good"', '<!DOCTYPE net [<!ENTITY e "x">]>\n<net name="&e;"')
    expect(tmp_path, xml, XMLSyntaxError, 2, words="DOCTYPE")


def test_external_entity_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xml = GOOD.replace(
        '<net name="good"',
        f'<!DOCTYPE net [<!ENTITY e SYSTEM "file://{secret}">]>\n<net name="&e;"')
    err = expect(tmp_path, xml, XMLSyntaxError, 2, words="DOCTYPE")
    assert "TOP-SECRET" not in str(err)


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    ents = ['<!ENTITY a0 "lol">'] + [
        f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)]
    xml = GOOD.replace('<net name="good"',
                       f'<!DOCTYPE net [{"".join(ents)}]>\n<net name="&a9;"')
    start = time.perf_counter()
    expect(tmp_path, xml, XMLSyntaxError, 2, words="DOCTYPE")
    assert time.perf_counter() - start < 2


def test_external_dtd_is_refused(tmp_path: Path) -> None:
    xml = GOOD.replace('<net name="good"',
                       '<!DOCTYPE net SYSTEM "http://example.invalid/net.dtd">\n<net name="good"')
    expect(tmp_path, xml, XMLSyntaxError, 2, words="DOCTYPE")


def test_missing_file_is_an_ir_error(tmp_path: Path) -> None:
    with pytest.raises(IRError) as info:
        read_ir(tmp_path / "nope.xml")
    assert str(tmp_path / "nope.xml") in str(info.value)


# -- the net -----------------------------------------------------------------------------
def test_wrong_root(tmp_path: Path) -> None:
    xml = GOOD.replace("<net ", "<model ").replace("</net>", "</model>")
    expect(tmp_path, xml, IRStructureError, 2, words="<net>")


@pytest.mark.parametrize("version", ["9", "12", "eleven", None])
def test_unknown_ir_version(tmp_path: Path, version: str | None) -> None:
    attr = "" if version is None else f' version="{version}"'
    xml = GOOD.replace(' version="11"', attr, 1)
    expect(tmp_path, xml, IRStructureError, 2, words="10 or 11")


def test_ir_v10_is_read(tmp_path: Path) -> None:
    G = read_ir(write(tmp_path, GOOD.replace('version="11"', 'version="10"', 1)))
    assert G.graph["ir_version"] == 10


# -- layers and ports ----------------------------------------------------------------------
def test_duplicate_layer_id(tmp_path: Path) -> None:
    xml = GOOD.replace('<layer id="3"', '<layer id="2"').replace('to-layer="3"', 'to-layer="2"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, '<layer id="2" name="result"'),
           layer="result", words="unique")


def test_duplicate_port_id(tmp_path: Path) -> None:
    xml = GOOD.replace('<port id="1" precision="I32">', '<port id="0" precision="I32">')
    expect(tmp_path, xml, IRStructureError, line_of(xml, '<port id="0" precision="I32">', 1),
           layer="gnd", words="declared twice")


def test_duplicate_port_id_across_input_and_output(tmp_path: Path) -> None:
    xml = GOOD.replace('<port id="2" precision="FP32" names="out">',
                       '<port id="1" precision="FP32" names="out">')
    xml = xml.replace('from-layer="2" from-port="2"', 'from-layer="2" from-port="1"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'names="out"'), layer="gnd")


@pytest.mark.parametrize("layer_id", ['"a"', '"-1"', '""'])
def test_layer_id_must_be_an_integer(tmp_path: Path, layer_id: str) -> None:
    xml = GOOD.replace('<layer id="3"', f"<layer id={layer_id}")
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'name="result"'), layer="result")


def test_layer_without_type(tmp_path: Path) -> None:
    xml = GOOD.replace(' type="GatherND"', "")
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'name="gnd"'), layer="gnd",
           words="'type'")


def test_port_id_must_be_an_integer(tmp_path: Path) -> None:
    xml = GOOD.replace('<port id="2" precision="FP32"', '<port id="two" precision="FP32"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'id="two"'), layer="gnd")


@pytest.mark.parametrize("dim", ["2..5", "?", "-2", "abc", "", "1_0", "3.0"])
def test_malformed_dim(tmp_path: Path, dim: str) -> None:
    xml = GOOD.replace("<dim>4</dim>\n\t\t\t\t</port>\n\t\t\t</output>",
                       f"<dim>{dim}</dim>\n\t\t\t\t</port>\n\t\t\t</output>", 1)
    assert xml != GOOD
    err = expect(tmp_path, xml, IRStructureError, line_of(xml, f"<dim>{dim}</dim>"),
                 layer="data", words="integer >= -1")
    assert f"'{dim}'" in str(err)


def test_interval_dim_message_explains_what_openvino_does(tmp_path: Path) -> None:
    xml = GOOD.replace("<dim>3</dim>", "<dim>2..5</dim>", 1)
    expect(tmp_path, xml, IRStructureError, None, words="lower bound")


# -- edges ---------------------------------------------------------------------------------
def test_edge_to_missing_layer(tmp_path: Path) -> None:
    xml = GOOD.replace('to-layer="3"', 'to-layer="7"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'to-layer="7"'), words="'7'")


def test_edge_from_missing_layer(tmp_path: Path) -> None:
    xml = GOOD.replace('from-layer="0"', 'from-layer="9"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'from-layer="9"'), words="'9'")


def test_edge_to_missing_input_port(tmp_path: Path) -> None:
    xml = GOOD.replace('to-layer="3" to-port="0"', 'to-layer="3" to-port="5"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'to-port="5"'),
           words="no input port 5")


def test_edge_from_missing_output_port(tmp_path: Path) -> None:
    xml = GOOD.replace('from-layer="2" from-port="2"', 'from-layer="2" from-port="0"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'from-layer="2" from-port="0"'),
           words="no output port 0")


def test_edge_port_must_be_an_integer(tmp_path: Path) -> None:
    xml = GOOD.replace('from-layer="2" from-port="2"', 'from-layer="2" from-port="x"')
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'from-port="x"'))


def test_input_port_fed_twice(tmp_path: Path) -> None:
    extra = '\t\t<edge from-layer="0" from-port="0" to-layer="2" to-port="1" />\n'
    xml = GOOD.replace("\t</edges>", extra + "\t</edges>")
    expect(tmp_path, xml, IRStructureError, line_of(xml, extra.strip()), words="fed again")


def test_cycle(tmp_path: Path) -> None:
    # gnd's output feeds a Relu whose output feeds gnd's data input: a cycle.
    relu = """		<layer id="4" name="loop" type="Relu" version="opset1">
			<input><port id="0" precision="FP32"><dim>2</dim><dim>4</dim></port></input>
			<output><port id="1" precision="FP32"><dim>2</dim><dim>4</dim></port></output>
		</layer>
"""
    xml = GOOD.replace("\t</layers>", relu + "\t</layers>")
    xml = xml.replace('<edge from-layer="0" from-port="0" to-layer="2" to-port="0" />',
                      '<edge from-layer="4" from-port="1" to-layer="2" to-port="0" />\n'
                      '\t\t<edge from-layer="2" from-port="2" to-layer="4" to-port="0" />')
    err = expect(tmp_path, xml, IRStructureError, None, words="cycle")
    assert err.layer_id in ("2", "4")
    assert err.line == line_of(xml, f'<layer id="{err.layer_id}"')


# -- Const data ----------------------------------------------------------------------------
CONST_LINE = line_of(GOOD, 'name="indices"')


def test_missing_bin_when_a_const_needs_it(tmp_path: Path) -> None:
    expect(tmp_path, GOOD, WeightsError, CONST_LINE, bin_bytes=None, layer="indices",
           words="model.bin")


def test_missing_bin_is_fine_without_weights(tmp_path: Path) -> None:
    xml = GOOD.replace('shape="2, 1" offset="0" size="8"', 'shape="0, 1" offset="0" size="0"')
    G = read_ir(write(tmp_path, xml, bin_bytes=None))
    assert const_value(G, "1").shape == (0, 1)


@pytest.mark.parametrize("attrs, words", [
    ('offset="-1" size="8"', "offset"),
    ('offset="1" size="8"', "inside"),
    ('offset="0" size="12"', "inside"),
    ('offset="0" size="4"', "shape × element size"),
    ('offset="x" size="8"', "offset"),
    ('offset="0" size=""', "size"),
    ('offset="18446744073709551615" size="8"', "inside"),
    ('offset="0" size="99999999999999999999999999"', "inside"),
    ('size="8"', "offset"),
])
def test_bad_offset_or_size(tmp_path: Path, attrs: str, words: str) -> None:
    xml = GOOD.replace('offset="0" size="8"', attrs)
    expect(tmp_path, xml, WeightsError, CONST_LINE, layer="indices", words=words)


@pytest.mark.parametrize("data, words", [
    ('element_type="f33" shape="2, 1"', "element_type"),
    ('shape="2, 1"', "element_type"),
    ('element_type="i32" shape="2, a"', "shape"),
    ('element_type="i32" shape="2, -1"', "shape"),
    ('element_type="i32"', "shape"),
])
def test_const_attributes_of_the_wrong_kind(tmp_path: Path, data: str, words: str) -> None:
    xml = GOOD.replace('element_type="i32" shape="2, 1"', data)
    expect(tmp_path, xml, IRStructureError, CONST_LINE, layer="indices", words=words)


def test_parse_ir_names_the_given_path_and_checks_bin_bytes() -> None:
    with pytest.raises(WeightsError) as info:
        parse_ir(GOOD.encode(), b"\0" * 4, xml_path="mem.xml")
    assert f"mem.xml:{CONST_LINE}" in str(info.value)


def test_short_bin_found_when_reading_not_later(tmp_path: Path) -> None:
    expect(tmp_path, GOOD, WeightsError, CONST_LINE, bin_bytes=BIN[:6], layer="indices")


def test_unfed_input_port(tmp_path: Path) -> None:
    xml = GOOD.replace('\t\t<edge from-layer="1" from-port="0" to-layer="2" to-port="1" />\n', "")
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'name="gnd"'), layer="gnd",
           words="needs an edge")


def test_edge_errors_name_the_layer_whose_port_is_wrong(tmp_path: Path) -> None:
    xml = GOOD.replace('to-layer="3" to-port="0"', 'to-layer="3" to-port="5"')
    err = expect(tmp_path, xml, IRStructureError, line_of(xml, 'to-port="5"'), layer="result")
    assert err.layer_id == "3"


def test_dim_beyond_int64(tmp_path: Path) -> None:
    dim = str(1 << 63)
    xml = GOOD.replace("<dim>3</dim>", f"<dim>{dim}</dim>", 1)
    expect(tmp_path, xml, IRStructureError, line_of(xml, f"<dim>{dim}</dim>"), layer="data")


# -- shared and overlapping Const slices ----------------------------------------------------
TWO_CONSTS = GOOD.replace("\t</layers>", """
		<layer id="4" name="other" type="Const" version="opset1">
			<data element_type="f32" shape="2" offset="OFF" size="SIZE" />
			<output><port id="0" precision="FP32"><dim>2</dim></port></output>
		</layer>
		<layer id="5" name="result2" type="Result" version="opset1">
			<input><port id="0" precision="FP32"><dim>2</dim></port></input>
		</layer>
	</layers>""").replace("\t</edges>", """
		<edge from-layer="4" from-port="0" to-layer="5" to-port="0" />
	</edges>""")


def test_whole_slice_shared_by_consts_of_different_types_is_fine(tmp_path: Path) -> None:
    """OpenVINO's serializer stores equal bytes once, even for an i32 and an f32 Const."""
    xml = TWO_CONSTS.replace('offset="OFF" size="SIZE"', 'offset="0" size="8"')
    path = write(tmp_path, xml)
    ov.Core().read_model(str(path))  # OpenVINO reads it
    G = read_ir(path)
    assert np.array_equal(const_value(G, "4").view(np.int32), const_value(G, "1").ravel())


def test_partly_overlapping_const_slices(tmp_path: Path) -> None:
    xml = TWO_CONSTS.replace('offset="OFF" size="SIZE"', 'offset="4" size="8"')
    err = expect(tmp_path, xml, WeightsError, line_of(xml, 'name="other"'),
                 bin_bytes=BIN + b"\0" * 8, layer="other", words="overlap")
    assert "'indices'" in str(err)


# -- files that are not files --------------------------------------------------------------
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os
    fifo = tmp_path / "model.xml"
    os.mkfifo(fifo)
    with pytest.raises(IRError) as info:
        read_ir(fifo)
    assert str(fifo) in str(info.value) and "regular file" in str(info.value)


def test_device_and_folder_are_refused(tmp_path: Path) -> None:
    for path in (Path("/dev/zero"), tmp_path):
        with pytest.raises(IRError) as info:
            read_ir(path)
        assert str(path) in str(info.value)


def test_bin_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD, bin_bytes=None)
    path.with_suffix(".bin").mkdir()
    with pytest.raises(WeightsError) as info:
        read_ir(path)
    assert "model.bin" in str(info.value)


# -- the command line ----------------------------------------------------------------------
@pytest.mark.parametrize("mutate, error", [
    (lambda xml: "", "empty"),
    (lambda xml: xml[: xml.index('<layer id="2"')], "well-formed"),
    (lambda xml: xml.replace("<dim>3</dim>", "<dim>2..5</dim>", 1), "lower bound"),
    (lambda xml: xml.replace('to-layer="3"', 'to-layer="7"'), "no layer"),
])
def test_cli_check_exits_2_with_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                               mutate, error: str) -> None:
    from ovgather.cli import main
    path = write(tmp_path, mutate(GOOD))
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}") and err.count("\n") == 1 and error in err
    assert "Traceback" not in err


def test_missing_edges_section_leaves_inputs_unfed(tmp_path: Path) -> None:
    xml = GOOD[: GOOD.index("\t<edges>")] + GOOD[GOOD.index("</edges>") + len("</edges>\n"):]
    expect(tmp_path, xml, IRStructureError, line_of(xml, 'name="gnd"'), layer="gnd",
           words="needs an edge")
