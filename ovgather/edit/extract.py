"""Cut a layer and its neighbourhood out of a model, as a standalone IR.

The small file a user attaches to a bug report: the layer, the layers within ``depth``
edges of it (in either direction), every Const that feeds them, and the run-time shape
subgraphs behind them (ShapeOf → … → a Reshape target), since a Parameter in their
place would hide the rank OpenVINO needs. Where the cut
crosses an edge into the kept part, a Parameter takes the producer's place, with the
shape ovgather inferred for that tensor (so intervals survive), its element type and
tensor names, and the tensor's name as its own (what OpenVINO shows for that input);
where it crosses an edge out of the kept part, a Result is added.
OpenVINO reads and runs the result; feeding it the tensors the full model computes at
the cut gives the same outputs (tests/edit/test_extract.py proves it on every sample).

>>> import openvino as ov, numpy as np
>>> from openvino import opset8
>>> from ovgather.runtime import from_openvino
>>> d = opset8.parameter([2, 3, 4], np.float32, name="data")
>>> r = opset8.relu(d); r.set_friendly_name("relu"); r.output(0).set_names({"hidden"})
>>> i = opset8.constant(np.array([[1], [0]], dtype=np.int64))
>>> gnd = opset8.gather_nd(r, i, 1); gnd.set_friendly_name("gnd")
>>> sub = extract(from_openvino(ov.Model([opset8.exp(gnd)], [d], "m")), "gnd", depth=0)
>>> sorted(t for _, t in sub.nodes(data="type"))
['Const', 'GatherND', 'Parameter', 'Result']
>>> sub.graph["extract_cuts"]  # the input at the cut is named after the tensor
{'hidden': ('relu', 0)}
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable

import networkx as nx

from .. import graph as g
from ..element_types import INT_TYPES, element_type_name, precision_of
from ..errors import UsageError
from ..graph import find_layer, new_layer, new_port
from ..infer import CheckReport, check
from ..shapes import PartialShape

__all__ = ["neighbourhood", "extract", "write_extract", "port_shapes", "declared_shape",
           "result_at"]

_CONST_TYPES = ("Const", "Constant")
#: The types a shape tensor can have (those numpy reads as whole bytes).
_SHAPE_TYPES = INT_TYPES - {"u1", "u4", "i4"}


def declared_shape(G: nx.MultiDiGraph, node: str, port_id: int) -> PartialShape:
    """What the IR says about an output port: the ``shape`` attribute of a Parameter or
    Const (it keeps intervals and tells a scalar from a dynamic rank), else its dims;
    an empty dim list of another layer is taken as unknown rank."""
    attrs = G.nodes[node]
    if attrs["type"] in ("Parameter", "Const", "Constant") and "shape" in attrs["data"]:
        return PartialShape.parse(attrs["data"]["shape"])
    dims = g.output_port(G, node, port_id)["dims"]
    return PartialShape(dims) if dims else PartialShape.dynamic()


def port_shapes(G: nx.MultiDiGraph, report: CheckReport) -> dict[tuple[str, int], PartialShape]:
    """The shape of every output port ``(layer, port id)``: the one ``report`` (``check``
    of ``G``) inferred where it has one, the declared one otherwise."""
    inferred = {lr.id: lr.inferred_shapes for lr in report.layers}
    out: dict[tuple[str, int], PartialShape] = {}
    for node, attrs in G.nodes(data=True):
        got = inferred.get(node) or []
        for pos, port in enumerate(attrs["outputs"]):
            out[node, port["id"]] = (got[pos] if pos < len(got)
                                     else declared_shape(G, node, port["id"]))
    return out


def neighbourhood(G: nx.MultiDiGraph, node: str, depth: int) -> set[str]:
    """The layers at most ``depth`` edges from ``node``, following edges both ways."""
    if depth < 0:
        raise UsageError(f"--depth must be 0 or more, but got {depth}")
    undirected = G.to_undirected(as_view=True)
    return set(nx.single_source_shortest_path_length(undirected, node, cutoff=depth))


def _with_consts(G: nx.MultiDiGraph, keep: set[str]) -> set[str]:
    """``keep`` plus every constant subgraph feeding a kept layer (a Const, and the
    Convert, Subtract, Multiply… that decompress FP16 or INT8 weights from Consts): a cut
    never turns weights into inputs."""
    memo: dict[str, bool] = {}
    todo = list(keep)
    while todo:
        n = todo.pop()
        for u in G.predecessors(n):
            if u not in keep and _constant(G, u, memo):
                keep.add(u)
                todo.append(u)
    return keep


def _constant(G: nx.MultiDiGraph, u: str, memo: dict[str, bool]) -> bool:
    """Whether ``u`` is a Const or computes from Consts only."""
    def leaf(n: str) -> bool | None:
        if G.nodes[n]["type"] in _CONST_TYPES:
            return True
        return None if G._pred[n] else False

    return _upstream(u, memo, leaf, lambda n: list(G.predecessors(n)), all)


def _upstream(u: str, memo: dict[str, bool], leaf: Callable[[str], bool | None],
              feeds: Callable[[str], list[str]], combine: Callable[..., bool]) -> bool:
    """A yes/no answer about ``u`` made from its feeds' answers: ``leaf(n)`` answers a
    layer on its own (None: ask its feeds), ``combine`` (``any``/``all``) joins the
    feeds' answers. A walk with its own stack (shape chains can be thousands of layers
    deep), each layer's answer kept in ``memo``."""
    stack, entered = [u], set()
    while stack:
        n = stack[-1]
        if n in memo:
            stack.pop()
            continue
        known = leaf(n)
        if known is not None:
            memo[n] = known
            stack.pop()
            continue
        fed = feeds(n)
        todo = [v for v in fed if v not in memo]
        if todo and n not in entered:
            entered.add(n)
            stack.extend(todo)
            continue
        memo[n] = combine(memo.get(v, False) for v in fed)
        stack.pop()
    return memo[u]


