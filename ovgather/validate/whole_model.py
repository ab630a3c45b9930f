"""``validate --whole-model``: compile the whole IR with an extra output at every gather
layer, run it on inputs of one size inside the dynamic dims' bounds, and compare each
gather's real output shape with ovgather's inference for those input sizes.

The sizes come from ``sizes.one_size_tries``, the memory estimate from
``memory.whole_run_bytes`` and the run from ``runner.Runs``, as for ``--all-layers``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import networkx as nx
import numpy as np

from .. import runtime
from ..element_types import element_type_name, numpy_dtype
from ..errors import OvgatherError, RuntimeBridgeError
from ..infer import infer_shapes
from ..infer.readable import unread_layers
from ..shapes import PartialShape
from .gathers import body_gather_rows, body_gathers, gather_layers
from .memory import DEFAULT_MEMORY_BUDGET, inputs_bytes, size_text, whole_run_bytes
from .report import LayerValidation, ValidationReport
from .runner import Runs, fits, size_inputs, xml_file
from .sizes import dim_rules, one_size_tries, parameter_shapes, parameter_types

__all__ = ["validate_whole_model"]


def validate_whole_model(
    G: nx.MultiDiGraph,
    *,
    layers: Sequence[str] | None = None,
    seed: int = 0,
    threads: int | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> ValidationReport:
    """Compile the whole IR with an extra output at every gather layer, run it on random
    inputs, and compare each gather's real output shape with ovgather's inference for
    the same input sizes.

    ``memory_budget`` bounds the estimated bytes of one run (the inputs, twice the
    gather outputs and twice the largest other tensor, from ovgather's inference for the
    sizes picked); over it nothing is allocated and every gather layer is reported
    ``skipped`` with its own output size.

    Dynamic Parameter dims get sizes inside their bounds: first one size for all of
    them (so that a batch ``N`` shared by several inputs stays shared), then the static
    sizes seen elsewhere, then one size per distinct bounds, until the runtime accepts
    the sizes. A dynamic-rank Parameter gets rank 3, 2, 4 or 1 (the CPU plugin runs no
    dynamic-rank input). Integer and bool inputs are zeros, a valid index for any
    gather; float inputs are random.
    """
    report = ValidationReport(G.graph.get("xml_path"), seed, mode="whole-model",
                              unread=unread_layers(G))
    nodes = gather_layers(G, layers)
    skipped = body_gathers(G, layers, infer_shapes(G)) if body_gather_rows(G) else []
    if not nodes:
        report.layers = skipped
        return report
    try:
        sizes, real, partial = _run_whole(G, nodes, seed, threads, memory_budget)
    except RuntimeBridgeError as err:  # no input size runs the model: nothing to compare
        for node in nodes:
            report.layers.append(_verdict(G, node, {}, status="skipped", message=err.message))
    except _OverBudget as over:
        for node in nodes:
            res = _verdict(G, node, over.concrete, status="skipped")
            res.inferred_shape = over.outputs.get(node)
            res.message = (f"the whole model needs about {size_text(over.cost)} for these "
                           f"input sizes (this layer's output {res.inferred_shape}), more "
                           f"than the memory budget of {size_text(memory_budget)} "
                           "(--memory-budget)")
            report.layers.append(res)
    else:
        concrete = {name: str(shape) for name, shape in sizes.items()}
        inferred = infer_shapes(G, shapes=concrete)
        for node in nodes:
            report.layers.append(_judge_whole(G, node, real.get((node, 0)),
                                              partial.get((node, 0)), inferred, concrete))
    report.layers += skipped
    return report


def _exercising(made: Mapping[str, runtime.Feed], sizes: Mapping[str, PartialShape],
                types: Mapping[str, str], seed: int, k: int) -> dict[str, np.ndarray]:
    """The integer and boolean inputs that index a table, hold positions or a mask, made
    for ``sizes`` (the others are left to ``runner.feeds``)."""
    rng = np.random.default_rng([seed, k, 1])
    out = {}
    for name, feed in made.items():
        dtype = numpy_dtype(element_type_name(types.get(name, "f32")))
        if feed.kind in ("index", "positions", "mask") and dtype and name in sizes:
            out[name] = runtime.make_array(feed, sizes[name].to_list(), np.dtype(dtype), rng)
    return out


class _OverBudget(Exception):
    def __init__(self, cost: int, concrete: dict[str, str], outputs: dict[str, str]) -> None:
        super().__init__(cost)
        self.cost, self.concrete, self.outputs = cost, concrete, outputs


def _run_whole(G: nx.MultiDiGraph, nodes: list[str], seed: int, threads: int | None,
               budget: int) -> tuple[dict[str, PartialShape], dict, dict]:
    """Run the whole model at the first sizes the runtime accepts (each checked against
    ``budget`` before its inputs are made): the sizes, the real shape and OpenVINO's
    partial shape of each gather's output 0."""
    params, types = parameter_shapes(G), parameter_types(G)
    part = [(n, 0) for n in nodes]
    error: RuntimeBridgeError | None = None
    with xml_file(G) as xml:
        model = runtime.read_model(xml)
        runs = Runs(xml, {n: G.nodes[n]["name"] for n in nodes}, threads, ranks_only=True)
        for k, (_rank, sizes) in enumerate(one_size_tries(params, np.random.default_rng(seed),
                                                              dim_rules(G))):
            _check_budget(G, nodes, sizes, types, budget)
            made = runtime.feeds_by_name(model, {n: s.to_list() for n, s in sizes.items()})
            given = {**_exercising(made, sizes, types, seed, k), **size_inputs(G, sizes)}
            try:
                real = runs.shapes(part, sizes, seed, k, types, given)
            except RuntimeBridgeError as err:
                error = err
                continue
            return sizes, real, runs.partial_shapes(part)
    assert error is not None
    raise RuntimeBridgeError(f"the runtime ran the model on none of the input sizes tried: "
                             f"{error.message}", file=G.graph.get("xml_path")) from error


