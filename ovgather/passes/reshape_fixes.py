"""The rewrites ``reshape(..., fix=True)`` applies to the layers that block new shapes.

Each fix makes a layer follow the input at run time where it hard-coded a size from
the old shapes, and computes exactly what it did at the old shapes:

* a **Reshape** whose Const target hard-codes a size that now varies gets ``0`` (copy the
  input dim, ``special_zero=true``) where the size sits at the same position, or a target
  built at run time from ``ShapeOf`` of its input where it moved;
* a **Broadcast** whose Const target hard-codes a size of its data input that now varies
  gets ``1`` there and ``bidirectional`` mode (which keeps the data's size);
* a **Concat**, **GatherElements**, or **Gather**/**GatherND** with batch dims, whose
  constant input has size 1 where another input now varies (a ViT's class token
  ``[1,1,D]`` concatenated to a batch of patches, position ids gathered per row) gets
  that input broadcast to the other's size, measured by ``ShapeOf`` at run time: each
  row then reads the same constant, as the one row did (an integer Concat of zeros, the
  row number a batch-1 trace wrote, becomes the row numbers 0..B-1);
* an attention mask (ScaledDotProductAttention) whose constant input holds the whole of a dim
  that now carries several rows folded in (Swin's window mask ``[nW,…]`` against scores
  ``[B*nW,…]``) gets that input tiled once per row.

A constant-folded shape subgraph ends in such a Const target, so it is covered too.
:func:`culprits` finds the fixable layers upstream of the blocking ones; :func:`apply_fix`
rewrites one and returns the record the CLI prints as a ``fix:`` line.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..edit import add_const, add_layer, remove_layer
from ..element_types import is_real
from ..errors import OvgatherError
from ..graph import consumers, input_edges, op_spec, output_port, producer
from ..infer import CheckReport, shape_reaching, shapes_reaching
from ..shapes import PartialShape
from .building import concat, first_output, shape_of, slice_of

__all__ = ["culprits", "apply_fix"]


def culprits(G: nx.MultiDiGraph, report: CheckReport, blockers: set[str], old: dict,
             sizes: frozenset[int] = frozenset({1})) -> list[str]:
    """Fixable layers upstream of a blocking layer, or blocking themselves, in walk
    order: those :func:`apply_fix` can rewrite, given the report of the new shapes and
    ``old``, ``infer_shapes(G)`` at the old ones."""
    upstream: set[str] = set(blockers)
    for b in blockers:
        if b in G:  # a layer inside a body has no top-level ancestors of its own
            upstream |= nx.ancestors(G, b)
    new = {lr.id: lr.inferred_shapes for lr in report.layers}
    return [lr.id for lr in report.layers if lr.id in upstream and lr.id in G
            and _PLANS.get(lr.type, _plan_sibling)(G, lr.id, old, new, sizes)]


def apply_fix(G: nx.MultiDiGraph, node: str, old: dict, new: dict,
              sizes: frozenset[int] = frozenset({1})) -> dict[str, Any] | None:
    """Rewrite the culprit ``node`` (``old``/``new``: layer id -> inferred output shapes
    at the old and the new input shapes; ``sizes``: the old sizes of the input dims that
    change); the ``fix:`` record, or None when no fix fits."""
    return _FIXERS.get(G.nodes[node]["type"], _fix_sibling)(G, node, old, new, sizes)


def _const_target(G: nx.MultiDiGraph, node: str) -> tuple[str, list[int]] | None:
    """The Const feeding input 1 of ``node`` and its values, when it is a 1-D integer."""
    from ..ir import const_value

    edges = input_edges(G, node)
    if len(edges) < 2 or G.nodes[edges[1][0]]["type"] not in ("Const", "Constant"):
        return None
    try:
        value = const_value(G, edges[1][0])
    except OvgatherError:
        return None
    if value.ndim != 1 or value.dtype.kind not in "iu":
        return None
    return edges[1][0], [int(v) for v in value]


def _varying(old: PartialShape | None, new: PartialShape | None) -> dict[int, int]:
    """Input dim position -> its old static size, for the dims the new shapes change."""
    if old is None or new is None or old.rank is None or new.rank != old.rank:
        return {}
    return {j: a.lo for j, (a, b) in enumerate(zip(old.dims, new.dims, strict=True))
            if a.is_static and a != b}


def _plan_target(G, node, old, new, sizes=frozenset({1})) -> list[tuple[str, int]] | None:
    """For each target entry: ``("copy", j)`` (input dim j, which now varies) or
    ``("const", value)``; None when no entry hard-codes a varying size. ``sizes``: the
    old sizes of the input dims the reshape changes (a batch of 1)."""
    attrs = G.nodes[node]
    target = _const_target(G, node)
    if target is None:
        return None
    _, values = target
    before, after = shape_reaching(G, node, 0, old), shape_reaching(G, node, 0, new)
    varying = _varying(before, after)
    if not varying:
        return None
    if attrs["type"] == "Broadcast":
        return _plan_broadcast(attrs, values, varying, before.rank)
    if _grows_in_front(old.get(node), new.get(node)):
        return None
    zero_copies = (attrs.get("data") or {}).get("special_zero") == "true"
    if not zero_copies and 0 in values:
        return None  # a literal 0 size: a target with copies would change its meaning
    in_place = [("copy", i) if t > 0 and varying.get(i) == t else ("const", t)
                for i, t in enumerate(values)]
    if any(kind == "copy" for kind, _ in in_place):
        return in_place
    inferred = _infer_entry(values, _count(after), sizes)
    return inferred or _moved(values, varying) or _infer_entry(values, _count(after), None)


def _grows_in_front(before: list | None, after: list | None) -> bool:
    """The Reshape's output already follows the input in its first dim only (a ``-1``
    there takes the rows: ``[-1,1,16,16]`` of ``[B,9,1,16,16]``): it needs no fix."""
    if not before or not after or before[0] is None or after[0] is None:
        return False
    b, a = before[0], after[0]
    if b.rank is None or b.rank != a.rank or not b.rank:
        return False
    return b.dims[0] != a.dims[0] and all(x == y for x, y in zip(b.dims[1:], a.dims[1:],
                                                                  strict=True))


def _count(shape: PartialShape) -> int | None:
    if shape.rank is None or not all(d.is_static for d in shape.dims):
        return None
    return int(np.prod([d.lo for d in shape.dims], dtype=np.int64))


def _infer_entry(values: list[int], count: int | None, sizes) -> list[tuple[str, int]] | None:
    """A batch folded into another input dim (``[B*S,D]`` into ``[1,S,D]``): the target
    entry that held the old batch (one of ``sizes``; None: the first entry) becomes
    ``-1``, which at the old shapes computes the same size. Needs a target with no ``-1``
    whose other entries divide the new element count."""
    if -1 in values or count is None or not values:
        return None
    i = next((i for i, t in enumerate(values) if t in sizes), None) if sizes else 0
    rest = int(np.prod([t for k, t in enumerate(values) if k != i], dtype=np.int64)) \
        if i is not None else 0
    if i is None or rest <= 0 or count % rest:
        return None
    return [("const", -1 if k == i else t) for k, t in enumerate(values)]


def _moved(values: list[int], varying: dict[int, int]) -> list[tuple[str, int]] | None:
    """Target entries that hold the old size of a varying input dim at another position
    copy that dim (a ShapeOf-built target)."""
    used: set[int] = set()
    plan: list[tuple[str, int]] = []
    for t in values:
        j = next((k for k, v in varying.items() if v == t and k not in used), None) \
            if t > 0 else None
        if j is None:
            plan.append(("const", t))
        else:
            used.add(j)
            plan.append(("copy", j))
    return plan if used else None


def _plan_broadcast(attrs, values, varying, rank):
    mode = (attrs.get("data") or {}).get("mode", "numpy")
    if mode not in ("numpy", "bidirectional") or rank is None or len(values) < rank:
        return None
    shift = len(values) - rank
    plan = [("copy", i - shift) if i >= shift and varying.get(i - shift) == t
            else ("const", t) for i, t in enumerate(values)]
    return plan if any(kind == "copy" for kind, _ in plan) else None


def _layer_record(G, node, before, after, why) -> dict[str, Any]:
    attrs = G.nodes[node]
    return {"id": node, "name": attrs["name"], "type": attrs["type"],
            "line": attrs.get("line"), "before": before, "after": after, "why": why}


def _text(values: list) -> str:
    return "[" + ",".join(map(str, values)) + "]"


# ---- a target built by a Concat whose constant parts hard-code old sizes -----------------
def _target_parts(G: nx.MultiDiGraph, node: str, shared: bool = False
                  ) -> tuple[str, list] | None:
    """The Concat (axis 0; with one reader unless ``shared``) building input 1 of
    ``node`` from one-element inputs, and per part its Const value or None (computed at
    run time)."""
    from ..ir import const_value

    edges = input_edges(G, node)
    if len(edges) < 2 or G.nodes[edges[1][0]]["type"] != "Concat" \
            or (G.out_degree(edges[1][0]) != 1 and not shared):
        return None
    concat_node = edges[1][0]
    parts: list = []
    for u, fp, _ in sorted(input_edges(G, concat_node), key=lambda e: e[2]):
        if tuple(output_port(G, u, fp)["dims"]) != (1,):
            return None
        try:
            value = const_value(G, u) if G.nodes[u]["type"] in ("Const", "Constant") else None
        except OvgatherError:
            value = None
        parts.append(int(value[0]) if value is not None else None)
    return concat_node, parts


def _plan_parts(G, node, old, new) -> list[int] | None:
    """The Concat parts that hold, at their own position, the old size of an input dim
    that now varies (``[1, H//w, W//w, C]`` of a ``[B,…]`` input): they copy that dim."""
    found = _target_parts(G, node)
    if found is None or _grows_in_front(old.get(node), new.get(node)):
        return None
    varying = _varying(shape_reaching(G, node, 0, old), shape_reaching(G, node, 0, new))
    copies = [i for i, t in enumerate(found[1]) if t is not None and t > 0
              and varying.get(i) == t]
    return copies or None


def _fix_parts(G, node, old, new) -> dict[str, Any] | None:
    copies = _plan_parts(G, node, old, new)
    if copies is None:
        return None
    concat_node, parts = _target_parts(G, node)
    name = G.nodes[node]["name"]
    u, from_port, _ = input_edges(G, node)[0]
    shape = shape_of(G, (u, from_port), None, f"{name}/input_shape")
    ports = [p["id"] for p in G.nodes[concat_node]["inputs"]]
    for i in copies:
        src = producer(G, concat_node, ports[i])
        G.remove_edge(src[0], concat_node, key=(src[1], ports[i]))
        dim = slice_of(G, shape, i, i + 1, f"{name}/dim{i}")
        out = first_output(G, dim)
        G.add_edge(dim, concat_node, key=(out, ports[i]), from_port=out, to_port=ports[i],
                   line=None)
        if G.out_degree(src[0]) == 0:
            remove_layer(G, src[0])
    shown = ["?" if t is None else str(t) for t in parts]
    after = [f"shape[{i}]" if i in copies else t for i, t in enumerate(shown)]
    return _layer_record(G, node, f"target [{','.join(shown)}] (a Concat)",
                         f"target [{','.join(after)}] (ShapeOf of its input)",
                         f"the target's constant part(s) {', '.join(map(str, copies))} hold "
                         "input dims that the new shapes change")


def _fix_reshape(G, node, old, new, sizes=frozenset({1})) -> dict[str, Any] | None:
    plan = _plan_target(G, node, old, new, sizes)
    if plan is None:
        return _fix_parts(G, node, old, new) if G.nodes[node]["type"] == "Reshape" else None
    const, values = _const_target(G, node)
    data = G.nodes[node]["data"]
    before = f"target {_text(values)}, special_zero={data.get('special_zero', 'false')}"
    moved = [j for kind, j in plan if kind == "copy"]
    if not moved:  # one entry now -1: the batch folded into another dim
        after = [v for _, v in plan]
        _swap_target(G, node, const, add_const(G, np.array(after, dtype=_dtype(G, const)),
                                               name=f"{G.nodes[node]['name']}/target"))
        return _layer_record(G, node, before, f"target {_text(after)}, special_zero="
                             f"{data.get('special_zero', 'false')}",
                             "the target hard-codes the old batch, which its input now "
                             "carries folded into another dim")
    why = (f"the target hard-codes input dim(s) {', '.join(map(str, moved))}, which the new "
           "shapes change")
    if all(j == i for i, (kind, j) in enumerate(plan) if kind == "copy"):
        zeros = [0 if kind == "copy" else v for kind, v in plan]
        _swap_target(G, node, const, add_const(G, np.array(zeros, dtype=_dtype(G, const)),
                                               name=f"{G.nodes[node]['name']}/target"))
        data["special_zero"] = "true"
        return _layer_record(G, node, before, f"target {_text(zeros)}, special_zero=true", why)
    target = _shape_of_target(G, node, plan)
    after = "target " + _text([f"shape[{v}]" if kind == "copy" else str(v)
                               for kind, v in plan])
    _swap_target(G, node, const, target)
    return _layer_record(G, node, before, f"{after} (ShapeOf of its input), special_zero="
                         f"{data.get('special_zero', 'false')}", why)


def _plan_batch_part(G, node, old, new, sizes=frozenset({1})) -> tuple[str, int] | None:
    """``(Parameter, dim)`` whose new size a Broadcast's Concat-built target should take
    at its first part: a constant there holds the old batch (``torch.ones(batch, S)``
    traced at batch 1), the output kept it, and an input whose dim 0 had that size now
    varies. The input first in the graph's order is taken; a Concat other layers read
    too gives them the same batch (the element count of the same ones)."""
    found = _target_parts(G, node, shared=True)
    before, after = old.get(node), new.get(node)
    if found is None or not found[1] or found[1][0] not in (sizes or ()) \
            or not before or not after or before[0] is None or after[0] is None \
            or before[0].rank is None or not before[0].rank \
            or before[0].dims[0] != after[0].dims[0]:
        return None
    for p in sorted(n for n in G if G.nodes[n]["type"] == "Parameter"):
        b, a = (old.get(p) or [None])[0], (new.get(p) or [None])[0]
        if b is not None and a is not None and b.rank and a.rank == b.rank \
                and b.dims[0] == found[1][0] and a.dims[0] != b.dims[0]:
            return p, 0
    return None


def _fix_batch_part(G, node, old, new, sizes) -> dict[str, Any] | None:
    plan = _plan_batch_part(G, node, old, new, sizes)
    if plan is None:
        return None
    (param, dim), (concat_node, parts) = plan, _target_parts(G, node, shared=True)
    name = G.nodes[node]["name"]
    port = G.nodes[concat_node]["inputs"][0]["id"]
    src = producer(G, concat_node, port)
    G.remove_edge(src[0], concat_node, key=(src[1], port))
    shape = shape_of(G, (param, first_output(G, param)), None, f"{name}/batch_source")
    part = slice_of(G, shape, dim, dim + 1, f"{name}/batch")
    out = first_output(G, part)
    G.add_edge(part, concat_node, key=(out, port), from_port=out, to_port=port, line=None)
    if G.out_degree(src[0]) == 0:
        remove_layer(G, src[0])
    shown = ["?" if t is None else str(t) for t in parts]
    pname = G.nodes[param]["name"]
    return _layer_record(G, node, f"target [{','.join(shown)}] (a Concat)",
                         f"target [{pname}.shape[{dim}],{','.join(shown[1:])}]",
                         f"its target's first part holds the old batch {parts[0]}, which "
                         f"'{pname}' no longer has")


def _fix_broadcast(G, node, old, new, sizes=None) -> dict[str, Any] | None:
    plan = _plan_target(G, node, old, new)
    if plan is None:
        return _fix_batch_part(G, node, old, new, sizes)
    if all(kind == "const" for kind, _ in plan):
        return None
    const, values = _const_target(G, node)
    attrs = G.nodes[node]
    data = attrs["data"]
    before = f"target {_text(values)}, mode={data.get('mode', 'numpy')}"
    ones = [1 if kind == "copy" else v for kind, v in plan]
    _swap_target(G, node, const, add_const(G, np.array(ones, dtype=_dtype(G, const)),
                                           name=f"{attrs['name']}/target"))
    data["mode"] = "bidirectional"
    attrs["version"] = "opset3"
    moved = [j for kind, j in plan if kind == "copy"]
    return _layer_record(G, node, before, f"target {_text(ones)}, mode=bidirectional",
                         f"the target hard-codes data dim(s) {', '.join(map(str, moved))}, "
                         "which the new shapes change")


def _dtype(G: nx.MultiDiGraph, const: str) -> np.dtype:
    from ..ir import const_value

    return const_value(G, const).dtype


def _swap_target(G: nx.MultiDiGraph, node: str, old: str, new: str) -> None:
    """Feed input 1 of ``node`` from ``new`` instead of the Const ``old`` (removed when
    nothing else reads it)."""
    port = G.nodes[node]["inputs"][1]["id"]
    src = producer(G, node, port)
    G.remove_edge(src[0], node, key=(src[1], port))
    new_port = G.nodes[new]["outputs"][0]["id"]
    G.add_edge(new, node, key=(new_port, port), from_port=new_port, to_port=port, line=None)
    if not consumers(G, old, src[1]) and G.out_degree(old) == 0:
        remove_layer(G, old)


def _shape_of_target(G: nx.MultiDiGraph, node: str, plan: list[tuple[str, int]]) -> str:
    """``Concat`` of Const runs and single dims of ``ShapeOf(input 0)``: the target with
    its copies measured at run time (passes.building). It is i64 whatever
    the old Const was: Reshape takes any integer target."""
    name = G.nodes[node]["name"]
    u, from_port, _ = input_edges(G, node)[0]
    rank = len(output_port(G, u, from_port)["dims"]) or None
    shape = shape_of(G, (u, from_port), rank, f"{name}/input_shape")
    parts: list[str] = []
    run: list[int] = []
    for kind, v in [*plan, ("end", 0)]:
        if kind != "const" and run:
            parts.append(add_const(G, np.array(run, dtype=np.int64), name=f"{name}/sizes"))
            run = []
        if kind == "const":
            run.append(v)
        elif kind == "copy":
            parts.append(slice_of(G, shape, v, v + 1, f"{name}/dim{v}"))
    return concat(G, parts, len(plan), f"{name}/target")




# ---- a constant input that must follow another input's size -------------------------
def _row_dims(G: nx.MultiDiGraph, node: str, before: list[PartialShape]
              ) -> tuple[list[int], set[int]] | None:
    """The input positions whose dims must agree and those dims, as the layer's op spec
    knows them (``OpSpec.row_dims``); None for an op without such a rule."""
    from ..ops.core.spec import Attrs

    try:
        spec = op_spec(G, node)
    except OvgatherError:
        return None
    if spec is None or spec.row_dims is None:
        return None
    attrs = Attrs(G.nodes[node].get("data") or {}, spec.version)
    try:
        found = spec.row_dims(attrs, before)
    except OvgatherError:
        return None
    if found is None:
        return None
    positions, dims = found
    return list(positions if positions is not None else range(len(before))), dims


def _row_zero(G: nx.MultiDiGraph, node: str) -> bool:
    """An integer Const of zeros: in a Concat of index tuples, the row number of a model
    traced at batch 1 (``x[arange(B), eos]`` exported as ``[[0], eos]``)."""
    from ..ir import const_value

    if G.nodes[node]["type"] not in ("Const", "Constant"):
        return False
    try:
        value = const_value(G, node)
    except OvgatherError:
        return False
    return value.dtype.kind in "iu" and value.size > 0 and not value.any()


def _is_constant(G: nx.MultiDiGraph, node: str) -> bool:
    """``node`` is computed from Consts only (a Const, a decompression chain …)."""
    return not any(G.nodes[n]["type"] in ("Parameter", "ReadValue")
                   for n in nx.ancestors(G, node) | {node})


def _plan_sibling(G, node, old, new, sizes=None) -> list[tuple[int, int, list[int]]] | None:
    """``(constant input, varying input, dims)`` triples, by input position: a constant
    input whose size-1 dims must equal those of another input, which were 1 and now vary."""
    attrs = G.nodes[node]
    reaching = (shapes_reaching(G, node, old), shapes_reaching(G, node, new))
    if any(len(found) != len(attrs["inputs"]) for found in reaching) \
            or any(s is None or s.rank is None for _, _, s in reaching[0] + reaching[1]):
        return None
    rows = _row_dims(G, node, [s for _, _, s in reaching[0]])
    if rows is None or not rows[1]:
        return None
    positions, matched = rows
    before, after = ([found[i][2] for i in positions] for found in reaching)
    varying = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    plan = []
    for c, position in enumerate(positions):
        u, from_port, _ = reaching[0][position]
        if c in varying or not _is_constant(G, u):
            continue
        precision = output_port(G, u, from_port).get("precision") or ""
        if attrs["type"] == "Concat" and not is_real(precision) and not _row_zero(G, u):
            continue  # integers joined to data are index tuples: only row 0's is known
        for s in varying:
            dims = [d for d in sorted(matched) if d < before[c].rank and d < before[s].rank
                    and before[c].dims[d] == 1 and before[s].dims[d] == 1
                    and after[s].dims[d] != 1]
            if dims:
                plan.append((position, positions[s], dims))
                break
    return plan or None


def _fix_sibling(G, node, old, new, sizes=None) -> dict[str, Any] | None:
    plan = _plan_sibling(G, node, old, new)
    if plan is None:
        return None
    name = G.nodes[node]["name"]
    done = []
    ports = [p["id"] for p in G.nodes[node]["inputs"]]
    for const_at, source_at, dims in plan:
        const_port, source_port = ports[const_at], ports[source_at]
        u, fp = producer(G, node, const_port)
        s, sp = producer(G, node, source_port)
        port = output_port(G, u, fp)
        sizes = list(port["dims"])
        shape = shape_of(G, (s, sp), len(sizes), f"{name}/input{source_port}_shape")
        parts: list[str] = []
        for d, size in enumerate(sizes):
            parts.append(slice_of(G, shape, d, d + 1, f"{name}/input{source_port}_dim{d}")
                         if d in dims else
                         add_const(G, np.array([size], dtype=np.int64), name=f"{name}/size{d}"))
        target = concat(G, parts, len(sizes), f"{name}/input{const_port}_target")
        rows = G.nodes[node]["type"] == "Concat" and not is_real(port.get("precision") or "")
        source = (u, fp)
        if rows:  # the row numbers 0..B-1 where the batch-1 trace wrote 0
            source = _row_numbers(G, u, fp, shape, dims[0], len(sizes), f"{name}/rows")
        tiled = add_layer(G, "Broadcast", "opset3", data={"mode": "numpy"},
                          inputs=[source, (target, first_output(G, target))],
                          outputs=[{"precision": port.get("precision"), "dims": tuple(sizes)}],
                          name=f"{name}/input{const_port}_broadcast")
        G.remove_edge(u, node, key=(fp, const_port))
        out = first_output(G, tiled)
        G.add_edge(tiled, node, key=(out, const_port), from_port=out, to_port=const_port,
                   line=None)
        if rows and G.out_degree(u) == 0:
            remove_layer(G, u)
        done.append(f"input {const_port} {_text(sizes)} " + (
            f"made the row numbers along input {source_port}'s dim {dims[0]}" if rows else
            f"broadcast to input {source_port}'s dim(s) {', '.join(map(str, dims))}"))
    dims_text = ", ".join(str(d) for _, _, ds in plan for d in ds)
    return _layer_record(G, node, "constant input(s) of the old size", "; ".join(done),
                         f"a constant input has size 1 at dim(s) {dims_text}, which must "
                         "follow another input that the new shapes change")


def _row_numbers(G: nx.MultiDiGraph, const: str, port: int, shape: str, dim: int, rank: int,
                 name: str) -> tuple[str, int]:
    """``Range(0, shape[dim])`` of the Const's element type, as a rank-``rank`` tensor
    laid along ``dim`` (sizes 1 elsewhere), for the Broadcast to spread."""
    from ..element_types import element_type_name

    etype = element_type_name(output_port(G, const, port).get("precision"))
    size = slice_of(G, shape, dim, dim + 1, f"{name}/count")
    axis = add_const(G, np.array([0], dtype=np.int64), name=f"{name}/axis")
    stop = add_layer(G, "Squeeze", "opset1", inputs=[(size, first_output(G, size)), (axis, 0)],
                     outputs=[{"precision": "I64", "dims": ()}], name=f"{name}/stop")
    start, step = (add_const(G, np.array(v, dtype=np.int64), name=f"{name}/{what}")
                   for what, v in (("start", 0), ("step", 1)))
    numbers = add_layer(G, "Range", "opset4", data={"output_type": etype},
                        inputs=[(start, 0), (stop, first_output(G, stop)), (step, 0)],
                        outputs=[{"precision": output_port(G, const, port).get("precision"),
                                  "dims": (-1,)}], name=f"{name}/range")
    laid = add_const(G, np.array([-1 if k == dim else 1 for k in range(rank)], dtype=np.int64),
                     name=f"{name}/laid")
    out = add_layer(G, "Reshape", "opset1", data={"special_zero": "false"},
                    inputs=[(numbers, first_output(G, numbers)), (laid, 0)],
                    outputs=[{"precision": output_port(G, const, port).get("precision"),
                              "dims": tuple(-1 if k == dim else 1 for k in range(rank))}],
                    name=name)
    return out, first_output(G, out)


# ---- a constant that repeats per row of a batch folded into another dim ------------------
#: layer type -> (varying input, constant input, trailing dims that are no batch dims).
#: Only attention masks: a constant operand of an elementwise op that matches a grown dim
#: is as often a bias over features (``[1,48]`` after a flatten), which no tiling makes right
_TILED = {"ScaledDotProductAttention": [(0, 3, 2)]}


def _plan_tile(G, node, old, new, sizes=None) -> list[tuple[int, int, int, int, int]] | None:
    """``(constant input, varying input, its dim, constant's dim, old size)``: a constant
    whose dim held the whole of a dim that now carries several rows folded in (Swin's
    window mask ``[nW,…]`` against attention scores ``[B*nW,…]``): it repeats per row."""
    attrs = G.nodes[node]
    reaching = (shapes_reaching(G, node, old), shapes_reaching(G, node, new))
    for varying_at, const_at, inner in _TILED[attrs["type"]]:
        if const_at >= len(reaching[0]) or len(reaching[0]) != len(reaching[1]):
            continue
        s_old, s_new, c_old = (reaching[0][varying_at][2], reaching[1][varying_at][2],
                               reaching[0][const_at][2])
        if any(x is None or x.rank is None for x in (s_old, s_new, c_old)) \
                or s_old.rank != s_new.rank or not _is_constant(G, reaching[0][const_at][0]):
            continue
        for back in range(inner + 1, min(s_old.rank, c_old.rank) + 1):
            ds, dc = s_old.rank - back, c_old.rank - back
            k, was, now = c_old.dims[dc], s_old.dims[ds], s_new.dims[ds]
            if k.is_static and k.lo > 1 and was == k and now.is_static and now.lo != k.lo \
                    and now.lo % k.lo == 0:
                return [(const_at, varying_at, ds, dc, k.lo)]
    return None


def _fix_tile(G, node, old, new, sizes=None) -> dict[str, Any] | None:
    plan = _plan_tile(G, node, old, new)
    if plan is None:
        return None
    (const_at, source_at, ds, dc, k), = plan
    name = G.nodes[node]["name"]
    ports = [p["id"] for p in G.nodes[node]["inputs"]]
    u, fp = producer(G, node, ports[const_at])
    s, sp = producer(G, node, ports[source_at])
    port = output_port(G, u, fp)
    rank = len(port["dims"])
    shape = shape_of(G, (s, sp), None, f"{name}/input{ports[source_at]}_shape")
    rows = slice_of(G, shape, ds, ds + 1, f"{name}/input{ports[source_at]}_dim{ds}")
    per = add_const(G, np.array([k], dtype=np.int64), name=f"{name}/old_size")
    count = add_layer(G, "Divide", "opset1", data={"m_pythondiv": "true"},
                      inputs=[(rows, first_output(G, rows)), (per, 0)],
                      outputs=[{"precision": "I64", "dims": (1,)}], name=f"{name}/rows")
    parts = [count if d == dc else add_const(G, np.array([1], dtype=np.int64),
                                             name=f"{name}/once{d}") for d in range(rank)]
    repeats = concat(G, parts, rank, f"{name}/repeats")
    tiled = add_layer(G, "Tile", "opset1", inputs=[(u, fp), (repeats, first_output(G, repeats))],
                      outputs=[{"precision": port.get("precision"), "dims": tuple(port["dims"])}],
                      name=f"{name}/input{ports[const_at]}_tiled")
    G.remove_edge(u, node, key=(fp, ports[const_at]))
    out = first_output(G, tiled)
    G.add_edge(tiled, node, key=(out, ports[const_at]), from_port=out,
               to_port=ports[const_at], line=None)
    return _layer_record(G, node, f"constant input {ports[const_at]} {_text(port['dims'])}",
                         f"input {ports[const_at]} tiled along dim {dc} by input "
                         f"{ports[source_at]}'s dim {ds} / {k}",
                         f"input {ports[source_at]}'s dim {ds} now holds several rows of "
                         f"{k}, and the constant holds one")


_PLANS = {"Reshape": lambda G, n, old, new, sizes=None: (_plan_target(G, n, old, new, sizes)
                                                          or _plan_parts(G, n, old, new)),
          "Broadcast": lambda G, n, old, new, sizes=None: (
              _plan_target(G, n, old, new, sizes) or _plan_batch_part(G, n, old, new, sizes)),
          **dict.fromkeys(_TILED, _plan_tile)}
_FIXERS = {"Reshape": _fix_reshape, "Broadcast": _fix_broadcast,
           **dict.fromkeys(_TILED, _fix_tile)}
