"""The committed ``ir_samples/`` are what ``tools/make_samples.py`` makes, and OpenVINO takes them.

OpenVINO is the judge: every sample must be read by ``openvino.Core().read_model`` and
compile on CPU; in every correct sample the declared output dims are the ones
``read_model`` re-infers, and in the wrong-on-purpose samples the edited layer really
contradicts it. PyTorch samples are regenerated only when torch is importable; their
files must be committed either way.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import make_samples as ms
import numpy as np
import openvino as ov
import pytest
from graph_view import ov_ops

from ovgather.runtime.core import cpu_config

SAMPLES_DIR = ms.DEFAULT_OUT
ALL = list(ms.SAMPLES.values())
CORRECT = [s for s in ALL if s.wrong is None]
WRONG = [s for s in ALL if s.wrong is not None]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All samples the installed packages can make, written to a fresh folder."""
    out = tmp_path_factory.mktemp("samples")
    ms.generate(out)
    return out


@pytest.fixture(scope="module")
def core() -> ov.Core:
    return ov.Core()


def _sample_files(sample: ms.Sample) -> list[str]:
    """The two files of a sample, relative to the samples folder."""
    xml = Path(sample.path)
    return [str(xml), str(xml.with_suffix(".bin"))]


def _declared_outputs(xml_path: Path) -> dict[str, list[list[int]]]:
    """Layer name → the ``<dim>`` lists of its output ports, as the XML declares them."""
    root = ET.parse(xml_path).getroot()
    declared = {}
    for layer in root.iter("layer"):
        ports = layer.find("output")
        if ports is not None:
            declared[layer.get("name")] = [
                [int(dim.text) for dim in port.iter("dim")] for port in ports.iter("port")]
    return declared


def _as_port_dims(shape: ov.PartialShape) -> list[int]:
    """What the serializer writes for a static-rank shape: the length, or -1 if not static."""
    return [dim.get_length() if dim.is_static else -1 for dim in shape]


# --- reproduction ---------------------------------------------------------------------


def test_committed_folder_holds_exactly_the_registered_samples() -> None:
    expected = {f for s in ALL for f in _sample_files(s)} | {"README.md"}
    committed = {str(p.relative_to(SAMPLES_DIR)) for p in SAMPLES_DIR.rglob("*") if p.is_file()}
    assert committed == expected


def test_regenerating_reproduces_every_committed_file_byte_for_byte(regenerated: Path) -> None:
    rebuilt = [s for s in ALL if not s.needs_torch or ms.torch_available()]
    assert len(rebuilt) >= len([s for s in ALL if not s.needs_torch])
    differing = [
        name for s in rebuilt for name in _sample_files(s)
        if (regenerated / name).read_bytes() != (SAMPLES_DIR / name).read_bytes()
    ]
    assert differing == []


def test_torch_samples_are_committed_even_without_torch() -> None:
    torch_samples = [s for s in ALL if s.needs_torch]
    assert len(torch_samples) == 5
    for sample in torch_samples:
        assert (SAMPLES_DIR / sample.path).stat().st_size > 0


def test_readme_lists_every_sample_as_the_tool_writes_it() -> None:
    readme = (SAMPLES_DIR / "README.md").read_text(encoding="utf-8")
    assert readme == ms.readme_text(SAMPLES_DIR)
    for sample in ALL:
        assert f"`{sample.path}`" in readme


def test_only_writes_just_the_named_samples_and_the_same_bytes(tmp_path: Path) -> None:
    names = ["wrong_gather_nd8_bd3_v5_layout", "gathernd13_bd2_dynamic", "mixed_ops"]
    written = ms.generate(tmp_path, names)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(
        ms.SAMPLES[n].path for n in names)
    for name in names:
        for rel in _sample_files(ms.SAMPLES[name]):
            assert (tmp_path / rel).read_bytes() == (SAMPLES_DIR / rel).read_bytes(), rel


def test_unknown_sample_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no_such_sample"):
        ms.generate(tmp_path, ["no_such_sample"])


def test_samples_folder_stays_small() -> None:
    total = sum(p.stat().st_size for p in SAMPLES_DIR.rglob("*") if p.is_file())
    assert total < 2 * 1024 * 1024


# --- OpenVINO takes every sample -------------------------------------------------------


@pytest.mark.parametrize("sample", ALL, ids=[s.name for s in ALL])
def test_sample_reads_and_compiles_on_cpu(sample: ms.Sample, core: ov.Core) -> None:
    model = core.read_model(SAMPLES_DIR / sample.path)
    assert any(op.get_type_name().startswith("Gather") for _, op in ov_ops(model))
    if not sample.compiles:
        with pytest.raises(RuntimeError, match="doesn't support .* dynamic rank"):
            core.compile_model(model, "CPU", cpu_config())
        return
    compiled = core.compile_model(model, "CPU", cpu_config())
    assert len(compiled.outputs) == len(model.outputs)


