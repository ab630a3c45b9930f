"""``info``: a model on one screen, read from its XML alone (no shape walk).

Its inputs and outputs (names, tensor names, declared shapes, element types and the
layouts their rt_info gives), the IR version and what wrote it (the net's rt_info: the
OpenVINO release, the framework and conversion parameters when present), the op types
with their counts and opsets, the layer count and the weight bytes (each Const once, as
stored: ``memory.py``).
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from typing import Any

from ..errors import UsageError
from .memory import weight_of
from .report import human

__all__ = ["info", "InfoReport"]

_LAYOUT = re.compile(r'layout="([^"]*)"')
_VALUE = re.compile(r'<([A-Za-z_][\w.-]*)(?:\s+name="([^"]*)")?\s+value="([^"]*)"')


class InfoReport:
    """What :func:`info` finds; ``to_dict()`` is ``ovgather info --json`` (docs/json.md)."""

    def __init__(self, path: str | None, name: str | None, ir_version: int | None,
                 runtime: dict[str, str], inputs: list[dict], outputs: list[dict],
                 ops: list[dict], layers: int, weights: dict[str, Any]) -> None:
        self.path, self.name, self.ir_version, self.runtime = path, name, ir_version, runtime
        self.inputs, self.outputs, self.ops, self.layers = inputs, outputs, ops, layers
        self.weights = weights

    @property
    def weight_bytes(self) -> int:
        return self.weights["bytes"]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "ir_version": self.ir_version,
                "rt_info": self.runtime, "inputs": self.inputs, "outputs": self.outputs,
                "layers": self.layers, "ops": self.ops, "weights": self.weights}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def lines(self) -> list[str]:
        """The text ``ovgather info`` prints."""
        out = [f"{self.path or self.name}: IR v{self.ir_version}, {self.layers:,} layers, "
               f"{human(self.weights['bytes'], 'B')} weights "
               f"({human(self.weights['params'])} params)"]
        for key, value in self.runtime.items():
            out.append(f"  {key}: {value}")
        for title, ports in (("inputs", self.inputs), ("outputs", self.outputs)):
            out.append(f"{title}:")
            for p in ports:
                names = [n for n in p["tensor_names"] if n != p["name"]]
                extra = f" (tensors: {', '.join(names)})" if names else ""
                layout = f" layout {p['layout']}" if p.get("layout") else ""
                out.append(f"  {p['name']}: {p['shape']} {p['element_type']}{layout}{extra}")
        out.append("ops: " + ", ".join(f"{o['type']}×{o['count']} ({'/'.join(o['opsets'])})"
                                         for o in self.ops))
        if self.weights["by_type"]:
            out.append("weights: " + ", ".join(f"{et} {human(row['bytes'], 'B')}"
                                               for et, row in self.weights["by_type"].items()))
        return out

    def __repr__(self) -> str:
        return f"InfoReport({self.path!r}: {self.layers} layers)"

    def _repr_html_(self) -> str:
        def rows(ports: list[dict]) -> str:
            return "".join(
                f"<tr><td>{html.escape(p['name'])}</td><td>{html.escape(p['shape'])}</td>"
                f"<td>{p['element_type']}</td><td>{html.escape(p.get('layout') or '')}</td></tr>"
                for p in ports[:50])
        ops = ", ".join(f"{html.escape(o['type'])}×{o['count']}" for o in self.ops[:60])
        return (f"<div><b>{html.escape(str(self.path or self.name))}</b>: IR "
                f"v{self.ir_version}, {self.layers} layers, "
                f"{human(self.weights['bytes'], 'B')} weights<table><tr><th>input</th>"
                f"<th>shape</th><th>type</th><th>layout</th></tr>{rows(self.inputs)}</table>"
                f"<table><tr><th>output</th><th>shape</th><th>type</th><th>layout</th></tr>"
                f"{rows(self.outputs)}</table><p>{ops}</p></div>")


def info(model: Any) -> InfoReport:
    """The one-screen summary of ``model`` (a graph, or an IR .xml / .onnx path)."""
    from .walk import _body_layers, _graph

    G = _graph(model)
    nodes, pred = G._node, G._pred
    inputs, outputs = [], []
    ops: Counter = Counter()
    opsets: dict[str, set[str]] = {}
    seen: set[Any] = set()
    weights: dict[str, Any] = {"consts": 0, "params": 0, "bytes": 0, "by_type": {}}
    inner = [pair for node, attrs in nodes.items() if attrs.get("bodies")
             for pair in _body_layers(attrs, f"{node}/")]
    for node, attrs in [*nodes.items(), *inner]:
        op = attrs["type"]
        in_body = "/" in node
        if not in_body:
            ops[op] += 1
            opsets.setdefault(op, set()).add(attrs.get("version") or "")
        if op in ("Const", "Constant"):
            record = weight_of(node, attrs)
            if record.key not in seen:
                seen.add(record.key)
                row = weights["by_type"].setdefault(record.element_type,
                                                    {"params": 0, "bytes": 0})
                for target in (weights, row):
                    target["params"] += record.params
                    target["bytes"] += record.nbytes
                weights["consts"] += 1
        elif in_body:
            continue
        elif op == "Parameter":
            port = attrs["outputs"][0] if attrs["outputs"] else {}
            data = attrs.get("data") or {}
            inputs.append(_port(attrs["name"], port.get("names") or [],
                                data.get("shape", ""), data.get("element_type", ""),
                                attrs.get("rt_info"), port.get("rt_info")))
        elif op == "Result":
            port = attrs["inputs"][0] if attrs["inputs"] else {}
            names: list[str] = []
            for u, keys in pred[node].items():
                for from_port, _ in keys:
                    for p in nodes[u]["outputs"]:
                        if p["id"] == from_port:
                            names = list(p.get("names") or [])
            dims = port.get("dims") or ()
            shape = ",".join("?" if d == -1 else str(d) for d in dims)
            from ..element_types import element_type_name

            outputs.append(_port(attrs["name"], names, shape,
                                 element_type_name(port.get("precision")),
                                 attrs.get("rt_info"), port.get("rt_info")))
    if not nodes:
        raise UsageError("the model has no layers")
    op_rows = [{"type": op, "count": n, "opsets": sorted(v for v in opsets[op] if v)}
               for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))]
    return InfoReport(G.graph.get("xml_path") or G.graph.get("source_path"),
                      G.graph.get("name"), G.graph.get("ir_version"),
                      _runtime(G.graph.get("rt_info")), inputs, outputs, op_rows,
                      len(nodes), weights)


def _port(name: str, tensor_names: list[str], shape: str, element_type: str,
          *rt_infos: str | None) -> dict[str, Any]:
    layout = None
    for text in rt_infos:
        found = _LAYOUT.search(text or "")
        if found:
            layout = found[1]
    return {"name": name, "tensor_names": list(tensor_names),
            "shape": f"[{shape.replace(' ', '')}]", "element_type": element_type or "?",
            "layout": layout}


def _runtime(text: str | None) -> dict[str, str]:
    """The net's rt_info entries that carry a value (``OpenVINO Runtime``, the framework,
    the conversion parameters), by name."""
    found: dict[str, str] = {}
    for tag, name, value in _VALUE.findall(text or ""):
        key = name or tag
        if key not in found:
            found[key] = value
    return found
