"""One reading of a file, OpenVINO's: every id, port id, edge end, ``<net version>``,
layer version and integer attribute read as ``read_model`` reads it, in any encoding and
with comments anywhere, by the compiled walk and the careful one alike.

The generators make seeded models whose integers are spelled in every way OpenVINO
accepts or refuses (leading zeros, signs, whitespace, hex, overflow, other digits),
wrapped in UTF-8, UTF-8 with a BOM or UTF-16, with comments (some holding ``<layer>``
tags) in every place, and ask both readers about the same bytes: the same layers read
and the same output shape, or both refuse. The one refusal of ovgather's own: two layer
ids that OpenVINO reads as one number (``1`` and ``01``), a duplicate id, which
OpenVINO resolves by keeping the last layer.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import openvino as ov
import pytest

from ovgather.errors import IRError, OvgatherError
from ovgather.infer import check
from ovgather.ir import compiled, parse, parse_ir

CORE = ov.Core()
_NO_WEIGHTS = ov.Tensor(ov.Type.u8, [0])


def _spell(rng: random.Random, value: int, valid: bool) -> str:
    """``value`` spelled as an id, port or edge end: mostly plainly, else in one of the
    ways OpenVINO reads (zeros, a sign, leading whitespace) or, unless ``valid``, one it
    refuses (a space after, a minus, hex, overflow, other digits, nothing)."""
    if rng.random() < 0.6:
        return str(value)
    read = [
        lambda: "0" * rng.randint(1, 3) + str(value),
        lambda: "+" + str(value),
        lambda: " " * rng.randint(1, 2) + str(value),
        lambda: "&#9;" + str(value),
        lambda: "&#10; +0" + str(value),
        lambda: "-0" if value == 0 else str(value),
        lambda: "0" * 19 + str(value),
    ]
    if valid or rng.random() < 0.7:
        return rng.choice(read)()
    return rng.choice([
        lambda: str(value) + " ",
        lambda: "-" + str(value),
        lambda: hex(value),
        lambda: str(value + (1 << 63)),
        lambda: str(value + (1 << 64)),
        lambda: "",
        lambda: "+-" + str(value),
        lambda: "\u0661" if value == 1 else "\uff10" + str(value),
    ])()


_COMMENTS = ["<!-- a note -->", '<!-- <layer id="0" name="x" type="Relu"> -->',
             "<!-- <layer> <edge from-layer=\"0\"/> -->", "<?note <layer> ?>"]


def _model(seed: int) -> tuple[bytes, set[int] | None]:
    """A model x, y -> Add -> Result (or with ids colliding) as bytes, and the layer ids
    as OpenVINO reads them (None where some id is not one it reads)."""
    rng = random.Random(seed)
    x, y, add, res = rng.sample(range(0, 12), 4)
    valid = rng.random() < 0.5  # only spellings OpenVINO reads (so some models are read)
    sp = lambda v: _spell(rng, v, valid)  # noqa: E731
    versions = ["11", "10", " 11", "011", "+11", "&#9;10"] + ([] if valid else ["11 ", "12"])
    version = rng.choice(versions)
    add_version = rng.choice(["opset1", "opset1", "opset8", "opset16"]
                             + ([] if valid else ["opset01", "opset008"]))
    xmlns = rng.choice(["", "", ' xmlns="http://example.com/ir"'])
    slots = [rng.choice(_COMMENTS) if rng.random() < 0.15 else "" for _ in range(8)]
    layer_ids = [sp(x), sp(y), sp(add), sp(res)]
    decoy = ""
    if rng.random() < 0.15:  # a layer before the Add with its id to OpenVINO (which keeps
        # the last of them: the Add), spelled alike or not
        layer_ids.append(sp(add))
        decoy = (f'<layer id="{layer_ids[-1]}" name="decoy" type="Parameter" '
                 'version="opset1"><data shape="3,2" element_type="f32"/><output><port '
                 'id="0" precision="FP32"><dim>3</dim><dim>2</dim></port></output></layer>')
    def port(pid: int, dims: str, extra: str = "") -> str:
        return f'<port id="{sp(pid)}"{extra}>{dims}</port>'

    d23, d13 = "<dim>2</dim><dim>3</dim>", "<dim>1</dim><dim>3</dim>"
    lines = [
        f'<?xml version="1.0"?>{slots[0]}',
        f'<net name="m" version="{version}"{xmlns}>{slots[1]}',
        f"<layers>{slots[2]}",
        f'<layer id="{layer_ids[0]}" name="x" type="Parameter" version="opset1">'
        '<data shape="2,3" element_type="f32"/><output>'
        + port(0, f"<dim>2</dim>{slots[3]}<dim>3</dim>", ' precision="FP32" names="x"')
        + "</output></layer>",
        f'<layer name="y" id="{layer_ids[1]}" type="Parameter" version="opset1">'
        '<data shape="1,3" element_type="f32"/><output>'
        + port(0, d13, ' precision="FP32" names="y"') + f"</output></layer>{slots[4]}{decoy}",
        f'<layer id="{layer_ids[2]}" name="add" type="Add" version="{add_version}">{slots[5]}'
        '<data auto_broadcast="numpy"/><input>' + port(0, d23) + port(1, d13)
        + "</input><output>" + port(2, d23, ' precision="FP32" names="sum"')
        + "</output></layer>",
        f'<layer type="Result" id="{layer_ids[3]}" name="out" version="opset1"><input>'
        + port(0, d23) + "</input></layer>",
        f"</layers>{slots[6]}",
        "<edges>",
        f'<edge from-layer="{sp(x)}" from-port="{sp(0)}" to-layer="{sp(add)}" '
        f'to-port="{sp(0)}"/>{slots[7]}',
        f'<edge from-layer="{sp(y)}" from-port="{sp(0)}" to-layer="{sp(add)}" '
        f'to-port="{sp(1)}"/>',
        f'<edge from-layer="{sp(add)}" from-port="{sp(2)}" to-layer="{sp(res)}" '
        f'to-port="{sp(0)}"/>',
        "</edges>",
        "</net>",
    ]
    text = "\n".join(lines) + "\n"
    read = [ov_index(_unescape(t)) for t in layer_ids]
    encoding = rng.choice(["utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-16-be"])
    if encoding.startswith("utf-16"):
        text = text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>')
        data = text.encode(encoding)
        if encoding == "utf-16-be":
            data = b"\xfe\xff" + data
    else:
        data = text.encode(encoding)
    if None in read:
        return data, None
    return data, set(read) if len(set(read)) == len(read) else set()


def ov_index(text: str) -> int | None:
    """What ``std::stoll`` over the whole text, then >= 0, gives (OpenVINO's reading of
    an id): written out here from the C library's rules, not taken from ovgather."""
    found = re.fullmatch(r"[ \t\n\r]*([+-]?)([0-9]+)", text)
    if found is None:
        return None
    value = int(found.group(2))
    if value >= 1 << 63 or (found.group(1) == "-" and value):
        return None
    return value


