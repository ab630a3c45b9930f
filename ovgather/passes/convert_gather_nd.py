"""GatherND-8 ⇄ GatherND-5: convert every GatherND to one version, outputs unchanged.

Both versions gather the same elements in the same memory order; they differ only in
the output shape when ``batch_dims`` (b) > 1:

* GatherND-8 keeps the batch dims: ``I[:b] + I[b:-1] + D[b+k:]``;
* GatherND-5 folds them into one: ``[prod(I[:b])] + I[b:-1] + D[b+k:]``.

So with b ≤ 1 only the version string changes, and with b > 1 the layer changes version
and a Reshape (``special_zero=false``) after it restores the old output shape. Its target
is a Const when the output shape is static, else it is computed at run time from ShapeOf
of the new output (and of the indices, for the batch dims GatherND-5 folded away). The
Reshape takes the GatherND's tensor names and friendly name, so the model's outputs keep
their names; the GatherND becomes ``<name>/v5`` or ``<name>/v8``.

A GatherND inside a TensorIterator, Loop or If body is converted too when its b ≤ 1 (its
record is named by path, ``loop/body/gnd``, id ``4/body/6``); with b > 1 the pass stops
with a RewriteError before any edit (it inserts no layers into a body).

OpenVINO has no such pass (the removed MYRIAD plugin only renamed b = 0 layers).
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..edit import add_const, add_layer, editing, insert_after, replace_layer, unique_name
from ..errors import OvgatherError, RewriteError, ShapeError, UnsupportedOpError
from ..graph import consumers, output_port, producer
from ..graph.bodies import inside_words
from ..infer import infer_shapes, shape_reaching
from ..ops.core import registry
from ..ops.core.spec import Attrs
from ..ops.core.values import Tensor
from ..shapes import PartialShape
from .base import Pass, PassResult
from .building import concat, first_output, shape_layer, shape_of, slice_of

__all__ = ["ConvertGatherND", "convert_gather_nd", "count_gather_nd"]

_TARGETS = {"opset5": 5, "opset8": 8}


class ConvertGatherND(Pass):
    """Turn every GatherND into version ``to`` (``"opset5"`` or ``"opset8"``).

    A GatherND whose op version already is the target (``opset6``/``opset7`` also select
    GatherND-5) is left alone, so a second run reports ``modified=False``.
    """

    def __init__(self, to: str) -> None:
        if to not in _TARGETS:
            raise RewriteError(f"GatherND converts to 'opset5' or 'opset8', but got {to!r}")
        self.to = to
        self.version = _TARGETS[to]

    def call(self, G: nx.MultiDiGraph) -> PassResult:
        todo = [n for n, t in G.nodes(data="type")
                if t == "GatherND" and _spec(G, n).version != self.version]
        inner = _body_todo(G, self.version)
        if not todo and not inner:
            return PassResult(G, False)
        known = _inferred_shapes(G)
        # every check runs before the first edit, so an error leaves G as it was
        plans = [_plan(G, node, known) for node in todo]
        inner_plans = [(ids, names, body, _plan(body, node, _of_body(known, ids)))
                       for ids, names, owner, body, node in inner]
        for (ids, names, body, (node, b, _)), (*_, owner, _, _) in zip(inner_plans, inner,
                                                                        strict=True):
            if b > 1:  # would need a Reshape inside the body: not done there yet
                name = names + body.nodes[node]["name"]
                raise RewriteError(
                    f"convert rewrites a GatherND {inside_words(owner)} only when its "
                    f"batch_dims is at most 1 (the version alone changes), but '{name}' "
                    f"has batch_dims {b}").located(
                    file=G.graph.get("xml_path"), line=body.nodes[node].get("line"),
                    layer_name=name, layer_id=ids + node)
        with editing(G):
            changes = [self._convert(G, node, b, shapes) for node, b, shapes in plans]
            for ids, names, body, (node, b, shapes) in inner_plans:
                record = self._convert(body, node, b, shapes)
                changes.append({**record, "id": ids + node, "name": names + record["name"]})
        return PassResult(G, True, changes)

    def _convert(self, G: nx.MultiDiGraph, node: str, b: int,
                 shapes: dict[int, PartialShape]) -> dict[str, Any]:
        attrs = G.nodes[node]
        record = {"id": node, "name": attrs["name"], "from": attrs.get("version"),
                  "to": self.to, "batch_dims": b, "inserted": [], "removed": []}
        attrs["version"] = self.to
        if b <= 1:
            return record
        new_shape = shapes[self.version]
        undone = _undo_reshape(G, node, new_shape)
        if undone is not None:  # a Reshape to exactly the new shape: drop it instead
            record["removed"] = undone
            return record
        before = len(G)
        if self.version == 5:
            _fold_into_v5(G, node, shapes, b)
        else:
            _unfold_into_v8(G, node, shapes, b)
        added = sorted(list(G.nodes)[before:], key=_id_order)
        record["inserted"] = [_describe(G, n) for n in added]
        return record


def convert_gather_nd(G: nx.MultiDiGraph, to: str = "opset5") -> list[dict[str, Any]]:
    """Convert every GatherND of ``G`` in place to ``to``; return one record per layer.

    A record holds the layer ``id`` and ``name`` (before the rewrite), ``from``/``to``
    versions, ``batch_dims`` and the ``inserted`` layers (``id``, ``name``, ``type``).
    An empty list means nothing changed.

    >>> import networkx as nx
    >>> from ovgather.edit import add_layer
    >>> G = nx.MultiDiGraph()
    >>> d = add_layer(G, "Parameter", "opset1", data={"shape": "2,3,4", "element_type": "f32"},
    ...               outputs=[{"precision": "FP32", "dims": (2, 3, 4)}], name="data")
    >>> i = add_layer(G, "Parameter", "opset1", data={"shape": "2,3,1", "element_type": "i32"},
    ...               outputs=[{"precision": "I32", "dims": (2, 3, 1)}], name="ids")
    >>> g = add_layer(G, "GatherND", "opset8", data={"batch_dims": 2}, inputs=[(d, 0), (i, 0)],
    ...               outputs=[{"precision": "FP32", "dims": (2, 3), "names": ["out"]}],
    ...               name="gnd")
    >>> [(c["from"], c["to"], [x["type"] for x in c["inserted"]])
    ...  for c in convert_gather_nd(G, to="opset5")]
    [('opset8', 'opset5', ['Const', 'Reshape'])]
    >>> G.nodes[g]["name"], G.nodes[g]["outputs"][0]["dims"]
    ('gnd/v5', (6,))
    >>> convert_gather_nd(G, to="opset5")  # nothing left to do
    []
    """
    return ConvertGatherND(to).call(G).changes


def count_gather_nd(G: nx.MultiDiGraph) -> int:
    """How many GatherND layers ``G`` holds, those inside bodies included."""
    from ..graph.bodies import body_layers

    return sum(t == "GatherND" for _, t in G.nodes(data="type")) + sum(
        attrs["type"] == "GatherND" for *_, attrs in body_layers(G))


def _body_todo(G: nx.MultiDiGraph, version: int) -> list[tuple]:
    """``(id prefix, name prefix, owner type, body, node)`` of every GatherND inside a
    body (at any depth) that is not yet of ``version``."""
    from ..graph.bodies import walk_bodies

    return [(ids, names, owner, body, n) for ids, names, owner, body in walk_bodies(G)
            for n, t in body.nodes(data="type")
            if t == "GatherND" and _spec(body, n).version != version]


def _of_body(known: dict[str, list[PartialShape]], ids: str) -> dict[str, list[PartialShape]]:
    """The shapes of one body's layers from ``infer_shapes`` (keyed by path id), by
    their ids in the body: those of the body's last run."""
    return {key[len(ids):]: shapes for key, shapes in known.items()
            if key.startswith(ids) and "/" not in key[len(ids):]}