def _is_shape_tensor(G: nx.MultiDiGraph, u: str, port_id: int, memo: dict[str, bool]) -> bool:
    """True when output ``port_id`` of ``u`` is a small integer tensor computed from a
    ShapeOf (a Reshape target, a Broadcast shape…), the way frontends compute shapes at
    run time."""
    return _small_int(G, u, port_id) and _from_shape_of(G, u, memo)


def _small_int(G: nx.MultiDiGraph, u: str, port_id: int) -> bool:
    port = g.output_port(G, u, port_id)
    return element_type_name(port.get("precision")) in _SHAPE_TYPES and len(port["dims"]) <= 1


def _from_shape_of(G: nx.MultiDiGraph, u: str, memo: dict[str, bool]) -> bool:
    """Whether ``u`` computes from a ShapeOf through small integer tensors."""
    def leaf(n: str) -> bool | None:
        t = G.nodes[n]["type"]
        return t == "ShapeOf" if t in ("ShapeOf", "Parameter") else None

    def feeds(n: str) -> list[str]:
        return [v for v, fp, _ in g.input_edges(G, n) if _small_int(G, v, fp)]

    return _upstream(u, memo, leaf, feeds, any)


def _with_shape_subgraphs(G: nx.MultiDiGraph, keep: set[str]) -> set[str]:
    """``keep`` plus the whole subgraph behind every shape tensor that would be cut.

    A Parameter in place of a run-time shape (ShapeOf → Gather → Concat → Broadcast)
    loses what OpenVINO needs to know the rank after it; a GatherND whose ``k`` becomes
    unknown has a dynamic rank and the CPU plugin refuses to compile it. So those
    subgraphs are kept back to their ShapeOf layers, whose inputs become Parameters.
    """
    memo: dict[str, bool] = {}
    todo = list(keep)
    while todo:
        n = todo.pop()
        for u, fp, _ in g.input_edges(G, n):
            if u not in keep and _is_shape_tensor(G, u, fp, memo):
                keep.add(u)
                todo.append(u)
    return keep


def extract(
    G: nx.MultiDiGraph,
    layer: str,
    depth: int = 1,
    shapes: dict[str, str] | None = None,
) -> nx.MultiDiGraph:
    """A standalone graph of ``layer`` (name or id) and its ``depth``-neighbourhood.

    ``G.graph["extract_cuts"]`` of the result maps each new Parameter's name (the cut
    tensor's name) to the ``(producer layer name, output index)`` it stands for in ``G``.
    ``shapes`` are the ``--shape`` overrides used to infer the shapes at the cut.
    """
    target = find_layer(G, layer)
    keep = _with_consts(G, _with_shape_subgraphs(G, neighbourhood(G, target, depth)))
    known = port_shapes(G, check(G, shapes))
    H = nx.MultiDiGraph()
    H.graph.update(G.graph)
    H.graph["xml_path"] = None  # the cut is not that file; the weights stay shared
    H.graph["name"] = f"{G.graph.get('name') or 'model'}_{G.nodes[target]['name']}"
    H.graph["net_attrs"] = {**G.graph.get("net_attrs", {}), "name": H.graph["name"]}
    for n in G:
        if n in keep:
            H.add_node(n, **copy.deepcopy(G.nodes[n]))
            if shapes and H.nodes[n]["type"] == "Parameter":
                _set_parameter_shape(H.nodes[n], known[n, H.nodes[n]["outputs"][0]["id"]])
    ids = _id_source(G)
    cuts: dict[tuple[str, int], str] = {}
    # tensor names the extract holds: a new input's name must be none of them
    taken = {name for n in keep for port in G.nodes[n]["outputs"] for name in port["names"]}
    for n in list(H):
        _wire_inputs(G, H, n, keep, known, cuts, ids, taken)
    for n in list(keep):
        _add_results(G, H, n, keep, target, ids)
    H.graph["extract_cuts"] = {H.nodes[p]["name"]: (G.nodes[u]["name"], _out_index(G, u, fp))
                               for (u, fp), p in cuts.items()}
    return H