@pytest.mark.parametrize("sample", CORRECT, ids=[s.name for s in CORRECT])
def test_correct_sample_declares_the_dims_openvino_infers(sample: ms.Sample,
                                                          core: ov.Core) -> None:
    xml = SAMPLES_DIR / sample.path
    declared = _declared_outputs(xml)
    model = core.read_model(xml)
    compared = 0
    for op in model.get_ordered_ops():
        if op.get_type_name() == "Result":
            continue
        for port, output in enumerate(op.outputs()):
            shape = output.get_partial_shape()
            expected = _as_port_dims(shape) if shape.rank.is_static else []
            assert declared[op.get_friendly_name()][port] == expected
            compared += 1
    assert compared >= 3


@pytest.mark.parametrize("sample", WRONG, ids=[s.name for s in WRONG])
def test_wrong_sample_contradicts_openvino_on_that_layer_only(sample: ms.Sample,
                                                               core: ov.Core) -> None:
    xml = SAMPLES_DIR / sample.path
    declared = _declared_outputs(xml)
    model = core.read_model(xml)
    ops = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    inferred = ops[sample.wrong.layer].get_output_partial_shape(0)
    wrong_dims = declared[sample.wrong.layer][0]
    assert wrong_dims == list(sample.wrong.dims)
    assert not inferred.compatible(ov.PartialShape(wrong_dims))
    source = _declared_outputs(SAMPLES_DIR / ms.SAMPLES[sample.wrong.source].path)
    assert {k: v for k, v in declared.items() if k != sample.wrong.layer} == {
        k: v for k, v in source.items() if k != sample.wrong.layer}


def test_hitnet_wrong_sample_declares_the_gather_nd5_layout(core: ov.Core) -> None:
    v5 = core.read_model(SAMPLES_DIR / "gather_nd5_bd3.xml")
    v5_shape = next(op for op in v5.get_ordered_ops() if op.get_type_name() == "GatherND")
    wrong = _declared_outputs(SAMPLES_DIR / "wrong_gather_nd8_bd3_v5_layout.xml")
    assert wrong["gather_nd8_bd3"][0] == _as_port_dims(v5_shape.get_output_partial_shape(0))


# --- what the samples show ---------------------------------------------------------------


def _types(xml: Path) -> dict[str, tuple[str, str]]:
    """Layer id → (type, version)."""
    root = ET.parse(xml).getroot()
    return {layer.get("id"): (layer.get("type"), layer.get("version"))
            for layer in root.iter("layer")}


def _producers(xml: Path) -> dict[str, set[str]]:
    """Layer id → ids of the layers that feed it."""
    root = ET.parse(xml).getroot()
    feeds: dict[str, set[str]] = {}
    for edge in root.iter("edge"):
        feeds.setdefault(edge.get("to-layer"), set()).add(edge.get("from-layer"))
    return feeds


