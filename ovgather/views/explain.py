"""Explain one layer: the shape rule walked step by step, in plain words.

A user who sees ``mismatch`` or ``invalid`` on a GatherND wants to know *why*: what
``b`` and ``k`` are, how the batch dims merge, what the output would be under
GatherND-5 (batch dims folded into one), GatherND-8 (kept) and ONNX, and which rule
breaks. Nothing here re-derives a rule: :func:`explain_op` runs the op's own shape rule
(the one ``check`` runs, found through its spec) with a :class:`~ovgather.ops.core.spec.Trace`
and prints the steps it recorded, so ``explain`` and ``check`` agree by construction.
:func:`explain_layer` finds the layer in a graph, takes its input shapes from ovgather's
inference and adds what the IR declares. Any other layer (``explain_rules.py``) gets its
inputs with their values where ``check`` knows them, its attributes, its op's rule in words
(from the op's spec), the output shapes and the dims the IR declares otherwise; a layer
ovgather has no rule for (``unchecked``, or an extension's) its inputs and attributes, and a
line saying so.

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

from ..errors import ShapeInferenceError, UnsupportedOpError, UsageError
from ..graph import find_layer, gather_types, source_file
from ..ops import gather_nd
from ..ops.core import registry
from ..ops.core.spec import Attrs, OpSpec, Step, Trace
from ..ops.core.values import Tensor
from ..shapes import PartialShape, ShapeLike, as_partial_shape
from . import explain_rules as rules

__all__ = [
    "Step",
    "Explanation",
    "explain_op",
    "explain_gather_nd",
    "explain_layer",
]


@dataclass
class Explanation:
    """The explanation of one layer (``to_json()`` / ``to_text()`` for the CLI): a gather's
    rule walk, a TensorIterator's, Loop's or If's port maps, any other layer's parts."""

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
    #: the parts every layer has (``explain_rules.py``): the rule in words (None: no
    #: rule), the attributes, each input and output port, the declared dims that differ
    rule: str | None = None
    rule_source: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    input_ports: list[dict[str, Any]] = field(default_factory=list)
    output_ports: list[dict[str, Any]] = field(default_factory=list)
    mismatch: list[dict[str, Any]] = field(default_factory=list)
    #: "gather" (the rule walked, b, k …), "bodies" (TensorIterator, Loop, If) or "layer"
    form: str = "gather"

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
            "rule": self.rule,
            "rule_source": self.rule_source,
            "attributes": self.attributes,
            "input_ports": self.input_ports,
            "output_ports": self.output_ports,
            "mismatch": self.mismatch,
        }

    def to_text(self) -> str:
        return "\n".join(rules.layer_lines(self) if self.form == "layer" else _text_lines(self))


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


def _tensors(data: ShapeLike, indices: ShapeLike, indices_type: str | None) -> list[Tensor]:
    return [Tensor(as_partial_shape(data)), Tensor(as_partial_shape(indices),
                                                   indices_type or "dynamic")]


def explain_gather_nd(
    data: ShapeLike, indices: ShapeLike, batch_dims: int = 0, indices_type: str | None = None,
) -> Explanation:
    """Walk GatherND's shape rule on ``data`` and ``indices`` and say what each version
    (and ONNX) gives; the checks run in OpenVINO's order, the first broken one ends it."""
    return explain_op(gather_nd.OP_TYPE, _tensors(data, indices, indices_type),
                      {"batch_dims": str(batch_dims)}, 8)


# ---- the layer in a model -------------------------------------------------------------


def explain_layer(
    G: nx.MultiDiGraph, layer: str, shapes: dict[str, str] | None = None
) -> Explanation:
    """Explain the layer named (or with id) ``layer`` of the model ``G`` on the very
    inputs ``check`` gives it (the tensors of its walk): a gather its own rule walked step
    by step, any other layer its inputs, attributes, rule in words and output.

    A layer inside a TensorIterator, Loop or If body is named by its path, as ``check``
    lists it (``loop/body/gather`` or ``4/body/6``) and explained on the inputs the
    body's last run gave it; the TensorIterator, Loop or If itself gets its rule in
    words: how each input feeds the body, how each output is made of a body Result."""
    from ..infer import all_tensors, tensors_reaching

    try:
        node = find_layer(G, layer)
    except UsageError:
        inner = _explain_body_layer(G, layer, shapes)
        if inner is None:
            raise
        return inner
    attrs = G.nodes[node]
    where = {"file": source_file(G), "line": attrs.get("line"), "layer_name": attrs["name"],
             "layer_id": node}
    produced = all_tensors(G, shapes)
    if attrs.get("bodies"):
        return _explain_bodies(G, node, shapes, produced)
    ins = tensors_reaching(attrs, G._pred[node], produced)
    outs = _outs(attrs, produced.get(node) or {})
    row = _check_row(G, shapes, node)
    if attrs["type"] not in gather_types():
        return _explain_any(attrs, node, ins, outs, row, G._pred[node], G._node)
    spec = _gather_spec(attrs, attrs["name"], where)
    e = _explain_gather(attrs, attrs["name"], ins, spec, where)
    e.layer = _layer_info(G, node, row, spec)
    e.layer["declared_layout"] = _layout_of(e)
    _add_parts(e, attrs, ins, outs, spec, G._pred[node], G._node)
    return e


