"""Whole-model shape propagation: re-infer every layer and compare with the IR.

OpenVINO's reader silently recomputes every output shape, so stale or hand-edited port
dims never surface. This module walks the graph (``graph.py`` schema) in topological
order from the Parameters' ``shape`` attributes (which keep the intervals that port dims
lose) and the Consts, applies the rule of every op ovgather knows, and compares each
output port with the dims the IR declares (docs/cli.md):

``ok``         declared and inferred are compatible in OpenVINO's sense (same rank, each
               pair of dims can be equal; a declared ``-1`` fits anything, and a port
               with no ``<dim>`` may stand for a dynamic rank, which fits anything);
``mismatch``   the declared dims contradict the inferred ones;
``invalid``    the layer's inputs or attributes break the op's rules (an attribute of
               the wrong kind, ``batch_dims="x"``, is reported here too, never raised);
``unchecked``  ovgather does not know the op; its declared dims are kept.

An invalid layer does not stop the walk: its outputs fall back to the declared dims, as
do those of unchecked layers (their ``inferred`` texts are those declared dims, the shapes
the walk carries on with). Malformed shape *text* in a Parameter or Const (``2,x``) is
not a layer status but an IRStructureError: such an IR cannot be used at all.

Small integer tensors travel with their value bounds (see ``ops/values.py``) so that
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
{'layers': 2, 'ok': 2, 'mismatch': 0, 'invalid': 0, 'unchecked': 0}
>>> str(infer_shapes(G, shapes={"x": "[2,5]"})["1"][0])
'[2,5]'
"""

from __future__ import annotations

import gc
import json
import math
import struct
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._lazy import networkx as nx
from .element_types import FLOAT_VALUE_TYPES, INT_TYPES, element_type_name
from .errors import (
    IRStructureError,
    OvgatherError,
    ShapeError,
    ShapeParseError,
    UnsupportedOpError,
    UsageError,
)
from .ops import registry
from .ops.spec import Attrs
from .ops.values import MAX_VALUE_SIZE, Tensor
from .shapes import INF, Dimension, PartialShape, ShapeLike, as_partial_shape

__all__ = [
    "LayerResult", "CheckReport", "check", "infer_shapes", "input_tensors", "rule_words",
    "STATUSES", "known_ops",
]

STATUSES = ("ok", "mismatch", "invalid", "unchecked")

def known_ops() -> list[str]:
    """The op types whose output shapes ovgather infers (others are ``unchecked``)."""
    return sorted({"Parameter", "Const", "Constant", *registry.known_types()})


class LayerResult:
    """One layer's verdict: its declared and inferred output shapes (texts, one per port).

    The texts are built on first use: a clean 20k-layer model reports only a summary.
    """

    __slots__ = ("id", "name", "type", "version", "status", "line", "message",
                 "declared_dims", "inferred_shapes")

    def __init__(self, id: str, name: str, type: str, version: str | None, status: str,
                 declared_dims: list[tuple[int, ...]], inferred_shapes: list[PartialShape],
                 line: int | None, message: str = "") -> None:
        self.id, self.name, self.type, self.version = id, name, type, version
        self.status, self.line, self.message = status, line, message
        self.declared_dims = declared_dims
        self.inferred_shapes = inferred_shapes

    @property
    def declared(self) -> list[str]:
        """The declared dims as shape texts (``-1`` shown as ``?``)."""
        return [_declared_text(d, s) for d, s in
                zip(self.declared_dims, self.inferred_shapes, strict=False)]

    @property
    def inferred(self) -> list[str]:
        """The inferred shapes as OpenVINO prints them."""
        return [str(s) for s in self.inferred_shapes]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "type": self.type, "version": self.version,
            "status": self.status, "declared": self.declared, "inferred": self.inferred,
            "line": self.line, "message": self.message,
        }

    def __repr__(self) -> str:
        return f"LayerResult({self.to_dict()!r})"