# ---- reading the layer ---------------------------------------------------------------------
def _id_order(node: str) -> tuple[int, str]:
    return (int(node), node) if node.isdigit() else (1 << 62, node)


def _spec(G: nx.MultiDiGraph, node: str):
    """The GatherND spec the layer's opset selects (an unknown opset stops the pass)."""
    try:
        return registry.find(G.nodes[node]["type"], G.nodes[node].get("version"))
    except UnsupportedOpError as err:
        raise _located(G, node, err) from None


def _plan(G: nx.MultiDiGraph, node: str, known: dict[str, list[PartialShape]]
          ) -> tuple[str, int, dict[int, PartialShape]]:
    """``(node, batch_dims, {version: output shape})`` from the graph before any edit (so
    a GatherND fed by another one sees the shape its Reshape will restore). The shapes
    come from GatherND's own rule, which also judges the layer: an invalid layer (a bad
    ``batch_dims``, batch dims that contradict) stops the pass with the rule's error."""
    attrs = G.nodes[node]
    ins = [Tensor(_input_shape(G, node, n, known)) for n in (0, 1)]
    try:
        shapes = {s.version: s.infer(ins, attrs.get("data"))[0].shape
                  for s in registry.specs(attrs["type"])}
    except ShapeError as err:
        raise _located(G, node, err) from None
    return node, Attrs(attrs.get("data")).int("batch_dims", 0), shapes


