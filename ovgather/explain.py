"""Explain one gather layer: the shape rule walked step by step, in plain words.

A user who sees ``mismatch`` or ``invalid`` on a GatherND wants to know *why*: what
``b`` and ``k`` are, how the batch dims merge, what the output would be under
GatherND-5 (batch dims folded into one), GatherND-8 (kept) and ONNX, and which rule
breaks. Nothing here re-derives a rule: :func:`explain_op` runs the op's own shape rule
(the one ``check`` runs, found through its spec) with a :class:`~ovgather.ops.core.spec.Trace`
and prints the steps it recorded, so ``explain`` and ``check`` agree by construction.
:func:`explain_layer` finds the layer in a graph, takes its input shapes from ovgather's
inference and adds what the IR declares.

>>> e = explain_gather_nd("[1,64,64,320]", "[1,64,64,1,1]", batch_dims=3)
>>> e.outputs["GatherND-5"], e.outputs["GatherND-8"]
('[4096,1]', '[1,64,64,1]')
>>> explain_gather_nd("[2,3,4,5]", "[2,1,2]", batch_dims=2).failed_rule
'the leading batch_dims dims of data and indices must match'

Nothing here imports openvino; the tests compare every answer with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from . import graph as g
from .element_types import element_type_name
from .errors import ShapeInferenceError, UnsupportedOpError, UsageError
from .ops import gather, gather_elements, gather_nd
from .ops.core import registry
from .ops.core.spec import Attrs, OpSpec, Step, Trace
from .ops.core.values import Tensor
from .shapes import PartialShape, ShapeLike, as_partial_shape

__all__ = [
    "Step",
    "Explanation",
    "explain_op",
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
    "gather_types",
    "reshape_effect",
]


def gather_types() -> tuple[str, ...]:
    """The op types explain, extract and show treat as "gather layers"."""
    return registry.family("gather")


def element_type(precision: str | None) -> str | None:
    """The element type (``f32``, ``i64``, ``boolean``) that an IR port precision names."""
    return None if precision is None else element_type_name(precision)


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
    facts: dict[str, Any] = field(default_factory=dict)

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


# ---- the walk: the op's own rule, traced ------------------------------------------------


def _run(spec: OpSpec, ins: list[Tensor], attrs: Mapping[str, str]) -> tuple[Any, Trace]:
    """The spec's rule on ``ins``: its output shape (or the error) and the trace."""
    trace = Trace()
    try:
        return spec.infer(ins, attrs, 1, trace)[0].shape, trace
    except ShapeInferenceError as err:
        if trace.failed_rule is None:  # an attribute the rule could not even read
            trace.steps.append(Step(err.message, False, "the layer's attributes"))
        return err, trace


def explain_op(op_type: str, ins: list[Tensor], attrs: Mapping[str, str] | None = None,
               version: int | None = None) -> Explanation:
    """Run every version of ``op_type``'s rule on ``ins`` and explain the one of
    ``version`` (the newest when None) step by step; the others give their outputs."""
    attrs = dict(attrs or {})
    versions = registry.specs(op_type)
    if not versions:
        raise UnsupportedOpError(f"ovgather has no shape rule for {op_type}")
    main = next((s for s in versions if s.version == version), versions[-1])
    data, indices = ins[0], ins[1]
    e = Explanation(op_type, str(data.shape), str(indices.shape), _shown_type(indices.etype),
                    _batch_dims(attrs))
    for s in (main, *(v for v in versions if v is not main)):  # the layer's own first
        out, trace = _run(s, ins, attrs)
        if s is main:
            e.steps, e.facts = trace.steps, trace.facts
            e.failed_rule = trace.failed_rule
        failed = isinstance(out, ShapeInferenceError)
        e.outputs[s.name] = None if failed else str(out)
        e.notes[s.name] = f"invalid: {trace.failed_rule}" if failed else trace.facts.get("note", "")
    if main.views is not None:
        for name, (out, note) in main.views(e.outputs, e.facts, Attrs(attrs)).items():
            e.outputs[name], e.notes[name] = out, note
    if e.failed_rule is not None:
        for name in e.outputs:
            e.outputs[name], e.notes[name] = None, f"invalid: {e.failed_rule}"
    e.notes = {k: v for k, v in e.notes.items() if v}
    e.k, e.batch = e.facts.get("k"), e.facts.get("batch") or []
    e.axis = e.facts.get("axis")
    return e


