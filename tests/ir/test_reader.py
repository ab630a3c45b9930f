"""read_ir builds the graph schema of ovgather.graph, checked against OpenVINO's reader.

For generated models and the committed samples, every layer, port, tensor name, declared
dim, edge and Const value that ovgather reads is compared with what
``openvino.Core().read_model`` makes of the same file.
"""

from __future__ import annotations

import re
from pathlib import Path

import gen_models
import networkx as nx
import numpy as np
import openvino as ov
import pytest
from ir_variants import assert_lines_point_at_tags

from ovgather.errors import UnsupportedOpError
from ovgather.graph import op_spec
from ovgather.ir import ELEMENT_TYPES, const_nbytes, const_value, parse_ir, read_ir, write_ir
from ovgather.runtime.core import cpu_config
from ovgather.shapes import PartialShape

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
CORE = ov.Core()

#: OpenVINO's type name for the IR ``type`` strings that differ.
OV_TYPE = {"Const": "Constant", "SoftMax": "Softmax", "ReLU": "Relu", "PReLU": "PRelu"}


def _ir_dims(shape: ov.PartialShape) -> tuple[int, ...]:
    """The dims OpenVINO writes in an IR port for ``shape`` (non-static → -1)."""
    if shape.rank.is_dynamic:
        return ()
    return tuple(d.get_length() if d.is_static else -1 for d in shape)


def assert_matches_openvino(path: Path, declared_dims: bool = True) -> nx.MultiDiGraph:
    """Every fact read_ir reads from ``path`` agrees with OpenVINO's model of it.

    ``declared_dims``: also compare the port dims with OpenVINO's re-inferred shapes
    (true for IRs that OpenVINO wrote itself, not for samples made wrong on purpose)."""
    G = read_ir(path)
    model = CORE.read_model(str(path))
    ops = {op.get_friendly_name(): op for op in model.get_ops()}
    assert sorted(G.nodes[n]["name"] for n in G.nodes) == sorted(ops)
    by_name = {G.nodes[n]["name"]: n for n in G.nodes}
    for name, op in ops.items():
        node = by_name[name]
        attrs = G.nodes[node]
        assert OV_TYPE.get(attrs["type"], attrs["type"]) == op.get_type_name()
        assert attrs["version"] == op.get_type_info().version_id
        if op.get_type_name() in ("GatherND", "Gather", "GatherElements"):
            assert op_spec(G, node).version == int(op.get_type_info().version_id[5:])
        outputs = attrs["outputs"]
        assert len(outputs) == (0 if op.get_type_name() == "Result" else op.get_output_size())
        for port, out in zip(outputs, op.outputs(), strict=False):
            assert set(port["names"]) == set(out.get_names())
            if declared_dims:
                assert port["dims"] == _ir_dims(out.get_partial_shape())
            assert port["precision"] == ELEMENT_TYPES[str(out.get_element_type().get_type_name())
                                                      ].precision
        for inp, (src, from_port, _) in zip(op.inputs(), _edges_by_position(G, node),
                                             strict=True):
            source = inp.get_source_output()
            assert G.nodes[src]["name"] == source.get_node().get_friendly_name()
            src_ports = G.nodes[src]["outputs"]
            assert [p["id"] for p in src_ports].index(from_port) == source.get_index()
        if op.get_type_name() == "Constant":
            value = const_value(G, node)
            assert value.dtype == op.get_data().dtype
            assert np.array_equal(value, op.get_data())
        if op.get_type_name() == "Parameter":
            shape = PartialShape.parse(attrs["data"]["shape"])
            assert str(shape) == str(op.get_partial_shape())
    assert G.number_of_edges() == sum(op.get_input_size() for op in model.get_ops())
    return G


