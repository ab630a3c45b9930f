"""Graphs as plain values, so that two reads of a model with bodies compare with ``==``.

A TensorIterator, Loop or If node holds its bodies as ``MultiDiGraph`` objects, which
compare by identity; :func:`node_view` replaces them by their nodes, edges and graph
attributes (recursively), which compare by content.
"""

from __future__ import annotations

from typing import Any

#: body graph attributes that name the source, not the content
_SOURCE = ("weights", "bin_reader", "bin_stat", "xml_path", "bin_path")


def graph_view(G: Any, skip: frozenset[str] | set[str] = frozenset(),
               offsets: bool = True) -> tuple:
    """``(nodes, edges, graph attributes)`` of ``G`` with bodies as views too; the node
    and edge keys in ``skip`` (``line``, say) are left out, and with ``offsets=False``
    the ``offset`` of every Const (a rewrite packs the .bin anew)."""
    nodes = [(n, node_view(a, skip, offsets)) for n, a in G.nodes(data=True)]
    edges = [(u, v, k, {x: y for x, y in d.items() if x not in skip})
             for u, v, k, d in G.edges(keys=True, data=True)]
    return nodes, edges, {k: v for k, v in G.graph.items() if k not in _SOURCE}


def node_view(attrs: dict[str, Any], skip: frozenset[str] | set[str] = frozenset(),
              offsets: bool = True) -> dict[str, Any]:
    """A node's attributes without ``skip``, its bodies (if any) as :func:`graph_view`."""
    out = {k: v for k, v in attrs.items() if k not in skip}
    if not offsets and out.get("type") in ("Const", "Constant"):
        out["data"] = {k: v for k, v in out["data"].items() if k != "offset"}
    if "bodies" in out:
        out["bodies"] = {name: graph_view(body, skip, offsets)
                         for name, body in out["bodies"].items()}
    return out


def ov_bodies(op: Any) -> list[tuple[str, Any]]:
    """``(body name, openvino.Model)`` of an OpenVINO TensorIterator, Loop or If op."""
    kind = op.get_type_name()
    if kind in ("TensorIterator", "Loop"):
        return [("body", op.get_function())]
    if kind == "If":
        return [("then_body", op.get_then_body()), ("else_body", op.get_else_body())]
    return []


def ov_ops(model: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """``(path name, op)`` of every op of an ``openvino.Model``, the ops of bodies after
    the op holding them, named by path as ``ovgather check`` names them
    (``row_loop/body/pick_row_g8``)."""
    found = []
    for op in model.get_ordered_ops():
        name = prefix + op.get_friendly_name()
        found.append((name, op))
        for body_name, body in ov_bodies(op):
            found += ov_ops(body, f"{name}/{body_name}/")
    return found
