"""The ONNX Runtime side of ``compare --all-layers --ref onnxruntime``: every node output of
an ``.onnx`` model, run by ONNX Runtime, against OpenVINO's read of the same file.

The models are ``tests/data/onnx_ref/`` (``tools/make_onnx_ref.py``): exports of corpus
architectures and small hand-built graphs. OpenVINO's ONNX frontend keeps each node output's
name as a tensor name, so the two sides pair by name; OpenVINO runs at f32 with every paired
output exposed, on the same seeded inputs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from model_edits import onnx_with_weight_changed

from ovgather.errors import OvgatherError, RuntimeBridgeError
from ovgather.runtime import onnxruntime_runner
from ovgather.runtime.onnxruntime_runner import OnnxRuntimeLayers

DATA = Path(__file__).resolve().parents[1] / "data" / "onnx_ref"
MODELS = sorted(p.name for p in DATA.glob("*.onnx"))
#: f32 tolerance: 128 ulps of 1.0, scaled by the tensor's largest value (two runtimes'
#: kernels sum in different orders; the worst seen is 8 ulps, in ResNet's last Conv)
ULPS = 128 * float(np.finfo(np.float32).eps)
#: the values a float tensor uses as -inf in attention masks (finfo.min) and beyond
HUGE = 1e30
#: every paired output of these models must pair; the bar the issue sets is 90%
MIN_PAIRED = 0.9


@pytest.fixture(scope="module")
def core() -> ov.Core:
    return ov.Core()


def name(output) -> str:
    return next(iter(output.tensor_names))


def seeded_feeds(path: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs from the model's own record of them (``ovgather.inputs``): floats from a
    normal distribution, integers below ``high``, a mask of 0/1 with its first column 1."""
    props = {p.key: p.value for p in onnx.load(str(path), load_external_data=False)
             .metadata_props}
    rng = np.random.default_rng(seed)
    feeds = {}
    for key, spec in sorted(json.loads(props["ovgather.inputs"]).items()):
        if spec["dtype"] == "float32":
            feeds[key] = rng.standard_normal(spec["shape"]).astype(np.float32)
        else:
            high = 2 if key.endswith("attention_mask") else max(spec["high"], 1)
            feeds[key] = rng.integers(0, high, spec["shape"]).astype(spec["dtype"])
        if key.endswith("attention_mask"):
            feeds[key][..., 0] = 1
    return feeds


def openvino_ports(core: ov.Core, path: Path) -> tuple[ov.Model, dict[str, ov.Output]]:
    """OpenVINO's model of the file and, by tensor name, the output of each op
    (Parameters, Results and Constants left out)."""
    model = core.read_model(str(path))
    ports: dict[str, ov.Output] = {}
    for op in model.get_ordered_ops():
        if op.get_type_name() in ("Parameter", "Result", "Constant"):
            continue
        for out in op.outputs():
            for tensor in out.get_names():
                ports.setdefault(tensor, out)
    return model, ports


