"""The second round of hostile input: numbers, odd digits, markup inside dims, streams.

Integers of any length (Python's ``int()`` stops at 4300 digits with a ValueError) and
digits other than ASCII 0-9 (fullwidth ``３``, Arabic-Indic ``٣``, superscript ``³``,
which OpenVINO refuses) are clear ovgather errors wherever an IR or the command line
holds a number. A ``<dim>`` split by a comment or processing instruction reads as
OpenVINO reads it, which the tests ask OpenVINO itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ovgather import errors
from ovgather.cli import main
from ovgather.ir import parse_ir, read_ir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "mixed_ops.xml"

LONG = "9" * 5000
ODD_DIGITS = {"fullwidth": "\uff13", "arabic": "\u0663", "superscript": "\u00b3"}

TEMPLATE = """<?xml version="1.0"?>
<net name="m" version="11">
<layers>
<layer id="{pid}" name="x" type="Parameter" version="opset1">
<data shape="{shape}" element_type="f32"/>
<output><port id="{port}" precision="FP32">{dims}</port></output>
</layer>
<layer id="1" name="c" type="Const" version="opset1">
<data element_type="i64" shape="{cshape}" offset="{offset}" size="{size}"/>
<output><port id="0" precision="I64"><dim>1</dim></port></output>
</layer>
<layer id="2" name="r" type="Reshape" version="opset1">
<data special_zero="false"/>
<input><port id="0" precision="FP32">{dims}</port>
<port id="1" precision="I64"><dim>1</dim></port></input>
<output><port id="2" precision="FP32"><dim>6</dim></port></output>
</layer>
<layer id="3" name="out" type="Result" version="opset1">
<input><port id="0" precision="FP32"><dim>6</dim></port></input>
</layer>
</layers>
<edges>
<edge from-layer="{pid}" from-port="{port}" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges>
</net>
"""
BIN = (6).to_bytes(8, "little")


def ir(**fields: str) -> str:
    values = {"pid": "0", "shape": "2,3", "port": "0", "dims": "<dim>2</dim><dim>3</dim>",
              "cshape": "1", "offset": "0", "size": "8"}
    values.update(fields)
    return TEMPLATE.format(**values)


def openvino_reads(xml: str) -> str | None:
    """The Parameter's shape as OpenVINO reads the IR, or None when it refuses it."""
    import numpy as np
    import openvino as ov

    weights = ov.Tensor(np.frombuffer(BIN, np.uint8).copy())
    try:
        model = ov.Core().read_model(xml.encode(), weights)
    except Exception:  # noqa: BLE001 - any refusal
        return None
    return str(model.input().get_partial_shape())