@dataclass
class CheckReport:
    """The result of :func:`check` for one model (one ``models`` entry of the JSON in docs/json.md).

    ``to_dict(all_layers=False)`` lists only the layers that are not ``ok`` (as the CLI
    does without ``--all``); ``to_json()`` is the same as JSON text.
    """

    path: str | None
    ir_version: int | None
    layers: list[LayerResult] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for lr in self.layers:
            counts[lr.status] += 1
        return {"layers": len(self.layers), **counts}

    @property
    def ok(self) -> bool:
        """True when no layer is ``mismatch`` or ``invalid`` (unchecked is not a problem)."""
        return not any(lr.status in ("mismatch", "invalid") for lr in self.layers)

    def problems(self) -> list[LayerResult]:
        """The layers that are not ``ok``, in walk order."""
        return [lr for lr in self.layers if lr.status != "ok"]

    def to_dict(self, all_layers: bool = False) -> dict[str, Any]:
        shown = self.layers if all_layers else self.problems()
        return {
            "path": self.path, "ir_version": self.ir_version, "summary": self.summary,
            "layers": [lr.to_dict() for lr in shown],
        }

    def to_json(self, all_layers: bool = False, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(all_layers), indent=indent)


# -- public entry points -----------------------------------------------------------------
def infer_shapes(
    G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None
) -> dict[str, list[PartialShape]]:
    """Every layer's inferred output shapes (one per output port, in port order).

    Invalid and unknown layers give their declared dims, as in :func:`check`. The
    layers inside the bodies of a TensorIterator, Loop or If follow the layer that holds
    them, keyed by their path id as ``check`` lists them (``"4/body/6"``: layer 6 of the
    body of layer 4; ``subgraphs.locate`` finds it), with the shapes of the last body run.
    The keys of top-level layers are their node ids, as before.
    """
    out: dict[str, list[PartialShape]] = {}
    nested: dict[str, list[LayerResult]] = {}
    with _gc_paused():
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
    with _gc_paused():
        for _ in _walk(G, shapes, produced, until=node):
            pass
    return _inputs(G.nodes[node], G._pred[node], produced)


def check(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None) -> CheckReport:
    """Re-infer every layer of ``G`` and compare with the declared output dims.

    ``shapes`` overrides Parameter shapes like ``openvino.Model.reshape``: keys are a
    Parameter's friendly name or one of its tensor names, values shape texts or shapes.
    A key that names no Parameter is a UsageError.
    """
    path = G.graph.get("xml_path") or G.graph.get("source_path")
    report = CheckReport(path, G.graph.get("ir_version"))
    nodes = G._node
    append = report.layers.append
    nested: dict[str, list[LayerResult]] = {}
    with _gc_paused():
        _check_layers(G, shapes, nodes, append, nested=nested)
    if nested:  # the layers of bodies follow the layer that holds them
        report.layers = [r for lr in report.layers for r in (lr, *nested.get(lr.id, ()))]
    return report


def _check_layers(G, shapes, nodes, append, **walk) -> None:
    """``walk``: ``params`` and ``nested`` as :func:`_walk` takes them (bodies)."""
    for node, status, tensors, message in _walk(G, shapes, **walk):
        attrs = nodes[node]
        outputs = attrs["outputs"]
        if len(outputs) == 1 and len(tensors) == 1:  # the usual layer
            declared, inferred = [outputs[0]["dims"]], [tensors[0].shape]
            if status == "ok" and not _dims_fit(declared[0], inferred[0]):
                status, message = _compare(declared, inferred, attrs)
        else:
            declared = [p["dims"] for p in outputs]
            inferred = [t.shape for t in tensors]
            if status == "ok":
                for d, s in zip(declared, inferred, strict=False):
                    if not _dims_fit(d, s):
                        status, message = _compare(declared, inferred, attrs)
                        break
        append(LayerResult(node, attrs["name"], attrs["type"], attrs.get("version"), status,
                           declared, inferred, attrs.get("line"), message))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The walk allocates many small objects next to a big graph; the cyclic collector
    would rescan that graph again and again (half the run time on 20k layers). Nothing
    the walk makes holds a cycle, so pausing it is safe."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- comparison --------------------------------------------------------------------------