def _upstream_types(xml: Path, layer_type: str) -> set[str]:
    """Types of every layer upstream of the layers of ``layer_type``."""
    types, feeds = _types(xml), _producers(xml)
    todo = [i for i, (t, _) in types.items() if t == layer_type]
    seen: set[str] = set()
    while todo:
        for parent in feeds.get(todo.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return {types[i][0] for i in seen}


@pytest.mark.parametrize("name", ["gathernd12_bd1_dynamic", "gathernd13_bd2_dynamic",
                                  "gathernd13_bd1_broadcast"])
def test_onnx_frontend_broadcasts_batch_dims_before_gather_nd8(name: str) -> None:
    xml = SAMPLES_DIR / ms.SAMPLES[name].path
    assert ("GatherND", "opset8") in _types(xml).values()
    assert {"ShapeOf", "Slice", "Maximum", "Concat", "Broadcast"} <= _upstream_types(
        xml, "GatherND")


@pytest.mark.parametrize("name, layer", [
    ("bool_mask", ("NonZero", "opset3")), ("bool_mask", ("GatherND", "opset8")),
    ("torch_gather", ("GatherElements", "opset6")),
    ("advanced_indexing", ("Gather", "opset8")), ("embedding", ("Gather", "opset8")),
    ("shape_subgraph", ("GatherND", "opset8")), ("shape_subgraph", ("ShapeOf", "opset3")),
    ("com_microsoft_gathernd", ("GatherND", "opset8")),
    ("gathernd11_static", ("GatherND", "opset8")),
])
def test_frontend_sample_holds_the_layer_its_frontend_emits(name: str, layer: tuple) -> None:
    assert layer in _types(SAMPLES_DIR / ms.SAMPLES[name].path).values()


def test_bool_mask_gather_nd_reads_nonzero_indices() -> None:
    assert "NonZero" in _upstream_types(SAMPLES_DIR / "pytorch/bool_mask.xml", "GatherND")


def test_onnx_examples_give_the_outputs_the_onnx_page_documents(core: ov.Core) -> None:
    compiled = core.compile_model(core.read_model(SAMPLES_DIR / "onnx_examples.xml"), "CPU",
                                  cpu_config())
    inputs = {f"ex{n}_data": np.array(example[0], dtype=np.int32)
              for n, example in enumerate(ms.ONNX_EXAMPLES, start=1)}
    results = compiled(inputs)
    for n, example in enumerate(ms.ONNX_EXAMPLES, start=1):
        got = results[compiled.output(f"ex{n}_gather_nd")]
        assert np.array_equal(got, np.array(example[3])), n


def test_only_the_dynamic_rank_sample_is_refused_by_the_cpu_plugin() -> None:
    assert [s.name for s in ALL if not s.compiles] == ["dynamic_rank"]


def test_dynamic_sample_keeps_interval_dims_in_parameter_shapes(core: ov.Core) -> None:
    model = core.read_model(SAMPLES_DIR / "dynamic_gathers.xml")
    texts = {p.get_friendly_name(): str(p.get_partial_shape()) for p in model.get_parameters()}
    assert texts["data"] == "[?,2..8,10,1..,4]"
    assert "..16" in texts["nd_indices"] and "..16" in texts["ge_indices"]


# --- the XML edit that makes the wrong samples ------------------------------------------------


def _all_port_dims(xml_text: str) -> dict[tuple[str, str, str], list[str]]:
    """(layer name, section, port id) → dims of every port in an IR text."""
    root = ET.fromstring(xml_text)
    return {(layer.get("name"), section.tag, port.get("id")): [d.text for d in port.iter("dim")]
            for layer in root.iter("layer") for section in layer
            if section.tag in ("input", "output") for port in section.iter("port")}


def test_declare_wrong_dims_changes_only_that_port_and_its_consumers() -> None:
    text = (SAMPLES_DIR / "gather_nd8_bd2.xml").read_text(encoding="utf-8")
    edited = ms.declare_wrong_dims(text, ms.WrongDims("s", "gather_nd8_bd2", (7, 7)))
    before, after = _all_port_dims(text), _all_port_dims(edited)
    changed = {key for key in before if before[key] != after[key]}
    assert changed == {("gather_nd8_bd2", "output", "2"), ("output", "input", "0")}
    assert all(after[key] == ["7", "7"] for key in changed)
    assert before[("gather_nd8_bd2", "output", "2")] == ["30", "2", "3", "35"]


def test_declare_wrong_dims_names_a_missing_layer() -> None:
    text = (SAMPLES_DIR / "gather_nd8_bd2.xml").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="no_such_layer"):
        ms.declare_wrong_dims(text, ms.WrongDims("s", "no_such_layer", (1,)))


@pytest.mark.parametrize("dims", [(4, 7), (4, 2, 9), ()], ids=["two", "three", "none"])
def test_declare_wrong_dims_opens_a_port_written_without_dims(dims: tuple, tmp_path: Path,
                                                              core: ov.Core) -> None:
    text = (SAMPLES_DIR / "dynamic_rank.xml").read_text(encoding="utf-8")
    edited = ms.declare_wrong_dims(text, ms.WrongDims("s", "gather_nd8_any_rank", dims))
    (tmp_path / "m.xml").write_text(edited, encoding="utf-8")
    (tmp_path / "m.bin").write_bytes((SAMPLES_DIR / "dynamic_rank.bin").read_bytes())
    assert _declared_outputs(tmp_path / "m.xml")["gather_nd8_any_rank"] == [list(dims)]
    model = core.read_model(tmp_path / "m.xml")
    op = next(o for o in model.get_ordered_ops() if o.get_friendly_name() == "gather_nd8_any_rank")
    assert str(op.get_output_partial_shape(0)) == "[...]"


def test_command_line_writes_the_chosen_samples(tmp_path: Path) -> None:
    tool = Path(ms.__file__)
    done = subprocess.run(
        [sys.executable, str(tool), "--out", str(tmp_path), "--only", "onnx_examples",
         "gathernd11_static"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    for rel in ("onnx_examples.xml", "onnx_examples.bin", "onnx/gathernd11_static.xml"):
        assert (tmp_path / rel).read_bytes() == (SAMPLES_DIR / rel).read_bytes()
    assert not (tmp_path / "README.md").exists()
