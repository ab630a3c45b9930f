"""Whole-model shape propagation: re-infer every layer and compare with the IR.

OpenVINO's reader silently recomputes every output shape, so stale or hand-edited port
dims never surface. This module walks the graph (``graph`` schema) in topological
order from the Parameters' ``shape`` attributes (which keep the intervals that port dims
lose) and the Consts, applies the rule of every op ovgather knows, and compares each
output port with the dims the IR declares (docs/cli/check.md):

``ok``         declared and inferred are compatible in OpenVINO's sense (same rank, each
               pair of dims can be equal; a declared ``-1`` fits anything, and a port
               with no ``<dim>`` may stand for a dynamic rank, which fits anything);
``mismatch``   the declared dims contradict the inferred ones, on an output port, or on
               an input port against what its producer gives (both layers named);
``invalid``    the layer's inputs or attributes break the op's rules (an attribute of
               the wrong kind, ``batch_dims="x"``, is reported here too, never raised);
``unchecked``  OpenVINO reads the op but ovgather has no rule for it; its declared
               dims are kept;
``unknown``    OpenVINO's reader refuses the layer (no opset it has holds its type and
               version: ``readable.cannot_read``), so it cannot read the model at all;
               its declared dims are kept and the model's verdict fails.

An invalid layer does not stop the walk: its outputs fall back to the declared dims, as
do those of unchecked and unknown layers (their ``inferred`` texts are those declared
dims, the shapes the walk carries on with). Malformed shape *text* in a Parameter or
Const (``2,x``) is not a layer status but an IRStructureError: such an IR cannot be used
at all.

Small integer tensors travel with their value bounds (see ``ops/core/values.py``) so that
``ShapeOf → Gather → Concat → Reshape`` ends in the shape OpenVINO gives.

>>> import networkx as nx
>>> G = nx.MultiDiGraph()
>>> G.add_node("0", name="x", type="Parameter", version="opset1", data={"shape": "2,?",
...     "element_type": "f32"}, inputs=[], outputs=[{"id": 0, "dims": (2, 3)}], line=3)
>>> G.add_node("1", name="r", type="Relu", version="opset1", data={},
...     inputs=[{"id": 0, "dims": (2, -1)}], outputs=[{"id": 1, "dims": (2, 4)}], line=9)
>>> _ = G.add_edge("0", "1", key=(0, 0), from_port=0, to_port=0)
>>> report = check(G)
>>> report.summary
{'layers': 2, 'ok': 2, 'mismatch': 0, 'invalid': 0, 'unchecked': 0, 'unknown': 0}
>>> str(infer_shapes(G, shapes={"x": "[2,5]"})["1"][0])
'[2,5]'
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from operator import itemgetter
from typing import Any

from .._lazy import networkx as nx
from ..errors import (
    IRStructureError,
    ShapeError,
    ShapeInferenceError,
    ShapeParseError,
    UnsupportedOpError,
    UsageError,
)
from ..ir.reader import gc_paused
from ..ops.core import registry
from ..ops.core.spec import Attrs, OpSpec, openvino_type
from ..ops.core.values import Tensor
from ..shapes import PartialShape, ShapeLike, as_partial_shape
from .bodies import BodyRuns, infer_nested
from .inputs import const_tensor, parameter_tensor, tensors_reaching
from .memo import RuleMemo
from .readable import cannot_read
from .report import (
    CheckReport,
    LayerResult,
    compare_ports,
    declared_shape,
    declared_text,
    dims_fit,
    port_type,
)

__all__ = ["check", "infer_shapes", "input_tensors", "all_tensors", "body_runs",
           "override_targets", "unknown_key"]


# -- public entry points -----------------------------------------------------------------
def infer_shapes(
    G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None
) -> dict[str, list[PartialShape]]:
    """Every layer's inferred output shapes (one per output port, in port order).

    Invalid and unknown layers give their declared dims, as in :func:`check`. The
    layers inside the bodies of a TensorIterator, Loop or If follow the layer that holds
    them, keyed by their path id as ``check`` lists them (``"4/body/6"``: layer 6 of the
    body of layer 4; ``graph.locate`` finds it), with the shapes of the last body run.
    The keys of top-level layers are their node ids.
    """
    out: dict[str, list[PartialShape]] = {}
    nested: dict[str, list[LayerResult]] = {}
    with gc_paused():
        for node, _, tensors, _ in _walk(G, shapes, nested=nested):
            out[node] = [t.shape for t in tensors]
    if nested:  # after the walk: a model without bodies pays nothing per layer
        out = {key: value for node, shapes_ in out.items()
               for key, value in ((node, shapes_),
                                  *((lr.id, lr.inferred_shapes) for lr in nested.get(node, ())))}
    return out


def input_tensors(G: nx.MultiDiGraph, node: str,
                  shapes: Mapping[str, ShapeLike] | None = None) -> list[Tensor]:
    """The tensors (shapes, element types, values) that reach ``node``'s inputs in the
    walk :func:`check` makes: what its rule sees, so that ``explain`` sees the same."""
    produced: dict[str, dict[int, Tensor]] = {}
    with gc_paused():
        for _ in _walk(G, shapes, produced, until=node):
            pass
    return tensors_reaching(G.nodes[node], G._pred[node], produced)


def all_tensors(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None
                ) -> dict[str, dict[int, Tensor]]:
    """Every top-level layer's output tensors (by output port id) in one walk: shapes,
    element types and the value bounds of small integer tensors, as the rules saw them."""
    produced: dict[str, dict[int, Tensor]] = {}
    with gc_paused():
        for _ in _walk(G, shapes, produced):
            pass
    return produced


def check(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None) -> CheckReport:
    """Re-infer every layer of ``G`` and compare with the declared output dims.

    ``shapes`` overrides Parameter shapes like ``openvino.Model.reshape``: keys are a
    Parameter's friendly name or one of its tensor names, values shape texts or shapes.
    A key may also be a state's ``variable_id``: its ReadValues give that shape, what
    they read once the state holds a value of it (a KV cache of some length), which the
    variable's declared shape must allow. A key that names neither is a UsageError.
    """
    return _check(G, shapes, None)


def body_runs(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None
              ) -> tuple[CheckReport, dict[str, tuple[nx.MultiDiGraph, dict]]]:
    """``check(G, shapes)`` and, per body (by its path id prefix, ``4/body/``), its graph
    and the tensors its last run gave each layer: what ``explain`` shows for a body
    layer, the very inputs ``check`` inferred it from."""
    runs = BodyRuns(keep=True)
    return _check(G, shapes, runs), runs.runs


def _check(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None,
           runs: BodyRuns | None, loop=None) -> CheckReport:
    """``check``; ``loop``: the layer loop (:func:`_check_fast`, or its plain twin
    :func:`_check_layers`, which the tests hold it equal to)."""
    path = G.graph.get("xml_path") or G.graph.get("source_path")
    report = CheckReport(path, G.graph.get("ir_version"))
    nodes = G._node
    append = report.layers.append
    nested: dict[str, list[LayerResult]] = {}
    with gc_paused():
        (loop or _check_fast)(G, shapes, nodes, append, nested=nested, capture=runs)
    if nested:  # the layers of bodies follow the layer that holds them
        report.layers = [r for lr in report.layers for r in (lr, *nested.get(lr.id, ()))]
    return report


def _check_layers(G, shapes, nodes, append, **walk) -> None:
    """``walk``: ``params``, ``nested``, ``capture`` and ``produced`` as :func:`_walk`
    takes them (bodies). The plain twin of :func:`_check_fast`, which ``check`` runs:
    the two give the same verdicts (tests/infer/test_fast_check.py)."""
    fits: dict[tuple, bool] = {}  # the same declared dims and shape meet again and again
    produced: dict[str, dict[int, Tensor]] | None = walk.pop("produced", None)
    if produced is None:  # a body's run passes the dict it reads its results from
        produced = {}
    pred = G._pred
    for node, status, tensors, message in _walk(G, shapes, produced, **walk):
        append(_verdict(nodes, node, status, tensors, message, pred[node], produced, fits))


def _check_fast(G, shapes, nodes, append, params=None, nested=None, capture=None,
                produced=None) -> None:
    """What :func:`_check_layers` does, in one loop instead of a walk and a loop over
    what it yields: ``check``'s hot path. The usual layer (one output port, an op the
    reader builds with a rule that has no bodies) is taken here inline, each lookup its
    (type, version) needs made once; any other layer goes through the walk's own steps
    (:func:`_layer`, :func:`_verdict`)."""
    overrides = _resolve_overrides(G, shapes or {}) if params is None else params
    if capture is None:
        capture = BodyRuns()
    if produced is None:
        produced = {}
    pred = G._pred
    memo = RuleMemo()
    run = memo.run
    fits: dict[tuple, bool] = {}
    refused: dict[tuple, str | None] = {}
    plain: dict[tuple, Any] = {}  # the spec the usual layer runs, by (type, version)
    for node in _topological_order(G):
        attrs = nodes[node]
        outputs = attrs["outputs"]
        op, version = attrs["type"], attrs.get("version")
        try:
            spec = plain[op, version]
        except KeyError:
            spec = plain[op, version] = _plain_spec(op, version)
        except TypeError:  # a type or version no dict takes (a graph edited from Python)
            spec = None
        preds = pred[node]
        if spec is None or len(outputs) != 1:
            status, tensors, message = _layer(G, node, attrs, preds, produced, overrides, memo,
                                              nested, capture, refused, _check_fast)
            tensors = _store(produced, node, outputs, tensors)
            append(_verdict(nodes, node, status, tensors, message, preds, produced, fits))
            continue
        found: dict[int, Tensor] = {}  # tensors_reaching, inline
        edges = 0
        for u, keyed in preds.items():
            outs = produced[u]
            for from_port, to_port in keyed:
                edges += 1
                t = outs.get(from_port)
                if t is not None:
                    found[to_port] = t
        inputs = attrs["inputs"]
        try:
            if spec is _CONST:
                tensors = [const_tensor(G, node, attrs, attrs.get("data") or {})]
            else:
                try:
                    ins = list(map(found.__getitem__, map(_ID, inputs)))  # C speed
                except KeyError:  # an input without an edge: tensors_reaching says which
                    ins = tensors_reaching(attrs, preds, produced)
                tensors = run(spec, op, version, attrs.get("data") or {}, 1, ins)
            status, message = "ok", ""
        except _RULE_ERRORS as err:
            status, tensors, message = _failed(G, node, attrs, err)
        if not tensors:  # None (the rule failed) or no tensor at all
            status, tensors, message = _declared_fallback(outputs, status, tensors, message)
        port = outputs[0]
        shape = tensors[0].shape
        produced[node] = {port["id"]: tensors[0]}
        dims = port["dims"]
        if status == "ok":
            if not _fit(fits, dims, shape):
                status, message = compare_ports([dims], [shape], attrs)
        if inputs and (status == "ok" or status == "mismatch"):
            # the usual case first: one edge a port, and each declared input dims fit the
            # tensor reaching them; else the full search names the first contradiction
            clean = edges == len(found)
            if clean:
                for p in inputs:
                    want = p.get("dims")
                    t = found.get(p["id"])  # None: no edge (a Const's input port)
                    if want and t is not None:
                        if not _fit(fits, want, t.shape):
                            clean = False
                            break
            if not clean:
                contradiction = _input_contradiction(nodes, attrs, preds, produced, fits)
                if contradiction:
                    message = f"{message}; {contradiction}" if message else contradiction
                    status = "mismatch"
        append(LayerResult(node, attrs["name"], op, version, status, [dims], [shape],
                           attrs.get("line"), message))


#: :func:`_plain_spec` of a Const the reader builds
_CONST = object()
_ID = itemgetter("id")


def _plain_spec(op: str, version: str | None) -> OpSpec | object | None:
    """The spec :func:`_check_fast` runs a layer of this type and version with itself: an
    op the reader builds (no ``cannot_read``), not a Parameter, whose rule has no bodies;
    ``_CONST`` for a Const; None for any other layer, which the walk's general steps
    take."""
    if op == "Parameter" or cannot_read(op, version) is not None:
        return None
    if openvino_type(op) == "ReadValue":  # a state the user sizes: the general steps
        return None
    if op == "Const":
        return _CONST
    try:
        spec = registry.find(op, version)
    except Exception:  # noqa: BLE001 - the general steps meet the same error and report it
        return None
    return spec if spec is not None and not spec.nested else None


def _verdict(nodes, node, status, tensors, message, preds, produced, fits) -> LayerResult:
    """The layer's result from what the walk gave it: ``status`` (``ok`` still to be
    compared with the declared dims), its output ``tensors`` (one per output port) and
    ``message``."""
    attrs = nodes[node]
    outputs = attrs["outputs"]
    if len(outputs) == 1 and len(tensors) == 1:  # the usual layer
        dims, shape = outputs[0]["dims"], tensors[0].shape
        declared, inferred = [dims], [shape]
        if status == "ok" and not _fit(fits, dims, shape):
            status, message = compare_ports(declared, inferred, attrs)
    else:
        declared = [p["dims"] for p in outputs]
        inferred = [t.shape for t in tensors]
        if status == "ok":
            for d, s in zip(declared, inferred, strict=False):
                if not dims_fit(d, s):
                    status, message = compare_ports(declared, inferred, attrs)
                    break
    if status in ("ok", "mismatch") and attrs["inputs"]:
        contradiction = _input_contradiction(nodes, attrs, preds, produced, fits)
        if contradiction:
            message = f"{message}; {contradiction}" if message else contradiction
            status = "mismatch"
    return LayerResult(node, attrs["name"], attrs["type"], attrs.get("version"), status,
                       declared, inferred, attrs.get("line"), message)


def _fit(fits: dict[tuple, bool], dims: tuple[int, ...], shape: PartialShape) -> bool:
    """``dims_fit``, remembered per pair (a model repeats the same pairs)."""
    pair = (dims, shape)
    try:
        fit = fits.get(pair)
        if fit is None:
            fit = fits[pair] = dims_fit(dims, shape)
    except TypeError:  # dims given as a list (a graph built in Python)
        fit = dims_fit(dims, shape)
    return fit


def _input_contradiction(nodes, attrs, preds, produced, fits) -> str:
    """Where a declared input-port dim contradicts the shape its producer gives (inferred,
    or declared where the producer has no rule), both layers named: an IR that says two
    things of one tensor. Ports without ``<dim>`` declare nothing."""
    ports = {p["id"]: p.get("dims") for p in attrs["inputs"]}
    for u, keyed in preds.items():
        outs = produced.get(u) or {}
        for from_port, to_port in keyed:
            dims, tensor = ports.get(to_port), outs.get(from_port)
            if not dims or tensor is None or _fit(fits, dims, tensor.shape):
                continue
            own = next((p["dims"] for p in nodes[u]["outputs"] if p["id"] == from_port), None)
            if own and not _fit(fits, own, tensor.shape) and _fit(fits, dims, declared_shape(own)):
                continue  # it repeats its producer's declared dims: the producer's mismatch
            here = "" if attrs.get("line") is None else f" (line {attrs['line']})"
            producer = nodes[u]
            there = "" if producer.get("line") is None else f", line {producer['line']}"
            return (f"input {to_port}{here} declares {declared_text(dims, tensor.shape)}, but "
                    f"its producer {producer['name']} (id {u}{there}) gives {tensor.shape} at "
                    f"output {from_port}")
    return ""


# -- the walk ------------------------------------------------------------------------------
def _walk(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None,
          produced: dict[str, dict[int, Tensor]] | None = None, until: str | None = None,
          params: dict[str, Tensor] | None = None, nested: dict | None = None,
          capture: BodyRuns | None = None):
    """Yield ``(node, status, output tensors, message)`` in topological order; status is
    ``ok`` (to be compared), ``invalid``, ``unchecked`` or ``unknown``. ``produced`` collects every
    output tensor; with ``until`` the walk stops before that node. ``params`` gives
    Parameter nodes their tensors instead of ``shapes`` (a body run by its layer);
    ``nested`` collects the checked layers of bodies by the id of the layer holding them;
    ``capture`` carries the body runs of the whole walk (a memo, and what each run gave
    its layers for :func:`body_runs`); the outermost walk makes one."""
    overrides = _resolve_overrides(G, shapes or {}) if params is None else params
    if capture is None:
        capture = BodyRuns()
    produced = {} if produced is None else produced
    nodes, pred = G._node, G._pred  # the plain dicts: this loop is the hot path
    memo = RuleMemo()
    order = _topological_order(G)
    refused: dict[tuple, str | None] = {}  # cannot_read by (type, version), looked up once
    for node in order:
        if node == until:
            return
        attrs = nodes[node]
        status, tensors, message = _layer(G, node, attrs, pred[node], produced, overrides,
                                          memo, nested, capture, refused)
        yield node, status, _store(produced, node, attrs["outputs"], tensors), message


def _layer(G, node, attrs, preds, produced, overrides, memo, nested, capture, refused,
           run_layers=None) -> tuple[str, list[Tensor], str]:
    """``(status, output tensors, message)`` of one layer: what its rule gives, else its
    declared dims (``refused`` keeps ``cannot_read`` by (type, version))."""
    outputs = attrs["outputs"]
    key = (attrs["type"], attrs.get("version"))
    try:
        unread = refused[key]
    except KeyError:
        unread = refused[key] = cannot_read(*key)
    except TypeError:  # a type or version no dict takes (a graph edited from Python)
        unread = cannot_read(*key)
    if unread is None:
        status, tensors, message = _run_rule(G, node, attrs, preds, produced, overrides,
                                             memo, nested, capture, run_layers)
    else:  # the reader refuses the model, unless a loaded extension provides the op
        status = None
        if "op_shapes" in G.graph and openvino_type(attrs["type"]) is None:
            status, tensors, message = _run_rule(G, node, attrs, preds, produced, overrides,
                                                 memo, nested, capture, run_layers)
        if status not in ("ok", "invalid"):  # the layer keeps its declared dims
            status, tensors, message = "unknown", None, unread
    if tensors is None or len(tensors) < len(outputs):
        status, tensors, message = _declared_fallback(outputs, status, tensors, message)
    return status, tensors, message


def _declared_fallback(outputs, status, tensors, message):
    """The declared dims for the output ports a rule gave no tensor (all of them when
    ``tensors`` is None); fewer tensors than ports where the rule ran is a mismatch."""
    fallback = [Tensor(declared_shape(p["dims"]), port_type(p)) for p in outputs]
    if tensors is None:
        tensors = fallback
    elif status == "ok":
        status = "mismatch"
        message = (f"the layer declares {len(outputs)} output ports, but the op "
                   f"has {len(tensors)}")
        tensors = tensors + fallback[len(tensors):]
    return status, tensors, message


def _store(produced, node, outputs, tensors) -> list[Tensor]:
    """Keep the layer's output tensors by port id in ``produced``; the tensors, one per
    declared output port."""
    if len(outputs) == 1:  # the usual layer: no comprehension, no slice
        produced[node] = {outputs[0]["id"]: tensors[0]}
        return tensors if len(tensors) == 1 else tensors[:1]
    produced[node] = {p["id"]: t for p, t in zip(outputs, tensors, strict=False)}
    return tensors[:len(outputs)]


#: what a rule may raise that makes its layer ``invalid`` or ``unchecked`` (:func:`_failed`)
_RULE_ERRORS = (ShapeError, UnsupportedOpError, IndexError, NotImplementedError)


def _run_rule(G, node, attrs, preds, produced, overrides, memo, nested, capture,
              run_layers=None):
    """``(status, tensors, message)`` of a layer the reader builds: its rule's answer, or
    ``invalid`` (tensors None) when the rule rejects it, ``unchecked`` when it has none.
    ``run_layers``: the layer loop that walks bodies (the walk's own by default)."""
    try:
        status, tensors = _infer_layer(G, node, attrs, preds, produced, overrides, memo,
                                       nested, capture, run_layers or _check_layers)
        message = ""
    except _RULE_ERRORS as err:
        status, tensors, message = _failed(G, node, attrs, err)
    return status, tensors, message


def _failed(G, node, attrs, err: Exception) -> tuple[str, None, str]:
    """The verdict on a layer whose rule raised ``err`` (one of ``_RULE_ERRORS``; an
    error that is both a ShapeError and an IndexError is a ShapeError here)."""
    if isinstance(err, (ShapeError, UnsupportedOpError)):
        if isinstance(err, ShapeParseError):  # malformed shape text: the IR is unusable
            raise IRStructureError(
                f"a {attrs['type']}'s shape attribute must be OpenVINO shape text: "
                f"{err.message}", file=G.graph.get("xml_path"), line=attrs.get("line"),
                layer_name=attrs["name"], layer_id=node) from err
        return "invalid", None, err.message
    if isinstance(err, IndexError):  # a rule asked for an input the layer does not have
        return "invalid", None, (f"a {attrs['type']} layer needs more inputs than the "
                                 f"{len(attrs['inputs'])} it has")
    return "unchecked", None, "no shape rule yet"  # NotImplementedError: a rule being written


def _topological_order(G: nx.MultiDiGraph) -> list[str]:
    """The layers in XML order when every edge goes forward in it (as OpenVINO writes an
    IR; the reader's LayerGraph knows it already), else Kahn's algorithm from the XML
    order (networkx's generic sort costs 5× more here)."""
    if getattr(G, "in_order", False):
        return list(G._node)
    succ, pred = G._succ, G._pred
    _check_edge_keys(G)
    position = {n: i for i, n in enumerate(G._node)}
    if all(position[u] < position[v] for u, targets in succ.items() for v in targets):
        return list(position)
    waiting = {n: len(pred[n]) for n in G._node}
    order = [n for n, k in waiting.items() if k == 0]
    for node in order:  # the list grows while we walk it
        for v in succ[node]:
            waiting[v] -= 1
            if waiting[v] == 0:
                order.append(v)
    if len(order) < len(waiting):
        raise IRStructureError("the edges of an IR must not form a cycle, but they do",
                               file=G.graph.get("xml_path"))
    return order


def _check_edge_keys(G: nx.MultiDiGraph) -> None:
    """Refuse an edge whose key is not the pair of port ids the schema asks for (a plain
    ``G.add_edge(a, b)`` keys it 0): the walk reads the ports from the key. A graph the
    reader built in order never gets here. A model has a handful of distinct keys, so
    those are gathered at C speed and checked (9 ms on a 50k-layer model; an edge-by-edge
    Python loop took 36, 5% of its check)."""
    keys = set(chain.from_iterable(chain.from_iterable(map(dict.values, G._succ.values()))))
    if all(type(k) is tuple and len(k) == 2 and type(k[0]) is int and type(k[1]) is int
           for k in keys):
        return
    u, v, key = next((u, v, key) for u, targets in G._succ.items()
                     for v, keyed in targets.items() for key in keyed
                     if not (type(key) is tuple and len(key) == 2
                             and type(key[0]) is int and type(key[1]) is int))
    raise IRStructureError(
        f"an edge is keyed by its (from_port, to_port) pair of ints, but the edge {u} -> {v} "
        f"has the key {key!r} (connect layers with rewrite.connect, or G.add_edge(u, v, "
        f"key=(from_port, to_port), from_port=..., to_port=...))",
        file=G.graph.get("xml_path"), layer_name=G._node[v].get("name"), layer_id=v)


def _infer_layer(G, node, attrs, preds, produced, overrides, memo, nested=None,
                 capture=None, run_layers=None):
    op = attrs["type"]
    data = attrs.get("data") or {}
    if op == "Parameter":
        return "ok", [parameter_tensor(attrs, data, overrides.get(node))]
    if op == "Const":
        return "ok", [const_tensor(G, node, attrs, data)]
    spec = registry.find(op, attrs.get("version"))
    if spec is None:
        kind = openvino_type(op)  # "parameter", "CONSTANT": OpenVINO reads any case
        if kind == "Parameter":
            return "ok", [parameter_tensor(attrs, data, overrides.get(node))]
        if kind == "Constant":
            # OpenVINO 2026.4.1 reads the data of a layer typed Constant in any case but
            # "Const", yet gives the layers it feeds no value (a Reshape to it is [?,?])
            t = const_tensor(G, node, attrs, data)
            return "ok", [Tensor(t.shape, t.etype)]
        given = G.graph.get("op_shapes")  # OpenVINO's own answer (check --extension)
        if given is not None:
            found = given(G, node, tensors_reaching(attrs, preds, produced))
            if found is not None:
                return "ok", found
        return "unchecked", None
    ins = tensors_reaching(attrs, preds, produced)
    if spec.nested:  # TensorIterator, Loop, If: the rule runs their bodies
        rule_attrs = Attrs.of(data, spec.version, len(attrs["outputs"]))
        return infer_nested(node, attrs, spec, ins, rule_attrs, nested,
                            run_layers or _check_layers, capture)
    found = memo.run(spec, op, attrs.get("version"), data, len(attrs["outputs"]), ins)
    held = overrides.get(node)  # only a ReadValue besides a Parameter: a state sized
    if held is not None and found:
        return "ok", [_state_tensor(found[0], held)] + found[1:]
    return "ok", found


def _state_tensor(variable: Tensor, held: PartialShape) -> Tensor:
    """What a ReadValue reads when its state holds a value of shape ``held`` (a cache
    of some length): ``held``, which the variable's shape must allow, as OpenVINO's
    ``query_state()[i].state = …`` refuses a tensor it does not. The initializer stays
    checked against the declared variable, as OpenVINO checks it."""
    from ..ops.state import relaxes  # only a model whose state is sized needs it

    if not relaxes(variable.shape, held):
        raise ShapeInferenceError(f"the state's shape must fit the variable's shape "
                                  f"{variable.shape}, but got {held}")
    return Tensor(held, variable.etype)


def _resolve_overrides(
    G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]
) -> dict[str, PartialShape]:
    """Map each override key to the layers it sizes: a Parameter (friendly or tensor
    name), else the ReadValues of a state (its ``variable_id``): what the state holds
    when the model runs, a cache of some length, which ``Model.reshape`` cannot set."""
    if not shapes:
        return {}
    parameters, states = override_targets(G)
    out: dict[str, PartialShape] = {}
    for key, value in shapes.items():
        targets = parameters.get(key) or states.get(key)
        if targets is None:
            raise unknown_key(G, key, "a shape override", parameters, states)
        try:
            shape = as_partial_shape(value)
        except ShapeParseError as err:
            raise UsageError(f"the shape given for '{key}' is not a shape: {err.message}",
                             file=G.graph.get("xml_path")) from err
        for node in targets:
            out[node] = shape
    return out