def _dims_fit(declared: tuple[int, ...], inferred: PartialShape) -> bool:
    dims = inferred.dims
    if dims is None or not declared:
        return True
    if len(dims) != len(declared):
        return False
    for v, d in zip(declared, dims, strict=False):
        if v != -1 and not d.lo <= v <= d.hi:
            return False
    return True


def rule_words(attrs: Mapping[str, Any]) -> str:
    """How the output shape of this layer is computed, in words (its spec's words)."""
    op = attrs.get("type")
    try:
        spec = registry.find(op, attrs.get("version"))
    except UnsupportedOpError:
        spec = None
    if spec is None or not spec.words:
        return f"OpenVINO's {op} ({attrs.get('version')}) shape rule gives"
    data = attrs.get("data") or {}
    extra = ", ".join(f"{k}={data[k]}" for k in ("batch_dims", "axis") if k in data)
    return f"{spec.words}{f' ({extra})' if extra else ''}, which is"


def _compare(declared: list[tuple[int, ...]], inferred: list[PartialShape],
             attrs: Mapping[str, Any] | None = None) -> tuple[str, str]:
    pairs = enumerate(zip(declared, inferred, strict=False))
    bad = [i for i, (d, s) in pairs if not _dims_fit(d, s)]
    if len(declared) != len(inferred):
        return "mismatch", (
            f"the layer declares {len(declared)} output ports, but the op has {len(inferred)}"
        )
    if not bad:
        return "ok", ""
    how = rule_words(attrs or {})
    parts = [
        f"output {i} declares {_declared_text(declared[i], inferred[i])}, but {how} "
        f"{inferred[i]}"
        for i in bad
    ]
    return "mismatch", "; ".join(parts)


def _declared_text(dims: tuple[int, ...], inferred: PartialShape | None = None) -> str:
    if not dims and inferred is not None and inferred.dims != ():
        return "[...]"
    return "[" + ",".join("?" if d == -1 else str(d) for d in dims) + "]"


def _declared_shape(dims: tuple[int, ...]) -> PartialShape:
    if not dims:
        return PartialShape.dynamic()
    return PartialShape.of(tuple(Dimension.dynamic() if d == -1 else Dimension.static(d)
                                 for d in dims))


def _port_type(port: Mapping[str, Any]) -> str:
    return element_type_name(port.get("precision"))


# -- the walk ------------------------------------------------------------------------------
def _walk(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None,
          produced: dict[str, dict[int, Tensor]] | None = None, until: str | None = None,
          params: dict[str, Tensor] | None = None, nested: dict | None = None):
    """Yield ``(node, status, output tensors, message)`` in topological order; status is
    ``ok`` (to be compared), ``invalid`` or ``unchecked``. ``produced`` collects every
    output tensor; with ``until`` the walk stops before that node. ``params`` gives
    Parameter nodes their tensors instead of ``shapes`` (a body run by its layer);
    ``nested`` collects the checked layers of bodies by the id of the layer holding them."""
    overrides = _resolve_overrides(G, shapes or {}) if params is None else params
    produced = {} if produced is None else produced
    nodes, pred = G._node, G._pred  # the plain dicts: this loop is the hot path
    order = _topological_order(G)
    for node in order:
        if node == until:
            return
        attrs = nodes[node]
        outputs = attrs["outputs"]
        try:
            status, tensors = _infer_layer(G, node, attrs, pred[node], produced, overrides,
                                           nested)
            message = ""
        except (ShapeError, UnsupportedOpError) as err:
            if isinstance(err, ShapeParseError):  # malformed shape text: the IR is unusable
                raise IRStructureError(
                    f"a {attrs['type']}'s shape attribute must be OpenVINO shape text: "
                    f"{err.message}", file=G.graph.get("xml_path"), line=attrs.get("line"),
                    layer_name=attrs["name"], layer_id=node) from err
            status, tensors, message = "invalid", None, err.message
        except IndexError:  # a rule asked for an input the layer does not have
            status, tensors = "invalid", None
            message = (f"a {attrs['type']} layer needs more inputs than the "
                       f"{len(attrs['inputs'])} it has")
        except NotImplementedError:  # a rule still being written elsewhere
            status, tensors, message = "unchecked", None, "no shape rule yet"
        if tensors is None or len(tensors) < len(outputs):
            fallback = [Tensor(_declared_shape(p["dims"]), _port_type(p)) for p in outputs]
            if tensors is None:
                tensors = fallback
            elif status == "ok":
                status = "mismatch"
                message = (f"the layer declares {len(outputs)} output ports, but the op "
                           f"has {len(tensors)}")
                tensors = tensors + fallback[len(tensors):]
        if len(outputs) == 1:  # the usual layer: no comprehension, no slice
            produced[node] = {outputs[0]["id"]: tensors[0]}
            yield node, status, tensors if len(tensors) == 1 else tensors[:1], message
        else:
            produced[node] = {p["id"]: t for p, t in zip(outputs, tensors, strict=False)}
            yield node, status, tensors[:len(outputs)], message