def _batch_dims(attrs: Mapping[str, str]) -> int:
    """The batch_dims shown beside the walk (0 when it is not a number: the walk's own
    first step then says why the attribute is wrong)."""
    try:
        return Attrs(attrs).int("batch_dims", 0)
    except ShapeInferenceError:
        return 0


def _shown_type(etype: str | None) -> str | None:
    return None if etype in (None, "dynamic") else etype


def _tensors(data: ShapeLike, indices: ShapeLike, indices_type: str | None,
             axis: int | None = None) -> list[Tensor]:
    ins = [Tensor(as_partial_shape(data)), Tensor(as_partial_shape(indices),
                                                  indices_type or "dynamic")]
    if axis is not None:
        ins.append(Tensor(PartialShape.of(()), "i64", ((axis,), (axis,))))
    return ins


def explain_gather_nd(
    data: ShapeLike, indices: ShapeLike, batch_dims: int = 0, indices_type: str | None = None,
) -> Explanation:
    """Walk GatherND's shape rule on ``data`` and ``indices`` and say what each version
    (and ONNX) gives; the checks run in OpenVINO's order, the first broken one ends it."""
    return explain_op(gather_nd.OP_TYPE, _tensors(data, indices, indices_type),
                      {"batch_dims": str(batch_dims)}, 8)


def explain_gather(
    data: ShapeLike, indices: ShapeLike, axis: int | None, batch_dims: int = 0,
    version: int = 8, indices_type: str | None = None,
) -> Explanation:
    """Gather-``version``: ``D[:axis] + I[b:] + D[axis+1:]`` (``axis`` None: not a Const)."""
    ins = _tensors(data, indices, indices_type, axis)
    if axis is None:
        ins.append(Tensor(PartialShape.of(()), "i64"))
    return explain_op(gather.OP_TYPE, ins, {"batch_dims": str(batch_dims)}, version)


def explain_gather_elements(
    data: ShapeLike, indices: ShapeLike, axis: int, indices_type: str | None = None,
) -> Explanation:
    """GatherElements-6: the output has the shape of indices (merged with data off axis)."""
    return explain_op(gather_elements.OP_TYPE, _tensors(data, indices, indices_type),
                      {"axis": str(axis)})


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
    inner = _inside(G, name)
    if inner is not None:
        raise UsageError(inner, file=where)
    gathers = [G.nodes[n]["name"] for n in G if G.nodes[n]["type"] in gather_types()]
    hint = f"; gather layers: {', '.join(gathers[:12])}" if gathers else ""
    raise UsageError(f"no layer named '{name}'{hint}", file=where)