def _unescape(text: str) -> str:
    return text.replace("&#9;", "\t").replace("&#10;", "\n")


def _openvino(data: bytes) -> tuple[int, str] | None:
    """(layers, output shape) as read_model reads the bytes; None when it refuses."""
    try:
        model = CORE.read_model(data, _NO_WEIGHTS)
    except Exception:  # noqa: BLE001 - any refusal of OpenVINO's
        return None
    return len(model.get_ops()), str(model.output(0).get_partial_shape())


def _ovgather(data: bytes) -> tuple[int, str] | None:
    """The same of ovgather's reader and check; None when it refuses (an IRError)."""
    try:
        G = parse_ir(data)
    except IRError:
        return None
    report = check(G)
    result = next(n for n, t in G.nodes(data="type") if t == "Result")
    (producer,) = G.predecessors(result)
    shapes = {lr.id: lr.inferred_shapes for lr in report.layers}
    return len(G), str(shapes[producer][0])


@pytest.fixture(params=["compiled", "careful"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "careful":
        monkeypatch.setattr(compiled, "_fastwalk", None)
    elif compiled._fastwalk is None:
        pytest.skip("the compiled walk is not built")
    return request.param


@pytest.mark.parametrize("block", range(4))
def test_ids_versions_encodings_and_comments_read_as_openvino_reads_them(
        block: int, walk: str) -> None:
    read = refused = collided = 0
    for seed in range(block * 150, (block + 1) * 150):
        data, ids = _model(seed)
        theirs, ours = _openvino(data), _ovgather(data)
        if ids == set():  # two layers one id to OpenVINO: ovgather's own refusal
            with pytest.raises(IRError,
                               match=None if theirs is None else "layer ids must be unique"):
                parse_ir(data)
            collided += theirs is not None
            continue
        assert ours == theirs, (seed, data[:600])
        read += theirs is not None
        refused += theirs is None
    assert read and refused  # the generator makes both kinds (and collisions, by seed)
    if block == 0:
        assert collided


@pytest.mark.parametrize("seed", range(3))
def test_both_walks_build_the_same_graph_of_any_spelling(seed: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled walk hands every spelling it is not sure of to the careful one: the
    graphs are equal, dict for dict."""
    if compiled._fastwalk is None:
        pytest.skip("the compiled walk is not built")
    for s in range(seed * 100, seed * 100 + 100):
        data, _ = _model(s)
        try:
            fast = parse_ir(data)
        except IRError as err:
            fast = str(err)
        with monkeypatch.context() as m:
            m.setattr(compiled, "_fastwalk", None)
            try:
                careful = parse_ir(data)
            except IRError as err:
                careful = str(err)
        if isinstance(fast, str) or isinstance(careful, str):
            assert fast == careful, s
        else:
            assert dict(fast.nodes(data=True)) == dict(careful.nodes(data=True)), s
            assert sorted(fast.edges(keys=True, data=True)) == sorted(
                careful.edges(keys=True, data=True)), s


# -- integer attributes: never a crash --------------------------------------------------------
_PRECISION = {"f32": "FP32", "i64": "I64"}


def _gather(batch_dims: str) -> bytes:
    def param(i: int, name: str, et: str, dims: tuple[int, ...]) -> str:
        shape = ",".join(map(str, dims))
        return (f'<layer id="{i}" name="{name}" type="Parameter" version="opset1"><data '
                f'shape="{shape}" element_type="{et}"/><output><port id="0" '
                f'precision="{_PRECISION[et]}" names="{name}">{_dims(dims)}</port></output>'
                "</layer>")

    return "\n".join([
        '<?xml version="1.0"?>', '<net name="m" version="11">', "<layers>",
        param(0, "x", "f32", (2, 3, 4)), param(1, "i", "i64", (2, 5)),
        '<layer id="2" name="a" type="Const" version="opset1"><data element_type="i64" '
        'shape="" offset="0" size="8"/><output><port id="0" precision="I64"/></output></layer>',
        f'<layer id="3" name="g" type="Gather" version="opset8"><data batch_dims="{batch_dims}"'
        f'/><input><port id="0">{_dims((2, 3, 4))}</port><port id="1">{_dims((2, 5))}</port>'
        '<port id="2"/></input><output><port id="3" precision="FP32" names="g"/></output>'
        "</layer>",
        '<layer id="4" name="out" type="Result" version="opset1"><input><port id="0"/>'
        "</input></layer>",
        "</layers>", "<edges>",
        '<edge from-layer="0" from-port="0" to-layer="3" to-port="0"/>',
        '<edge from-layer="1" from-port="0" to-layer="3" to-port="1"/>',
        '<edge from-layer="2" from-port="0" to-layer="3" to-port="2"/>',
        '<edge from-layer="3" from-port="3" to-layer="4" to-port="0"/>',
        "</edges>", "</net>", ""]).encode()


def _dims(dims: tuple[int, ...]) -> str:
    return "".join(f"<dim>{d}</dim>" for d in dims)


_ATTR_TEXTS = ["1", "01", "001", " 1", "1 ", "-0", "0", "+1", "--1", "+-0", "-+1", "", " ",
               "99999999999999999999", "9223372036854775808", "-1", " -1", "\u0661", "++1",
               "-", "+"]


@pytest.mark.parametrize("text", _ATTR_TEXTS)
def test_integer_attribute_text_reads_as_openvino_or_makes_the_layer_invalid(
        text: str, tmp_path: Path) -> None:
    """An integer attribute OpenVINO reads gives its shape; one it refuses makes the
    layer invalid (exit 1, a report), never a crash (exit 2, internal error)."""
    data = _gather(text)
    weights = (2).to_bytes(8, "little")
    try:
        model = CORE.read_model(data, _tensor(weights))
        theirs = str(model.output(0).get_partial_shape())
    except Exception:  # noqa: BLE001 - OpenVINO refuses the text
        theirs = None
    xml = tmp_path / "m.xml"
    xml.write_bytes(data)
    xml.with_suffix(".bin").write_bytes(weights)
    G = parse_ir(data, weights)
    layer = {lr.id: lr for lr in check(G).layers}["3"]
    if theirs is None:
        assert layer.status == "invalid", (text, layer.status)
    else:
        assert layer.status == "ok" and str(layer.inferred_shapes[0]) == theirs, text
    if text in ("--1", "+-0", "+1", "01"):  # the command line too (a process each: a few)
        done = subprocess.run([sys.executable, "-m", "ovgather", "check", str(xml)],
                              capture_output=True, text=True)
        assert done.returncode == (1 if theirs is None else 0), done.stderr
        assert "internal error" not in done.stderr


def _tensor(data: bytes) -> ov.Tensor:
    import numpy as np

    return ov.Tensor(np.frombuffer(data, dtype=np.uint8).copy())


# -- the layer limit: layers, not bytes --------------------------------------------------------
def _chain(n_relus: int) -> str:
    layers = ['<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2" '
              'element_type="f32"/><output><port id="0" precision="FP32"><dim>2</dim></port>'
              "</output></layer>"]
    edges = []
    for i in range(1, n_relus + 1):
        layers.append(f'<layer id="{i}" name="r{i}" type="ReLU" version="opset1"><input>'
                      '<port id="0"><dim>2</dim></port></input><output><port id="1" '
                      'precision="FP32"><dim>2</dim></port></output></layer>')
        edges.append(f'<edge from-layer="{i - 1}" from-port="{0 if i == 1 else 1}" '
                     f'to-layer="{i}" to-port="0"/>')
    last = n_relus + 1
    layers.append(f'<layer id="{last}" name="out" type="Result" version="opset1"><input>'
                  '<port id="0"><dim>2</dim></port></input></layer>')
    edges.append(f'<edge from-layer="{n_relus}" from-port="{0 if n_relus == 0 else 1}" '
                 f'to-layer="{last}" to-port="0"/>')
    return ('<?xml version="1.0"?>\n<net name="m" version="11">\n<layers>\n'
            + "\n".join(layers) + "\n</layers>\n<edges>\n" + "\n".join(edges)
            + "\n</edges>\n</net>\n")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le"])
def test_the_layer_limit_counts_layers_in_any_encoding(encoding: str, walk: str) -> None:
    text = _chain(8)  # 10 layers
    if encoding.startswith("utf-16"):
        text = text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>')
    data = text.encode(encoding)
    if encoding == "utf-16-le":
        data = b"\xff\xfe" + data
    assert _openvino(data) is not None  # OpenVINO reads every one of them
    assert len(parse_ir(data, max_layers=10)) == 10
    with pytest.raises(IRError, match="at most 9 layers.* 10 <layer> elements"):
        parse_ir(data, max_layers=9)


def test_layer_tags_in_comments_pis_and_cdata_do_not_count(walk: str) -> None:
    text = _chain(1).replace(
        "<layers>", "<!-- " + "<layer> " * 50 + "--><?pi <layer>?><layers>").replace(
        "</net>", "<rt_info><x><![CDATA[<layer/><layer/>]]></x></rt_info></net>")
    assert len(parse_ir(text, max_layers=3)) == 3
    assert parse.count_layer_tags(text.encode()) == 3
    with pytest.raises(IRError, match="3 <layer> elements"):
        parse_ir(text, max_layers=2)


def test_layer_limit_from_the_command_line(tmp_path: Path) -> None:
    xml = tmp_path / "m.xml"
    xml.write_text(_chain(3))  # 5 layers
    for argv, code in ((["check", str(xml), "--layer-limit", "4"], 2),
                       (["--layer-limit=5", "check", str(xml)], 0),
                       (["infer", str(xml), "--layer-limit", "4"], 2),
                       (["check", str(xml), "--layer-limit", "x"], 2)):
        done = subprocess.run([sys.executable, "-m", "ovgather", *argv], capture_output=True,
                              text=True)
        assert done.returncode == code, (argv, done.stderr)
        if code == 2:
            assert done.stderr.count("error:") == 1 and "layer" in done.stderr


# -- exact lines past 65,535, whatever the comments and attribute order ---------------------
@pytest.mark.parametrize("comment", [False, True])
def test_exact_lines_with_name_first_attributes_and_a_layer_comment(comment: bool,
                                                                    walk: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from bench_lines import chain_xml

    text = chain_xml(6000, comment)  # ~84,000 lines
    G = parse_ir(text)
    lines = text.split("\n")
    for node in ("0", "10", "3000", "5999"):
        line = G.nodes[node]["line"]
        assert f'id="{node}">' in lines[line - 1], (node, line)
    for u, _, data in list(G.edges(data=True))[-3:]:
        assert f'from-layer="{u}"' in lines[data["line"] - 1]


def test_no_reader_error_is_an_internal_error() -> None:
    """Every refusal above is an OvgatherError: the CLI's one ``error:`` line."""
    for seed in range(40):
        data, _ = _model(seed)
        try:
            parse_ir(data)
        except OvgatherError:
            pass


# -- bodies: port maps and back edges name body layers as OpenVINO reads their ids ----------
_LOOP = Path(__file__).resolve().parents[2] / "ir_samples" / "loop_gather.xml"


@pytest.mark.parametrize("seed", range(12))
def test_port_maps_and_back_edges_read_ids_as_openvino(seed: int, walk: str) -> None:
    rng = random.Random(seed)
    text = _LOOP.read_text()

    def respell(found: re.Match) -> str:
        value = int(found.group(2))
        spelled = _spell(rng, value, valid=rng.random() < 0.6).replace("&#10;", "&#9;")
        return f'{found.group(1)}="{spelled}"'

    text = re.sub(r'(internal_layer_id|external_port_id)="(\d+)"', respell, text)
    text = re.sub(r'(<back_edges>\s*<edge from-layer|(?<=<back_edges>\s{5})<edge to-layer)'
                  r'="(\d+)"', respell, text)
    text = re.sub(r'(to-layer)="(1)" />\n\t\t\t</back_edges>', lambda m: (
        f'to-layer="{_spell(rng, 1, valid=True)}" />\n\t\t\t</back_edges>'), text)
    data = text.encode()
    weights = _LOOP.with_suffix(".bin").read_bytes()
    try:
        CORE.read_model(data, _tensor(weights))
        theirs = True
    except Exception:  # noqa: BLE001 - OpenVINO refuses
        theirs = False
    try:
        parse_ir(data, weights)
        ours = True
    except IRError:
        ours = False
    assert ours == theirs, (seed, re.findall(r"(?:internal_layer_id|external_port_id|"
                                             r"from-layer|to-layer)=\"[^\"]*\"", text)[:12])


def test_the_writer_refuses_two_ids_openvino_reads_as_one(tmp_path: Path) -> None:
    """A graph built in Python may key layers "1" and "01"; written, OpenVINO would read
    one layer of them: write_ir refuses, naming the id."""
    from ovgather.errors import OutputError
    from ovgather.ir import write_ir

    G = parse_ir(_chain(1))  # ids 0, 1, 2
    G = nx_relabel(G, {"2": "01"})
    with pytest.raises(OutputError, match="unique as numbers.* 1 is used twice"):
        write_ir(G, tmp_path / "m.xml")
    assert not (tmp_path / "m.xml").exists()


def nx_relabel(G, mapping: dict[str, str]):
    import networkx as nx

    return nx.relabel_nodes(G, mapping)


_LIST_TEXTS = ["0,0", "1,0", "1,--1", "+1,0", " 1,0", "1 ,0", "1,", ",1", "01,0", "1,-0",
               "--1,0", "1,+-0", "0,99999999999999999999"]


@pytest.mark.parametrize("text", _LIST_TEXTS)
def test_integer_list_attribute_text_reads_as_openvino_or_makes_the_layer_invalid(
        text: str, tmp_path: Path) -> None:
    """``begin_mask="1,--1"`` crashed the check (exit 2, internal error)."""
    import numpy as np
    from openvino import opset8

    x = opset8.parameter([4, 5], np.float32, name="x")
    ints = [opset8.constant(np.array(v, np.int64)) for v in ([1, 1], [3, 4], [1, 1])]
    cut = opset8.strided_slice(x, *ints, begin_mask=[0, 0], end_mask=[0, 0])
    ov.save_model(ov.Model([cut], [x], "m"), tmp_path / "s.xml", compress_to_fp16=False)
    data = re.sub(r'begin_mask="[^"]*"', f'begin_mask="{text}"',
                  (tmp_path / "s.xml").read_text()).encode()
    weights = (tmp_path / "s.bin").read_bytes()
    try:
        theirs = str(CORE.read_model(data, _tensor(weights)).output(0).get_partial_shape())
    except Exception:  # noqa: BLE001 - OpenVINO refuses the text
        theirs = None
    G = parse_ir(data, weights)
    node = next(n for n, t in G.nodes(data="type") if t == "StridedSlice")
    layer = {lr.id: lr for lr in check(G).layers}[node]
    if theirs is None:
        assert layer.status == "invalid", (text, layer.status)
    else:  # a mask changed from the saved one may contradict the declared dims: mismatch
        assert layer.status in ("ok", "mismatch"), (text, layer.status)
        assert str(layer.inferred_shapes[0]) == theirs, text


@pytest.mark.parametrize("note", ["<!-- a note with a <layer> tag -->", "<?note x?>",
                                  "<!-- <layers> -->"])
def test_a_note_before_the_layers_reads_the_same_in_pieces_or_whole(
        note: str, walk: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A comment or PI outside the layers leaves a big IR read in pieces (the CPU time of
    a check with one is that of one without); one that looks like it holds ``<layers>``
    makes the cut fail its checks, and the file is parsed whole. Same graph either way."""

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from bench_lines import chain_xml

    text = chain_xml(8000, False).replace("\t<layers>", f"\t{note}<layers>", 1)
    assert len(text) > parse.STREAM_PIECE
    results = []
    pieces = parse.parse_in_pieces
    monkeypatch.setattr(parse, "parse_in_pieces",
                        lambda *a, **k: results.append(pieces(*a, **k)) or results[-1])
    G = parse_ir(text)
    assert [r is not None for r in results] == ["<layers>" not in note]
    monkeypatch.setattr(parse, "STREAM_PIECE", 1 << 40)  # no pieces: the whole tree
    whole = parse_ir(text)
    assert dict(G.nodes(data=True)) == dict(whole.nodes(data=True))
    assert sorted(G.edges(keys=True, data=True)) == sorted(whole.edges(keys=True, data=True))
