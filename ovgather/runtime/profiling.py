"""Where the CPU plugin spends its time, node by node, and which IR layers each node came
from (``stats --profile``).

The plugin's per-node counters (``PERF_COUNT``) are keyed by the nodes of its compiled
graph, whose names no one can map back to an IR by eye: fused nodes take one layer's
name, new ones get generated names. The compiled model's runtime graph
(``get_runtime_model``) keeps, on each node, ``originalLayersNames``: the friendly names of
the IR layers it was made from. :func:`profile_nodes` returns both, so that ``cost/``
can give each IR layer its time and name the layers fused away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError
from .core import core, cpu_config, first_line, input_tensor, openvino
from .feeding import input_feeds, make_array

__all__ = ["NodeTime", "profile_nodes"]


@dataclass
class NodeTime:
    """One node of the compiled graph: its name and type (``exec_type``: the kernel), its
    mean time per inference in milliseconds, the IR layers it was made from, and whether it
    ran. The plugin reports a node that took under a microsecond as not run, so a cheap
    node runs in one inference and not in the next: every reported node is kept, for the
    graph's shape not to depend on the clock, and ``ran`` says it executed at least once."""

    name: str
    type: str
    exec_type: str
    ms: float
    originals: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)  # the runtime nodes it reads
    ran: bool = True


def _graph(compiled: Any) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Runtime node name -> the friendly names of the IR layers it was made from, and ->
    the names of the runtime nodes it reads."""
    out, parents = {}, {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        parents[op.get_friendly_name()] = [
            v.get_node().get_friendly_name() for v in op.input_values()]
        info = op.get_rt_info()
        names = ""
        if "originalLayersNames" in info:
            value = info["originalLayersNames"]
            names = value.astype(str) if hasattr(value, "astype") else str(value)
        out[op.get_friendly_name()] = [n for n in str(names).split(",") if n]
    return out, parents


def profile_nodes(model: Any, shapes: Mapping[str, Sequence[int]], iterations: int = 5,
                  seed: int = 0, threads: int | None = None) -> list[NodeTime]:
    """Run the ``openvino.Model`` ``model`` at the static input ``shapes`` (by Parameter
    friendly name) with profiling on, on inputs made to exercise it (valid indices,
    masks, positions: ``feeding``), once to warm up and ``iterations`` times timed; each
    executed node with its mean time and the IR layers it came from."""
    ov = openvino()
    model = model.clone()
    params = model.get_parameters()
    model.reshape({p.output(0): ov.PartialShape([int(d) for d in shapes[p.get_friendly_name()]])
                   for p in params})
    try:
        compiled = core().compile_model(model, "CPU", {**cpu_config(threads),
                                                        "PERF_COUNT": True})
    except RuntimeError as err:
        raise RuntimeBridgeError(f"the CPU plugin cannot compile the model with profiling "
                                 f"on: {first_line(err)}") from err
    rng = np.random.default_rng(seed)
    request = compiled.create_infer_request()
    for i, (param, feed) in enumerate(zip(params, input_feeds(model), strict=True)):
        shape = [int(d) for d in shapes[param.get_friendly_name()]]
        etype = compiled.inputs[i].get_element_type()
        dtype = etype.to_dtype() if etype.get_type_name() not in ("string", "bf16") \
            else np.float32
        request.set_input_tensor(i, input_tensor(make_array(feed, shape, dtype, rng), etype))
    request.infer()  # the first run allocates: not timed
    ran = {info.node_name for info in request.profiling_info
           if str(info.status).endswith(".EXECUTED")}
    totals: dict[str, float] = {}
    kinds: dict[str, tuple[str, str]] = {}
    for _ in range(max(1, iterations)):
        request.infer()
        for info in request.profiling_info:
            if str(info.status).endswith(".EXECUTED"):
                ran.add(info.node_name)
            totals[info.node_name] = (totals.get(info.node_name, 0.0)
                                      + info.real_time.total_seconds() * 1000)
            kinds[info.node_name] = (info.node_type, info.exec_type)
    originals, parents = _graph(compiled)
    runs = max(1, iterations)
    return [NodeTime(name, *kinds[name], ms / runs, originals.get(name, []),
                     parents.get(name, []), name in ran) for name, ms in totals.items()]

