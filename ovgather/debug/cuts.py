"""A standalone IR of any set of layers of a model: what ``reduce`` runs at each step.

``edit.extract`` cuts a layer and its neighbourhood; a search cuts arbitrary sets (a prefix
of the topological order, a range of it, a range with branches dropped), so the cut here
takes the set itself. The rules are extract's: every constant subgraph that feeds a kept
layer comes along (weights are never turned into inputs, and only the weights read are
written); a Parameter takes the place of each tensor that crosses into the kept layers,
named after that tensor, with the shape ovgather inferred there at the sizes run (or the
shape of the value fed, when one is known); a Result is added on each output that fed a
layer left out. One difference: a small integer tensor (rank 0 or 1: a Reshape target, a
Broadcast shape) whose value is known becomes a Const holding it, since a Parameter
there would hide the rank OpenVINO needs and drag the whole shape subgraph in.

The kept layers are copied as they are, their declared dims too (a tampered dim stays
tampered): only the layers added at the cut get dims from shape inference.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx
import numpy as np

from .. import graph as g
from ..edit.base import PRECISIONS
from ..edit.extract import result_at
from ..element_types import element_type_name, numpy_dtype, precision_of
from ..graph import new_layer, new_port
from ..shapes import PartialShape

__all__ = ["CONST_TYPES", "constant_layers", "compute_order", "cut", "counted_layers",
           "Port", "synthetic"]

CONST_TYPES = ("Const", "Constant")
#: layers that are never a search's unit: the model's ends and its weights
_ENDS = ("Parameter", "Result", *CONST_TYPES)
#: ``(layer node, output port id)``
Port = tuple[str, int]


def constant_layers(G: nx.MultiDiGraph) -> set[str]:
    """Every Const and every layer computed from Consts only (the Convert, Subtract and
    Multiply that decompress FP16 or INT8 weights): the runtime folds them."""
    out: set[str] = set()
    for n in nx.topological_sort(G):
        t = G.nodes[n]["type"]
        preds = list(G.predecessors(n))
        if t in CONST_TYPES or (preds and t not in ("Parameter", "ReadValue")
                                and all(p in out for p in preds)):
            out.add(n)
    return out


def compute_order(G: nx.MultiDiGraph, constants: set[str] | None = None) -> list[str]:
    """The layers a search cuts between, in topological order: every layer but the
    Parameters, Results and constant subgraphs."""
    constants = constant_layers(G) if constants is None else constants
    return [n for n in nx.topological_sort(G)
            if n not in constants and G.nodes[n]["type"] not in _ENDS]


def counted_layers(H: nx.MultiDiGraph) -> int:
    """Layers besides the Parameters, Constants and Results."""
    return sum(1 for _, t in H.nodes(data="type") if t not in _ENDS)


def _with_constants(G: nx.MultiDiGraph, keep: set[str], constants: set[str]) -> set[str]:
    todo = list(keep)
    while todo:
        n = todo.pop()
        for u in G.predecessors(n):
            if u not in keep and (u in constants or G.nodes[u]["type"] == "Parameter"):
                keep.add(u)
                todo.append(u)
    return keep


def _out_index(G: nx.MultiDiGraph, node: str, port_id: int) -> int:
    return [p["id"] for p in G.nodes[node]["outputs"]].index(port_id)


def tensor_name(G: nx.MultiDiGraph, u: str, fp: int) -> str:
    """What a cut at output ``fp`` of ``u`` is called: the tensor's first name, else the
    layer's name (``name.k`` for output k of a layer with several)."""
    port = g.output_port(G, u, fp)
    if port.get("names"):
        return min(port["names"])
    name = G.nodes[u]["name"]
    return f"{name}.{_out_index(G, u, fp)}" if len(G.nodes[u]["outputs"]) > 1 else name


def small_int(G: nx.MultiDiGraph, u: str, fp: int, shape: PartialShape | None) -> bool:
    """An integer tensor of rank 0 or 1 (a shape, an axis): folded into a Const at a cut."""
    etype = element_type_name(g.output_port(G, u, fp).get("precision"))
    if numpy_dtype(etype) is None or np.dtype(numpy_dtype(etype)).kind not in "iu":
        return False
    return shape is not None and shape.rank is not None and shape.rank <= 1