def _check_budget(G: nx.MultiDiGraph, nodes: Collection[str], sizes: Mapping[str, PartialShape],
                  types: Mapping[str, str], budget: int) -> None:
    """Raise _OverBudget when one run at ``sizes`` would need more than ``budget`` bytes."""
    concrete = {n: str(s) for n, s in sizes.items()}
    inputs = inputs_bytes(sizes, types)
    try:
        inferred = infer_shapes(G, shapes=concrete)
        cost = whole_run_bytes(G, inferred, set(nodes))
        outputs = {n: str(inferred[n][0]) for n in nodes if inferred.get(n)}
    except (OvgatherError, ValueError):  # the runtime will say what is wrong
        cost, outputs = inputs, {}
    cost = max(cost, inputs)
    if cost > budget:
        raise _OverBudget(cost, concrete, outputs)


def _verdict(G: nx.MultiDiGraph, node: str, concrete: Mapping[str, str],
             **fields: str) -> LayerValidation:
    attrs = G.nodes[node]
    return LayerValidation(node, attrs["name"], attrs["type"], attrs.get("version"),
                           attrs.get("line"), inputs=dict(concrete), **fields)


def _judge_whole(G, node, real: str | None, partial: str | None, inferred,
                 concrete: Mapping[str, str]) -> LayerValidation:
    res = _verdict(G, node, concrete)
    if real is None:
        res.status = "error"
        res.message = "OpenVINO's model has no layer of this name after reading"
        return res
    inferred_shape = inferred[node][0]
    res.runtime_shape, res.inferred_shape = real, str(inferred_shape)
    res.runtime_partial_shape = partial
    if not fits(PartialShape.parse(real).to_list(), inferred_shape):
        res.status = "mismatch"
        res.message = (f"the runtime's output shape is {res.runtime_shape}, ovgather infers "
                       f"{res.inferred_shape} for these input sizes")
    elif not inferred_shape.is_static:
        res.message = ("the runtime's shape lies inside ovgather's bounds (the sizes depend "
                       "on data values upstream)")
    return res