def _topological_order(G: nx.MultiDiGraph) -> list[str]:
    """The layers in XML order when every edge goes forward in it (as OpenVINO writes an
    IR; the reader's LayerGraph knows it already), else Kahn's algorithm from the XML
    order (networkx's generic sort costs 5× more here)."""
    if getattr(G, "in_order", False):
        return list(G._node)
    succ, pred = G._succ, G._pred
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


def _infer_layer(G, node, attrs, preds, produced, overrides, nested=None):
    op = attrs["type"]
    data = attrs.get("data") or {}
    if op == "Parameter":
        return "ok", [_parameter(attrs, data, overrides.get(node))]
    if op in ("Const", "Constant"):
        return "ok", [_const(G, node, attrs, data)]
    spec = registry.find(op, attrs.get("version"))
    if spec is None:
        return "unchecked", None
    ins = _inputs(attrs, preds, produced)
    rule_attrs = Attrs.of(data, spec.version, len(attrs["outputs"]))
    if spec.nested:  # TensorIterator, Loop, If: the rule runs their bodies
        from .subgraphs import infer_nested
        return infer_nested(node, attrs, spec, ins, rule_attrs, nested)
    return "ok", spec.rule(ins, rule_attrs, None)


def _inputs(attrs, preds, produced) -> list[Tensor]:
    found: dict[int, Tensor] = {}
    for u, keyed in preds.items():
        outs = produced[u]
        for from_port, to_port in keyed:
            t = outs.get(from_port)
            if t is not None:
                found[to_port] = t
    try:
        return [found[p["id"]] for p in attrs["inputs"]]
    except KeyError as err:
        raise ShapeError(f"every input of a {attrs['type']} layer must be connected, "
                         f"but input port {err.args[0]} has no edge") from None


def _parameter(attrs, data, override: PartialShape | Tensor | None) -> Tensor:
    if isinstance(override, Tensor):  # a body's Parameter, as its layer feeds it
        return override
    etype = data.get("element_type", "dynamic")
    if override is not None:
        return Tensor(override, etype)
    text = data.get("shape")
    if text is None:
        return Tensor(_declared_shape(attrs["outputs"][0]["dims"]), etype)
    return Tensor(_parse_param_shape(text), etype)


def _parse_param_shape(text: str) -> PartialShape:
    """The Parameter ``shape`` attribute; OpenVINO reads a reversed interval as ``?``.

    Text that is not a shape (``2,x``, ``-3``, a dim beyond int64) is a ShapeParseError,
    which the walk turns into an IRStructureError: OpenVINO reads some of these (``-3``
    as 0) but no user means them.
    """
    shape = _parse_shape_lenient(text)
    for d in shape.dims or ():
        if d.lo >= INF or (d.hi > INF):
            raise ShapeParseError(f"a dimension must fit in int64, but got '{text}'")
    return shape