def cut(G: nx.MultiDiGraph, layers: Iterable[str], *, shapes: Mapping[Port, PartialShape],
        values: Mapping[Port, np.ndarray] | None = None, constants: set[str] | None = None,
        names: Mapping[tuple[str, int], str] | None = None) -> nx.MultiDiGraph:
    """A standalone graph of ``layers`` (nodes of ``G``; see the module docstring).

    ``shapes`` is the inferred shape of every output port (``edit.extract.port_shapes``),
    ``values`` the tensors known at some ports (a small integer one becomes a Const).
    ``names`` gives the name of the input at a cut, by ``(producer friendly name, output
    index)``, when another model's cut must match (``differs``). ``H.graph["reduce_cuts"]``
    maps each new Parameter's name to that ``(producer name, output index)``, and
    ``H.graph["reduce_ports"]`` to the ``(node, port id)`` of ``G`` it stands for.
    """
    constants = constant_layers(G) if constants is None else constants
    values = {} if values is None else values
    chosen = set(layers)
    keep = _with_constants(G, set(chosen), constants)
    H = nx.MultiDiGraph()
    H.graph.update(G.graph)
    H.graph["xml_path"] = None
    H.graph["name"] = f"{G.graph.get('name') or 'model'}_reduced"
    H.graph["net_attrs"] = {**G.graph.get("net_attrs", {}), "name": H.graph["name"]}
    for n in G:
        if n in keep:
            H.add_node(n, **copy.deepcopy(G.nodes[n]))
    kept_results = {}
    for n in G:
        if G.nodes[n]["type"] == "Result":
            u, fp, _ = g.input_edges(G, n)[0]
            if u in chosen:
                H.add_node(n, **copy.deepcopy(G.nodes[n]))
                H.add_edge(u, n, key=(fp, 0), from_port=fp, to_port=0, line=None)
                kept_results[u, fp] = n
    start = max((int(n) for n in G if str(n).isdigit()), default=-1) + 1
    ids = iter(str(i) for i in range(start, start + 10**9))
    taken = {name for n in keep for port in G.nodes[n]["outputs"] for name in port["names"]}
    made: dict[Port, str] = {}
    cuts, ports = {}, {}
    for n in list(keep):
        for u, fp, tp in g.input_edges(G, n):
            if u in keep:
                H.add_edge(u, n, key=(fp, tp), from_port=fp, to_port=tp, line=None)
                continue
            if (u, fp) not in made:
                made[u, fp] = _stand_in(G, H, u, fp, shapes, values, names, taken, next(ids))
                if H.nodes[made[u, fp]]["type"] == "Parameter":
                    key = (G.nodes[u]["name"], _out_index(G, u, fp))
                    cuts[H.nodes[made[u, fp]]["name"]] = key
                    ports[H.nodes[made[u, fp]]["name"]] = (u, fp)
            H.add_edge(made[u, fp], n, key=(0, tp), from_port=0, to_port=tp, line=None)
    for n in G:
        if n in chosen:
            _add_results(G, H, n, keep, kept_results, ids)
    H.graph["reduce_cuts"] = cuts
    H.graph["reduce_ports"] = ports
    return H


def _stand_in(G: nx.MultiDiGraph, H: nx.MultiDiGraph, u: str, fp: int, shapes, values,
              names, taken: set[str], new_id: str) -> str:
    """The Const (a small integer tensor of known value) or Parameter in place of output
    ``fp`` of the left-out layer ``u``."""
    port = g.output_port(G, u, fp)
    shape = shapes.get((u, fp))
    value = values.get((u, fp))
    name = tensor_name(G, u, fp)
    if names is not None:
        name = names.get((G.nodes[u]["name"], _out_index(G, u, fp)), name)
    if value is not None and small_int(G, u, fp, PartialShape(list(np.shape(value)))) \
            and np.asarray(value).dtype.name in PRECISIONS:
        array = np.array(value, order="C")  # ascontiguousarray makes a scalar 1-D
        etype, precision = PRECISIONS[array.dtype.name]
        H.add_node(new_id, **new_layer(f"{G.nodes[u]['name']}/value", "Const", "opset1",
                                       outputs=[new_port(0, precision, array.shape)],
                                       data={"element_type": etype,
                                             "shape": ", ".join(map(str, array.shape))}))
        H.nodes[new_id]["value"] = array
        return new_id
    if name in taken and not port.get("names"):
        base, k = name, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
    taken.add(name)
    if value is not None:
        shape = PartialShape(list(np.shape(value)))
    if shape is None:
        shape = PartialShape.dynamic()
    precision = port.get("precision")
    etype = (element_type_name(precision) if precision is not None else None) or "f32"
    out = new_port(0, precision or precision_of(etype), tuple(shape.to_ir_dims()),
                   list(port.get("names") or [name]))
    H.add_node(new_id, **new_layer(name, "Parameter", "opset1", outputs=[out],
                                   data={"shape": "..." if shape.rank is None
                                         else str(shape)[1:-1], "element_type": etype}))
    return new_id


def _add_results(G: nx.MultiDiGraph, H: nx.MultiDiGraph, n: str, keep: set[str],
                 kept_results: Mapping[Port, str], ids) -> None:
    """A Result on each output of ``n`` that fed a layer left out."""
    attrs = G.nodes[n]
    for pos, port in enumerate(attrs["outputs"]):
        if (n, port["id"]) in kept_results:
            continue
        users = g.consumers(G, n, port["id"])
        if not any(v not in keep for v, _ in users):
            continue
        result_at(H, G, n, pos, next(ids))


def synthetic(G: nx.MultiDiGraph, port: Port, shape: PartialShape | None,
              seed: int = 0) -> np.ndarray:
    """Values for a cut whose tensor the whole model could not give (it crashed before):
    small random numbers of the inferred shape (its lower bounds), zeros for integers."""
    etype = element_type_name(g.output_port(G, *port).get("precision")) or "f32"
    dtype = np.dtype(numpy_dtype(etype) or "float32")
    dims = [max(d.lo, 1) for d in shape.dims] if shape is not None and shape.dims is not None \
        else [1]
    if dtype.kind == "f":
        rng = np.random.default_rng(seed)
        return rng.standard_normal(dims, dtype=np.float32).astype(dtype)
    return np.zeros(dims, dtype=dtype)


def describe_layers(G: nx.MultiDiGraph, nodes: Iterable[str]) -> list[dict[str, Any]]:
    """``{"name", "type", "id"}`` of each node, in ``G``'s topological order."""
    wanted = set(nodes)
    return [{"name": G.nodes[n]["name"], "type": G.nodes[n]["type"], "id": n}
            for n in nx.topological_sort(G) if n in wanted]
