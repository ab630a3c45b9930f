"""Explain any layer: what reaches it, its attributes, its op's rule in words, the output.

``explain`` walks the gather family's rule step by step (``explain.py``); every other layer
gets the same parts from what ``check`` knows: the tensors that reach its inputs (shapes,
element types, and the values or value bounds of the small integer tensors the walk
carries), the attributes the IR writes, the rule in words, the output shapes the rule
gives (step by step where the rule records steps in a :class:`~ovgather.ops.core.spec.Trace`)
and, where the IR declares other dims, which dims differ.

The rule in words comes from the op's spec, not from a table here: its ``words`` when it
has them, else the first paragraph of its rule function's docstring when that names the op,
else the first paragraph of its op file's docstring (each op file cites its spec there).

>>> from ovgather.ops.core import registry
>>> rule_text(registry.find("GatherND", "opset8"))
'GatherND-8 keeps the batch dims: I[:b] + I[b:-1] + D[b+k:]'
>>> rule_text(registry.find("Add", "opset1"))
'Elementwise ops: unary ops keep the shape, binary ops broadcast (numpy rules).'
>>> value_text(((1, 2, 0), (1, 2, 9)))
'[1,2,0..9]'
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from typing import Any

from ..errors import ShapeError, UnsupportedOpError
from ..infer.report import declared_text, dims_fit
from ..ops.core.spec import OpSpec, Step, Trace, openvino_type
from ..ops.core.values import INF, Tensor
from ..shapes import PartialShape

__all__ = ["rule_text", "rule_source", "value_text", "input_ports", "output_ports",
           "mismatches", "run_traced", "no_rule_text", "layer_lines", "VALUES_SHOWN"]

#: at most this many elements of a value are shown (then how many there are): a shape
#: tensor's all, a float constant's first few
VALUES_SHOWN = 16
_FLOATS_SHOWN = 6

#: the two layers no op rule makes: their output is what the IR writes
_SOURCES = {
    "Parameter": "a Parameter's output is its shape attribute (or the --shape override given "
                 "for it), of its element_type",
    "Constant": "a Const's output is its shape attribute, of its element_type; its value is "
                "read from the weights when it is small enough to matter for shapes",
}

#: what a rule may raise on inputs it refuses (as the walk treats them)
_RULE_ERRORS = (ShapeError, UnsupportedOpError, IndexError, NotImplementedError)


# ---- the rule in words ------------------------------------------------------------------


def _paragraph(doc: str | None) -> str:
    """The first paragraph of ``doc`` on one line, reST literals as plain text."""
    first = (inspect.cleandoc(doc or "").split("\n\n") or [""])[0]
    return " ".join(first.replace("``", "").split())


def rule_text(spec: OpSpec) -> str:
    """The shape rule of ``spec`` in words, from the spec itself (see the module doc)."""
    if spec.words:
        return spec.words
    own = _paragraph(getattr(spec.rule, "__doc__", None))
    if own and spec.type in own:
        return own
    return _paragraph(getattr(sys.modules.get(spec.rule.__module__), "__doc__", None)) or \
        f"the {spec.name} rule of OpenVINO's specification"


def rule_source(spec: OpSpec) -> str:
    """The op file that holds ``spec``'s rule, as a path in the package (``ops/pad.py``)."""
    parts = spec.rule.__module__.split(".")
    return "/".join(parts[1:]) + ".py" if len(parts) > 1 else parts[0]


def no_rule_text(op: str) -> str:
    """The rule line of a layer ovgather has no shape rule for (``unchecked`` or ``unknown``;
    a Parameter or Const, which the IR's attributes make)."""
    source = _SOURCES.get(openvino_type(op) or "")
    if source is not None:
        return source
    return f"ovgather has no shape rule for {op}: check keeps the dims the IR declares"


# ---- tensors ----------------------------------------------------------------------------


def _element(lo: Any, hi: Any) -> str:
    def one(x: Any) -> str:
        return f"{x:.6g}" if isinstance(x, float) else str(x)

    if lo == hi:
        return one(lo)
    if isinstance(lo, int) and isinstance(hi, int):
        if lo <= -INF and hi >= INF:
            return "?"
        if hi >= INF:
            return f"{one(lo)}.."
        if lo <= -INF:
            return f"..{one(hi)}"
    return f"{one(lo)}..{one(hi)}"


def value_text(value: tuple[tuple, tuple] | None, limit: int = VALUES_SHOWN) -> str | None:
    """A value as check carries it (``(lower, upper)`` flat tuples) in words: each element
    exact, ``lo..hi``, ``lo..``, ``..hi`` or ``?``; at most ``limit`` of them."""
    if value is None:
        return None
    lo, hi = value
    if lo and isinstance(lo[0], float):
        limit = min(limit, _FLOATS_SHOWN)
    shown = [_element(a, b) for a, b in zip(lo[:limit], hi[:limit], strict=False)]
    more = f",… {len(lo)} elements" if len(lo) > limit else ""
    return "[" + ",".join(shown) + more + "]"


def _value(t: Tensor) -> str | None:
    try:
        return value_text(t.value)
    except (ShapeError, OSError, ValueError):  # weights that cannot be read: no value
        return None


