"""Reshape a model for good: new input shapes, written into every declared dim.

``openvino.Model.reshape`` changes a model in memory; the Model Optimizer's
``--input_shape`` used to write the result. :func:`reshape` does the latter on the IR
graph: it applies the new Parameter shapes (as ``check(G, shapes)`` reads them),
re-infers every layer, and rewrites each Parameter's ``shape`` attribute and every
declared port dim to the inferred ones, the way ``openvino.save_model`` writes them
(the ``shape`` attribute keeps intervals, ``1..10,?,2..``; a port ``<dim>`` holds a
static size or ``-1``). With no new shapes it repairs: the dims ``check`` calls a
``mismatch`` are rewritten, so the IR declares what OpenVINO computes.

A layer whose rule the new shapes break (say a MatMul after a flatten written as
``[1,-1]`` once the batch is 2) blocks the reshape: :class:`~ovgather.errors.ReshapeError`
names it, and ``G`` is left as it was. With ``fix=True`` the usual culprits upstream are
rewritten first, each so that at the old shapes it computes exactly what it did:

* a Reshape whose Const target hard-codes a size that now varies gets ``0`` (copy the
  input dim, ``special_zero=true``) where the size sits at the same position, or a target
  built at run time from ``ShapeOf`` of its input where it moved;
* a Broadcast whose Const target hard-codes a size of its data input that now varies
  gets ``1`` there and ``bidirectional`` mode (which keeps the data's size).

A constant-folded shape subgraph ends in such a Const target, so it is covered too.
Fixes are applied only when the model is blocked without them, and only to layers
upstream of a blocking layer: a model that reshapes cleanly is never rewritten.

>>> import networkx as nx
>>> from ovgather.rewrite import add_layer
>>> G = nx.MultiDiGraph()
>>> x = add_layer(G, "Parameter", "opset1", data={"shape": "1,3", "element_type": "f32"},
...               outputs=[{"precision": "FP32", "dims": (1, 3)}], name="x")
>>> r = add_layer(G, "Relu", "opset1", inputs=[(x, 0)],
...               outputs=[{"precision": "FP32", "dims": (1, 3)}])
>>> result = reshape(G, {"x": "[?,3]"})
>>> G.nodes[x]["data"]["shape"], G.nodes[r]["outputs"][0]["dims"]
('?,3', (-1, 3))
>>> [(c["name"], c["before"], c["after"]) for c in result.changed]
[('x', '[1,3]', '[?,3]'), ('Relu', '[1,3]', '[?,3]')]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..errors import OvgatherError, ReshapeError
from ..graph import consumers, input_edges, locate, output_port, producer
from ..infer import CheckReport, check, infer_shapes, shape_reaching
from ..rewrite import add_const, editing, remove_layer
from ..shapes import PartialShape, ShapeLike, as_partial_shape
from .building import concat, shape_of, slice_of

__all__ = ["reshape", "ReshapeResult", "shape_attribute", "reshape_effect"]

#: how many rounds of fixes before giving up (each round fixes every culprit it sees)
MAX_ROUNDS = 8


@dataclass
class ReshapeResult:
    """What :func:`reshape` changed.

    ``changed``: one record per output port whose declared dims changed (``id``,
    ``name``, ``type``, ``port``, ``before`` and ``after`` as shape texts, ``?`` for a
    ``-1`` dim; a Parameter's texts are its ``shape`` attribute). ``fixes``: one record
    per layer ``fix=True`` rewrote (``id``, ``name``, ``type``, ``line``, ``before``,
    ``after``, ``why``). ``report``: ``check`` of the rewritten graph.
    """

    changed: list[dict[str, Any]] = field(default_factory=list)
    fixes: list[dict[str, Any]] = field(default_factory=list)
    report: CheckReport | None = None

    @property
    def modified(self) -> bool:
        return bool(self.changed or self.fixes)


def reshape(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None,
            fix: bool = False) -> ReshapeResult:
    """Give ``G`` new input shapes (or, with none, repair its declared dims) in place.

    ``shapes`` maps a Parameter's friendly or tensor name to a shape (text such as
    ``"[1..8,?,4]"`` or a PartialShape), as for :func:`ovgather.check`. Raises
    :class:`~ovgather.errors.ReshapeError` (``G`` unchanged) when a layer's rule rejects
    the new shapes, after trying the fixes above when ``fix`` is true; a name that is no
    Parameter is a UsageError.
    """
    shapes = dict(shapes or {})
    report = check(G, shapes)
    fixes: list[dict[str, Any]] = []
    if _blockers(report) and fix:
        H = copy.deepcopy(G)
        fixes, report = _fix_until_clean(H, shapes, report)
        if not _blockers(report):
            _take_over(G, H)
    blockers = _blockers(report)
    if blockers:
        raise _blocked(G, report, blockers)
    result = ReshapeResult(fixes=fixes)
    old = infer_shapes(G)
    with editing(G):
        result.changed = _write_dims(G, report, old, _overridden(G, shapes))
    result.report = check(G)
    return result


def shape_attribute(shape: PartialShape) -> str:
    """A Parameter's ``shape`` attribute as ``openvino.save_model`` writes it.

    >>> shape_attribute(PartialShape.parse("[1..10,?,2..,..5,3]"))
    '1..10,?,2..,..5,3'
    >>> shape_attribute(PartialShape.dynamic()), shape_attribute(PartialShape([]))
    ('...', '')
    """
    return str(shape)[1:-1]


# ---- blockers ---------------------------------------------------------------------------
def _blockers(report: CheckReport) -> list[Any]:
    return [lr for lr in report.layers if lr.status == "invalid"]


def _blocked(G: nx.MultiDiGraph, report: CheckReport, blockers: list[Any]) -> ReshapeError:
    path = G.graph.get("xml_path")
    culprits = _culprits(G, report, {lr.id for lr in blockers})
    rows = []
    for lr in blockers:
        row = {"id": lr.id, "name": lr.name, "type": lr.type, "line": lr.line,
               "why": lr.message}
        above = nx.ancestors(G, lr.id) if lr.id in G else set()  # a body layer: none
        upstream = [c for c in culprits if c in above | {lr.id}]
        if upstream:
            names = ", ".join(f"{G.nodes[c]['type']} '{G.nodes[c]['name']}' (id {c})"
                              for c in upstream)
            row["hint"] = f"{names} hard-codes a size that now varies; --fix rewrites it"
        rows.append(row)
    first = rows[0]
    more = f" (and {len(rows) - 1} more layer(s))" if len(rows) > 1 else ""
    hint = f"; {first['hint']}" if "hint" in first else ""
    return ReshapeError(
        f"the model cannot be reshaped: {first['type']} rejects the new shapes: "
        f"{first['why']}{hint}{more}", rows, file=path, line=first["line"],
        layer_name=first["name"], layer_id=first["id"])


# ---- applying the shapes ------------------------------------------------------------------
def _overridden(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]) -> dict[str, PartialShape]:
    """Parameter id -> the new shape given for it (by friendly or tensor name)."""
    out: dict[str, PartialShape] = {}
    for node, attrs in G.nodes(data=True):
        if attrs.get("type") != "Parameter":
            continue
        names = [attrs["name"], *(n for p in attrs["outputs"] for n in p.get("names") or ())]
        for name in names:
            if name in shapes:
                out[node] = as_partial_shape(shapes[name])
                break
    return out


def _dims_text(dims: tuple[int, ...]) -> str:
    return "[" + ",".join("?" if d == -1 else str(d) for d in dims) + "]"


def _new_dims(shape: PartialShape, declared: tuple[int, ...], same: bool) -> tuple[int, ...]:
    """The dims to declare for ``shape``: a static size, else ``-1``. Where the walk is
    less precise than the IR (``?`` where a static size was declared and fits) and the
    new shapes did not change this port, the declared size stays."""
    dims = tuple(shape.to_ir_dims())
    if not same or len(declared) != len(dims):
        return dims
    return tuple(d if d != -1 or v == -1 or not s.lo <= v <= s.hi else v
                 for d, v, s in zip(dims, declared, shape.dims, strict=True))


def _write_dims(G: nx.MultiDiGraph, report: CheckReport,
                old: dict[str, list[PartialShape]], params: dict[str, PartialShape]
                ) -> list[dict[str, Any]]:
    from ..graph.bodies import locate, walk_bodies

    changed = []
    for lr in report.layers:
        # a layer inside a body (path id ``4/body/6``) is written in its body graph; a
        # body Parameter takes the shape its layer feeds it, as Model.reshape gives it
        H, node = (G, lr.id) if lr.id in G else locate(G, lr.id)
        attrs = H.nodes[node]
        if lr.type in ("Const", "Constant") or lr.status not in ("ok", "mismatch"):
            continue
        if lr.type == "Parameter":
            row = _set_parameter(H, node, lr.inferred_shapes[0], lr.id in params or H is not G)
            if row:
                changed.append({**row, "id": lr.id, "name": lr.name})
        before = old.get(lr.id, [])
        for i, (port, shape) in enumerate(zip(attrs["outputs"], lr.inferred_shapes,
                                              strict=False)):
            if shape.rank is None:
                dims: tuple[int, ...] = ()
            else:
                same = i < len(before) and before[i] == shape
                dims = _new_dims(shape, tuple(port["dims"]), same)
            if dims != tuple(port["dims"]):
                if lr.type != "Parameter":
                    changed.append(_row(lr, port, _dims_text(tuple(port["dims"])),
                                        _dims_text(dims)))
                port["dims"] = dims
    _follow_inputs(G)
    for _, _, _, body in walk_bodies(G):
        _follow_inputs(body)
    return changed


def _set_parameter(G: nx.MultiDiGraph, node: str, shape: PartialShape,
                   overridden: bool) -> dict[str, Any] | None:
    data = G.nodes[node]["data"]
    text = data.get("shape")
    if not overridden and text is not None:
        return None
    new = shape_attribute(shape)
    if text == new:
        return None
    data["shape"] = new
    port = G.nodes[node]["outputs"][0]
    lr = G.nodes[node]
    return {"id": node, "name": lr["name"], "type": lr["type"], "port": port["id"],
            "before": "[" + (text if text is not None else "?") + "]", "after": str(shape)}


def _row(lr: Any, port: dict, before: str, after: str) -> dict[str, Any]:
    return {"id": lr.id, "name": lr.name, "type": lr.type, "port": port["id"],
            "before": before, "after": after}


def _follow_inputs(G: nx.MultiDiGraph) -> None:
    """Every input port declares the dims of the output port that feeds it."""
    for u, v, key in G.edges(keys=True):
        dims = output_port(G, u, key[0])["dims"]
        for port in G.nodes[v]["inputs"]:
            if port["id"] == key[1]:
                port["dims"] = dims


def _take_over(G: nx.MultiDiGraph, H: nx.MultiDiGraph) -> None:
    """Make ``G`` the fixed copy ``H`` (same object, so callers keep their reference)."""
    G.clear()
    G.graph.update(H.graph)
    G.add_nodes_from(H.nodes(data=True))
    G.add_edges_from(H.edges(keys=True, data=True))


# ---- fixes --------------------------------------------------------------------------------
def _fix_until_clean(G: nx.MultiDiGraph, shapes: dict[str, Any], report: CheckReport
                     ) -> tuple[list[dict[str, Any]], CheckReport]:
    fixes: list[dict[str, Any]] = []
    for _ in range(MAX_ROUNDS):
        blockers = {lr.id for lr in _blockers(report)}
        if not blockers:
            break
        culprits = _culprits(G, report, blockers)
        if not culprits:
            break
        old, new = infer_shapes(G), {lr.id: lr.inferred_shapes for lr in report.layers}
        with editing(G):
            round_fixes = [f for node in culprits
                           if (f := _FIXERS[G.nodes[node]["type"]](G, node, old, new))]
        if not round_fixes:
            break
        fixes += round_fixes
        report = check(G, shapes)
    return fixes, report


def _culprits(G: nx.MultiDiGraph, report: CheckReport, blockers: set[str]) -> list[str]:
    """Fixable layers (a Const target that hard-codes a size that now varies) upstream of
    a blocking layer, or blocking themselves, in walk order."""
    upstream: set[str] = set(blockers)
    for b in blockers:
        if b in G:  # a layer inside a body has no top-level ancestors of its own
            upstream |= nx.ancestors(G, b)
    old = infer_shapes(G)
    new = {lr.id: lr.inferred_shapes for lr in report.layers}
    return [lr.id for lr in report.layers if lr.id in upstream and lr.type in _FIXERS
            and _plan_target(G, lr.id, old, new)]


def _const_target(G: nx.MultiDiGraph, node: str) -> tuple[str, list[int]] | None:
    """The Const feeding input 1 of ``node`` and its values, when it is a 1-D integer."""
    from ..ir import const_value

    edges = input_edges(G, node)
    if len(edges) < 2 or G.nodes[edges[1][0]]["type"] not in ("Const", "Constant"):
        return None
    try:
        value = const_value(G, edges[1][0])
    except OvgatherError:
        return None
    if value.ndim != 1 or value.dtype.kind not in "iu":
        return None
    return edges[1][0], [int(v) for v in value]


def _varying(old: PartialShape | None, new: PartialShape | None) -> dict[int, int]:
    """Input dim position -> its old static size, for the dims the new shapes change."""
    if old is None or new is None or old.rank is None or new.rank != old.rank:
        return {}
    return {j: a.lo for j, (a, b) in enumerate(zip(old.dims, new.dims, strict=True))
            if a.is_static and a != b}


def _plan_target(G, node, old, new) -> list[tuple[str, int]] | None:
    """For each target entry: ``("copy", j)`` (input dim j, which now varies) or
    ``("const", value)``; None when no entry hard-codes a varying size."""
    attrs = G.nodes[node]
    target = _const_target(G, node)
    if target is None:
        return None
    _, values = target
    varying = _varying(shape_reaching(G, node, 0, old), shape_reaching(G, node, 0, new))
    if not varying:
        return None
    if attrs["type"] == "Broadcast":
        return _plan_broadcast(attrs, values, varying, shape_reaching(G, node, 0, old).rank)
    zero_copies = (attrs.get("data") or {}).get("special_zero") == "true"
    if not zero_copies and 0 in values:
        return None  # a literal 0 size: a target with copies would change its meaning
    used: set[int] = set()
    plan: list[tuple[str, int]] = []
    for i, t in enumerate(values):
        j = None
        if t > 0:
            if varying.get(i) == t and i not in used:
                j = i
            else:
                j = next((k for k, v in varying.items() if v == t and k not in used), None)
        if j is None:
            plan.append(("const", t))
        else:
            used.add(j)
            plan.append(("copy", j))
    return plan if used else None


def _plan_broadcast(attrs, values, varying, rank):
    mode = (attrs.get("data") or {}).get("mode", "numpy")
    if mode not in ("numpy", "bidirectional") or rank is None or len(values) < rank:
        return None
    shift = len(values) - rank
    plan = [("copy", i - shift) if i >= shift and varying.get(i - shift) == t
            else ("const", t) for i, t in enumerate(values)]
    return plan if any(kind == "copy" for kind, _ in plan) else None


def _layer_record(G, node, before, after, why) -> dict[str, Any]:
    attrs = G.nodes[node]
    return {"id": node, "name": attrs["name"], "type": attrs["type"],
            "line": attrs.get("line"), "before": before, "after": after, "why": why}


def _text(values: list) -> str:
    return "[" + ",".join(map(str, values)) + "]"


def _fix_reshape(G, node, old, new) -> dict[str, Any] | None:
    plan = _plan_target(G, node, old, new)
    if plan is None:
        return None
    const, values = _const_target(G, node)
    data = G.nodes[node]["data"]
    before = f"target {_text(values)}, special_zero={data.get('special_zero', 'false')}"
    moved = [j for kind, j in plan if kind == "copy"]
    why = (f"the target hard-codes input dim(s) {', '.join(map(str, moved))}, which the new "
           "shapes change")
    if all(j == i for i, (kind, j) in enumerate(plan) if kind == "copy"):
        zeros = [0 if kind == "copy" else v for kind, v in plan]
        _swap_target(G, node, const, add_const(G, np.array(zeros, dtype=_dtype(G, const)),
                                               name=f"{G.nodes[node]['name']}/target"))
        data["special_zero"] = "true"
        return _layer_record(G, node, before, f"target {_text(zeros)}, special_zero=true", why)
    target = _shape_of_target(G, node, plan)
    after = "target " + _text([f"shape[{v}]" if kind == "copy" else str(v)
                               for kind, v in plan])
    _swap_target(G, node, const, target)
    return _layer_record(G, node, before, f"{after} (ShapeOf of its input), special_zero="
                         f"{data.get('special_zero', 'false')}", why)


def _fix_broadcast(G, node, old, new) -> dict[str, Any] | None:
    plan = _plan_target(G, node, old, new)
    if plan is None:
        return None
    const, values = _const_target(G, node)
    attrs = G.nodes[node]
    data = attrs["data"]
    before = f"target {_text(values)}, mode={data.get('mode', 'numpy')}"
    ones = [1 if kind == "copy" else v for kind, v in plan]
    _swap_target(G, node, const, add_const(G, np.array(ones, dtype=_dtype(G, const)),
                                           name=f"{attrs['name']}/target"))
    data["mode"] = "bidirectional"
    attrs["version"] = "opset3"
    moved = [j for kind, j in plan if kind == "copy"]
    return _layer_record(G, node, before, f"target {_text(ones)}, mode=bidirectional",
                         f"the target hard-codes data dim(s) {', '.join(map(str, moved))}, "
                         "which the new shapes change")


_FIXERS = {"Reshape": _fix_reshape, "Broadcast": _fix_broadcast}


def _dtype(G: nx.MultiDiGraph, const: str) -> np.dtype:
    from ..ir import const_value

    return const_value(G, const).dtype


def _swap_target(G: nx.MultiDiGraph, node: str, old: str, new: str) -> None:
    """Feed input 1 of ``node`` from ``new`` instead of the Const ``old`` (removed when
    nothing else reads it)."""
    port = G.nodes[node]["inputs"][1]["id"]
    src = producer(G, node, port)
    G.remove_edge(src[0], node, key=(src[1], port))
    new_port = G.nodes[new]["outputs"][0]["id"]
    G.add_edge(new, node, key=(new_port, port), from_port=new_port, to_port=port, line=None)
    if not consumers(G, old, src[1]) and G.out_degree(old) == 0:
        remove_layer(G, old)


def _shape_of_target(G: nx.MultiDiGraph, node: str, plan: list[tuple[str, int]]) -> str:
    """``Concat`` of Const runs and single dims of ``ShapeOf(input 0)``: the target with
    its copies measured at run time (passes.building). It is i64 whatever
    the old Const was: Reshape takes any integer target."""
    name = G.nodes[node]["name"]
    u, from_port, _ = input_edges(G, node)[0]
    rank = len(output_port(G, u, from_port)["dims"]) or None
    shape = shape_of(G, (u, from_port), rank, f"{name}/input_shape")
    parts: list[str] = []
    run: list[int] = []
    for kind, v in [*plan, ("end", 0)]:
        if kind != "const" and run:
            parts.append(add_const(G, np.array(run, dtype=np.int64), name=f"{name}/sizes"))
            run = []
        if kind == "const":
            run.append(v)
        elif kind == "copy":
            parts.append(slice_of(G, shape, v, v + 1, f"{name}/dim{v}"))
    return concat(G, parts, len(plan), f"{name}/target")


# ---- what new shapes change, without rewriting -----------------------------------------


def reshape_effect(G: nx.MultiDiGraph, shapes: dict[str, str],
                   after: Any = None) -> dict[str, list[dict]]:
    """What ``--shape`` overrides do to the model, layer by layer.

    ``changed``: the layers whose inferred output differs from the one the model as
    written gives (``before`` and ``after`` texts). ``stopped``: the layers where the
    change stops, so a user who reshapes a model sees which layer blocks it and why: a
    layer that becomes invalid (a Reshape with a hard-coded target whose element count
    no longer fits, a gather whose batch dims now clash), or a Reshape or Broadcast whose
    data changed while its output did not (a hard-coded target that swallows the change).
    ``after`` reuses ``infer.check(G, shapes)`` when the caller already has it.
    """
    before = {lr.id: lr for lr in check(G).layers}
    after = {lr.id: lr for lr in (after or check(G, shapes=shapes)).layers}
    moved = {n for n in after if n in before and after[n].inferred != before[n].inferred}
    changed, stopped = [], []
    for n, lr in after.items():
        row = {"id": n, "name": lr.name, "type": lr.type, "before": before[n].inferred,
               "after": lr.inferred, "status": lr.status}
        if n in moved:
            changed.append(row)
        if lr.status == "invalid" and before[n].status != "invalid":
            stopped.append({**row, "why": lr.message})
        elif n not in moved and _holds_shape(G, n, moved):
            stopped.append({**row, "why": f"its data input changed but its target shape is "
                                          f"fixed: the output stays {', '.join(lr.inferred)}"})
    return {"changed": changed, "stopped": stopped}


def _holds_shape(G: nx.MultiDiGraph, node: str, moved: set[str]) -> bool:
    """A Reshape/Broadcast whose data input changed and whose target is a Const (``node``
    may be a body layer's path id, ``4/body/6``: its inputs are then in that body)."""
    H, local = locate(G, node) or (G, node)
    if H.nodes[local]["type"] not in ("Reshape", "Broadcast"):
        return False
    prefix = node[:len(node) - len(local)]
    edges = input_edges(H, local)
    return (len(edges) >= 2 and prefix + edges[0][0] in moved
            and H.nodes[edges[1][0]]["type"] in ("Const", "Constant"))
