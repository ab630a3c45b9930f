"""Bad input never crashes, hangs, leaks or guesses.

Every case below starts from a tiny valid IR that OpenVINO itself writes (``ov.save_model``),
breaks it in one way a user (or an attacker) could, and checks two things:

* the Python API (``read_ir`` then ``check``) raises an ``ovgather`` error of the right kind
  whose message names the file, the XML line and the layer where they are known;
* the command line (``ovgather check``) exits 2 with exactly one ``error:`` line on stderr and
  no traceback.

The expected line and layer are computed from the mutated XML text, never from ovgather's
own output. Where OpenVINO's reader behaves differently (it keeps the last of two layers with
the same id, reads ``<dim>2..5</dim>`` as 2, ...) a test pins that behaviour too, so docs/safety.md
stays true for the installed OpenVINO.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from ovgather import errors
from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.runtime.core import cpu_config

# --------------------------------------------------------------------------------------------
# The valid starting point: written by OpenVINO, so the test does not depend on ovgather's writer.
# data[2,3,4] f32 ─┐
# ids[2,1] i32 ────┴─ GatherND-8(bd=1) → [2,4] ─┐
# bias[4] f32 ──────────────────────────────────┴─ Add → Result
# --------------------------------------------------------------------------------------------


def make_tiny_ir(folder: Path) -> Path:
    """Write the tiny IR with OpenVINO into ``folder`` and return the .xml path."""
    import openvino as ov
    from openvino import opset8 as ops

    data = ops.parameter([2, 3, 4], np.float32, name="data")
    ids = ops.constant(np.array([[1], [2]], dtype=np.int32), name="ids")
    gnd = ops.gather_nd(data, ids, batch_dims=1, name="gnd")
    bias = ops.constant(np.arange(4, dtype=np.float32), name="bias")
    add = ops.add(gnd, bias, name="add")
    model = ov.Model([ops.result(add, name="out")], [data], "tiny")
    path = folder / "tiny.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes]:
    """The tiny IR's XML text and .bin bytes."""
    xml_path = make_tiny_ir(tmp_path_factory.mktemp("tiny"))
    return xml_path.read_text(), xml_path.with_suffix(".bin").read_bytes()


def sub(text: str, old: str, new: str, count: int = 1) -> str:
    """``text.replace`` that fails loudly when OpenVINO's output no longer holds ``old``."""
    assert old in text, f"the tiny IR no longer contains {old!r}"
    return text.replace(old, new, count)


def line_of(text: str, marker: str, occurrence: int = 0) -> int:
    """1-based line of the ``occurrence``-th line containing ``marker`` (-1: the last)."""
    lines = [i for i, line in enumerate(text.splitlines(), 1) if marker in line]
    assert lines, f"marker {marker!r} not in the mutated XML"
    return lines[occurrence]


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------

Mutation = Callable[[str, bytes, Path], tuple["str | bytes", "bytes | None"]]


@dataclass
class Case:
    """One way to break the tiny IR.

    ``error``: the ovgather error class(es) expected. ``line``: a marker whose (last) line in
    the mutated XML is the line the error must name; ``lines``: several acceptable markers;
    ``any_line``: a line must be named but it is lxml's to choose (syntax errors).
    ``layer``: the layer id the error must name. ``stage``: ``read`` when ``read_ir`` must
    already refuse the input, ``check`` when reading may succeed and ``check`` decides.
    """

    name: str
    mutate: Mutation
    error: type | tuple[type, ...] = errors.IRError
    line: str | None = None
    lines: tuple[str, ...] = ()
    any_line: bool = False
    layer: str | tuple[str, ...] | None = None
    stage: str = "read"
    names_bin: bool = False
    secret: bool = False
    extra: dict = field(default_factory=dict)


def _x(fn: Callable[[str], str | bytes]) -> Mutation:
    """A mutation of the XML only."""
    return lambda xml, bin_, tmp: (fn(xml), bin_)


def _b(fn: Callable[[bytes], bytes | None]) -> Mutation:
    """A mutation of the .bin only."""
    return lambda xml, bin_, tmp: (xml, fn(bin_))


SECRET = "TOP-SECRET-7d1f0c-do-not-leak"

GND_OUT = '<port id="2" precision="FP32">\n\t\t\t\t\t<dim>2</dim>'  # first dim of gnd's output


def _doctype(xml: str, doctype: str, name_value: str | None = None) -> str:
    """Put ``doctype`` after the XML declaration; optionally set the net name to an entity."""
    xml = sub(xml, '<?xml version="1.0"?>\n', f'<?xml version="1.0"?>\n{doctype}\n')
    if name_value is not None:
        xml = sub(xml, '<net name="tiny"', f'<net name="{name_value}"')
    return xml


def _xxe(xml: str, bin_: bytes, tmp: Path) -> tuple[str, bytes]:
    secret = tmp / "secret.txt"
    secret.write_text(SECRET)
    doctype = f'<!DOCTYPE net [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    return _doctype(xml, doctype, "&xxe;"), bin_