def override_targets(G: nx.MultiDiGraph) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The keys ``shapes`` and ``symbols`` take, each with its layers: Parameters by
    friendly and tensor name (one layer), states by ``variable_id`` (every top-level
    ReadValue of it). A key that is both names the Parameter (the caller's precedence)."""
    parameters: dict[str, list[str]] = {}
    states: dict[str, list[str]] = {}
    for node, attrs in G._node.items():
        kind = openvino_type(attrs.get("type") or "")
        if kind == "Parameter":
            parameters.setdefault(attrs["name"], [node])
            for port in attrs["outputs"]:
                for tensor_name in port.get("names") or ():
                    parameters.setdefault(tensor_name, [node])
        elif kind == "ReadValue":
            variable = (attrs.get("data") or {}).get("variable_id")
            if variable:
                states.setdefault(variable, []).append(node)
    return parameters, states


def unknown_key(G: nx.MultiDiGraph, key: str, what: str, parameters: Mapping,
                states: Mapping) -> UsageError:
    """The one-line error of a key that names neither a Parameter nor a state."""
    known = f"parameters: {', '.join(sorted(parameters)) or 'none'}"
    if states:
        known += f"; states: {', '.join(sorted(states))}"
    return UsageError(f"{what} must name a Parameter (friendly or tensor name) or a state (a "
                      f"ReadValue's variable_id), but '{key}' names none ({known})",
                      file=G.graph.get("xml_path") or G.graph.get("source_path"))