def _located(G: nx.MultiDiGraph, node: str, err: OvgatherError) -> OvgatherError:
    attrs = G.nodes[node]
    return err.located(file=G.graph.get("xml_path"), line=attrs.get("line"),
                       layer_name=attrs.get("name"), layer_id=node)


def _layer_error(G: nx.MultiDiGraph, node: str, message: str) -> RewriteError:
    return _located(G, node, RewriteError(message))


def _inferred_shapes(G: nx.MultiDiGraph) -> dict[str, list[PartialShape]]:
    """Every layer's output shapes as ``infer`` computes them (intervals included)."""
    return infer_shapes(G)


def _input_shape(G: nx.MultiDiGraph, node: str, position: int,
                 known: dict[str, list[PartialShape]]) -> PartialShape:
    """The shape feeding input ``position``: inferred, else declared, else dynamic rank."""
    ports = G.nodes[node]["inputs"]
    if position >= len(ports):
        raise _layer_error(G, node, f"GatherND has 2 inputs, but input {position} is missing")
    source = producer(G, node, ports[position]["id"])
    if source is None:
        raise _layer_error(G, node, f"GatherND input {position} must be connected, but is not")
    inferred = shape_reaching(G, node, position, known)
    if inferred is not None:
        return inferred
    dims = output_port(G, *source).get("dims", ())
    # a GatherND input has rank >= 1, so a port without <dim> is a dynamic rank
    return PartialShape(dims) if dims else PartialShape.dynamic()


# ---- undoing an earlier conversion ----------------------------------------------------------
def _describe(G: nx.MultiDiGraph, node: str) -> dict[str, str]:
    return {"id": node, "name": G.nodes[node]["name"], "type": G.nodes[node]["type"]}


def _undo_reshape(G: nx.MultiDiGraph, node: str, shape: PartialShape) -> list | None:
    """If the GatherND's only reader is a Reshape to ``shape`` (static, by a Const), the
    new version already gives that shape: the Reshape goes and the GatherND takes its
    consumers and names. So 8 → 5 → 8 gives back the original graph for static shapes.
    Returns the removed layers, or None when the pattern does not hold."""
    _, port_id, port = _out(G, node)
    readers = consumers(G, node, port_id)
    if not shape.is_static or len(readers) != 1 or readers[0][1] != 0:
        return None
    reshape = readers[0][0]
    if G.nodes[reshape]["type"] != "Reshape" or not _targets(G, reshape, shape.to_list()):
        return None
    port["dims"] = tuple(shape.to_list())
    present = [_describe(G, n) for n in G.predecessors(reshape)] + [_describe(G, reshape)]
    replace_layer(G, reshape, node)  # removes the Reshape and its now unused target
    return [d for d in present if d["id"] not in G]


def _targets(G: nx.MultiDiGraph, reshape: str, dims: list[int]) -> bool:
    """True when ``reshape``'s target input is a Const holding exactly ``dims``."""
    from ..ir import const_value

    source = producer(G, reshape, G.nodes[reshape]["inputs"][1]["id"])
    if source is None or G.nodes[source[0]]["type"] not in ("Const", "Constant"):
        return False
    try:
        value = const_value(G, source[0])
    except OvgatherError:
        return False
    zero_copies = G.nodes[reshape]["data"].get("special_zero", "false") == "true"
    return (value.ndim == 1 and value.dtype.kind in "iu" and value.tolist() == dims
            and not (zero_copies and 0 in dims))