def _edges_by_position(G: nx.MultiDiGraph, node: str) -> list[tuple[str, int, int]]:
    order = [p["id"] for p in G.nodes[node]["inputs"]]
    edges = [(u, k[0], k[1]) for u, _, k in G.in_edges(node, keys=True)]
    return sorted(edges, key=lambda e: order.index(e[2]))


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_generated_models_read_as_openvino_reads_them(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    ov.save_model(gen_models.random_model(seed), str(path), compress_to_fp16=False)
    assert_matches_openvino(path)


@pytest.mark.parametrize("sample", SAMPLES, ids=[str(s.relative_to(ROOT)) for s in SAMPLES])
def test_samples_read_as_openvino_reads_them(sample: Path) -> None:
    assert_matches_openvino(sample, declared_dims=not sample.name.startswith("wrong_"))


def test_line_numbers_point_at_the_layer_and_edge_tags(tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    ov.save_model(gen_models.random_model(7), str(path), compress_to_fp16=False)
    lines = path.read_text().splitlines()
    G = read_ir(path)
    for n, attrs in G.nodes(data=True):
        assert re.search(rf'<layer id="{n}" ', lines[attrs["line"] - 1])
    for u, v, k, d in G.edges(keys=True, data=True):
        text = lines[d["line"] - 1]
        assert f'from-layer="{u}" from-port="{k[0]}" to-layer="{v}" to-port="{k[1]}"' in text


def test_line_numbers_beyond_65535(tmp_path: Path) -> None:
    """libxml2 only estimates line numbers past 65535; every layer and edge of a big IR
    must still point at its own tag."""
    path = gen_models.big_ir(4000, tmp_path / "big.xml")
    lines = path.read_text().splitlines()
    assert len(lines) > 70000
    G = read_ir(path)
    assert max(line for _, line in G.nodes(data="line")) > 65535
    assert_lines_point_at_tags(G, lines)




def test_parse_ir_equals_read_ir(tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    ov.save_model(gen_models.random_model(11), str(path), compress_to_fp16=False)
    G1 = read_ir(path)
    G2 = parse_ir(path.read_bytes(), path.with_suffix(".bin").read_bytes(), xml_path=str(path))
    assert list(G1.nodes(data=True)) == list(G2.nodes(data=True))
    assert list(G1.edges(keys=True, data=True)) == list(G2.edges(keys=True, data=True))
    for n in G1.nodes:
        if G1.nodes[n]["type"] == "Const":
            assert np.array_equal(const_value(G1, n), const_value(G2, n))
    assert G1.graph["bin_path"] == str(path.with_suffix(".bin"))
    assert G2.graph["bin_path"] is None and G2.graph["xml_path"] == str(path)


def test_graph_is_a_plain_multidigraph_that_networkx_algorithms_accept(tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    ov.save_model(gen_models.random_model(5), str(path), compress_to_fp16=False)
    G = read_ir(path)
    assert type(G) is nx.MultiDiGraph
    order = list(nx.topological_sort(G))
    assert len(order) == G.number_of_nodes()
    copy = G.copy()
    assert list(copy.edges(keys=True, data=True)) == list(G.edges(keys=True, data=True))
    u, v, k = next(iter(G.edges(keys=True)))
    assert G.has_edge(u, v, key=k) and u in G.predecessors(v)


def test_const_values_of_every_numpy_type_match_openvino(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {
        "f64": rng.integers(-99, 99, (2, 3)) / 8,  # exact in f32 too: opset8.constant rounds
        "f32": rng.standard_normal((3,)).astype(np.float32),
        "f16": rng.standard_normal((2, 2)).astype(np.float16),
        "i64": rng.integers(-9, 9, (4,)),
        "i32": rng.integers(-9, 9, (1, 2)).astype(np.int32),
        "i16": rng.integers(-9, 9, (3,)).astype(np.int16),
        "i8": rng.integers(-9, 9, (3,)).astype(np.int8),
        "u64": rng.integers(0, 9, (2,)).astype(np.uint64),
        "u32": rng.integers(0, 9, (2,)).astype(np.uint32),
        "u16": rng.integers(0, 9, (2,)).astype(np.uint16),
        "u8": rng.integers(0, 9, (2, 1, 2)).astype(np.uint8),
        "boolean": np.array([True, False, True]),
        "scalar": np.array(7, np.int64),
    }
    param = ov.opset8.parameter([1], np.float32, name="p")
    results = [ov.opset8.result(param)]
    for name, array in arrays.items():
        c = ov.opset8.constant(array)
        c.set_friendly_name(name)
        results.append(ov.opset8.result(c))
    path = tmp_path / "consts.xml"
    ov.save_model(ov.Model(results, [param], "consts"), str(path), compress_to_fp16=False)
    G = assert_matches_openvino(path)
    for n in G.nodes:
        name = G.nodes[n]["name"]
        if name in arrays:
            value = const_value(G, n)
            assert value.shape == arrays[name].shape and np.array_equal(value, arrays[name])
            assert not value.flags.writeable


@pytest.mark.parametrize("element_type, values", [
    ("u4", [1, 2, 3, 15, 0]),
    ("i4", [-8, -1, 0, 7, 3]),
    ("u1", [1, 0, 1, 1, 0, 0, 0, 0, 1]),
])
def test_sub_byte_consts_come_back_as_their_packed_bytes(
        tmp_path: Path, element_type: str, values: list[int]) -> None:
    """u1/u4/i4 data is returned raw (``ceil(n*bits/8)`` bytes) and those bytes are the
    ones OpenVINO computes with: unpacking them by hand gives the values it outputs."""
    c = ov.op.Constant(getattr(ov.Type, element_type), ov.Shape([len(values)]), values)
    assert c.get_byte_size() == const_nbytes(element_type, (len(values),))
    c.set_friendly_name("packed")
    out = ov.opset8.result(ov.opset8.convert(c, "i32"))
    path = tmp_path / "packed.xml"
    ov.save_model(ov.Model([out], [], "packed"), str(path), compress_to_fp16=False)
    expected = CORE.compile_model(CORE.read_model(str(path)), "CPU", cpu_config())([])[0]
    G = read_ir(path)
    node = next(n for n in G.nodes if G.nodes[n]["type"] == "Const")
    raw = const_value(G, node)
    assert raw.dtype == np.uint8 and raw.size == const_nbytes(element_type, (len(values),))
    if element_type == "u1":
        unpacked = np.unpackbits(raw)[: len(values)]  # most significant bit first
    else:
        nibbles = np.stack([raw & 0x0F, raw >> 4], axis=1).reshape(-1)[: len(values)]
        unpacked = nibbles.astype(np.int32)
        if element_type == "i4":
            unpacked = np.where(unpacked > 7, unpacked - 16, unpacked)
    assert np.array_equal(unpacked, expected)
    write_ir(G, tmp_path / "again.xml")
    again = CORE.compile_model(CORE.read_model(str(tmp_path / "again.xml")), "CPU",
                               cpu_config())([])[0]
    assert np.array_equal(again, expected)


def test_unsupported_opset_reads_and_its_spec_lookup_refuses_it(tmp_path: Path) -> None:
    """A GatherND in an opset without it reads fine; the checker reports it later."""
    path = tmp_path / "model.xml"
    for seed in range(20):
        ov.save_model(gen_models.random_model(seed), str(path), compress_to_fp16=False)
        text = path.read_text()
        gnd = re.search(r'type="GatherND" version="opset\d+"', text)
        if gnd:
            break
    assert gnd, "the first 20 random models hold a GatherND"
    path.write_text(text.replace(gnd.group(0), 'type="GatherND" version="opset3"'))
    G = read_ir(path)
    nodes = [n for n in G.nodes if G.nodes[n]["version"] == "opset3"]
    assert nodes
    for n in nodes:
        with pytest.raises(UnsupportedOpError, match="opset3 has no GatherND"):
            op_spec(G, n)


def test_rt_info_is_kept_as_compact_xml_text(tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    model = gen_models.random_model(4)
    ov.save_model(model, str(path), compress_to_fp16=False)
    G = read_ir(path)
    rt = G.graph["rt_info"]
    assert rt.startswith("<rt_info>") and "\n" not in rt
    assert '<seed value="4"/>' in rt
    layouts = [p["rt_info"] for n in G.nodes for p in G.nodes[n]["outputs"] if p["rt_info"]]
    expected = [p for p in model.get_parameters() if not p.get_layout().empty]
    assert len(layouts) == len(expected)
    assert all('name="layout"' in text for text in layouts)


def test_const_data_is_not_loaded_until_asked(tmp_path: Path) -> None:
    path = tmp_path / "model.xml"
    ov.save_model(gen_models.random_model(6), str(path), compress_to_fp16=False)
    G = read_ir(path)
    assert G.graph["weights"] is None and G.graph.get("bin_reader") is None
    node = next(n for n in G.nodes if G.nodes[n]["type"] == "Const")
    const_value(G, node)
    # the .bin is read on demand, never mapped (a mapped file that shrinks is a SIGBUS)
    assert G.graph["weights"] is None and G.graph["bin_reader"].fd is not None
