"""``validate --all-layers`` on ONNX's backend test models that take a shape, axes, ``k``
or slice bounds as an integer input: the values ovgather chooses for those inputs must
be ones the ops reading them accept, so that layers are proved (not "nothing proved").

The models are the node tests of the installed ``onnx`` package (built from its Python
test cases, as ``tools/onnx_backend_suite.py`` does) that OpenVINO converts and runs on
the suite's own inputs (``test_data_set_0``): every one with an integer input read as a
shape, axes, a count or bounds, and a seeded sample of the others. The conversions are
cached with the backend suite's (``~/.cache/ovgather/onnx-backend/``), and so is the
choice of models (``size-values.json`` there: which models run on their own inputs).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest
from onnx_backend_suite import cache_dir, converted, model_index

from ovgather.ir import read_ir
from ovgather.validate import prove_all_layers
from ovgather.validate.runner import _readers

#: ONNX inputs (by op type, input position) that hold a shape, axes, a count or bounds.
SHAPE_INPUTS = {
    "Slice": {1, 2, 3, 4}, "Expand": {1}, "TopK": {1}, "Reshape": {1}, "Tile": {1},
    "Range": {0, 1, 2}, "OneHot": {1}, "Unsqueeze": {1}, "Squeeze": {1}, "Pad": {1, 3},
    "ConstantOfShape": {0}, "Resize": {3}, "Split": {1}, "CenterCropPad": {1},
    "Col2Im": {1, 2}, "DFT": {1, 2}, "STFT": {1, 3}, "AffineGrid": {1}, "CumSum": {1},
    "CumProd": {1}, "ReverseSequence": {1}, "MaxUnpool": {2}, "Trilu": {1},
    "BlackmanWindow": {0}, "HammingWindow": {0}, "HannWindow": {0},
    "MelWeightMatrix": {0, 1, 2},
}
#: The others, sampled with this seed.
SEED, OTHERS = 0, 25
#: Models whose integer input reaches no op that reads it as a size, only ops reading it
#: element by element (AffineGrid's size: sliced, converted to float, fed to Range):
#: no maker sees it, and the zeros fed make an empty grid the CPU plugin refuses.
OUT_OF_REACH = {"test_affine_grid_2d", "test_affine_grid_3d"}
_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def _reads_a_size(model) -> bool:
    from onnx import TensorProto

    codes = {getattr(TensorProto, name.upper()) for name in _INTS}
    graph = model.graph
    ints = {i.name for i in graph.input if i.type.HasField("tensor_type")
            and i.type.tensor_type.elem_type in codes}
    return any(x in ints and (k in SHAPE_INPUTS.get(n.op_type, ())
                              or (n.op_type.startswith("Reduce") and k == 1))
               for n in graph.node for k, x in enumerate(n.input))


def _runs_on_its_inputs(xml: Path, model, inputs) -> bool:
    import openvino as ov

    try:
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32"})
        given = {i.name: a for i, a in zip(model.graph.input, inputs, strict=False)}
        compiled({p.get_any_name(): given[p.get_any_name()] for p in compiled.inputs})
    except Exception:  # OpenVINO refuses the model or its own inputs: not ours to prove
        return False
    return True


def _choice(cache: Path) -> dict[str, list[str]]:
    """The node test models OpenVINO converts and runs on their own inputs: ``sizes``,
    every one that reads a size from an integer input; ``others``, ``OTHERS`` of the rest
    (tried in a seeded order). Built once (converting what it tries), then read."""
    path = cache / "size-values.json"
    if path.exists():
        return json.loads(path.read_text())
    import onnx.backend.test.case.node as node_cases

    index = model_index(cache)
    cases = sorted(node_cases.collect_testcases(None), key=lambda c: c.name)

    def runs(case) -> bool:
        key = f"node/{case.name}"
        xml, _ = converted(cache, key, index[key])
        return xml is not None and bool(case.data_sets) and \
            _runs_on_its_inputs(xml, case.model, case.data_sets[0][0])

    sizes = [c for c in cases if _reads_a_size(c.model)]
    rest = [c for c in cases if not _reads_a_size(c.model)]
    random.Random(SEED).shuffle(rest)
    choice = {"sizes": [c.name for c in sizes if runs(c)], "others": []}
    for case in rest:
        if len(choice["others"]) == OTHERS:
            break
        if runs(case):
            choice["others"].append(case.name)
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    part.write_text(json.dumps(choice, indent=0))
    part.replace(path)
    return choice


@pytest.fixture(scope="module")
def models() -> tuple[Path, list[str], list[str]]:
    cache = cache_dir()
    choice = _choice(cache)
    return cache, choice["sizes"], sorted(choice["others"])


def _unproved(cache: Path, name: str) -> str:
    """Why the proof of one model falls short, or ''."""
    G = read_ir(cache / "ir" / "node" / name / "model.xml")
    report = prove_all_layers(G, seed=0)
    if report.nothing_proved:
        last = report.layers[-1] if report.layers else None
        return f"nothing proved ({last.message[:200] if last else 'no layer'})"
    status = {lp.id: lp for lp in report.layers}
    readers = {v for p, a in G.nodes(data=True) if a["type"] == "Parameter"
               and np.dtype(_np(a)).kind in "iu" for v, _ in _readers(G, p)}
    left = [f"{status[v].name} ({status[v].type}): {status[v].status}: "
            f"{status[v].message[:160]}" for v in sorted(readers)
            if v in status and status[v].status not in ("ok", "looser")]
    return "; ".join(left)


def _np(attrs) -> str:
    from ovgather.element_types import element_type_name, numpy_dtype

    etype = (attrs.get("data") or {}).get("element_type", "f32")
    return numpy_dtype(element_type_name(etype)) or "float32"


def test_backend_models_prove_the_layers_reading_sizes(models):
    """Every model reading a size proves every layer reading an integer input (save
    ``OUT_OF_REACH``, which still proves nothing: a maker that reaches them makes this
    fail, and they leave the set), and the sample of the others proves layers."""
    cache, sizes, others = models
    assert len(sizes) >= 150 and len(others) == OTHERS
    assert {"test_slice", "test_top_k", "test_expand_dim_changed",
            "test_reshape_reduced_dims", "test_split_variable_parts_2d_opset18"} <= set(sizes)
    why = {n: _unproved(cache, n) for n in [*sizes, *others]}
    short = {n: w for n, w in why.items() if w and n not in OUT_OF_REACH}
    assert not short, short
    assert all(why[n].startswith("nothing proved") for n in OUT_OF_REACH & set(sizes))