# ---- building the Reshape --------------------------------------------------------------------
def _out(G: nx.MultiDiGraph, node: str) -> tuple[str, int, dict]:
    port = G.nodes[node]["outputs"][0]
    return node, port["id"], port


def _reshape_after(G: nx.MultiDiGraph, node: str, target: str, dims: PartialShape,
                   keep: tuple[str, ...] = ()) -> str:
    """Insert ``Reshape(node, target)`` after ``node``; it takes the node's names."""
    _, port_id, port = _out(G, node)
    reshape = add_layer(
        G, "Reshape", "opset1", data={"special_zero": "false"},
        inputs=[(node, port_id), (target, first_output(G, target))],
        outputs=[{"precision": port.get("precision"), "dims": dims.to_ir_dims()}],
        name=f"{G.nodes[node]['name']}/reshape")
    insert_after(G, node, port_id, reshape, keep=keep)
    return reshape


def _set_output_dims(G: nx.MultiDiGraph, node: str, shape: PartialShape) -> None:
    _out(G, node)[2]["dims"] = tuple(shape.to_ir_dims())


def _fold_into_v5(G: nx.MultiDiGraph, node: str, shapes: dict[int, PartialShape], b: int) -> str:
    """GatherND-5 + Reshape back to ``kept`` (the batch dims of the indices)."""
    kept = shapes[8]
    base = G.nodes[node]["name"]
    _set_output_dims(G, node, shapes[5])
    if kept.is_static:
        target = add_const(G, np.array(kept.to_list(), dtype=np.int64), name=f"{base}/shape")
        return _finish(G, node, _reshape_after(G, node, target, kept), f"{base}/v5")
    indices = producer(G, node, G.nodes[node]["inputs"][1]["id"])
    rank_i = len(output_port(G, *indices)["dims"]) or None
    head = slice_of(G, shape_of(G, indices, rank_i, f"{base}/indices_shape"), 0, b,
                  f"{base}/batch_shape")
    rank_out = None if kept.rank is None else kept.rank - b + 1
    out_shape = shape_of(G, (node, first_output(G, node)), rank_out, f"{base}/folded_shape")
    rest = slice_of(G, out_shape, 1, None, f"{base}/rest_shape")
    target = concat(G, [head, rest], kept.rank, f"{base}/shape")
    return _finish(G, node, _reshape_after(G, node, target, kept, keep=(out_shape,)),
                   f"{base}/v5")


def _unfold_into_v8(G: nx.MultiDiGraph, node: str, shapes: dict[int, PartialShape],
                    b: int) -> str:
    """GatherND-8 + Reshape that folds the batch dims into one (GatherND-5's shape)."""
    base = G.nodes[node]["name"]
    kept, folded = shapes[8], shapes[5]
    _set_output_dims(G, node, kept)
    if folded.is_static:
        target = add_const(G, np.array(folded.to_list(), dtype=np.int64), name=f"{base}/shape")
        return _finish(G, node, _reshape_after(G, node, target, folded), f"{base}/v8")
    out_shape = shape_of(G, (node, first_output(G, node)), kept.rank, f"{base}/kept_shape")
    head = slice_of(G, out_shape, 0, b, f"{base}/batch_shape")
    axes = add_const(G, np.array([0], dtype=np.int64), name=f"{base}/batch_axis")
    product = shape_layer(G, "ReduceProd", "opset1", [(head, first_output(G, head)), (axes, 0)],
                          (1,), data={"keep_dims": "true"}, name=f"{base}/batch_size")
    rest = slice_of(G, out_shape, b, None, f"{base}/rest_shape")
    target = concat(G, [product, rest], folded.rank, f"{base}/shape")
    return _finish(G, node, _reshape_after(G, node, target, folded, keep=(out_shape,)),
                   f"{base}/v8")


def _finish(G: nx.MultiDiGraph, node: str, reshape: str, name: str) -> str:
    """Give the GatherND (whose old name the Reshape took) a readable derived name."""
    G.nodes[node]["name"] = unique_name(G, name)
    return reshape