def _outs(attrs: dict[str, Any], by_port: dict[int, Tensor]) -> list[Tensor]:
    """The layer's output tensors in port order, as the walk stored them."""
    return [by_port[p["id"]] for p in attrs["outputs"] if p["id"] in by_port]


def _add_parts(e: Explanation, attrs: dict[str, Any], ins: list[Tensor], outs: list[Tensor],
               spec: OpSpec | None, preds: Any, nodes: Any) -> None:
    """The parts every explanation has (``explain_rules.py``), from what check gives."""
    e.rule = None if spec is None else rules.rule_text(spec)
    e.rule_source = None if spec is None else rules.rule_source(spec)
    e.attributes = {k: str(v) for k, v in (attrs.get("data") or {}).items()}
    e.input_ports = rules.input_ports(attrs, ins, preds, nodes)
    e.output_ports = rules.output_ports(attrs, outs)
    e.mismatch = rules.mismatches(attrs, outs)


def _explain_any(attrs: dict[str, Any], node: str, ins: list[Tensor], outs: list[Tensor],
                 row: dict[str, Any], preds: Any, nodes: Any) -> Explanation:
    """A layer outside the gather family holding no bodies: its inputs, attributes, the
    rule in words and, where ovgather has a rule, that rule run once more with a trace."""
    op = attrs["type"]
    try:
        spec = registry.find(op, attrs.get("version"))
    except UnsupportedOpError:  # an opset that lacks the op: check says unknown
        spec = None
    e = Explanation(op, " ".join(str(t.shape) for t in ins), "", None, 0, form="layer")
    e.batch_dims = None  # type: ignore[assignment]
    shown = outs
    status = row.get("status", "unchecked")
    if spec is None:
        for pos, t in enumerate(outs):
            e.outputs[f"output {pos}"] = str(t.shape)
            value = rules.value_text(t.value)
            e.notes[f"output {pos}"] = "the dims the IR declares: ovgather infers nothing " \
                "here" if status in ("unchecked", "unknown") else (f"value {value}" if value
                                                                  else "")
    else:
        got, e.failed_rule, trace = rules.run_traced(spec, ins, attrs)
        e.steps, e.facts = trace.steps, trace.facts
        shown = outs if got is None else got
        for pos, t in enumerate(shown):
            key = spec.name if len(shown) == 1 else f"{spec.name} output {pos}"
            e.outputs[key] = None if e.failed_rule else str(t.shape)
            value = rules.value_text(t.value) if e.failed_rule is None else None
            e.notes[key] = f"invalid: {e.failed_rule}" if e.failed_rule else \
                (f"value {value}" if value else "")
        if not attrs["outputs"] and shown and e.failed_rule is None:  # a Result
            e.notes[spec.name] = "a Result has no output port: the model's output is this"
    _add_parts(e, attrs, ins, shown if len(shown) == len(attrs["outputs"]) else outs, spec,
               preds, nodes)
    e.mismatch = rules.mismatches(attrs, outs)
    if spec is None:
        e.rule = rules.no_rule_text(op)
    e.notes = {k: v for k, v in e.notes.items() if v}
    e.layer = _layer_info_of(attrs, node, row, spec)
    if status == "invalid" and e.failed_rule is None:
        e.failed_rule = row.get("message")
    return e


def _check_row(G: nx.MultiDiGraph, shapes: dict[str, str] | None, node: str) -> dict[str, Any]:
    """The JSON row (docs/json.md) that ``check`` gives layer ``node``; empty when none."""
    from ..infer import check

    return next((lr.to_dict() for lr in check(G, shapes).layers if lr.id == node), {})


def _gather_spec(attrs: dict[str, Any], name: str, where: dict[str, Any]) -> Any:
    """The spec of the gather layer ``attrs`` (named ``name`` in messages)."""
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
    from ..graph.bodies import body_layers
    from ..infer import body_runs, tensors_reaching

    rows = [r for r in body_layers(G) if layer in (r[0], r[1])]
    if len(rows) != 1:
        return None
    path_id, path_name, _, attrs = rows[0]
    where = {"file": source_file(G), "line": attrs.get("line"), "layer_name": path_name,
             "layer_id": path_id}
    report, runs = body_runs(G, shapes)
    prefix, inner = path_id.rsplit("/", 1)
    if prefix + "/" not in runs:
        raise UsageError(f"the body holding '{path_name}' was not run (the layer holding it "
                         "is invalid or unchecked: see ovgather check)", **where)
    H, produced = runs[prefix + "/"]
    ins = tensors_reaching(H.nodes[inner], H._pred[inner], produced)
    outs = _outs(attrs, produced.get(inner) or {})
    row = next((lr.to_dict() for lr in report.layers if lr.id == path_id), {})
    if attrs["type"] not in gather_types() or attrs.get("bodies"):
        e = _explain_any(attrs, inner, ins, outs, row, H._pred[inner], H._node)
        e.layer.update(id=path_id, name=path_name)
        return e
    spec = _gather_spec(attrs, path_name, where)
    e = _explain_gather(attrs, path_name, ins, spec, where)
    e.layer = {**_layer_info(H, inner, row, spec), "id": path_id, "name": path_name}
    e.layer["declared_layout"] = _layout_of(e)
    _add_parts(e, attrs, ins, outs, spec, H._pred[inner], H._node)
    return e