def _xxe_in_dim(xml: str, bin_: bytes, tmp: Path) -> tuple[str, bytes]:
    secret = tmp / "secret.txt"
    secret.write_text(SECRET)
    doctype = f'<!DOCTYPE net [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    xml = _doctype(xml, doctype)
    return sub(xml, '<info name="OpenVINO Runtime" value="', '<info name="&xxe;" value="'), bin_


def _xxe_parameter_entity(xml: str, bin_: bytes, tmp: Path) -> tuple[str, bytes]:
    secret = tmp / "secret.dtd"
    secret.write_text(f'<!ENTITY leak "{SECRET}">')
    doctype = f'<!DOCTYPE net [<!ENTITY % ext SYSTEM "file://{secret}"> %ext;]>'
    return _doctype(xml, doctype, "&leak;"), bin_


def _external_dtd(xml: str, bin_: bytes, tmp: Path) -> tuple[str, bytes]:
    secret = tmp / "secret.dtd"
    secret.write_text(f'<!ENTITY leak "{SECRET}">')
    return _doctype(xml, f'<!DOCTYPE net SYSTEM "file://{secret}">', "&leak;"), bin_


def _billion_laughs(xml: str) -> str:
    ents = ['<!ENTITY lol0 "lol">']
    ents += [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    return _doctype(xml, "<!DOCTYPE net [" + "".join(ents) + "]>", "&lol9;")


def _quadratic_blowup(xml: str) -> str:
    doctype = '<!DOCTYPE net [<!ENTITY a "' + "x" * 100_000 + '">]>'
    return _doctype(xml, doctype, "&a;" * 20_000)


def _deep_nesting(xml: str) -> str:
    depth = 100_000
    return sub(xml, "\t<rt_info>\n", "\t<rt_info>\n" + "<a>" * depth + "</a>" * depth + "\n")


def _deep_nesting_in_layer(xml: str) -> str:
    depth = 100_000
    return sub(xml, '<data batch_dims="1" />', '<data batch_dims="1" />' + "<x>" * depth)


def _duplicate_id(xml: str) -> str:
    """bias (id 3) becomes a second layer 1; its edge follows, so only the id clashes."""
    xml = sub(xml, '<layer id="3" name="bias"', '<layer id="1" name="bias"')
    return sub(xml, 'from-layer="3"', 'from-layer="1"')


def _duplicate_layer_block(xml: str) -> str:
    """The gnd layer written twice, identically."""
    start = xml.index('\t\t<layer id="2" name="gnd"')
    end = xml.index("</layer>", start) + len("</layer>\n")
    block = xml[start:end]
    return xml[:end] + block.replace('name="gnd"', 'name="gnd_twin"') + xml[end:]


def _duplicate_input_port(xml: str) -> str:
    xml = sub(xml, '<port id="1" precision="I32">', '<port id="0" precision="I32">')
    # the second occurrence is gnd's input (the first is in no layer: ids' output is id 0)
    return xml


def _output_port_reuses_input_id(xml: str) -> str:
    """gnd's output port takes id 1, which its second input port already has."""
    start = xml.index('name="gnd"')
    out = xml.index("<output>", start)
    xml = xml[:out] + sub(xml[out:], '<port id="2"', '<port id="1"')
    return sub(xml, 'from-layer="2" from-port="2"', 'from-layer="2" from-port="1"')


def _add_edge(xml: str, edge: str) -> str:
    return sub(xml, "\t</edges>", f"\t\t{edge}\n\t</edges>")


def _cycle(xml: str) -> str:
    """add's output goes back into gnd: gnd → add → gnd."""
    old = 'from-layer="0" from-port="0" to-layer="2"'
    return sub(xml, old, 'from-layer="4" from-port="2" to-layer="2"')


def _unfed_input(xml: str) -> str:
    return sub(xml, '\t\t<edge from-layer="3" from-port="0" to-layer="4" to-port="1" />\n', "")


def _gnd_out_dim(text: str) -> Mutation:
    return _x(lambda xml: sub(xml, GND_OUT, GND_OUT.replace("<dim>2</dim>", f"<dim>{text}</dim>")))


def _attr(layer_marker: str, old: str, new: str) -> Mutation:
    """Replace attribute text ``old`` by ``new`` on the line holding ``layer_marker``'s data."""

    def mutate(xml: str) -> str:
        start = xml.index(layer_marker)
        end = xml.index("</layer>", start)
        block = xml[start:end]
        return xml[:start] + sub(block, old, new) + xml[end:]

    return _x(mutate)


IDS_DATA = 'element_type="i32" shape="2, 1" offset="0" size="8"'
BIAS_DATA = 'element_type="f32" shape="4" offset="8" size="16"'
ABSURD = "65536,65536,65537"  # 2**48 + 2**32 elements: over the 2**48 budget


def _data(old: str, new: str) -> Mutation:
    return _x(lambda xml: sub(xml, old, new))


def _ids_data(**attrs: str) -> Mutation:
    values = {"element_type": "i32", "shape": "2, 1", "offset": "0", "size": "8", **attrs}
    new = " ".join(f'{k}="{v}"' for k, v in values.items() if v is not None)
    return _data(IDS_DATA, new)


def _bias_data(**attrs: str) -> Mutation:
    values = {"element_type": "f32", "shape": "4", "offset": "8", "size": "16", **attrs}
    new = " ".join(f'{k}="{v}"' for k, v in values.items() if v is not None)
    return _data(BIAS_DATA, new)


def _without(attrs: str, name: str) -> str:
    return re.sub(rf'\s*{name}="[^"]*"', "", attrs)


PARAM = '<data shape="2,3,4" element_type="f32" />'
NET = '<net name="tiny" version="11">'

CASES: list[Case] = [
    # -- not XML at all -----------------------------------------------------------------------
    Case("empty", _x(lambda xml: b""), errors.XMLSyntaxError),
    Case("whitespace_only", _x(lambda xml: b"   \n\n\t"), errors.XMLSyntaxError),
    Case("not_xml", _x(lambda xml: "this is not an IR, just text\n"), errors.XMLSyntaxError,
         any_line=True),
    Case("binary_garbage", _x(lambda xml: bytes(range(256)) * 8), errors.XMLSyntaxError),
    Case("json", _x(lambda xml: '{"net": {"layers": []}}'), errors.XMLSyntaxError, any_line=True),
    Case("truncated_half", _x(lambda xml: xml[: len(xml) // 2]), errors.XMLSyntaxError,
         any_line=True),
    Case("truncated_end", _x(lambda xml: xml[: xml.rindex("</net>")]), errors.XMLSyntaxError,
         any_line=True),
    Case("mismatched_tag", _x(lambda xml: sub(xml, "</layers>", "</layer>")),
         errors.XMLSyntaxError, any_line=True),
    Case("nul_byte", _x(lambda xml: sub(xml, 'name="gnd"', 'name="g\x00nd"').encode()),
         errors.XMLSyntaxError, any_line=True),
    Case("invalid_utf8", _x(lambda xml: sub(xml, 'name="gnd"', "name=\"g\udcffnd\"")
                            .encode("utf-8", "surrogateescape")),
         errors.XMLSyntaxError, any_line=True),
    Case("unknown_encoding", _x(lambda xml: sub(xml, '<?xml version="1.0"?>',
                                                '<?xml version="1.0" encoding="x-bogus-42"?>')),
         errors.XMLSyntaxError),
    # -- XML, but not an IR ---------------------------------------------------------------
    Case("wrong_root", _x(lambda xml: sub(sub(xml, "<net ", "<model "), "</net>", "</model>")),
         errors.IRStructureError, line="<model "),
    Case("html_root", _x(lambda xml: "<html>\n<body>hello</body>\n</html>\n"),
         errors.IRStructureError, line="<html>"),
    Case("version_12", _data(NET, '<net name="tiny" version="12">'), errors.IRStructureError,
         line="<net "),
    Case("version_9", _data(NET, '<net name="tiny" version="9">'), errors.IRStructureError,
         line="<net "),
    Case("version_text", _data(NET, '<net name="tiny" version="eleven">'),
         errors.IRStructureError, line="<net "),
    Case("version_missing", _data(NET, '<net name="tiny">'), errors.IRStructureError,
         line="<net "),
    # -- DTDs and entities: refused before anything is read or expanded --------------------------
    Case("xxe_file_entity", _xxe, errors.XMLSyntaxError, secret=True),
    Case("xxe_entity_in_attr", _xxe_in_dim, errors.XMLSyntaxError, secret=True),
    Case("xxe_parameter_entity", _xxe_parameter_entity, errors.XMLSyntaxError, secret=True),
    Case("external_dtd", _external_dtd, errors.XMLSyntaxError, secret=True),
    Case("network_dtd", _x(lambda xml: _doctype(
        xml, '<!DOCTYPE net SYSTEM "http://127.0.0.1:9/ir.dtd">')), errors.XMLSyntaxError),
    Case("internal_entity", _x(lambda xml: _doctype(
        xml, '<!DOCTYPE net [<!ENTITY n "tiny">]>', "&n;")), errors.XMLSyntaxError),
    Case("billion_laughs", _x(_billion_laughs), errors.XMLSyntaxError),
    Case("quadratic_blowup", _x(_quadratic_blowup), errors.XMLSyntaxError),
    Case("deep_nesting_rt_info", _x(_deep_nesting), errors.IRError),
    Case("deep_nesting_layer", _x(_deep_nesting_in_layer), errors.IRError),
    # -- graph structure --------------------------------------------------------------------
    Case("duplicate_layer_id", _x(_duplicate_id), errors.IRStructureError,
         line='<layer id="1" name="bias"', layer="1"),
    Case("duplicate_layer_block", _x(_duplicate_layer_block), errors.IRStructureError,
         line='name="gnd_twin"', layer="2"),
    Case("duplicate_input_port", _x(_duplicate_input_port), errors.IRStructureError,
         lines=('<port id="0" precision="I32">', 'name="gnd"'), layer="2"),
    Case("output_port_reuses_input_id", _x(_output_port_reuses_input_id),
         errors.IRStructureError, lines=('<port id="1" precision="FP32">', 'name="gnd"'),
         layer="2"),
    Case("edge_to_missing_layer", _x(lambda xml: sub(xml, 'to-layer="5"', 'to-layer="9"')),
         errors.IRStructureError, line='to-layer="9"'),
    Case("edge_from_missing_port", _x(lambda xml: sub(
        xml, 'from-layer="2" from-port="2"', 'from-layer="2" from-port="7"')),
        errors.IRStructureError, line='from-port="7"', layer="2"),
    Case("edge_into_output_port", _x(lambda xml: sub(
        xml, 'to-layer="4" to-port="1"', 'to-layer="4" to-port="2"')),
        errors.IRStructureError, line='to-layer="4" to-port="2"', layer="4"),
    Case("doubly_fed_input", _x(lambda xml: _add_edge(
        xml, '<edge from-layer="3" from-port="0" to-layer="2" to-port="1" />')),
        errors.IRStructureError, line='from-layer="3" from-port="0" to-layer="2"', layer="2"),
    Case("duplicate_edge", _x(lambda xml: _add_edge(
        xml, '<edge from-layer="1" from-port="0" to-layer="2" to-port="1" />')),
        errors.IRStructureError, line='from-layer="1" from-port="0" to-layer="2"', layer="2"),
    Case("unfed_input_port", _x(_unfed_input), errors.IRStructureError, layer="4"),
    Case("edges_element_missing", _x(lambda xml: re.sub(r"\t<edges>.*</edges>\n", "", xml,
                                                         flags=re.S)),
         errors.IRStructureError, layer=("2", "4", "5")),
    Case("cycle", _x(_cycle), errors.IRStructureError, layer=("2", "4")),
    Case("self_loop", _x(lambda xml: _add_edge(
        sub(xml, '<edge from-layer="0" from-port="0" to-layer="2" to-port="0" />', ""),
        '<edge from-layer="2" from-port="2" to-layer="2" to-port="0" />')),
        errors.IRStructureError, layer="2"),
    Case("layer_without_id", _data('<layer id="2" name="gnd"', '<layer name="gnd"'),
         errors.IRStructureError, line='<layer name="gnd"'),
    Case("layer_without_type", _data('name="gnd" type="GatherND"', 'name="gnd"'),
         errors.IRStructureError, line='name="gnd"', layer="2"),
    Case("edge_port_not_int",
         _data('from-layer="2" from-port="2"', 'from-layer="2" from-port="two"'),
         errors.IRStructureError, line='from-port="two"'),
    Case("edge_without_to_port", _data('to-layer="5" to-port="0"', 'to-layer="5"'),
         errors.IRStructureError, line='to-layer="5"'),
    Case("port_id_not_int", _data('<port id="1" precision="I32">', '<port id="one" precision="x">'),
         errors.IRStructureError, line='<port id="one"', layer="2"),
    # -- dims ----------------------------------------------------------------------------------
    Case("dim_question_mark", _gnd_out_dim("?"), errors.IRStructureError, line="<dim>?</dim>",
         layer="2"),
    Case("dim_interval", _gnd_out_dim("2..5"), errors.IRStructureError, line="<dim>2..5</dim>",
         layer="2"),
    Case("dim_minus_two", _gnd_out_dim("-2"), errors.IRStructureError, line="<dim>-2</dim>",
         layer="2"),
    Case("dim_text", _gnd_out_dim("two"), errors.IRStructureError, line="<dim>two</dim>",
         layer="2"),
    Case("dim_empty", _gnd_out_dim(""), errors.IRStructureError, line="<dim></dim>", layer="2"),
    Case("dim_float", _gnd_out_dim("2.0"), errors.IRStructureError, line="<dim>2.0</dim>",
         layer="2"),
    Case("dim_over_int64", _gnd_out_dim("99999999999999999999999"), errors.IRStructureError,
         line="<dim>99999999999999999999999</dim>", layer="2"),
    Case("parameter_shape_text", _data(PARAM, '<data shape="2,x,4" element_type="f32" />'),
         errors.OvgatherError, line='shape="2,x,4"', layer="0", stage="check"),
    Case("parameter_shape_negative", _data(PARAM, '<data shape="2,-3,4" element_type="f32" />'),
         errors.OvgatherError, line='shape="2,-3,4"', layer="0", stage="check"),
    Case("parameter_shape_over_int64",
         _data(PARAM, '<data shape="2,99999999999999999999999,4" element_type="f32" />'),
         errors.OvgatherError, line='shape="2,99999999999999999999999,4"', layer="0",
         stage="check"),
    Case("const_shape_text", _ids_data(shape="2, x"), errors.IRError, line='shape="2, x"',
         layer="1"),
    Case("const_shape_dynamic", _ids_data(shape="2, -1"), errors.IRError, line='shape="2, -1"',
         layer="1"),
    Case("const_shape_absurd", _bias_data(shape=ABSURD), errors.IRError, line=f'shape="{ABSURD}"',
         layer="3"),
    Case("const_shape_absurd_size_matching", _bias_data(shape=ABSURD, size=str(4 << 48 | 4 << 32)),
         errors.IRError, line=f'shape="{ABSURD}"', layer="3"),
    Case("const_element_type_unknown", _ids_data(element_type="i33"), errors.IRError,
         line='element_type="i33"', layer="1"),
    # -- weights ---------------------------------------------------------------------------------
    Case("missing_bin", _b(lambda b: None), errors.WeightsError, names_bin=True,
         line='name="ids"', layer="1"),
    Case("empty_bin", _b(lambda b: b""), errors.WeightsError, names_bin=True, line='name="ids"',
         layer="1"),
    Case("short_bin", _b(lambda b: b[:10]), errors.WeightsError, names_bin=True,
         line='name="bias"', layer="3"),
    Case("offset_outside_file", _bias_data(offset="4096"), errors.WeightsError,
         line='offset="4096"', layer="3"),
    Case("offset_negative", _bias_data(offset="-8"), errors.IRError, line='offset="-8"',
         layer="3"),
    Case("offset_uint64_max", _bias_data(offset=str(2**64 - 1)), errors.IRError,
         line=f'offset="{2**64 - 1}"', layer="3"),
    Case("size_wraps_uint64", _bias_data(size=str(2**64 - 8)), errors.IRError,
         line=f'size="{2**64 - 8}"', layer="3"),
    Case("size_smaller_than_shape", _ids_data(size="4"), errors.WeightsError, line='size="4"',
         layer="1"),
    Case("size_negative", _ids_data(size="-8"), errors.IRError, line='size="-8"', layer="1"),
    Case("offset_not_int", _ids_data(offset="x"), errors.IRError, line='offset="x"', layer="1"),
    Case("offset_float", _ids_data(offset="0.0"), errors.IRError, line='offset="0.0"', layer="1"),
    Case("offset_missing", _ids_data(offset=None), errors.IRError, line='name="ids"', layer="1"),
    Case("overlap_type_disagrees", _ids_data(offset="8"), errors.WeightsError,
         lines=('name="ids"', 'name="bias"'), layer=("1", "3")),
]


def _attr_cases() -> list[Case]:
    """``batch_dims`` of the wrong kind: decided by ``check`` (see test_attribute_wrong_kind)."""
    cases = []
    for value in ("x", "1.5", "", "-1", "99999999999999999999999"):
        mutate = _data('<data batch_dims="1" />', f'<data batch_dims="{value}" />')
        cases.append(Case(f"batch_dims_{value or 'empty'}", mutate, errors.OvgatherError,
                          line=f'batch_dims="{value}"', layer="2", stage="check"))
    return cases


ATTR_CASES = _attr_cases()


def write_case(case: Case, tiny: tuple[str, bytes], tmp_path: Path) -> Path:
    """Write the mutated IR of ``case`` as tmp_path/model.xml (+ .bin) and return its path."""
    xml, bin_ = case.mutate(tiny[0], tiny[1], tmp_path)
    path = tmp_path / "model.xml"
    path.write_bytes(xml.encode() if isinstance(xml, str) else xml)
    if bin_ is not None:
        path.with_suffix(".bin").write_bytes(bin_)
    return path


def expected_lines(case: Case, path: Path) -> set[int] | None:
    """The XML lines the error may name, computed from the mutated text.

    The line of the marker, or the line of the ``<layer>`` tag of the layer at fault
    (a reader may point at the layer rather than at its ``<data>`` or ``<port>``).
    """
    markers = (case.line,) if case.line else case.lines
    if not markers:
        return None
    text = path.read_bytes().decode("utf-8", "replace")
    lines = {line_of(text, m, i) for m in markers for i in (0, -1)}
    layers = (case.layer,) if isinstance(case.layer, str) else case.layer or ()
    for layer_id in layers:
        if f'<layer id="{layer_id}"' in text:
            lines |= {line_of(text, f'<layer id="{layer_id}"', i) for i in (0, -1)}
    return lines


def check(graph):  # noqa: ANN001, ANN201
    """``ovgather.check``, imported late: it is built in parallel with these tests."""
    from ovgather.infer import check as run_check

    return run_check(graph)


def assert_located(err: errors.OvgatherError, case: Case, path: Path) -> None:
    """The error names the file, the expected line and the expected layer."""
    text = str(err)
    assert "\n" not in text, f"a multi-line message: {text!r}"
    assert path.name in text, f"the file is not named: {text}"
    if case.names_bin:
        assert path.with_suffix(".bin").name in text, f"the .bin is not named: {text}"
    lines = expected_lines(case, path)
    if lines is not None:
        assert err.line in lines, f"line {err.line} not in {sorted(lines)}: {text}"
        assert f":{err.line}" in text
    elif case.any_line:
        n_lines = path.read_bytes().count(b"\n") + 1
        assert err.line is not None and 1 <= err.line <= n_lines + 1, text
    if case.layer is not None:
        layers = (case.layer,) if isinstance(case.layer, str) else case.layer
        assert err.layer_id in layers, f"layer id {err.layer_id!r} not in {layers}: {text}"
        assert f"(id {err.layer_id})" in text
    if case.secret:
        assert SECRET not in text


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_input_is_an_ovgather_error_naming_file_line_layer(
    case: Case, tiny: tuple[str, bytes], tmp_path: Path
) -> None:
    path = write_case(case, tiny, tmp_path)
    start = time.perf_counter()
    with pytest.raises(case.error) as info:
        graph = read_ir(path)
        if case.stage == "check":  # reading may pass; then the checker must refuse
            check(graph)
    assert time.perf_counter() - start < 2.0, "bad input must fail fast"
    assert_located(info.value, case, path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_input_cli_exit_2_one_error_line(
    case: Case, tiny: tuple[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case(case, tiny, tmp_path)
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert path.name in err
    if case.secret:
        assert SECRET not in err
    lines_expected = expected_lines(case, path)
    if lines_expected is not None:
        assert any(f":{n}" in err for n in lines_expected), err


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_input_cli_json_still_exit_2(
    case: Case, tiny: tuple[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json changes stdout only: a bad input is still exit 2 with one stderr line, and
    stdout, if anything, is JSON that reports no model for the unusable file."""
    path = write_case(case, tiny, tmp_path)
    code = main(["check", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: ")
    assert "Traceback" not in err + out
    if out:
        assert json.loads(out)["models"] == []
    if case.secret:
        assert SECRET not in out + err


# --------------------------------------------------------------------------------------------
# Attributes of the wrong kind: `check` reports the layer `invalid` (exit 1) or refuses the
# input (exit 2). Either is allowed by the issue; the API and the CLI must agree.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ATTR_CASES, ids=lambda c: c.name)
def test_attribute_wrong_kind_api_and_cli_agree(
    case: Case, tiny: tuple[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case(case, tiny, tmp_path)
    try:
        report = check(read_ir(path))
    except errors.OvgatherError as err:
        assert_located(err, case, path)
        assert main(["check", str(path)]) == 2
        _, stderr = capsys.readouterr()
        assert len(stderr.splitlines()) == 1 and stderr.startswith("error: ")
        return
    layers = {entry["id"]: entry for entry in report.to_dict(True)["layers"]}
    assert layers["2"]["status"] == "invalid", layers["2"]
    assert layers["2"]["line"] in expected_lines(case, path)
    assert main(["check", str(path), "--json"]) == 1
    out, stderr = capsys.readouterr()
    assert "Traceback" not in stderr
    entry = {e["id"]: e for e in json.loads(out)["models"][0]["layers"]}["2"]
    assert entry["status"] == "invalid" and entry["message"]


def test_openvino_also_rejects_batch_dims_minus_one(tiny: tuple[str, bytes],
                                                   tmp_path: Path) -> None:
    """The judge: OpenVINO refuses batch_dims="-1" too, so ovgather must not accept it."""
    import openvino as ov

    case = next(c for c in ATTR_CASES if c.name == "batch_dims_-1")
    path = write_case(case, tiny, tmp_path)
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(path))


# --------------------------------------------------------------------------------------------
# XXE: the secret is read by nobody; bombs are bounded in time and memory.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c for c in CASES if c.secret], ids=lambda c: c.name)
def test_xxe_secret_in_no_output(
    case: Case, tiny: tuple[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from ovgather.cli import build_parser

    path = write_case(case, tiny, tmp_path)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    runs = [["check", str(path), "--json"], ["--debug", "check", str(path)]]
    runs += [[command, str(path)] for command in sorted(sub.choices)]  # every command
    for argv in runs:
        main(argv)
        out, err = capsys.readouterr()
        assert SECRET not in out and SECRET not in err, argv
    with pytest.raises(errors.OvgatherError) as info:
        read_ir(path)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value.__cause__)


BOMB_SCRIPT = """
import resource, sys, time
from ovgather.cli import main
start = time.perf_counter()
code = main(["check", sys.argv[1]])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(sys.argv[2], "w") as f:
    f.write(f"{code} {seconds} {peak}")
"""


def _run_bounded(path: Path) -> tuple[int, float, int, str]:
    """Run ``ovgather check`` in a child limited to 2 GB; return code, seconds, peak KB, stderr."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    result = path.with_suffix(".result")
    proc = subprocess.run([sys.executable, "-c", BOMB_SCRIPT, str(path), str(result)],
                          capture_output=True, text=True, timeout=60, preexec_fn=limit)
    code, seconds, peak = result.read_text().split()
    return int(code), float(seconds), int(peak), proc.stderr


@pytest.mark.parametrize("name", ["billion_laughs", "quadratic_blowup", "deep_nesting_rt_info"])
def test_bombs_bounded_in_time_and_memory(name: str, tiny: tuple[str, bytes],
                                          tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.mkdir()
    good_path = write_case(Case("valid", _x(lambda xml: xml)), tiny, good)
    _, _, base_peak, _ = _run_bounded(good_path)
    case = next(c for c in CASES if c.name == name)
    path = write_case(case, tiny, tmp_path)
    code, seconds, peak, stderr = _run_bounded(path)
    assert code == 2 and stderr.startswith("error: ") and len(stderr.splitlines()) == 1
    assert seconds < 2.0
    assert peak - base_peak < 100 * 1024, f"bomb raised peak RSS by {(peak - base_peak) // 1024} MB"


# --------------------------------------------------------------------------------------------
# Valid things that look suspicious must still be accepted (the checks do not over-reach).
# --------------------------------------------------------------------------------------------


def test_valid_tiny_ir_reads_and_checks(tiny: tuple[str, bytes], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(Case("valid", _x(lambda xml: xml)), tiny, tmp_path)
    graph = read_ir(path)
    assert sorted(graph.nodes) == ["0", "1", "2", "3", "4", "5"]
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err == ""


def test_shared_const_slice_of_same_type_is_accepted(tmp_path: Path) -> None:
    """OpenVINO's serializer stores equal constants once; two Consts on one slice are fine."""
    import openvino as ov
    from openvino import opset8 as ops

    data = ops.parameter([4], np.float32, name="data")
    one = ops.add(data, ops.constant(np.full([4], 3, np.float32), name="c1"), name="a1")
    two = ops.add(one, ops.constant(np.full([4], 3, np.float32), name="c2"), name="a2")
    path = tmp_path / "shared.xml"
    ov.save_model(ov.Model([ops.result(two, name="out")], [data], "shared"), str(path),
                  compress_to_fp16=False)
    text = path.read_text()
    offsets = re.findall(r'offset="(\d+)"', text)
    assert len(offsets) == 2
    graph = read_ir(path)
    assert graph.number_of_nodes() == len(ov.Core().read_model(str(path)).get_ops())


def test_comments_and_processing_instructions_are_harmless(tiny: tuple[str, bytes],
                                                           tmp_path: Path) -> None:
    xml = sub(tiny[0], "<layers>", "<layers><!-- a comment --><?pi something?>")
    path = tmp_path / "model.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(tiny[1])
    assert read_ir(path).number_of_nodes() == 6


# --------------------------------------------------------------------------------------------
# Where OpenVINO's reader differs (docs/safety.md states these facts).
# --------------------------------------------------------------------------------------------


def test_openvino_runs_the_last_duplicate_layer_we_refuse(tiny: tuple[str, bytes],
                                                         tmp_path: Path) -> None:
    """The reader differential of the HF duplicate-layer PoC: a second ``bias`` with the same
    id and other weights. OpenVINO silently computes with the second; ovgather refuses."""
    import openvino as ov

    start = tiny[0].index('\t\t<layer id="3" name="bias"')
    end = tiny[0].index("</layer>", start) + len("</layer>\n")
    evil = tiny[0][start:end].replace('name="bias"', 'name="bias_evil"')
    evil = evil.replace('offset="8" size="16"', 'offset="24" size="16"')
    path = tmp_path / "model.xml"
    path.write_text(tiny[0][:end] + evil + tiny[0][end:])
    path.with_suffix(".bin").write_bytes(tiny[1] + np.full(4, 99, np.float32).tobytes())
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = ov.Core().compile_model(str(path), "CPU", cpu_config())([x])[0]
    np.testing.assert_array_equal(got, x[[0, 1], [1, 2]] + 99)  # the evil weights
    with pytest.raises(errors.IRStructureError) as info:
        read_ir(path)
    assert info.value.layer_id == "3"


OPENVINO_ACCEPTS = [
    "unknown_encoding", "xxe_file_entity", "xxe_parameter_entity", "external_dtd",
    "internal_entity", "billion_laughs", "quadratic_blowup", "deep_nesting_rt_info",
    "duplicate_layer_block", "output_port_reuses_input_id", "dim_interval", "dim_float",
    "parameter_shape_negative", "parameter_shape_over_int64", "overlap_type_disagrees",
]


@pytest.mark.parametrize("name", OPENVINO_ACCEPTS)
def test_openvino_accepts_what_ovgather_refuses(name: str, tiny: tuple[str, bytes],
                                                tmp_path: Path) -> None:
    """Pins docs/safety.md's table: OpenVINO 2026.4 reads these without a word."""
    import openvino as ov

    case = next(c for c in CASES if c.name == name)
    path = write_case(case, tiny, tmp_path)
    model = ov.Core().read_model(str(path))
    assert SECRET not in model.get_friendly_name()
    with pytest.raises(case.error):
        check(read_ir(path))


def test_openvino_reads_negative_parameter_dim_as_zero(tiny: tuple[str, bytes],
                                                      tmp_path: Path) -> None:
    import openvino as ov

    path = write_case(next(c for c in CASES if c.name == "parameter_shape_negative"), tiny,
                      tmp_path)
    assert str(ov.Core().read_model(str(path)).inputs[0].get_partial_shape()) == "[2,0,4]"


def test_openvino_reads_batch_dims_1_5_as_1_we_call_it_invalid(tiny: tuple[str, bytes],
                                                               tmp_path: Path) -> None:
    import openvino as ov

    path = write_case(next(c for c in ATTR_CASES if c.name == "batch_dims_1.5"), tiny, tmp_path)
    gnd = next(op for op in ov.Core().read_model(str(path)).get_ops()
               if op.get_friendly_name() == "gnd")
    assert gnd.get_attributes()["batch_dims"] == 1
    try:
        report = check(read_ir(path)).to_dict(True)
    except errors.OvgatherError:
        return  # refused as input: also not a guess
    assert {e["id"]: e for e in report["layers"]}["2"]["status"] == "invalid"


def test_slices_shared_by_openvino_dedup_are_accepted(tmp_path: Path) -> None:
    """OpenVINO's serializer stores equal bytes once, even for Consts of different types
    (zeros as i32 and as f32): identical slices are not a disagreement, only partial
    overlaps are."""
    import openvino as ov
    from openvino import opset8 as ops

    f = ops.parameter([2], np.float32, name="f")
    i = ops.parameter([2], np.int32, name="i")
    a = ops.add(f, ops.constant(np.zeros(2, np.float32), name="zf"), name="a")
    b = ops.add(i, ops.constant(np.zeros(2, np.int32), name="zi"), name="b")
    path = tmp_path / "dedup.xml"
    ov.save_model(ov.Model([ops.result(a, name="ra"), ops.result(b, name="rb")], [f, i], "d"),
                  str(path), compress_to_fp16=False)
    slices = re.findall(r'element_type="(\w+)" shape="2" offset="(\d+)"', path.read_text())
    assert len({offset for _, offset in slices}) == 1 and len({t for t, _ in slices}) == 2
    graph = read_ir(path)
    assert check(graph).to_dict(True)["summary"]["layers"] == graph.number_of_nodes()


# --------------------------------------------------------------------------------------------
# Absurd dims: shapes are arithmetic, never allocations (budget: 2**48 elements)
# --------------------------------------------------------------------------------------------

HUGE_SCRIPT = """
import sys
from ovgather.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _huge_parameter_ir(tiny: tuple[str, bytes], folder: Path) -> Path:
    """data becomes [65536,65536,65537] (over 2**48 elements); gnd gathers along dim 0
    (output [2,65536,65537]) and bias becomes [1] so that Add still broadcasts."""
    xml = sub(tiny[0], PARAM, f'<data shape="{ABSURD}" element_type="f32" />')
    xml = sub(xml, '<data batch_dims="1" />', '<data batch_dims="0" />')
    xml = sub(xml, BIAS_DATA, 'element_type="f32" shape="1" offset="8" size="4"')
    path = folder / "huge.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(tiny[1])
    return path


@pytest.mark.parametrize("command", ["check", "infer", "validate"])
def test_absurd_parameter_dims_are_reported_not_allocated(command: str, tiny: tuple[str, bytes],
                                                          tmp_path: Path) -> None:
    """A child limited to 4 GB of address space: any attempt to allocate the tensor fails
    as a MemoryError, which would surface as an 'internal error' line."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    path = _huge_parameter_ir(tiny, tmp_path)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", HUGE_SCRIPT, command, str(path)],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert time.perf_counter() - start < 30
    assert "invalid choice" not in proc.stderr, f"{command} is not registered"
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert "MemoryError" not in proc.stderr + proc.stdout
    if proc.returncode == 2:
        assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("error: ")
    if command in ("check", "infer"):  # the shape itself is fine arithmetic: it is printed
        assert "65536,65536,65537" in proc.stdout


def test_absurd_parameter_dims_match_openvino_shape_inference(tiny: tuple[str, bytes],
                                                              tmp_path: Path) -> None:
    """OpenVINO infers the same huge output shape without allocating; so does ovgather."""
    import openvino as ov

    path = _huge_parameter_ir(tiny, tmp_path)
    model = ov.Core().read_model(str(path))
    expected = next(str(op.get_output_partial_shape(0)) for op in model.get_ops()
                    if op.get_friendly_name() == "gnd")
    from ovgather.infer import check as run_check

    report = run_check(read_ir(path)).to_dict(True)
    gnd = next(entry for entry in report["layers"] if entry["name"] == "gnd")
    assert gnd["inferred"] == [expected]


# --------------------------------------------------------------------------------------------
# Paths that are not regular files: never a hang, never an endless read
# --------------------------------------------------------------------------------------------

FIFO_SCRIPT = """
import sys
from ovgather.cli import main
sys.exit(main(["check", sys.argv[1]]))
"""


def test_dev_zero_is_refused_not_read_forever() -> None:
    """In a child limited to 1 GB and 60 s, so that a reader that does read forever fails
    this test instead of eating the machine."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", FIFO_SCRIPT, "/dev/zero"], capture_output=True,
                          text=True, timeout=60, preexec_fn=limit)
    assert time.perf_counter() - start < 20
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: /dev/zero") and len(proc.stderr.splitlines()) == 1
    assert "internal error" not in proc.stderr


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes: check before opening."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "model.xml"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-c", FIFO_SCRIPT, str(fifo)], capture_output=True,
                          text=True, timeout=20)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and "model.xml" in proc.stderr


def test_symlink_loop_is_an_ir_error(tmp_path: Path) -> None:
    loop = tmp_path / "model.xml"
    loop.symlink_to(tmp_path / "model.xml")
    with pytest.raises(errors.IRError) as info:
        read_ir(loop)
    assert "model.xml" in str(info.value)
