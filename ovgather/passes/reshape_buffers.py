"""A constant buffer sized for the old token count, filled by a scatter: what
``reshape`` refuses, or with ``fix=True`` rewrites to follow the run-time count.

A mixture-of-experts block traced at batch 1 writes ``torch.zeros(batch * seq, hidden)``
as a Const ``[T,D]`` and adds each expert's tokens into it with a ScatterNDUpdate (or
ScatterElementsUpdate, ScatterUpdate). Every shape rule holds at a new batch: the scatter
keeps its data's shape whatever its indices and updates, and the Reshape after it still
finds its ``T*D`` elements. On the runtime the indices of rows past the first point out
of the buffer (the CPU plugin stops), or land on the first row's tokens. Shape inference
cannot see it; this module finds it from the shapes alone:

* the scatter's data input is computed from constants only, and keeps its shape under
  the new input shapes;
* a tensor upstream of its indices or updates had exactly that shape at the old input
  shapes and the new ones change it (the flattened tokens ``[T,D]``).

The fix gives the scatter a buffer of the same value broadcast to that tensor's shape at
run time (``Broadcast(value, ShapeOf(tokens))``), which at the old shapes is the old buffer;
a buffer that is not one value repeated cannot be rebuilt and blocks the reshape, named.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from ..edit import add_const, add_layer
from ..errors import OvgatherError
from ..graph import input_edges, output_port, producer
from ..shapes import PartialShape
from .building import first_output, shape_of

__all__ = ["Buffer", "scatter_buffers", "fix_buffer"]

#: Scatter ops whose output has the shape of their data input (input 0).
SCATTERS = ("ScatterNDUpdate", "ScatterElementsUpdate", "ScatterUpdate")


@dataclass
class Buffer:
    """A scatter (``node``) into a constant ``buffer`` (its producer and port) that kept
    the old shape while ``source`` (a tensor upstream, node and port), of the same shape
    at the old input shapes, changed; ``value``: the buffer's one repeated value, or None."""

    node: str
    buffer: tuple[str, int]
    source: tuple[str, int]
    old: PartialShape
    new: PartialShape
    value: np.ndarray | None

    def why(self, G: nx.MultiDiGraph) -> str:
        src = G.nodes[self.source[0]]
        return (f"its data input is a constant buffer {self.old} sized for the old input "
                f"shapes, while {src['type']} '{src['name']}' upstream of its indices and "
                f"updates, {self.old} at the old shapes, is now {self.new}: the rows past "
                "the first scatter outside the buffer or over another row")


def _is_constant(G: nx.MultiDiGraph, node: str) -> bool:
    return not any(G.nodes[n]["type"] in ("Parameter", "ReadValue")
                   for n in nx.ancestors(G, node) | {node})


def _first(shapes: dict, node: str, port_at: int) -> PartialShape | None:
    found = shapes.get(node)
    return found[port_at] if found and port_at < len(found) else None


def _port_index(G: nx.MultiDiGraph, node: str, port: int) -> int:
    return [p["id"] for p in G.nodes[node]["outputs"]].index(port)


def _source(G: nx.MultiDiGraph, node: str, shape: PartialShape, old: dict, new: dict
            ) -> tuple[tuple[str, int], PartialShape] | None:
    """The nearest non-constant tensor upstream of the scatter's inputs 1 and 2 whose old
    shape is ``shape`` and whose new shape is not."""
    todo = deque((u, fp) for u, fp, _ in input_edges(G, node)[1:])
    seen: set[str] = set()
    while todo:
        u, fp = todo.popleft()
        if u in seen or _is_constant(G, u):
            continue
        seen.add(u)
        i = _port_index(G, u, fp)
        before, after = _first(old, u, i), _first(new, u, i)
        if before == shape and after is not None and after != before:
            return (u, fp), after
        todo.extend((w, p) for w, p, _ in input_edges(G, u))
    return None


def _uniform(G: nx.MultiDiGraph, node: str) -> np.ndarray | None:
    """The one value a Const holds everywhere (a zero buffer), as a 0-d array."""
    from ..ir import const_value

    if G.nodes[node]["type"] not in ("Const", "Constant"):
        return None
    try:
        value = const_value(G, node)
    except OvgatherError:
        return None
    flat = value.reshape(-1)
    if not flat.size or not (flat == flat[0]).all():
        return None
    return np.array(flat[0], dtype=value.dtype)


def scatter_buffers(G: nx.MultiDiGraph, old: dict, new: dict) -> list[Buffer]:
    """The scatters into a constant buffer sized for the old input shapes (``old`` and
    ``new``: layer id -> inferred output shapes at the old and the new input shapes)."""
    found = []
    for node in nx.topological_sort(G):
        if G.nodes[node]["type"] not in SCATTERS or len(input_edges(G, node)) < 3:
            continue
        u, fp, _ = input_edges(G, node)[0]
        if not _is_constant(G, u):
            continue
        i = _port_index(G, u, fp)
        before, after = _first(old, u, i), _first(new, u, i)
        if before is None or before.rank is None or not before.is_static or after != before:
            continue
        hit = _source(G, node, before, old, new)
        if hit is not None:
            found.append(Buffer(node, (u, fp), hit[0], before, hit[1], _uniform(G, u)))
    return found


def fix_buffer(G: nx.MultiDiGraph, b: Buffer) -> dict[str, Any] | None:
    """Feed the scatter ``Broadcast(value, ShapeOf(source))`` instead of its constant
    buffer; the ``fix:`` record, or None when the buffer is not one repeated value."""
    if b.value is None:
        return None
    attrs = G.nodes[b.node]
    name = attrs["name"]
    port = output_port(G, *b.buffer)
    shape = shape_of(G, b.source, b.old.rank, f"{name}/buffer_shape")
    value = add_const(G, b.value, name=f"{name}/buffer_value")
    filled = add_layer(G, "Broadcast", "opset3", data={"mode": "numpy"},
                       inputs=[(value, 0), (shape, first_output(G, shape))],
                       outputs=[{"precision": port.get("precision"),
                                 "dims": tuple(port["dims"])}],
                       name=f"{name}/buffer")
    to_port = attrs["inputs"][0]["id"]
    src = producer(G, b.node, to_port)
    G.remove_edge(src[0], b.node, key=(src[1], to_port))
    out = first_output(G, filled)
    G.add_edge(filled, b.node, key=(out, to_port), from_port=out, to_port=to_port, line=None)
    from ..edit import remove_layer

    if G.out_degree(src[0]) == 0:
        remove_layer(G, src[0])
    source = G.nodes[b.source[0]]
    return {"id": b.node, "name": name, "type": attrs["type"], "line": attrs.get("line"),
            "before": f"data input a constant buffer {b.old}",
            "after": f"data input {b.value.item()!r} broadcast to the shape of "
                     f"{source['type']} '{source['name']}' (ShapeOf)",
            "why": b.why(G)}