def check_cli(xml: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
              *extra: str) -> tuple[int, str, str]:
    path = tmp_path / "m.xml"
    path.write_text(xml, encoding="utf-8")
    path.with_suffix(".bin").write_bytes(BIN)
    code = main(["check", str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_error(code: int, err: str) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "internal error" not in err and "Traceback" not in err
    assert len(err) < 600, "the message echoes the whole number"


# ------------------------------------------------------------------------------------------
# Long integers
# ------------------------------------------------------------------------------------------
LONG_FIELDS = {
    "dim": {"dims": f"<dim>2</dim><dim>{LONG}</dim>"},
    "padded_dim": {"dims": f"<dim>2</dim><dim> {LONG} </dim>"},
    "parameter_shape": {"shape": f"2,{LONG}"},
    "parameter_interval": {"shape": f"2,{LONG}..{LONG}"},
    "const_offset": {"offset": LONG},
    "const_size": {"size": LONG},
    "const_shape": {"cshape": LONG},
    "port_id": {"port": LONG},
    "layer_id": {"pid": LONG},
}


@pytest.mark.parametrize("field", list(LONG_FIELDS))
def test_integers_past_4300_digits_are_clear_errors(field: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    xml = ir(**LONG_FIELDS[field])
    code, out, err = check_cli(xml, tmp_path, capsys)
    if code != 2:  # the Parameter shape is judged by check: a report, exit 1
        assert code == 1 and field.startswith("parameter"), (code, out, err)
        assert "at most" in out or "0-9" in out
        return
    assert_clean_error(code, err)


@pytest.mark.parametrize("attr", ["from-layer", "from-port", "to-layer", "to-port"])
@pytest.mark.parametrize("digits", [LONG, "\u00b3"], ids=["long", "superscript"])
def test_numbers_in_edges_are_clear_short_errors(attr: str, digits: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import re

    old = '<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>'
    xml = ir()
    assert old in xml
    edge = re.sub(f'{attr}="[0-9]"', f'{attr}="{digits}"', old)
    code, _, err = check_cli(xml.replace(old, edge), tmp_path, capsys)
    assert_clean_error(code, err)


@pytest.mark.parametrize(("old", "new"), [
    ("<dim>2</dim><dim>3</dim>", f"<dim>2</dim><dim>2..{LONG}</dim>"),  # an interval
    ('version="11"', f'version="{LONG}"'),  # the <net version>
    ('element_type="i64"', f'element_type="i{LONG}"'),  # a Const's
], ids=["dim_interval", "net_version", "const_element_type"])
def test_long_values_elsewhere_are_quoted_shortly(old: str, new: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    xml = ir()
    assert old in xml
    code, _, err = check_cli(xml.replace(old, new, 1), tmp_path, capsys)
    assert_clean_error(code, err)


def test_shape_option_with_5000_digits(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = check_cli(ir(), tmp_path, capsys, "--shape", f"x=[2,{LONG}]")
    assert_clean_error(code, err)
    assert "at most" in err


# ------------------------------------------------------------------------------------------
# Digits other than 0-9
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(ODD_DIGITS))
@pytest.mark.parametrize("where", ["dim", "parameter_shape", "const_offset", "port_id",
                                   "shape_option"])
def test_odd_digits_are_refused_as_openvino_does(kind: str, where: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    d = ODD_DIGITS[kind]
    fields = {"dim": {"dims": f"<dim>2</dim><dim>{d}</dim>"},
              "parameter_shape": {"shape": f"2,{d}"},
              "const_offset": {"offset": d.replace(d, "\uff10") if kind == "fullwidth"
                               else d},
              "port_id": {"port": d},
              "shape_option": {}}[where]
    xml = ir(**fields)
    if where != "shape_option":
        assert openvino_reads(xml) is None, "OpenVINO reads it: the test is wrong"
        code, out, err = check_cli(xml, tmp_path, capsys)
    else:
        code, out, err = check_cli(xml, tmp_path, capsys, "--shape", f"x=[2,{d}]")
    if code == 1:  # a Parameter shape is judged by check: reported, exit 1
        assert where == "parameter_shape" and "0-9" in out, out
        return
    assert_clean_error(code, err)


@pytest.mark.parametrize("version", ["opset\u00b3", "opset\uff18", "opset" + LONG])
def test_odd_opset_numbers_make_an_unknown_op_not_a_crash(version: str) -> None:
    from ovgather.graph import op_spec
    from ovgather.infer import check

    xml = ir().replace('type="Reshape" version="opset1"', f'type="Reshape" version="{version}"')
    G = parse_ir(xml, BIN)
    with pytest.raises(errors.UnsupportedOpError):  # no opset of that name holds it
        op_spec(G, "2")
    row = {lr.id: lr for lr in check(G).layers}["2"]
    assert check(G).summary["layers"] == 4 and row.status == "unknown"


def test_superscript_parameter_shape_is_not_an_internal_error() -> None:
    from ovgather.shapes import PartialShape

    with pytest.raises(errors.ShapeParseError, match="0-9"):
        PartialShape.parse("2,\u00b3,4")


def test_negative_seed_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", str(SAMPLE), "--seed", "-1"])
    _, err = capsys.readouterr()
    assert_clean_error(code, err)
    assert "--seed" in err


LOOP = ROOT / "ir_samples" / "loop_gather.xml"
BODY_FIELDS = {  # in a Loop's port map, back edges and body
    "external_port_id": ('external_port_id="2"', 'external_port_id="{}"'),
    "internal_layer_id": ('internal_layer_id="0"', 'internal_layer_id="{}"'),
    "axis": ('axis="0" external_port_id="5"', 'axis="{}" external_port_id="5"'),
    "end": ('end="-1"', 'end="-{}"'),
    "back_edge": ('<edge from-layer="10" to-layer="1" />', '<edge from-layer="{}" to-layer="1" />'),
    "body_edge_port": ('<edge from-layer="0" from-port="0" to-layer="6" to-port="0" />',
                       '<edge from-layer="0" from-port="{}" to-layer="6" to-port="0" />'),
}


@pytest.mark.parametrize("digits", [LONG, "\u00b3"], ids=["long", "superscript"])
@pytest.mark.parametrize("field", list(BODY_FIELDS))
def test_numbers_in_bodies_are_clear_short_errors(field: str, digits: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    old, new = BODY_FIELDS[field]
    text = LOOP.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "loop.xml"
    path.write_text(text.replace(old, new.format(digits), 1), encoding="utf-8")
    path.with_suffix(".bin").write_bytes(LOOP.with_suffix(".bin").read_bytes())
    code = main(["check", str(path)])
    _, err = capsys.readouterr()
    assert_clean_error(code, err)


@pytest.mark.parametrize("value", [LONG, "\uff13", "\u0663", "-1"])
@pytest.mark.parametrize("option", ["extract --depth", "show --depth", "validate --seed",
                                    "validate --batch-size"])
def test_count_options_take_ascii_digits_and_quote_little(option: str, value: str,
                                                          tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """Every number on the command line is digits 0-9 (``int()`` would take ``３`` and
    ``٣`` as 3), and a refusal quotes at most 40 characters of it."""
    command, flag = option.split()
    argv = [command, str(SAMPLE), flag, value]
    if command in ("extract", "show"):
        argv += ["--layer", "first_rows_nd5", "-o", str(tmp_path / f"o.{command[:3]}.xml")]
    code = main(argv)
    _, err = capsys.readouterr()
    assert_clean_error(code, err)
    assert flag in err and "0-9" in err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------
# Markup inside <dim>: read as OpenVINO reads it
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("inner", "value"), [
    ("-1<!--c-->0", -1),      # joined, '-10' would be refused: OpenVINO accepts it
    ("-1<?p x?>0", -1),       # the same with a processing instruction
    ("<!--c-->-10", None),    # the first piece is '-10': refused by both
    (" <!--c-->-10", None),   # a whitespace-only piece does not count
    ("3<!--c-->0", 3),
    ("<!--c-->30", 30),
])
def test_markup_inside_a_dim_reads_as_openvino_reads_it(inner: str, value: int | None) -> None:
    """OpenVINO takes a dim's first text piece that is not only whitespace (pugixml's
    child_value); ovgather reads the same piece, OpenVINO judging every case it can."""
    xml = ir(dims=f"<dim>2</dim><dim>{inner}</dim>")
    if value is None:
        assert openvino_reads(xml) is None
        with pytest.raises(errors.IRStructureError, match="<dim>"):
            parse_ir(xml, BIN)
        return
    if value == -1:
        assert openvino_reads(xml) is not None
    assert parse_ir(xml, BIN).nodes["0"]["outputs"][0]["dims"] == (2, value)


def test_openvino_reads_only_the_first_piece_of_a_split_dim() -> None:
    """The fact the reader follows, asked of OpenVINO: ``-<!--c-->1`` is refused (it read
    '-'), ``3<!--c-->x`` is accepted (it read '3', the 'x' never)."""
    assert openvino_reads(ir(dims="<dim>2</dim><dim>-<!--c-->1</dim>")) is None
    assert openvino_reads(ir(dims="<dim>2</dim><dim>3<!--c-->x</dim>")) is not None
    with pytest.raises(errors.IRStructureError):
        parse_ir(ir(dims="<dim>2</dim><dim>-<!--c-->1</dim>"), BIN)
    assert parse_ir(ir(dims="<dim>2</dim><dim>3<!--c-->x</dim>"), BIN).nodes["0"][
        "outputs"][0]["dims"] == (2, 3)


def test_cdata_inside_a_dim_is_refused() -> None:
    with pytest.raises(errors.XMLSyntaxError, match="CDATA"):
        parse_ir(ir(dims="<dim>2</dim><dim>3<![CDATA[0]]></dim>"), BIN)


def test_comments_elsewhere_are_dropped_as_before() -> None:
    G = parse_ir(ir().replace("<layers>", "<layers><!-- a comment --><?pi x?>"), BIN)
    assert G.number_of_nodes() == 4


# ------------------------------------------------------------------------------------------
# Deep shape chains in extract
# ------------------------------------------------------------------------------------------
def test_extract_follows_a_1000_deep_shape_chain(tmp_path: Path) -> None:
    import numpy as np
    import openvino as ov
    from openvino import opset8 as ops

    data = ops.parameter([2, 3], np.float32, name="data")
    shape = ops.shape_of(data, "i64")
    for i in range(1000):
        shape = ops.convert(shape, "i64" if i % 2 else "i32")
    target = ops.reshape(data, shape, special_zero=False, name="target")
    model = ov.Model([ops.result(target)], [data], "deep")
    path = tmp_path / "deep.xml"
    ov.save_model(model, str(path))
    from ovgather.edit.extract import extract

    H = extract(read_ir(path), "target", depth=0)
    assert H.number_of_nodes() > 1000


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ovgather", *args], capture_output=True,
                          timeout=120, **kwargs)


# ------------------------------------------------------------------------------------------
# Streams
# ------------------------------------------------------------------------------------------
def _non_ascii_model(tmp_path: Path) -> Path:
    text = SAMPLE.read_text(encoding="utf-8").replace('name="first_rows_nd5"',
                                                      'name="première_ряд_nd5"')
    path = tmp_path / "ünï.xml"
    path.write_text(text, encoding="utf-8")
    path.with_suffix(".bin").write_bytes(SAMPLE.with_suffix(".bin").read_bytes())
    return path


def test_ascii_stream_encoding_with_non_ascii_names(tmp_path: Path) -> None:
    path = _non_ascii_model(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    run = _run(["infer", str(path)], env=env)
    assert run.returncode == 0, run.stderr
    assert b"premi\\xe8re" in run.stdout
    bad = _run(["check", str(tmp_path / "nö.xml")], env=env)
    assert bad.returncode == 2
    assert bad.stderr.startswith(b"error: ") and b"Traceback" not in bad.stderr


@pytest.mark.parametrize("command", [["infer", "--json"], ["check", "--json", "--all"]])
def test_ascii_stream_encoding_keeps_json_valid(command: list[str], tmp_path: Path) -> None:
    """Escaping with backslashes (``premi\\xe8re``) would make invalid JSON: the JSON
    escapes the names itself (``premi\\u00e8re``) when the stream cannot hold them."""
    import json

    path = _non_ascii_model(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    run = _run([command[0], str(path), *command[1:]], env=env)
    assert run.returncode == 0, run.stderr
    assert "première_ряд_nd5" in json.dumps(json.loads(run.stdout), ensure_ascii=False)


def test_closed_stdout_is_not_a_traceback(tmp_path: Path) -> None:
    run = subprocess.run(f"{sys.executable} -m ovgather infer {SAMPLE} >&-", shell=True,
                         capture_output=False, stderr=subprocess.PIPE, timeout=120)
    assert b"Traceback" not in run.stderr
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(b"error: ") and len(run.stderr.splitlines()) == 1
    assert b"standard output is closed" in run.stderr


def test_closed_stderr_sends_nothing_to_stdout(tmp_path: Path) -> None:
    run = subprocess.run(f"{sys.executable} -m ovgather check {tmp_path / 'no.xml'} 2>&-",
                         shell=True, stdout=subprocess.PIPE, timeout=120)
    assert run.returncode == 2
    assert run.stdout == b""


def test_full_disk_on_stdout_is_a_clean_error(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "ovgather", "infer", str(SAMPLE)],
                             stdout=full, stderr=subprocess.PIPE, timeout=120)
    assert run.returncode == 2, run.stderr
    err = run.stderr.decode()
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "internal error" not in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------
# Namespaced attributes are written back as they were read
# ------------------------------------------------------------------------------------------
NAMESPACED = [
    ('<net name="m" version="11">', '<net name="m" version="11" xml:lang="en">'),
    ('<net name="m" version="11">', '<net name="m" version="11" '
     'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="a b">'),
    ('<layer id="2" name="r"', '<layer xml:base="http://x/" id="2" name="r"'),
    ('<data special_zero="false"/>', '<data xmlns:q="urn:q" q:note="1" special_zero="false"/>'),
    ('<port id="2" precision="FP32">', '<port xmlns:ns0="urn:a" xmlns:p="urn:b" ns0:a="1" '
     'p:b="2" id="2" precision="FP32">'),
]


@pytest.mark.parametrize("case", range(len(NAMESPACED)))
def test_namespaced_attributes_round_trip(case: int, tmp_path: Path) -> None:
    import openvino as ov

    from ovgather.ir import write_ir

    old, new = NAMESPACED[case]
    xml = ir().replace(old, new, 1)
    assert openvino_reads(xml) is not None
    G = parse_ir(xml, BIN)
    write_ir(G, tmp_path / "out.xml")
    again = read_ir(tmp_path / "out.xml")
    assert again.graph["net_attrs"] == G.graph["net_attrs"]
    for n in G:
        a, b = G.nodes[n], again.nodes[n]
        assert (a["layer_attrs"], a["data"]) == (b["layer_attrs"], b["data"])
        assert [p["attrs"] for p in a["outputs"]] == [p["attrs"] for p in b["outputs"]]
    ov.Core().read_model(str(tmp_path / "out.xml"))


# ------------------------------------------------------------------------------------------
# Memory per input byte, a .bin that shrinks, a .bin that links elsewhere
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [1 << 30, 8 << 30], ids=["1GB", "8GB"])
def test_a_sparse_huge_xml_is_refused_before_it_is_read(size: int, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """8 GB used to be read whole (MemoryError), 1 GB to end in 'not well-formed XML:
    unknown error' after lxml ran out of room."""
    import time

    from ovgather.ir import MAX_XML_BYTES

    path = tmp_path / "huge.xml"
    with open(path, "wb") as f:
        f.write(b'<?xml version="1.0"?>\n<net name="m" version="11"><layers>')
        f.truncate(size)  # sparse: no disk space, no memory
    start = time.perf_counter()
    with pytest.raises(errors.XMLSyntaxError, match="at most") as info:
        read_ir(path)
    assert time.perf_counter() - start < 1.0
    assert str(MAX_XML_BYTES) in str(info.value) and str(path) in str(info.value)
    code = main(["check", str(path)])
    _, err = capsys.readouterr()
    assert_clean_error(code, err)


def test_millions_of_bare_layers_under_the_size_limit_are_refused_at_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """4 million ``<layer id name type="Foo"/>`` make 190 MB, under the size limit: check
    took minutes and 9 GB. The layer count is refused before anything is parsed."""
    import time

    from ovgather.ir import MAX_LAYERS

    path = tmp_path / "m4.xml"
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<net name="m" version="11"><layers>\n')
        f.writelines(f'<layer id="{i}" name="{i}" type="Foo"/>\n' for i in range(4_000_000))
        f.write("</layers><edges/></net>\n")
    start = time.perf_counter()
    code = main(["check", str(path)])
    assert time.perf_counter() - start < 5
    _, err = capsys.readouterr()
    assert_clean_error(code, err)
    assert f"at most {MAX_LAYERS:,} layers" in err and "4,000,000" in err
    assert MAX_LAYERS >= 100_000  # the biggest real IRs, and bench_check's largest chain


def _bare_layers(n: int, encoding: str = "utf-8") -> bytes:
    decl = "" if encoding == "utf-8" else ' encoding="UTF-16"'
    text = (f'<?xml version="1.0"{decl}?>\n<net name="m" version="11"><layers>\n'
            + "".join(f'<layer id="{i}" name="{i}" type="Foo"/>\n' for i in range(n))
            + "</layers><edges/></net>\n")
    return text.encode(encoding)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_utf16_file_over_the_layer_limit_is_refused_like_its_utf8_copy(
        encoding: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """310,000 layers: the UTF-16 copy (whose bytes hold no ASCII ``<layer``) was read and
    checked (690 MB, 26 s) while the UTF-8 one was refused. Both are refused now, the
    UTF-16 one once parsed, before the walk."""
    from ovgather.ir import MAX_LAYERS

    path = tmp_path / "m.xml"
    path.write_bytes(_bare_layers(310_000, encoding))
    code = main(["check", str(path)])
    _, err = capsys.readouterr()
    assert_clean_error(code, err)
    assert f"at most {MAX_LAYERS:,} layers" in err and "310,000" in err


def test_a_comment_full_of_layer_tags_is_no_layer(tmp_path: Path) -> None:
    """A 3-layer model after a comment that mentions ``<layer>`` 300,001 times was refused
    by the layer limit; OpenVINO reads it, and so does ovgather."""
    xml = ir().replace("<layers>", "<!-- " + "<layer> " * 300_001 + "--><layers>", 1)
    assert openvino_reads(xml) is not None
    assert parse_ir(xml, BIN).number_of_nodes() == 4


def test_the_layer_limit_is_raised_from_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.xml"
    path.write_bytes(_bare_layers(12, "utf-16"))
    assert main(["check", str(path), "--layer-limit", "11"]) == 2
    _, err = capsys.readouterr()
    assert_clean_error(2, err)
    assert "at most 11 layers" in err and "--layer-limit" in err
    assert main(["--layer-limit", "12", "check", str(path)]) in (0, 1)


def test_layer_limit_is_a_parameter() -> None:
    xml = ir()
    with pytest.raises(errors.XMLSyntaxError, match="at most 3 layers"):
        parse_ir(xml, BIN, max_layers=3)
    assert parse_ir(xml, BIN, max_layers=4).number_of_nodes() == 4


def test_xml_size_limit_is_a_parameter() -> None:
    xml = ir()
    with pytest.raises(errors.XMLSyntaxError, match="at most 100 bytes"):
        parse_ir(xml, BIN, max_xml_bytes=100)
    assert parse_ir(xml, BIN, max_xml_bytes=len(xml.encode())).number_of_nodes() == 4


SHRINK_SCRIPT = """
import sys
from ovgather import errors
from ovgather.ir import const_value, read_ir, write_ir
from ovgather.infer import check
G = read_ir(sys.argv[1])
const = next(n for n, t in G.nodes(data="type") if t == "Const")
first = const_value(G, const).copy()
with open(sys.argv[1][:-4] + ".bin", "r+b") as f:   # `cp small.bin model.bin`: in place
    f.truncate(0)
for what, call in (("const_value", lambda: const_value(G, const)),
                   ("write_ir", lambda: write_ir(G, sys.argv[2])),
                   ("check", lambda: check(G))):
    try:
        call()
        print(what, "no error")
    except errors.OvgatherError as err:
        print(what, "error:", err)
"""


def test_a_bin_that_shrinks_under_a_graph_is_an_error_not_sigbus(tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text(ir())
    path.with_suffix(".bin").write_bytes(BIN + bytes(1 << 16))
    out = tmp_path / "o.xml"
    run = subprocess.run([sys.executable, "-c", SHRINK_SCRIPT, str(path), str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr)  # -7 would be SIGBUS
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert lines["const_value"].startswith("error:") and "m.bin" in lines["const_value"]
    assert lines["write_ir"].startswith("error:")
    assert not out.exists()


def test_a_bin_linked_outside_the_model_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret" / "passwd"
    secret.parent.mkdir()
    secret.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n" * 4)
    model = tmp_path / "model"
    model.mkdir()
    (model / "m.xml").write_text(ir())
    (model / "m.bin").symlink_to(secret)
    with pytest.raises(errors.WeightsError, match="symbolic link") as info:
        read_ir(model / "m.xml")
    assert "root:" not in str(info.value)


def test_bins_linked_inside_the_model_folder_or_a_cache_are_fine(tmp_path: Path) -> None:
    # weights in a sub-folder of the model
    model = tmp_path / "model"
    (model / "weights").mkdir(parents=True)
    (model / "m.xml").write_text(ir())
    (model / "weights" / "m.bin").write_bytes(BIN)
    (model / "m.bin").symlink_to(Path("weights") / "m.bin")
    assert read_ir(model / "m.xml").number_of_nodes() == 4
    # a model cache: both files link into one blob folder
    blobs = tmp_path / "cache" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / "aa").write_text(ir())
    (blobs / "bb").write_bytes(BIN)
    snap = tmp_path / "cache" / "snapshots" / "1"
    snap.mkdir(parents=True)
    (snap / "m.xml").symlink_to(blobs / "aa")
    (snap / "m.bin").symlink_to(blobs / "bb")
    from ovgather.ir import const_value

    G = read_ir(snap / "m.xml")
    assert const_value(G, "1").tolist() == [6]