def openvino_values(core: ov.Core, path: Path, names: list[str],
                    feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    model, ports = openvino_ports(core, path)
    model.add_outputs([ports[n] for n in names])
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    found = {}
    for port, value in compiled(feeds).items():
        for tensor in port.get_names():
            found[tensor] = np.asarray(value)
    return found


def mismatch(ours: np.ndarray, theirs: np.ndarray) -> str | None:
    """Why two values of one tensor disagree beyond f32 rounding, or None.

    Integers: OpenVINO's CPU plugin computes i64 tensors in i32, so elements ONNX Runtime
    holds outside the i32 range (a Cast of -inf to int64, which ONNX leaves undefined, in
    T5's relative position buckets) are not compared. Floats: -inf, NaN and the finfo.min
    of attention masks must be the same elements; the rest within :data:`ULPS` of the
    tensor's largest finite value."""
    if ours.shape != theirs.shape:
        return f"shape {ours.shape} against {theirs.shape}"
    if ours.dtype.kind in "biu":
        a, b = ours.astype(np.int64), theirs.astype(np.int64)
        held = (a >= np.iinfo(np.int32).min) & (a <= np.iinfo(np.int32).max)
        wrong = int(np.count_nonzero((a != b) & held))
        return f"{wrong} integers differ" if wrong else None
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    special = ~np.isfinite(a) | (np.abs(a) >= HUGE)
    same = np.array_equal(a[special], b[special], equal_nan=True)
    if not same:
        return "non-finite or mask values at different elements"
    a, b = a[~special], b[~special]
    if not a.size:
        return None
    worst = float(np.abs(a - b).max())
    scale = max(1.0, float(np.abs(a).max()))
    return None if worst <= ULPS * scale else f"max abs error {worst:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("model", MODELS)
def test_node_outputs_pair_with_openvino_by_name_and_agree(model: str, core: ov.Core) -> None:
    path = DATA / model
    layers = OnnxRuntimeLayers(path)
    compared = [o for o in layers.outputs() if not o.constant]
    _, ports = openvino_ports(core, path)
    paired = [o for o in compared if name(o) in ports]
    share = len(paired) / len(compared)
    assert share >= MIN_PAIRED, (
        f"{model}: {len(paired)}/{len(compared)} node outputs pair by name; no partner: "
        f"{[(o.layer, o.type) for o in compared if o not in paired][:10]}")
    feeds = seeded_feeds(path)
    ours = layers.run(feeds, paired)
    theirs = openvino_values(core, path, [name(o) for o in paired], feeds)
    wrong = {name(o): why for o in paired
             if (why := mismatch(ours[o], theirs[name(o)])) is not None}
    assert not wrong, f"{model}: {len(wrong)} outputs disagree: {list(wrong.items())[:5]}"


def openvino_constant_names(model: ov.Model) -> set[str]:
    """The tensor names of OpenVINO's model that only Constants feed, transitively (what
    the CPU plugin folds at compile time)."""
    folded: set[str] = set()
    names = set()
    for op in model.get_ordered_ops():
        feeders = [i.get_source_output().get_node().get_friendly_name() for i in op.inputs()]
        if op.get_type_name() == "Constant" or (feeders and set(feeders) <= folded):
            folded.add(op.get_friendly_name())
            names |= {n for out in op.outputs() for n in out.get_names()}
    return names


@pytest.mark.parametrize("model", MODELS)
def test_constant_outputs_are_constants_in_openvino(model: str, core: ov.Core) -> None:
    """What the runner calls constant, OpenVINO's frontend made a Constant or an op that
    only Constants feed (which the CPU plugin folds); the other node outputs are not."""
    path = DATA / model
    outputs = OnnxRuntimeLayers(path).outputs()
    ov_model, ports = openvino_ports(core, path)
    folded = openvino_constant_names(ov_model)
    kept = [o for o in outputs if name(o) in ports]
    assert [name(o) for o in kept if o.constant and name(o) not in folded] == []
    assert [name(o) for o in kept if not o.constant and name(o) in folded] == []


def test_constants_are_constant_nodes_and_what_only_initializers_feed() -> None:
    def constant(model: str) -> set[str]:
        return {name(o) for o in OnnxRuntimeLayers(DATA / model).outputs() if o.constant}

    assert constant("conv_net.onnx") == {"two", "b1"}  # Constant, then Mul(initializer, it)
    assert constant("shapes_and_branches.onnx") == {"zero_f"}
    # initializers listed as graph inputs are still initializers
    assert constant("initializer_inputs.onnx") == {"w2t", "w2tt"}


def test_outputs_come_in_topological_order_even_when_the_file_is_not() -> None:
    path = DATA / "shapes_and_branches.onnx"
    graph = onnx.load(str(path)).graph
    order = [n.name for n in graph.node]
    assert order.index("zero_f") > order.index("positive"), "the file is unsorted on purpose"
    layers = OnnxRuntimeLayers(path).outputs()
    seen = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    inputs = {n.name: [i for i in n.input if i] for n in graph.node}
    # the If reads h and gelu inside its branches
    inputs["branch"] += ["h", "gelu"]
    for out in layers:
        assert set(inputs[out.layer]) <= seen, f"{out.layer} before what it reads"
        seen |= out.tensor_names
    assert len(layers) == sum(len(n.output) for n in graph.node)


def test_records_name_type_and_port_of_each_output() -> None:
    conv = {name(o): o for o in OnnxRuntimeLayers(DATA / "conv_net.onnx").outputs()}
    # the nodes have no names: the layer is the first output's name
    assert (conv["bn"].layer, conv["bn"].type, conv["bn"].port) == (
        "bn", "BatchNormalization", 0)
    assert conv["c1"].line is None
    shapes = {name(o): o for o in OnnxRuntimeLayers(DATA / "shapes_and_branches.onnx")
              .outputs()}
    assert shapes["gelu"].type == "com.microsoft.Gelu"
    assert [(shapes[n].layer, shapes[n].port) for n in ("top_v", "top_i")] == [
        ("topk", 0), ("topk", 1)]


def test_an_output_shape_inference_cannot_type_is_still_run(core: ov.Core) -> None:
    path = DATA / "shapes_and_branches.onnx"
    inferred = onnx.shape_inference.infer_shapes(onnx.load(str(path)))
    typed = {v.name for v in inferred.graph.value_info if v.type.tensor_type.elem_type}
    assert "gelu" not in typed  # no schema for com.microsoft Gelu
    added = {v.name: v.type.tensor_type.elem_type
             for v in onnxruntime_runner.exposed(onnx.load(str(path)), ["h", "gelu"]).graph.output}
    assert added["h"] == onnx.TensorProto.FLOAT and added["gelu"] == 0  # exposed untyped
    layers = OnnxRuntimeLayers(path)
    gelu = [o for o in layers.outputs() if name(o) == "gelu"]
    feeds = seeded_feeds(path, seed=3)
    ours = layers.run(feeds, gelu)[gelu[0]]
    theirs = openvino_values(core, path, ["gelu"], feeds)["gelu"]
    assert ours.dtype == np.float32 and mismatch(ours, theirs) is None


def test_a_value_does_not_depend_on_what_else_is_exposed() -> None:
    """Graph optimizations off: a Conv then BatchNormalization exposed alone is not fused
    into one kernel that rounds differently."""
    path = DATA / "conv_net.onnx"
    layers = OnnxRuntimeLayers(path, max_sessions=1)
    wanted = [o for o in layers.outputs() if not o.constant]
    feeds = seeded_feeds(path, seed=1)
    together = layers.run(feeds, wanted)
    for out in wanted:
        assert np.array_equal(layers.run(feeds, [out])[out], together[out]), out.layer


def test_one_session_per_set_of_outputs() -> None:
    path = DATA / "initializer_inputs.onnx"
    layers = OnnxRuntimeLayers(path, max_sessions=2)
    outs = list(layers.outputs())
    first = layers._session(("t1", "y"))
    assert layers._session(("y", "t1")) is first
    layers._session(("y",))
    layers._session(("t1",))
    assert layers._session(("t1", "y")) is not first  # the oldest of three was dropped
    feeds = seeded_feeds(path)
    assert np.array_equal(layers.run(feeds, outs[-1:])[outs[-1]],
                          layers.run(feeds, outs)[outs[-1]])
    assert layers.run(feeds, []) == {}


def test_external_data_is_read_beside_the_model(tmp_path: Path, core: ov.Core,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    for file in ("initializer_inputs.onnx", "initializer_inputs.weights"):
        shutil.copy(DATA / file, folder / file)
    monkeypatch.chdir(tmp_path)
    layers = OnnxRuntimeLayers(Path("elsewhere") / "initializer_inputs.onnx")
    feeds = seeded_feeds(DATA / "initializer_inputs.onnx", seed=2)
    y = [o for o in layers.outputs() if name(o) == "y"]
    theirs = openvino_values(core, DATA / "initializer_inputs.onnx", ["y"], feeds)["y"]
    assert mismatch(layers.run(feeds, y)[y[0]], theirs) is None


def test_a_changed_weight_differs_from_its_first_reader_on(tmp_path: Path,
                                                           core: ov.Core) -> None:
    """ONNX Runtime on a copy with one weight of the second Conv changed, OpenVINO on the
    original: everything before that Conv agrees, the Conv and all after it do not."""
    changed = onnx_with_weight_changed(DATA / "conv_net.onnx", "w2", (3, 2, 1, 1), 0.5,
                                       tmp_path / "changed.onnx")
    layers = OnnxRuntimeLayers(changed)
    wanted = [o for o in layers.outputs() if not o.constant]
    feeds = seeded_feeds(DATA / "conv_net.onnx", seed=4)
    ours = layers.run(feeds, wanted)
    theirs = openvino_values(core, DATA / "conv_net.onnx", [name(o) for o in wanted], feeds)
    agree = [mismatch(ours[o], theirs[name(o)]) is None for o in wanted]
    first = agree.index(False)
    assert wanted[first].tensor_names == {"c2"}
    assert all(agree[:first]) and not any(agree[first:])


def test_without_onnxruntime_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    onnxruntime_runner.onnxruntime.cache_clear()
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime fails
    try:
        with pytest.raises(RuntimeBridgeError) as caught:
            OnnxRuntimeLayers(DATA / "conv_net.onnx")
    finally:
        onnxruntime_runner.onnxruntime.cache_clear()
    text = str(caught.value)
    assert "pip install 'ovgather[onnxruntime]'" in text and "\n" not in text


def test_a_file_onnx_cannot_read_is_an_ovgather_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x0a\xff\xff not a model")
    with pytest.raises(OvgatherError) as caught:
        OnnxRuntimeLayers(bad)
    assert str(bad) in str(caught.value) and "\n" not in str(caught.value)


def test_the_hand_built_models_are_what_the_tool_writes(tmp_path: Path) -> None:
    """``tools/make_onnx_ref.py`` rebuilds the hand-built graphs byte for byte (the exports
    need torch and are not rebuilt here)."""
    import make_onnx_ref

    for name, build in make_onnx_ref.HAND_BUILT.items():
        written = build(tmp_path)
        assert written.read_bytes() == (DATA / written.name).read_bytes(), name
    assert (tmp_path / "initializer_inputs.weights").read_bytes() == (
        DATA / "initializer_inputs.weights").read_bytes()
