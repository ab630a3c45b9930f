"""A state sized like an input: ``shapes``/``symbols`` keyed by a ReadValue's
``variable_id`` give the shapes OpenVINO runs with once the cache holds that length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import pytest
from state_models import state_named_like_its_input

import ovgather as og
from ovgather.errors import UsageError
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
LLAMA_KV = ROOT / "ir_corpus/llama_kv/pytorch_stateful.xml"


def _states(G) -> list[str]:
    return sorted({a["data"]["variable_id"] for _, a in G.nodes(data=True)
                   if a["type"] == "ReadValue"})


def _inputs(b: int, s: int, p: int) -> dict[str, list[int]]:
    """New tokens ``s`` after a cache of ``p``: the mask spans both."""
    return {"input_ids": [b, s], "attention_mask": [b, p + s], "position_ids": [b, s],
            "beam_idx": [b]}


def _openvino_shapes(path: Path, inputs: dict, state: list[int]) -> dict[str, list[str]]:
    """Every layer's output shapes as OpenVINO infers them when each ReadValue gives a
    tensor of ``state`` (each replaced by a Parameter of that shape)."""
    model = ov.Core().read_model(str(path))
    params = list(model.get_parameters())
    for op in model.get_ordered_ops():
        if op.get_type_name() == "ReadValue":
            cache = ov1.parameter(ov.PartialShape(state), op.get_output_element_type(0))
            op.output(0).replace(cache.output(0))
            params.append(cache)
    model = ov.Model(model.get_results(), model.get_sinks(), params, "cached")
    for param in params:
        if param.get_friendly_name() in inputs:
            param.set_partial_shape(ov.PartialShape(inputs[param.get_friendly_name()]))
    model.validate_nodes_and_infer_types()
    return {op.get_friendly_name(): [str(o.get_partial_shape()) for o in op.outputs()]
            for op in model.get_ordered_ops() if op.get_type_name() != "ReadValue"}


def _text(dims) -> str:
    return f"[{','.join(map(str, dims))}]"


@pytest.mark.parametrize("b,s,p", [(1, 1, 9), (2, 5, 7), (3, 4, 0)])
def test_every_layer_has_the_shape_openvino_gives_at_that_cache_length(b, s, p):
    G = og.read_ir(LLAMA_KV)
    shapes = {k: _text(v) for k, v in _inputs(b, s, p).items()}
    shapes.update({state: _text([b, 2, p, 8]) for state in _states(G)})
    report = og.check(G, shapes)
    assert report.summary["ok"] == report.summary["layers"], report.summary
    ours = {lr.name: lr.inferred for lr in report.layers}
    theirs = _openvino_shapes(LLAMA_KV, _inputs(b, s, p), [b, 2, p, 8])
    compared = [name for name in theirs if ours.get(name)]
    assert len(compared) > 500
    assert [(n, ours[n], theirs[n]) for n in compared if ours[n] != theirs[n]] == []
    read = [lr.inferred for lr in report.layers if lr.type == "ReadValue"]
    assert read == [[_text([b, 2, p, 8])]] * 6


def test_the_states_a_run_leaves_are_the_assigned_shapes():
    """OpenVINO runs P tokens, then S more: the states it holds, and the logits, are the
    shapes check gives with the cache sized P."""
    b, s, p = 2, 3, 6
    G = og.read_ir(LLAMA_KV)
    shapes = {k: _text(v) for k, v in _inputs(b, s, p).items()}
    shapes.update({state: _text([b, 2, p, 8]) for state in _states(G)})
    report = og.check(G, shapes)
    assigned = {G.nodes[lr.id]["data"]["variable_id"]: lr.inferred[0]
                for lr in report.layers if lr.type == "Assign"}
    request = ov.Core().compile_model(str(LLAMA_KV), "CPU", cpu_config()).create_infer_request()

    def feed(n, past):
        return {"input_ids": np.ones([b, n], np.int64),
                "attention_mask": np.ones([b, past + n], np.int64),
                "position_ids": np.tile(np.arange(past, past + n), (b, 1)),
                "beam_idx": np.arange(b, dtype=np.int32)}

    request.infer(feed(p, 0))
    assert {st.name: _text(st.state.shape) for st in request.query_state()} == \
        {state: _text([b, 2, p, 8]) for state in _states(G)}
    out = request.infer(feed(s, p))
    assert {st.name: _text(st.state.shape) for st in request.query_state()} == assigned
    assert set(assigned.values()) == {_text([b, 2, p + s, 8])}
    result = next(lr for lr in report.layers if lr.type == "Result")
    logits = {lr.id: lr.inferred for lr in report.layers}[next(iter(G._pred[result.id]))][0]
    assert logits == _text(next(iter(out.values())).shape) == _text([b, s, 300])


def test_a_state_shape_the_variable_refuses_makes_its_readvalue_invalid():
    """The variable is [?,2,?,8]: OpenVINO refuses a state of 3 heads."""
    G = og.read_ir(LLAMA_KV)
    state = _states(G)[0]
    report = og.check(G, {state: "[1,3,4,8]"})
    (bad,) = [lr for lr in report.layers if lr.status == "invalid"]
    assert bad.type == "ReadValue" and G.nodes[bad.id]["data"]["variable_id"] == state
    assert "[?,2,?,8]" in bad.message and "[1,3,4,8]" in bad.message
    request = ov.Core().compile_model(str(LLAMA_KV), "CPU", cpu_config()).create_infer_request()
    st = next(st for st in request.query_state() if st.name == state)
    with pytest.raises(Exception, match="Can not clone|ParameterMismatch"):
        st.state = ov.Tensor(np.zeros([1, 3, 4, 8], np.float32))


@pytest.mark.parametrize("how", ["shapes", "symbols"])
def test_an_unknown_key_names_the_parameters_and_the_states(how):
    G = og.read_ir(LLAMA_KV)
    with pytest.raises(UsageError) as err:
        if how == "shapes":
            og.check(G, {"past.9.key": "[1,2,3,8]"})
        else:
            og.infer_symbols(G, {"past.9.key": "[B,2,P,8]"})
    text = str(err.value)
    assert "\n" not in text and "'past.9.key' names none" in text
    assert "parameters: attention_mask, beam_idx, input_ids, position_ids" in text
    assert "states: past_key_values.0.keypresent.0.key" in text


def test_a_key_both_a_parameter_and_a_variable_id_sizes_the_parameter(tmp_path):
    """As ``symbols`` take it: the Parameter ``x`` gets [3,8], the state keeps [?,8]."""
    path = state_named_like_its_input(tmp_path)
    rows = {lr.type: lr.inferred[0] for lr in og.check(og.read_ir(path), {"x": "[3,8]"}).layers
            if lr.inferred}
    assert rows["Parameter"] == "[3,8]" and rows["ReadValue"] == "[?,8]"
