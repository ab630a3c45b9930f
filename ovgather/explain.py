"""Explain one gather layer: the shape rule walked step by step, in plain words.

A user who sees ``mismatch`` or ``invalid`` on a GatherND wants to know *why*: what
``b`` and ``k`` are, how the batch dims merge, what the output would be under
GatherND-5 (batch dims folded into one), GatherND-8 (kept) and ONNX, and which rule
breaks. :func:`explain_gather_nd` walks OpenVINO's checks in OpenVINO's order
(openvino-facts.md §1) on two shapes; :func:`explain_layer` finds the layer in a graph,
takes its input shapes from ovgather's inference and adds what the IR declares.

>>> e = explain_gather_nd("[1,64,64,320]", "[1,64,64,1,1]", batch_dims=3)
>>> e.outputs["GatherND-5"], e.outputs["GatherND-8"]
('[4096,1]', '[1,64,64,1]')
>>> explain_gather_nd("[2,3,4,5]", "[2,1,2]", batch_dims=2).failed_rule
'the batch dims of data and indices must be the same'

Nothing here imports openvino; the tests compare every answer with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from . import graph as g
from .errors import UsageError
from .ir import ELEMENT_TYPES
from .shapes import Dimension, PartialShape, ShapeLike, as_partial_shape

__all__ = [
    "Step",
    "Explanation",
    "explain_gather_nd",
    "explain_gather",
    "explain_gather_elements",
    "explain_layer",
    "find_layer",
    "port_shapes",
    "check_rows",
    "layer_statuses",
    "declared_shape",
    "element_type",
    "GATHER_TYPES",
    "reshape_effect",
]

#: The op types explain, extract and show treat as "gather layers".
GATHER_TYPES = ("GatherND", "GatherElements", "Gather")

_V5, _V8, _ONNX, _ONNX11 = "GatherND-5", "GatherND-8", "ONNX GatherND-12/13", "ONNX GatherND-11"

#: IR port precision → element type text (openvino-facts.md §6).
_PRECISION_TO_TYPE = {e.precision: name for name, e in ELEMENT_TYPES.items()}
_PRECISION_TO_TYPE["UNSPECIFIED"] = "dynamic"
_NOT_INDEX_TYPES = ("f64", "f32", "f16", "bf16", "nf4", "f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1",
                    "boolean")


def element_type(precision: str | None) -> str | None:
    """The element type (``f32``, ``i64``, ``boolean``) that an IR port precision names."""
    if precision is None:
        return None
    return _PRECISION_TO_TYPE.get(precision.upper(), precision.lower())


@dataclass
class Step:
    """One rule of the walk: what it says, whether it holds, and what was seen."""

    rule: str
    ok: bool
    detail: str


@dataclass
class Explanation:
    """The rule walk of one gather layer (``to_json()`` / ``to_text()`` for the CLI)."""

    op: str
    data: str
    indices: str
    indices_type: str | None
    batch_dims: int
    k: str | None = None
    batch: list[dict[str, str | None]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    outputs: dict[str, str | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    failed_rule: str | None = None
    layer: dict[str, Any] | None = None
    axis: int | None = None

    def add(self, rule: str, ok: bool, detail: str) -> bool:
        self.steps.append(Step(rule, ok, detail))
        if not ok and self.failed_rule is None:
            self.failed_rule = rule
        return ok

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "op": self.op,
            "inputs": {"data": self.data, "indices": self.indices,
                       "indices_type": self.indices_type},
            "batch_dims": self.batch_dims,
            "axis": self.axis,
            "k": self.k,
            "batch": self.batch,
            "steps": [{"rule": s.rule, "ok": s.ok, "detail": s.detail} for s in self.steps],
            "outputs": self.outputs,
            "notes": self.notes,
            "failed_rule": self.failed_rule,
        }

    def to_text(self) -> str:
        return "\n".join(_text_lines(self))


# ---- the walk on shapes -------------------------------------------------------------


def explain_gather_nd(
    data: ShapeLike,
    indices: ShapeLike,
    batch_dims: int = 0,
    indices_type: str | None = None,
) -> Explanation:
    """Walk GatherND's shape rule on ``data`` and ``indices`` and say what each version gives.

    The checks run in OpenVINO's order, and the first broken one ends the walk (later
    ones cannot be judged on broken inputs). GatherND-5 and -8 share every check and
    differ only in the final fold, so a broken rule fails both.
    """
    D, Ix = as_partial_shape(data), as_partial_shape(indices)
    e = Explanation("GatherND", str(D), str(Ix), indices_type, batch_dims)
    b = batch_dims
    if not _check_inputs(e, D, Ix, b):
        return _fail_all(e)
    if D.rank is None or Ix.rank is None or Ix[-1].is_dynamic:
        why = "the rank of data or indices is unknown" if D.rank is None or Ix.rank is None \
            else f"k = I[-1] = {Ix[-1]} is not static"
        e.add("k and both ranks must be known to build the output", True,
              f"{why}, so OpenVINO gives a dynamic rank and checks nothing more")
        e.k = None if Ix.rank is None else str(Ix[-1])
        for key in (_V8, _V5, _ONNX):
            e.outputs[key] = "[...]"
        _onnx11(e)
        return e
    k = Ix[-1].lo
    e.k = str(k)
    if not e.add("b + k must not exceed the rank of data", b + k <= D.rank,
                 f"b + k = {b} + {k} = {b + k}, rank D = {D.rank}"):
        return _fail_all(e)
    merged = _merge_batch(e, D, Ix, b)
    if merged is None:
        return _fail_all(e)
    _outputs(e, D, Ix, b, k, merged)
    return e


def _check_inputs(e: Explanation, D: PartialShape, Ix: PartialShape, b: int) -> bool:
    t = e.indices_type
    if t is not None and t.lower() in _NOT_INDEX_TYPES:
        return e.add("indices must be of an integer type", False, f"indices are {t}")
    if t is not None:
        e.add("indices must be of an integer type", True, f"indices are {t}")
    if b < 0:
        return e.add("batch_dims must not be negative", False, f"b = {b}")
    for what, s in (("data", D), ("indices", Ix)):
        if s.rank is None:
            e.add(f"{what} rank must be at least 1 and greater than b", True,
                  f"the rank of {what} is unknown, nothing to check")
            continue
        if not e.add(f"{what} rank must be at least 1", s.rank >= 1, f"rank = {s.rank}"):
            return False
        if not e.add(f"b must be less than the rank of {what}", b < s.rank,
                     f"b = {b}, rank = {s.rank}"):
            return False
    return True


def _merge_batch(
    e: Explanation, D: PartialShape, Ix: PartialShape, b: int
) -> list[Dimension] | None:
    merged: list[Dimension] = []
    seen = []
    for axis in range(b):
        m = D[axis] & Ix[axis]
        e.batch.append({"axis": str(axis), "data": str(D[axis]), "indices": str(Ix[axis]),
                        "merged": None if m is None else str(m)})
        seen.append(f"axis {axis}: {D[axis]} & {Ix[axis]} -> {'none' if m is None else m}")
        if m is None:
            e.add("the batch dims of data and indices must be the same", False,
                  "; ".join(seen) + " (these sizes can never be equal)")
            return None
        merged.append(m)
    detail = "; ".join(seen) if seen else "b = 0: no batch dims"
    e.add("the batch dims of data and indices must be the same", True, detail)
    return merged


def _outputs(
    e: Explanation, D: PartialShape, Ix: PartialShape, b: int, k: int, merged: list[Dimension]
) -> None:
    middle, tail = Ix[b:-1], D[b + k:]
    kept = PartialShape.of(tuple(merged)) + middle + tail
    e.outputs[_V8] = str(kept)
    e.notes[_V8] = (f"batch dims kept: {_dims(merged)} + I[b:-1] = {middle} + "
                    f"D[b+k:] = {tail} -> {kept}")
    if b > 1:
        product = merged[0]
        for d in merged[1:]:
            product = product * d
        folded = PartialShape.of((product,)) + middle + tail
        e.outputs[_V5] = str(folded)
        e.notes[_V5] = (f"batch dims folded into one: {' x '.join(map(str, merged))} = "
                        f"{product} -> {folded}")
    else:
        e.outputs[_V5] = str(kept)
        e.notes[_V5] = f"b = {b} <= 1: nothing to fold, the same as GatherND-8 -> {kept}"
    if k == 0:
        e.outputs[_ONNX] = None
        e.notes[_ONNX] = "ONNX needs k >= 1 (OpenVINO accepts k = 0: whole slices)"
    else:
        e.outputs[_ONNX] = str(kept)
        e.notes[_ONNX] = "the same layout as GatherND-8; OpenVINO imports it as GatherND-8"
    _onnx11(e)


def _onnx11(e: Explanation) -> None:
    if e.batch_dims == 0:
        e.outputs[_ONNX11] = e.outputs.get(_ONNX)
        e.notes[_ONNX11] = "b = 0: the same as GatherND-12/13"
    else:
        e.outputs[_ONNX11] = None
        e.notes[_ONNX11] = "GatherND-11 and com.microsoft GatherND have no batch_dims: b must be 0"


def _fail_all(e: Explanation) -> Explanation:
    for key in (_V8, _V5, _ONNX, _ONNX11):
        e.outputs[key] = None
        e.notes[key] = f"invalid: {e.failed_rule}"
    return e


def _dims(dims: list[Dimension]) -> str:
    return "[" + ",".join(map(str, dims)) + "]"


# ---- the other gather ops (a shorter walk: their rule's answer or its broken rule) ----


def explain_gather(
    data: ShapeLike, indices: ShapeLike, axis: int | None, batch_dims: int = 0,
    version: int = 8, indices_type: str | None = None,
) -> Explanation:
    """Gather-``version``: ``D[:axis] + I[b:] + D[axis+1:]`` (``axis`` None: not a Const)."""
    from .ops import infer_gather

    D, Ix = as_partial_shape(data), as_partial_shape(indices)
    e = Explanation("Gather", str(D), str(Ix), indices_type, batch_dims)
    e.axis = axis
    rule = (f"output = D[:axis] + I[b:] + D[axis+1:] with axis = "
            f"{'unknown (not a Const)' if axis is None else axis}, b = {batch_dims}")
    return _by_rule(e, f"Gather-{version}", rule,
                    lambda: infer_gather(D, Ix, axis, batch_dims, version, indices_type))


def explain_gather_elements(
    data: ShapeLike, indices: ShapeLike, axis: int, indices_type: str | None = None,
) -> Explanation:
    """GatherElements-6: the output has the shape of indices (merged with data off axis)."""
    from .ops import infer_gather_elements

    D, Ix = as_partial_shape(data), as_partial_shape(indices)
    e = Explanation("GatherElements", str(D), str(Ix), indices_type, 0)
    e.axis = axis
    rule = (f"axis = {axis}: same rank, the output takes the indices shape (merged with "
            "data on every other axis)")
    return _by_rule(e, "GatherElements-6", rule,
                    lambda: infer_gather_elements(D, Ix, axis, indices_type))


def _by_rule(e: Explanation, key: str, rule: str, infer) -> Explanation:
    from .errors import ShapeInferenceError

    try:
        out = infer()
    except ShapeInferenceError as err:
        e.add(rule, False, err.message)
        e.outputs[key] = None
        e.notes[key] = f"invalid: {err.message}"
        return e
    e.add(rule, True, f"-> {out}")
    e.outputs[key] = str(out)
    return e


# ---- the layer in a model -------------------------------------------------------------


def find_layer(G: nx.MultiDiGraph, name: str) -> str:
    """The id of the layer whose friendly name is ``name``, or failing that whose id is
    ``name``, or one of whose output tensors is named ``name`` (what an ONNX user knows:
    OpenVINO names a converted layer after its output tensor).

    A UsageError lists the gather layers when nothing matches, since that is what a
    user of explain/extract/show usually looks for.
    """
    matches = [n for n, nm in G.nodes(data="name") if nm == name]
    if len(matches) == 1:
        return matches[0]
    if not matches and name in G:
        return name
    if not matches:
        by_tensor = [n for n, outs in G.nodes(data="outputs")
                     if any(name in (p.get("names") or ()) for p in outs)]
        if len(by_tensor) == 1:
            return by_tensor[0]
    where = _where(G)
    if matches:
        raise UsageError(f"layer name '{name}' is not unique (ids {', '.join(matches)}); "
                         "give the layer id instead", file=where)
    gathers = [G.nodes[n]["name"] for n in G if G.nodes[n]["type"] in GATHER_TYPES]
    hint = f"; gather layers: {', '.join(gathers[:12])}" if gathers else ""
    raise UsageError(f"no layer named '{name}'{hint}", file=where)


def _where(G: nx.MultiDiGraph) -> str | None:
    """The file a user gave for ``G``: its IR, or the ONNX model it was converted from."""
    return G.graph.get("xml_path") or G.graph.get("source_path")


def declared_shape(G: nx.MultiDiGraph, node: str, port_id: int) -> PartialShape:
    """What the IR says about an output port: the ``shape`` attribute of a Parameter or
    Const (it keeps intervals and tells a scalar from a dynamic rank), else its dims;
    an empty dim list of another layer is taken as unknown rank."""
    attrs = G.nodes[node]
    if attrs["type"] in ("Parameter", "Const", "Constant") and "shape" in attrs["data"]:
        return PartialShape.parse(attrs["data"]["shape"])
    dims = g.output_port(G, node, port_id)["dims"]
    return PartialShape(dims) if dims else PartialShape.dynamic()


def check_rows(G: nx.MultiDiGraph, shapes: dict[str, str] | None) -> dict[str, dict]:
    """ovgather's whole-model check, ``{layer id: row}`` with status, inferred texts and
    the message (the JSON row of SPEC.md §3)."""
    from .infer import check

    return {lr.id: lr.to_dict() for lr in check(G, shapes=shapes).layers}


def port_shapes(
    G: nx.MultiDiGraph, shapes: dict[str, str] | None = None,
    rows: dict[str, dict] | None = None,
) -> dict[tuple[str, int], PartialShape]:
    """The shape of every output port ``(layer, port id)``: ovgather's inferred one where
    the check report has it, the declared one otherwise. ``rows`` reuses a report."""
    rows = check_rows(G, shapes) if rows is None else rows
    out: dict[tuple[str, int], PartialShape] = {}
    for node, attrs in G.nodes(data=True):
        inferred = (rows.get(node) or {}).get("inferred") or []
        for pos, port in enumerate(attrs["outputs"]):
            text = inferred[pos] if pos < len(inferred) else None
            out[node, port["id"]] = (PartialShape.parse(text) if text is not None
                                     else declared_shape(G, node, port["id"]))
    return out


def layer_statuses(
    G: nx.MultiDiGraph, shapes: dict[str, str] | None = None,
    rows: dict[str, dict] | None = None,
) -> dict[str, dict[str, Any]]:
    """``{layer id: check row}`` (status, declared, inferred, message); every layer that
    the report does not mention is ``unchecked``."""
    rows = check_rows(G, shapes) if rows is None else rows
    return {n: rows.get(n, {"status": "unchecked"}) for n in G}


def explain_layer(
    G: nx.MultiDiGraph, layer: str, shapes: dict[str, str] | None = None
) -> Explanation:
    """Explain the gather layer named (or with id) ``layer`` of the model ``G``."""
    node = find_layer(G, layer)
    attrs = G.nodes[node]
    if attrs["type"] not in GATHER_TYPES:
        raise UsageError(f"explain works on gather layers ({', '.join(GATHER_TYPES)}), but "
                         f"'{attrs['name']}' is a {attrs['type']}",
                         file=_where(G), line=attrs.get("line"),
                         layer_name=attrs["name"], layer_id=node)
    rows = check_rows(G, shapes)
    known = port_shapes(G, shapes, rows)
    ins = g.input_edges(G, node)
    inputs = [known.get((u, fp), PartialShape.dynamic()) for u, fp, _ in ins]
    types = [element_type(g.output_port(G, u, fp).get("precision")) for u, fp, _ in ins]
    if len(inputs) < 2:
        raise UsageError(f"a {attrs['type']} layer needs data and indices inputs, but "
                         f"'{attrs['name']}' has {len(inputs)}", file=_where(G),
                         line=attrs.get("line"), layer_name=attrs["name"], layer_id=node)
    e = _explain_inputs(G, node, inputs, types)
    e.layer = _layer_info(G, node, rows.get(node, {}))
    e.layer["declared_layout"] = _layout_of(e)
    return e


def _layout_of(e: Explanation) -> str | None:
    """Which version's output the declared dims are, when they are exactly one of them:
    a GatherND-8 declaring ``[4096,1]`` has the GatherND-5 layout (a common hand edit)."""
    declared = (e.layer or {}).get("declared") or []
    if len(declared) != 1:
        return None
    names = [k for k, v in e.outputs.items() if v == declared[0] and "ONNX" not in k]
    return names[0] if len(names) == 1 else None


def _explain_inputs(G: nx.MultiDiGraph, node: str, inputs: list[PartialShape],
                    types: list[str | None]) -> Explanation:
    attrs = G.nodes[node]
    op = attrs["type"]
    if op == "GatherND":
        b = _int_attr(G, node, "batch_dims", "0")
        return explain_gather_nd(inputs[0], inputs[1], b, types[1])
    if op == "GatherElements":
        return explain_gather_elements(inputs[0], inputs[1], _int_attr(G, node, "axis", "0"),
                                       types[1])
    version = attrs.get("op_version") or 8
    b = _int_attr(G, node, "batch_dims", "0")
    return explain_gather(inputs[0], inputs[1], _const_axis(G, node), b, version, types[1])


def _int_attr(G: nx.MultiDiGraph, node: str, name: str, default: str) -> int:
    attrs = G.nodes[node]
    try:
        return int(attrs["data"].get(name, default))
    except ValueError:
        raise UsageError(f"{name} must be an integer, but got '{attrs['data'].get(name)}'",
                         file=_where(G), line=attrs.get("line"),
                         layer_name=attrs["name"], layer_id=node) from None


def _const_axis(G: nx.MultiDiGraph, node: str) -> int | None:
    """The axis of a Gather when its third input is a one-element Const, else None."""
    from .ir import const_value

    edges = g.input_edges(G, node)
    if len(edges) < 3 or G.nodes[edges[2][0]]["type"] not in ("Const", "Constant"):
        return None
    value = const_value(G, edges[2][0])
    return int(value.reshape(-1)[0]) if value.size == 1 else None


def _layer_info(G: nx.MultiDiGraph, node: str, row: dict[str, Any]) -> dict[str, Any]:
    attrs = G.nodes[node]
    declared = [str(PartialShape(p["dims"])) if p["dims"] else "[]" for p in attrs["outputs"]]
    return {"id": node, "name": attrs["name"], "type": attrs["type"],
            "version": attrs.get("version"), "op_version": attrs.get("op_version"),
            "line": attrs.get("line"), "declared": declared,
            "status": row.get("status", "unchecked"), "inferred": row.get("inferred"),
            "message": row.get("message") or None}


# ---- text ---------------------------------------------------------------------------------


def _text_lines(e: Explanation) -> list[str]:
    lines = []
    if e.layer:
        L = e.layer
        where = f", line {L['line']}" if L.get("line") else ""
        lines.append(f"{L['type']} '{L['name']}' (id {L['id']}), {L['type']}-{L['op_version']} "
                     f"in the IR ({L['version']}){where}")
    lines.append(f"  data     D = {e.data}")
    typed = f"   ({e.indices_type})" if e.indices_type else ""
    lines.append(f"  indices  I = {e.indices}{typed}")
    if e.axis is not None or e.op == "Gather":
        lines.append(f"  axis = {'unknown (not a Const)' if e.axis is None else e.axis}")
    if e.op != "GatherElements":
        lines.append(f"  b = batch_dims = {e.batch_dims}")
    if e.op == "GatherND" and e.k is not None:
        lines.append(f"  k = I[-1] = {e.k}   (each index tuple picks along k dims of data "
                     "after the batch dims)")
    lines.append("rules")
    for s in e.steps:
        lines.append(f"  {'ok  ' if s.ok else 'FAIL'}  {s.rule}: {s.detail}")
    lines.append("output")
    for key, value in e.outputs.items():
        note = e.notes.get(key)
        lines.append(f"  {key:<20} {value if value is not None else '-'}"
                     + (f"   ({note})" if note else ""))
    if e.layer:
        layout = e.layer.get("declared_layout")
        mine = f"{e.layer['type']}-{e.layer['op_version']}"
        hint = f" (the {layout} layout, but the layer is {mine})" \
            if layout and layout != mine else ""
        lines.append(f"declared by the IR: {', '.join(e.layer['declared'])}{hint}; "
                     f"check status: {e.layer['status']}")
    if e.failed_rule:
        lines.append(f"invalid: {e.failed_rule}")
    return lines


# ---- what a reshape changes -----------------------------------------------------------------


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
    from .infer import check

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
    """A Reshape/Broadcast whose data input changed and whose target is a Const."""
    if G.nodes[node]["type"] not in ("Reshape", "Broadcast"):
        return False
    edges = g.input_edges(G, node)
    return (len(edges) >= 2 and edges[0][0] in moved
            and G.nodes[edges[1][0]]["type"] in ("Const", "Constant"))