def _parse_shape_lenient(text: str) -> PartialShape:
    try:
        return _parse_shape(text)
    except ShapeParseError:
        parts = [p.strip() for p in text.split(",")]
        dims = []
        for p in parts:
            lo, sep, hi = p.partition("..")
            if sep and lo.isascii() and hi.isascii() and lo.isdigit() and hi.isdigit() \
                    and len(lo) < 20 and len(hi) < 20 and int(lo) > int(hi):
                dims.append(Dimension.dynamic())
            else:
                dims.append(Dimension.parse(p))
        return PartialShape.of(tuple(dims))


def _const(G, node, attrs, data) -> Tensor:
    etype = data.get("element_type") or _port_type(attrs["outputs"][0])
    text = data.get("shape")
    if text is None:
        shape = _declared_shape(attrs["outputs"][0]["dims"])
        if not attrs["outputs"][0]["dims"]:
            shape = PartialShape.of(())
    else:
        shape = _parse_shape(text)
    if (etype in INT_TYPES or etype in FLOAT_VALUE_TYPES or etype == "boolean") \
            and shape.dims is not None:
        n = 1
        for d in shape.dims:
            n = n * d.lo if d.lo == d.hi else MAX_VALUE_SIZE + 1
        if n <= MAX_VALUE_SIZE:
            return Tensor(shape, etype, load=lambda: _const_value(G, node, attrs, n),
                          const=True)
    return Tensor(shape, etype, const=True)


@lru_cache(maxsize=4096)
def _parse_shape(text: str) -> PartialShape:
    """Shape attributes repeat a lot in big models; PartialShape is immutable."""
    return PartialShape.parse(text)


_STRUCT = {"i64": "q", "i32": "i", "i16": "h", "i8": "b",
           "u64": "Q", "u32": "I", "u16": "H", "u8": "B", "f64": "d", "f32": "f", "f16": "e",
           "boolean": "?"}


@lru_cache(maxsize=256)
def _unpacker(n: int, code: str) -> struct.Struct:
    return struct.Struct(f"<{n}{code}")


def _const_value(G, node, attrs, n: int):
    """The ``n`` numbers of a Const: its bytes read raw and unpacked with ``struct`` (10×
    cheaper than a numpy array per Const); ``ir.const_value`` does the checked, general
    read when that does not work out (a short file, an odd type)."""
    ir = _ir()
    data = attrs.get("data") or {}
    code = _STRUCT.get(data.get("element_type"))
    vals = None
    if attrs.get("value") is None and code is not None:
        unpack = _unpacker(n, code)
        try:
            vals = unpack.unpack(ir.weights_bytes(G, int(data["offset"]), unpack.size))
        except (KeyError, ValueError, struct.error, OvgatherError):
            pass
    if vals is None:
        arr = attrs.get("value")
        if arr is None:
            arr = ir.const_value(G, node)
        vals = tuple(arr.reshape(-1).tolist())
    if vals and isinstance(vals[0], float) and not all(map(math.isfinite, vals)):
        return None  # inf and nan are no bounds
    return vals, vals


@lru_cache(maxsize=1)
def _ir():
    """``ovgather.ir``, imported on first use (it brings numpy and lxml)."""
    from . import ir

    return ir


def _resolve_overrides(
    G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]
) -> dict[str, PartialShape]:
    """Map each override key (friendly or tensor name) to its Parameter node."""
    if not shapes:
        return {}
    names: dict[str, str] = {}
    for node, attrs in G._node.items():
        if attrs.get("type") != "Parameter":
            continue
        names.setdefault(attrs["name"], node)
        for port in attrs["outputs"]:
            for tensor_name in port.get("names") or ():
                names.setdefault(tensor_name, node)
    out: dict[str, PartialShape] = {}
    for key, value in shapes.items():
        node = names.get(key)
        if node is None:
            known = ", ".join(sorted(names)) or "none"
            raise UsageError(
                f"a shape override must name a Parameter (friendly or tensor name), but "
                f"'{key}' names none (known: {known})", file=G.graph.get("xml_path"))
        try:
            out[node] = as_partial_shape(value)
        except ShapeParseError as err:
            raise UsageError(f"the shape given for '{key}' is not a shape: {err.message}",
                             file=G.graph.get("xml_path")) from err
    return out
