"""Faults put into real models for ``reduce`` to find: a weight perturbed, a layer that
crashes the runtime (a worker stub), a NaN producer inserted, a declared dim tampered.

Each ``inject_*`` edits a copy of the graph, writes it to ``folder`` and returns the
path and the culprit's friendly name (the layer the reduced model must keep)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ovgather.debug.cuts import compute_order, constant_layers
from ovgather.edit import add_const, add_layer, insert_after, set_const
from ovgather.ir import const_value, read_ir, write_ir

CORPUS = Path(__file__).resolve().parents[2] / "ir_corpus"


def middle(G: nx.MultiDiGraph, types: tuple[str, ...], weighted: bool = False) -> str:
    """The compute layer of one of ``types`` nearest the middle of the model (with
    ``weighted``, one that reads a weight)."""
    order = compute_order(G)
    picks = [n for n in order if G.nodes[n]["type"] in types
             and (not weighted or _has_weight(G, n))]
    mid = len(order) // 2
    return min(picks, key=lambda n: abs(order.index(n) - mid))


def _has_weight(G: nx.MultiDiGraph, node: str) -> bool:
    try:
        _weight_of(G, node)
    except AssertionError:
        return False
    return True


def _weight_of(G: nx.MultiDiGraph, node: str) -> str:
    """The Const behind a layer's weight input (through its decompressing Convert)."""
    consts = constant_layers(G)
    todo = [u for u in G.predecessors(node) if u in consts]
    while todo:
        u = todo.pop(0)
        if G.nodes[u]["type"] in ("Const", "Constant") and \
                np.asarray(const_value(G, u)).size > 16:
            return u
        todo += [v for v in G.predecessors(u) if v in consts]
    raise AssertionError(f"no weight found for layer {node}")


def inject_weight(src: str, folder: str) -> tuple[str, str]:
    """A weight of a MatMul or Convolution near the middle scaled by 3."""
    G = read_ir(src)
    layer = middle(G, ("MatMul", "Convolution", "GroupConvolution"), weighted=True)
    const = _weight_of(G, layer)
    set_const(G, const, (np.asarray(const_value(G, const)) * 3).astype(
        np.asarray(const_value(G, const)).dtype))
    return _write(G, folder, "weight"), G.nodes[layer]["name"]


def inject_nan(src: str, folder: str) -> tuple[str, str]:
    """``x + log(-1)`` after the compute layer nearest the middle from which the NaN
    reaches an output (a ReLU turns NaN into 0 and a mask's Select drops it: the layers
    nearer the middle are tried first, each run once on OpenVINO to see)."""
    G0 = read_ir(src)
    order = compute_order(G0)
    mid = len(order) // 2
    picks = sorted((n for n in order if G0.nodes[n]["type"] in
                    ("MatMul", "Convolution", "Add", "Multiply")),
                   key=lambda n: abs(order.index(n) - mid))
    # log(-1) is NaN; where every path to an output passes a ReLU (a ResNet), NaN and
    # -inf become 0 there, so -log(0) = +inf is what reaches the output instead
    for seed in (-1.0, 0.0):
        for layer in picks[:16]:
            G = read_ir(src)
            _add_nan_after(G, layer, seed)
            path = _write(G, folder, "nan")
            if _outputs_not_finite(path):
                return path, "nan_producer"
    raise AssertionError(f"no layer of {src} lets a NaN or an infinity reach an output")


def _add_nan_after(G: nx.MultiDiGraph, layer: str, seed: float = -1.0) -> None:
    """``x + log(-1)`` (NaN) after ``layer``, or with ``seed`` 0 ``x - log(0)`` (+inf)."""
    port = G.nodes[layer]["outputs"][0]
    minus = add_const(G, np.full([1] * len(port["dims"]), seed, dtype=np.float32),
                      name="minus_one")
    log = add_layer(G, "Log", "opset1", inputs=[(minus, 0)],
                    outputs=[{"precision": "FP32", "dims": (1,) * len(port["dims"])}],
                    name="log_of_minus_one")
    log_port = G.nodes[log]["outputs"][0]["id"]
    add = add_layer(G, "Add" if seed < 0 else "Subtract", "opset1",
                    inputs=[(layer, port["id"]), (log, log_port)],
                    outputs=[{"precision": port["precision"], "dims": port["dims"]}],
                    name="nan_producer")
    insert_after(G, layer, port["id"], add, take_name=False)


def _outputs_not_finite(path: str) -> bool:
    """Whether OpenVINO's run of the IR at ``path`` (at reduce's default sizes, on inputs
    made to exercise it) gives an output with a NaN or an infinity."""
    import openvino as ov

    from ovgather.debug.search import default_sizes
    from ovgather.runtime.core import cpu_config
    from ovgather.runtime.feeding import input_feeds, make_array

    sizes = default_sizes(read_ir(path))
    model = ov.Core().read_model(path)
    model.reshape({p.output(0): sizes[p.get_friendly_name()] for p in model.get_parameters()})
    rng = np.random.default_rng(0)
    arrays = [make_array(f, sizes[p.get_friendly_name()], p.get_element_type().to_dtype(), rng)
              for p, f in zip(model.get_parameters(), input_feeds(model), strict=True)]
    outs = ov.Core().compile_model(model, "CPU", cpu_config())(arrays)
    return any(np.asarray(v).dtype.kind == "f" and not np.isfinite(np.asarray(v)).all()
               for v in outs.values())


def inject_dim(src: str, folder: str) -> tuple[str, str]:
    """The last declared dim of a MatMul or Convolution near the middle made one larger."""
    G = read_ir(src)
    layer = middle(G, ("MatMul", "Convolution", "Add"))
    port = G.nodes[layer]["outputs"][0]
    dims = list(port["dims"])
    dims[-1] = dims[-1] + 1 if dims[-1] > 0 else 7
    port["dims"] = tuple(dims)
    return _write(G, folder, "dim"), G.nodes[layer]["name"]


def crash_layer(src: str) -> str:
    """The friendly name of the layer the crash stub crashes on."""
    G = read_ir(src)
    return G.nodes[middle(G, ("MatMul", "Convolution", "Add", "Multiply"))]["name"]


def _write(G: nx.MultiDiGraph, folder: str, tag: str) -> str:
    path = os.path.join(folder, f"{tag}.xml")
    write_ir(G, path)
    return path


def run_or_crash(xml: str, feeds: Any, ports: Any = None, *, marker: str) -> Any:
    """``debug.runs.run_in_child``, but the process dies by SIGSEGV whenever the layer
    named ``marker`` would run: a candidate that holds it, or a cut of the whole model
    whose outputs depend on it. Run in the worker (by reference)."""
    from ovgather.debug.runs import run_in_child

    G = read_ir(xml)
    node = next((n for n, a in G.nodes(data=True) if a["name"] == marker), None)
    if node is not None:
        if ports is None:
            os.kill(os.getpid(), signal.SIGSEGV)
        reach = {G.nodes[n]["name"] for n in nx.descendants(G, node)} | {marker}
        if any(name in reach for name, _ in ports):
            os.kill(os.getpid(), signal.SIGSEGV)
    return run_in_child(xml, feeds, ports)