def _inside(G: nx.MultiDiGraph, name: str) -> str | None:
    """Why a body layer's path names no layer here: it sits in a body, and only the
    layer holding the body can be cut out or drawn."""
    from .graph.bodies import body_layers, inside_words

    for path_id, path_name, owner, _ in body_layers(G):
        if name in (path_id, path_name):
            top = path_id.split("/", 1)[0]
            return (f"'{name}' is {inside_words(owner)}: this command works on top-level "
                    f"layers only; name the {G.nodes[top]['type']} "
                    f"'{G.nodes[top]['name']}' (id {top}) instead")
    return None


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
    the message (the JSON row of docs/json.md)."""
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
    """Explain the gather layer named (or with id) ``layer`` of the model ``G``: its own
    rule on the very inputs ``check`` gives it (``infer.input_tensors``).

    A gather inside a TensorIterator, Loop or If body is named by its path, as ``check``
    lists it (``loop/body/gather`` or ``4/body/6``) and explained on the inputs the
    body's last run gave it; the TensorIterator, Loop or If itself gets its rule in
    words: how each input feeds the body, how each output is made of a body Result."""
    from .infer import input_tensors

    try:
        node = find_layer(G, layer)
    except UsageError:
        inner = _explain_body_layer(G, layer, shapes)
        if inner is None:
            raise
        return inner
    attrs = G.nodes[node]
    where = {"file": _where(G), "line": attrs.get("line"), "layer_name": attrs["name"],
             "layer_id": node}
    if attrs.get("bodies"):
        return _explain_bodies(G, node, shapes)
    spec = _gather_spec(attrs, attrs["name"], where)
    e = _explain_gather(attrs, attrs["name"], input_tensors(G, node, shapes), spec, where)
    e.layer = _layer_info(G, node, check_rows(G, shapes).get(node, {}), spec)
    e.layer["declared_layout"] = _layout_of(e)
    return e


def _gather_spec(attrs: dict[str, Any], name: str, where: dict[str, Any]) -> Any:
    """The spec of the gather layer ``attrs`` (named ``name`` in messages); a UsageError
    for any other op."""
    if attrs["type"] not in gather_types():
        raise UsageError(f"explain works on gather layers ({', '.join(gather_types())}), but "
                         f"'{name}' is a {attrs['type']}", **where)
    try:
        return registry.find(attrs["type"], attrs.get("version"))
    except UnsupportedOpError as err:
        raise err.located(**where) from None


def _explain_gather(attrs: dict[str, Any], name: str, ins: list, spec: Any,
                    where: dict[str, Any]) -> Explanation:
    """The rule of the gather layer ``attrs`` walked on ``ins`` (its layer info unset)."""
    if len(ins) < 2:
        raise UsageError(f"a {attrs['type']} layer needs data and indices inputs, but "
                         f"'{name}' has {len(ins)}", **where)
    return explain_op(attrs["type"], ins, attrs.get("data"), spec.version)


def _explain_body_layer(G: nx.MultiDiGraph, layer: str, shapes: dict[str, str] | None
                        ) -> Explanation | None:
    """The explanation of the body layer whose path is ``layer``, None when none is."""
    from .graph.bodies import body_layers
    from .infer import body_runs
    from .infer.inputs import tensors_reaching as _inputs

    rows = [r for r in body_layers(G) if layer in (r[0], r[1])]
    if len(rows) != 1:
        return None
    path_id, path_name, _, attrs = rows[0]
    where = {"file": _where(G), "line": attrs.get("line"), "layer_name": path_name,
             "layer_id": path_id}
    spec = _gather_spec(attrs, path_name, where)
    report, runs = body_runs(G, shapes)
    prefix, inner = path_id.rsplit("/", 1)
    if prefix + "/" not in runs:
        raise UsageError(f"the body holding '{path_name}' was not run (the layer holding it "
                         "is invalid or unchecked: see ovgather check)", **where)
    H, produced = runs[prefix + "/"]
    e = _explain_gather(attrs, path_name, _inputs(H.nodes[inner], H._pred[inner], produced),
                        spec, where)
    row = next((lr.to_dict() for lr in report.layers if lr.id == path_id), {})
    e.layer = {**_layer_info(H, inner, row, spec), "id": path_id, "name": path_name}
    e.layer["declared_layout"] = _layout_of(e)
    return e


def _explain_bodies(G: nx.MultiDiGraph, node: str, shapes: dict[str, str] | None
                    ) -> Explanation:
    """A TensorIterator, Loop or If: its rule in words, one step per port map entry."""
    from .infer import input_tensors

    attrs = G.nodes[node]
    op = attrs["type"]
    ins = input_tensors(G, node, shapes)
    row = check_rows(G, shapes).get(node, {})
    try:
        spec = registry.find(op, attrs.get("version"))
    except UnsupportedOpError:
        spec = None
    e = Explanation(op, " ".join(str(t.shape) for t in ins), "", None, 0)
    e.batch_dims = None  # type: ignore[assignment]
    e.steps = _body_steps(attrs, ins)
    for pos, text in enumerate(row.get("inferred") or []):
        e.outputs[f"output {pos}"] = text
    info = {"id": node, "name": attrs["name"], "type": op, "version": attrs.get("version"),
            "op_version": None if spec is None else spec.version, "line": attrs.get("line"),
            "declared": [str(PartialShape(p["dims"])) if p["dims"] else "[]"
                         for p in attrs["outputs"]],
            "status": row.get("status", "unchecked"), "inferred": row.get("inferred"),
            "message": row.get("message") or None, "declared_layout": None}
    e.layer = info
    if row.get("status") == "invalid":
        e.failed_rule = row.get("message")
    return e


def _body_steps(attrs: dict[str, Any], ins: list[Tensor]) -> list[Step]:
    """How each port map entry ties the layer to its bodies, in words."""
    from .graph.bodies import body_size

    steps = []
    if attrs["type"] == "Loop":
        steps.append(Step("the trip count (input 0) and the execution condition (input 1) "
                          "decide the iterations", True,
                          f"{ins[0].shape if ins else '?'} and "
                          f"{ins[1].shape if len(ins) > 1 else '?'}"))
    if attrs["type"] == "If":
        steps.append(Step("the condition (input 0) picks then_body or else_body; when it is "
                          "not known, each output merges both branches' shapes", True,
                          str(ins[0].shape) if ins else "?"))
    for name, body in attrs["bodies"].items():
        pm = (attrs.get("port_maps") or {}).get(name) or {}
        back = {e["to-layer"]: e["from-layer"] for e in
                ((attrs.get("back_edges") or {}).get(name) or [])}
        nodes = body._node
        steps.append(Step(f"{name} holds {body_size({'bodies': {name: body}})} layers", True,
                          "check lists them as " + f"{attrs['name']}/{name}/…"))
        positions = {p["id"]: i for i, p in enumerate(attrs["inputs"])}
        for entry in pm.get("inputs") or []:
            ext, param = entry["external_port_id"], entry["internal_layer_id"]
            target = f"{name}/{nodes[param]['name']}"
            if ext < 0:
                steps.append(Step(f"{target} is the {entry.get('purpose', 'special port')}",
                                  True, "the iteration number, from 0"))
                continue
            pos = positions.get(ext)
            shape = str(ins[pos].shape) if pos is not None and pos < len(ins) else "?"
            if attrs["type"] == "If":
                how = "passed to the branch as it is"
            elif "axis" in entry:
                how = (f"sliced on axis {entry['axis']}, {entry.get('part_size', 1)} per "
                       "iteration")
            elif param in back:
                how = (f"merged: the first iteration reads it, later ones the back edge "
                       f"from {name}/{nodes[back[param]]['name']}")
            else:
                how = "invariant: the same tensor every iteration"
            steps.append(Step(f"input port {ext} feeds {target}", True, f"{shape}, {how}"))
        for entry in pm.get("outputs") or []:
            ext, result = entry["external_port_id"], entry["internal_layer_id"]
            source = f"{name}/{nodes[result]['name']}"
            if ext < 0:
                steps.append(Step(f"{source} is the {entry.get('purpose', 'special port')}",
                                  True, "no layer output"))
                continue
            how = (f"the iterations' values concatenated on axis {entry['axis']}"
                   if "axis" in entry else "the value of the last iteration"
                   if attrs["type"] != "If" else "the value of the branch taken")
            steps.append(Step(f"output port {ext} comes from {source}", True, how))
    return steps


def _layout_of(e: Explanation) -> str | None:
    """Which version's output the declared dims are, when they are exactly one of them:
    a GatherND-8 declaring ``[4096,1]`` has the GatherND-5 layout (a common hand edit)."""
    declared = (e.layer or {}).get("declared") or []
    if len(declared) != 1:
        return None
    names = [s.name for s in registry.specs(e.op) if e.outputs.get(s.name) == declared[0]]
    return names[0] if len(names) == 1 else None


def _layer_info(G: nx.MultiDiGraph, node: str, row: dict[str, Any], spec: OpSpec
                ) -> dict[str, Any]:
    attrs = G.nodes[node]
    declared = [str(PartialShape(p["dims"])) if p["dims"] else "[]" for p in attrs["outputs"]]
    return {"id": node, "name": attrs["name"], "type": attrs["type"],
            "version": attrs.get("version"), "op_version": spec.version,
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
    if e.layer and e.layer.get("type") in ("TensorIterator", "Loop", "If"):
        lines.append(f"  inputs   {e.data}")
    else:
        lines.append(f"  data     D = {e.data}")
        typed = f"   ({e.indices_type})" if e.indices_type else ""
        lines.append(f"  indices  I = {e.indices}{typed}")
    if "axis" in e.facts:
        lines.append(f"  axis = {'unknown (not a Const)' if e.axis is None else e.axis}")
    if "batch_dims" in e.facts:
        lines.append(f"  b = batch_dims = {e.batch_dims}")
    if e.k is not None:
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
    """A Reshape/Broadcast whose data input changed and whose target is a Const (``node``
    may be a body layer's path id, ``4/body/6``: its inputs are then in that body)."""
    from .graph.bodies import locate

    H, local = locate(G, node) or (G, node)
    if H.nodes[local]["type"] not in ("Reshape", "Broadcast"):
        return False
    prefix = node[:len(node) - len(local)]
    edges = g.input_edges(H, local)
    return (len(edges) >= 2 and prefix + edges[0][0] in moved
            and H.nodes[edges[1][0]]["type"] in ("Const", "Constant"))
