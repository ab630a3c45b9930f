"""A gather whose constant indices pick row 0 of a batch that was 1: what ``reshape``'s
row proof refuses, and ``fix=True`` rewrites to pick each row's own.

A model traced at batch 1 writes advanced indexing such as ``mask[arange(B)[:, None,
None, None], arange(S)]`` (the attention masks of recent ``transformers`` exports) as a
GatherND whose indices are a Const ``[1,…,k]`` whose first component, the row number, is
0 everywhere. Every shape rule still holds at batch 3: the output keeps its leading 1
and broadcasts against the scores of every row, so each row silently reads row 0's mask.
Only a run shows it (the reshaped model's rows differ from each row run alone).

The fix drops the row component and lets the gather follow the batch:
``GatherND(data, indices)`` with ``batch_dims=0`` becomes GatherND-8 with
``batch_dims=1`` and the remaining components broadcast to the batch measured at run
time, ``Broadcast(indices[..., 1:], [ShapeOf(data)[0], …])``. At batch 1 it gathers
exactly what the old layer gathered; at batch B row b reads row b.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..edit import add_const, add_layer, remove_layer
from ..errors import OvgatherError
from ..graph import input_edges, output_port, producer
from ..infer import shape_reaching
from .building import concat, first_output, shape_of, slice_of

__all__ = ["row_picks", "fix_row_pick", "may_pick_rows"]


def may_pick_rows(G: nx.MultiDiGraph) -> bool:
    """``G`` has a GatherND (the quick test before any shape is inferred)."""
    return any(attrs.get("type") == "GatherND" for _, attrs in G.nodes(data=True))


def row_picks(G: nx.MultiDiGraph, old: dict, new: dict) -> list[str]:
    """GatherND layers (``batch_dims=0``) whose constant indices pick row 0 of a data
    dim 0 that was 1 at the old shapes (``old``/``new``: layer id -> inferred output
    shapes, as ``infer_shapes`` gives them) and now holds other sizes."""
    return [n for n, attrs in G.nodes(data=True)
            if attrs.get("type") == "GatherND" and _pick(G, n, old, new) is not None]


def fix_row_pick(G: nx.MultiDiGraph, node: str, old: dict, new: dict) -> dict[str, Any] | None:
    """Rewrite one of :func:`row_picks`; the ``fix:`` record, or None when it no longer
    fits."""
    found = _pick(G, node, old, new)
    if found is None:
        return None
    const, indices = found
    attrs = G.nodes[node]
    name = attrs["name"]
    index_port = attrs["inputs"][1]["id"]
    data = producer(G, node, attrs["inputs"][0]["id"])
    rest = np.ascontiguousarray(indices[..., 1:])
    shape = shape_of(G, data, None, f"{name}/data_shape")
    rows = slice_of(G, shape, 0, 1, f"{name}/rows")
    others = add_const(G, np.array(rest.shape[1:], dtype=np.int64), name=f"{name}/index_dims")
    target = concat(G, [rows, others], rest.ndim, f"{name}/index_shape")
    components = add_const(G, rest, name=f"{name}/indices_per_row")
    precision = output_port(G, const, first_output(G, const)).get("precision")
    spread = add_layer(G, "Broadcast", "opset3", data={"mode": "numpy"},
                       inputs=[(components, first_output(G, components)),
                               (target, first_output(G, target))],
                       outputs=[{"precision": precision, "dims": (-1, *rest.shape[1:])}],
                       name=f"{name}/indices_per_row_broadcast")
    G.remove_edge(const, node, key=(first_output(G, const), index_port))
    out = first_output(G, spread)
    G.add_edge(spread, node, key=(out, index_port), from_port=out, to_port=index_port,
               line=None)
    if G.out_degree(const) == 0:
        remove_layer(G, const)
    attrs["version"] = "opset8"
    attrs["data"] = {**(attrs.get("data") or {}), "batch_dims": "1"}
    return {"id": node, "name": name, "type": attrs["type"], "line": attrs.get("line"),
            "before": f"indices {_text(indices.shape)} whose row component is 0, batch_dims=0",
            "after": f"indices {_text(rest.shape)} per row, batch_dims=1",
            "why": "its constant indices pick row 0 of input 0, whose dim 0 was 1 and now "
                   "varies: every row would read row 0"}


def _pick(G: nx.MultiDiGraph, node: str, old: dict, new: dict
          ) -> tuple[str, np.ndarray] | None:
    """The indices Const and its value when ``node`` picks row 0 as above."""
    from ..ir import const_value

    attrs = G.nodes[node]
    if str((attrs.get("data") or {}).get("batch_dims", "0")) != "0":
        return None
    edges = input_edges(G, node)
    if len(edges) < 2 or G.nodes[edges[1][0]]["type"] not in ("Const", "Constant"):
        return None
    try:
        indices = const_value(G, edges[1][0])
    except OvgatherError:
        return None
    if indices.dtype.kind not in "iu" or indices.ndim < 2 or indices.shape[0] != 1 \
            or indices.shape[-1] < 2 or indices[..., 0].any():
        return None
    before, after = shape_reaching(G, node, 0, old), shape_reaching(G, node, 0, new)
    if before is None or after is None or not before.rank or not after.rank:
        return None
    was, now = before.dims[0], after.dims[0]
    if not (was.is_static and was.lo == 1) or now == was:
        return None
    return edges[1][0], indices


def _text(values: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, values)) + "]"