def _explain_bodies(G: nx.MultiDiGraph, node: str, shapes: dict[str, str] | None,
                    produced: dict[str, dict[int, Tensor]]) -> Explanation:
    """A TensorIterator, Loop or If: its rule in words, one step per port map entry."""
    from ..infer import tensors_reaching

    attrs = G.nodes[node]
    op = attrs["type"]
    ins = tensors_reaching(attrs, G._pred[node], produced)
    row = _check_row(G, shapes, node)
    try:
        spec = registry.find(op, attrs.get("version"))
    except UnsupportedOpError:
        spec = None
    e = Explanation(op, " ".join(str(t.shape) for t in ins), "", None, 0, form="bodies")
    e.batch_dims = None  # type: ignore[assignment]
    e.steps = _body_steps(attrs, ins)
    for pos, text in enumerate(row.get("inferred") or []):
        e.outputs[f"output {pos}"] = text
    e.layer = _layer_info_of(attrs, node, row, spec)
    if row.get("status") == "invalid":
        e.failed_rule = row.get("message")
    _add_parts(e, attrs, ins, _outs(attrs, produced.get(node) or {}), spec, G._pred[node],
               G._node)
    return e


def _body_steps(attrs: dict[str, Any], ins: list[Tensor]) -> list[Step]:
    """How each port map entry ties the layer to its bodies, in words."""
    from ..graph.bodies import body_size

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
        for kind, special in (("inputs", "the iteration number, from 0"),
                              ("outputs", "no layer output")):
            for entry in pm.get(kind) or []:
                ext = entry["external_port_id"]
                inner = f"{name}/{nodes[entry['internal_layer_id']]['name']}"
                if ext < 0:
                    steps.append(Step(f"{inner} is the {entry.get('purpose', 'special port')}",
                                      True, special))
                elif kind == "inputs":
                    how = _feeds(attrs, entry, back, f"{name}/", nodes)
                    steps.append(Step(f"input port {ext} feeds {inner}", True,
                                      f"{_shape_at(attrs, ins, ext)}, {how}"))
                else:
                    steps.append(Step(f"output port {ext} comes from {inner}", True,
                                      _made_of(attrs, entry)))
    return steps


def _shape_at(attrs: dict[str, Any], ins: list[Tensor], port_id: int) -> str:
    """The shape reaching input port ``port_id`` of the layer, ``?`` when not known."""
    pos = {p["id"]: i for i, p in enumerate(attrs["inputs"])}.get(port_id)
    return str(ins[pos].shape) if pos is not None and pos < len(ins) else "?"


def _feeds(attrs: dict[str, Any], entry: dict[str, Any], back: dict, prefix: str,
           nodes: dict) -> str:
    """How an input port map entry hands its tensor to the body, in words."""
    param = entry["internal_layer_id"]
    if attrs["type"] == "If":
        return "passed to the branch as it is"
    if "axis" in entry:
        return f"sliced on axis {entry['axis']}, {entry.get('part_size', 1)} per iteration"
    if param in back:
        return (f"merged: the first iteration reads it, later ones the back edge "
                f"from {prefix}{nodes[back[param]]['name']}")
    return "invariant: the same tensor every iteration"


def _made_of(attrs: dict[str, Any], entry: dict[str, Any]) -> str:
    """How an output port map entry makes the layer's output of a body Result, in words."""
    if "axis" in entry:
        return f"the iterations' values concatenated on axis {entry['axis']}"
    if attrs["type"] != "If":
        return "the value of the last iteration"
    return "the value of the branch taken"


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
    return _layer_info_of(G.nodes[node], node, row, spec)


def _layer_info_of(attrs: dict[str, Any], node: str, row: dict[str, Any],
                   spec: OpSpec | None) -> dict[str, Any]:
    """The ``layer`` part: the layer as check sees it (``op_version`` None: no rule)."""
    declared = [str(PartialShape(p["dims"])) if p["dims"] else "[]" for p in attrs["outputs"]]
    return {"id": node, "name": attrs["name"], "type": attrs["type"],
            "version": attrs.get("version"), "op_version": None if spec is None else spec.version,
            "line": attrs.get("line"), "declared": declared,
            "status": row.get("status", "unchecked"), "inferred": row.get("inferred"),
            "message": row.get("message") or None, "declared_layout": None}


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
        if e.rule:
            lines.append(f"  rule     {e.layer['type']}-{e.layer['op_version']} "
                         f"({e.rule_source}): {e.rule}")
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