def input_ports(attrs: Mapping[str, Any], ins: list[Tensor], preds: Mapping[str, Any],
                nodes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each input: its port id, the shape, type and value reaching it, and where from
    (``name:port`` of the producing layer's output)."""
    source: dict[int, str] = {}
    for u, keyed in preds.items():
        for from_port, to_port in keyed:
            source[to_port] = f"{nodes[u]['name']}:{from_port}"
    return [{"port": p["id"], "shape": str(t.shape), "element_type": t.etype,
             "value": _value(t), "from": source.get(p["id"])}
            for p, t in zip(attrs["inputs"], ins, strict=False)]


def output_ports(attrs: Mapping[str, Any], outs: list[Tensor]) -> list[dict[str, Any]]:
    """Each output: its port id, the shape and type check infers and the value it carries,
    beside the dims the IR declares."""
    return [{"port": p["id"], "shape": str(t.shape), "element_type": t.etype,
             "value": _value(t), "declared": declared_text(p["dims"], t.shape)}
            for p, t in zip(attrs["outputs"], outs, strict=False)]


def mismatches(attrs: Mapping[str, Any], outs: list[Tensor]) -> list[dict[str, Any]]:
    """The output ports whose declared dims contradict the inferred shape, each with the
    dims that differ in words."""
    rows = []
    for p, t in zip(attrs["outputs"], outs, strict=False):
        dims, shape = p["dims"], t.shape
        if dims_fit(dims, shape):
            continue
        rows.append({"port": p["id"], "declared": declared_text(dims, shape),
                     "inferred": str(shape), "why": _why(dims, shape)})
    return rows


def _why(dims: tuple[int, ...], shape: PartialShape) -> str:
    inferred = shape.dims or ()
    if len(dims) != len(inferred):
        return f"the IR declares rank {len(dims)}, the rule gives rank {len(inferred)}"
    return "; ".join(f"dim {i}: the IR declares {d}, the rule gives {s}"
                     for i, (d, s) in enumerate(zip(dims, inferred, strict=True))
                     if d != -1 and not s.lo <= d <= s.hi)


def run_traced(spec: OpSpec, ins: list[Tensor], attrs: Mapping[str, Any]
               ) -> tuple[list[Tensor] | None, str | None, Trace]:
    """The rule of ``spec`` on ``ins`` once more, with a trace: its output tensors (None
    when it refuses the inputs), the rule that breaks (None when none does), the trace."""
    trace = Trace()
    try:
        return spec.infer(ins, attrs.get("data") or {}, len(attrs["outputs"]), trace), \
            None, trace
    except _RULE_ERRORS as err:
        said = getattr(err, "message", None) or str(err)
        if isinstance(err, IndexError):
            said = (f"a {attrs['type']} layer needs more inputs than the "
                    f"{len(attrs['inputs'])} it has")
        if trace.failed_rule is None:
            trace.steps.append(Step(said, False, "the layer's inputs and attributes"))
        return None, trace.failed_rule, trace


# ---- text -------------------------------------------------------------------------------


def layer_lines(e: Any) -> list[str]:
    """The text of an explanation of a layer outside the gather family (an ``Explanation``
    of ``explain.py``)."""
    L = e.layer
    where = f", line {L['line']}" if L.get("line") else ""
    named = f", {L['type']}-{L['op_version']}" if L.get("op_version") is not None else ""
    lines = [f"{L['type']} '{L['name']}' (id {L['id']}){named} in the IR ({L['version']})"
             f"{where}"]
    lines.append("inputs" if e.input_ports else "inputs   none")
    for p in e.input_ports:
        came = f" from {p['from']}" if p.get("from") else ""
        value = f" = {p['value']}" if p.get("value") else ""
        lines.append(f"  {p['port']:<3} {p['shape']} {p['element_type']}{came}{value}")
    lines.append("attributes" if e.attributes else "attributes   none")
    lines += [f"  {k} = {v}" for k, v in e.attributes.items()]
    lines.append("rule")
    named = f"{L['type']}-{L['op_version']} ({e.rule_source}): " if e.rule_source else ""
    lines.append(f"  {named}{e.rule}")
    if e.steps:
        lines.append("rules")
        lines += [f"  {'ok  ' if s.ok else 'FAIL'}  {s.rule}: {s.detail}" for s in e.steps]
    lines.append("output")
    for key, value in e.outputs.items():
        note = e.notes.get(key)
        lines.append(f"  {key:<20} {value if value is not None else '-'}"
                     + (f"   ({note})" if note else ""))
    lines.append(f"declared by the IR: {', '.join(L['declared']) or 'no outputs'}; "
                 f"check status: {L['status']}")
    for m in e.mismatch:
        lines.append(f"mismatch: output port {m['port']} declares {m['declared']}, but the "
                     f"rule gives {m['inferred']} ({m['why']})")
    if L.get("message") and L["status"] in ("mismatch", "unknown") and not e.mismatch:
        lines.append(f"{L['status']}: {L['message']}")
    if e.failed_rule:
        lines.append(f"invalid: {L.get('message') or e.failed_rule}")
    return lines