def write_extract(G: nx.MultiDiGraph, layer: str, path: str | os.PathLike[str],
                  depth: int = 1, shapes: dict[str, str] | None = None) -> nx.MultiDiGraph:
    """``extract`` then ``write_ir`` to ``path`` (and its .bin); returns the subgraph."""
    from ..ir import write_ir

    H = extract(G, layer, depth, shapes)
    write_ir(H, str(path))
    return H


def _id_source(G: nx.MultiDiGraph):
    """New layer ids after the largest numeric one, so the cut layers keep theirs."""
    start = max((int(n) for n in G if str(n).isdigit()), default=-1) + 1
    return iter(str(i) for i in range(start, start + 10**9))


def _out_index(G: nx.MultiDiGraph, node: str, port_id: int) -> int:
    return [p["id"] for p in G.nodes[node]["outputs"]].index(port_id)


def _wire_inputs(G: nx.MultiDiGraph, H: nx.MultiDiGraph, n: str, keep: set[str],
                 known: dict, cuts: dict, ids, taken: set[str]) -> None:
    for u, fp, tp in g.input_edges(G, n):
        if u in keep:
            H.add_edge(u, n, key=(fp, tp), from_port=fp, to_port=tp, line=None)
            continue
        if (u, fp) not in cuts:
            cuts[u, fp] = _add_parameter(G, H, u, fp, known, next(ids), taken)
        H.add_edge(cuts[u, fp], n, key=(0, tp), from_port=0, to_port=tp, line=None)


def _add_parameter(G: nx.MultiDiGraph, H: nx.MultiDiGraph, u: str, fp: int,
                   known: dict, new_id: str, taken: set[str]) -> str:
    """A Parameter in place of output port ``fp`` of the cut-off layer ``u``, named after
    the tensor it stands for: the port's tensor name that OpenVINO shows first
    (``get_any_name()``, the least in order), so the cut's input is called what the
    tensor is called in the original model. A port without tensor names lends the layer's
    friendly name (``name.k`` for output k of a layer with several), made unique among
    the tensor names in ``taken`` (``name_1``, ``name_2``…: OpenVINO would otherwise
    rename the other tensor of that name), which it joins."""
    port = g.output_port(G, u, fp)
    attrs = G.nodes[u]
    name = attrs["name"]
    if len(attrs["outputs"]) > 1:
        name = f"{name}.{_out_index(G, u, fp)}"
    if port.get("names"):
        name = min(port["names"])
    else:
        base, k = name, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
    taken.add(name)
    precision = port.get("precision")
    etype = (element_type_name(precision) if precision is not None else None) or "f32"
    out = new_port(0, port.get("precision") or precision_of(etype), (),
                   list(port.get("names") or [name]))
    H.add_node(new_id, **new_layer(name, "Parameter", "opset1", outputs=[out],
                                   data={"shape": "", "element_type": etype}))
    _set_parameter_shape(H.nodes[new_id], known.get((u, fp), PartialShape.dynamic()))
    return new_id


def _set_parameter_shape(attrs: dict, shape: PartialShape) -> None:
    """Write ``shape`` into a Parameter's ``shape`` attribute and its port dims."""
    attrs["data"]["shape"] = "..." if shape.rank is None else str(shape)[1:-1]
    attrs["outputs"][0]["dims"] = tuple(shape.to_ir_dims())


def _add_results(G: nx.MultiDiGraph, H: nx.MultiDiGraph, n: str, keep: set[str],
                 target: str, ids) -> None:
    """A Result on each output of ``n`` that feeds a layer outside the cut (or nothing,
    for the extracted layer itself)."""
    attrs = G.nodes[n]
    if attrs["type"] == "Result":
        return
    for pos, port in enumerate(attrs["outputs"]):
        users = g.consumers(G, n, port["id"])
        outside = any(v not in keep for v, _ in users)
        unused = not users and n == target
        if not (outside or unused):
            continue
        result_at(H, G, n, pos, next(ids))


def result_at(H: nx.MultiDiGraph, G: nx.MultiDiGraph, n: str, pos: int, rid: str) -> None:
    """A Result ``rid`` in the cut ``H`` on output ``pos`` of ``G``'s layer ``n``, named
    after it (``NAME/result``, ``NAME.1/result`` for a later output of several)."""
    attrs = G.nodes[n]
    port = attrs["outputs"][pos]
    suffix = f".{pos}" if len(attrs["outputs"]) > 1 else ""
    inp = new_port(0, port.get("precision"), tuple(port["dims"]))
    H.add_node(rid, **new_layer(f"{attrs['name']}{suffix}/result", "Result", "opset1",
                                inputs=[inp]))
    H.add_edge(n, rid, key=(port["id"], 0), from_port=port["id"], to_port=0, line=None)
