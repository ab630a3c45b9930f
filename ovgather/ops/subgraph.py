"""Ops with bodies: TensorIterator-1, Loop-5 and If-8.

Their output shapes come from running a body, a whole model, on shapes that the port
map derives from the layer's inputs. A rule here sees each body only through the small
interface the walk passes in ``attrs.bodies`` (``infer.bodies.Body``): its port map and back
edges (plain dicts, ids as text), the declared element type of a body Parameter,
whether a Result is fed straight by a Parameter, and ``run(params)``, which re-infers
the body with the given Parameter tensors and returns the tensor reaching each Result.

Port maps, as OpenVINO's IR reader builds them: an ``<input>`` whose ``external_port_id``
is ``i`` feeds the body Parameter ``internal_layer_id`` from the layer's ``i``-th input;
with ``axis`` it is *sliced* (the Parameter gets ``part_size`` on that axis), with a back
edge to the Parameter it is *merged* (the first iteration reads the input, later ones
the back edge's Result), else *invariant*. The ``<output>`` entries with an
``external_port_id >= 0``, in the order of those ids, are the layer's outputs: with
``axis`` the iterations' values *concatenated* on that axis, else the last value.

TensorIterator-1 counts its iterations from a sliced input with a static dim,
``(|end - start| + 1) // part_size`` after counting negative ``start``/``end`` from the
end; without sliced inputs from its first concatenated output, ``|end - start| //
part_size``. A concatenated output has ``iterations * part_size`` on its axis (``?`` when
unknown; a scalar value is concatenated into ``[n]``).

Loop-5 knows its iterations only when the body's condition is known: always true means
the trip count (input 0, ``-1`` for no limit), always false means one (a do-while), an
execution condition (input 1) known false means none, so a concatenated output is
``[0]``. A concatenated output multiplies a static dim by the iterations, else ``?``. A
Parameter fed by a back edge starts with the input's shape, a dim of 0 made ``?``. A
back edge from a Result that is a (not concatenated) output of the Loop, whose dims do
not lie within those of the Parameter it feeds, makes those dims of that Parameter ``?``
(all of it for another rank) and the body runs again, until nothing changes or as many
times as the Loop iterates, when that is known.

If-8 with a condition whose value is known takes that branch's shapes; otherwise each
output merges both branches: equal dims stay, two different static dims become the
interval between them, any other dim ``?``; different ranks give ``[?]`` when both are
at most 1, else ``[...]``.

>>> from ovgather.shapes import PartialShape as P
>>> [str(merge_branches(P.parse(a), P.parse(b))) for a, b in
...     (("[2,3]", "[2,5]"), ("[4]", "[]"), ("[2,?]", "[2,3]"), ("[1,2]", "[1]"))]
['[2,3..5]', '[?]', '[2,?]', '[...]']
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape, normalize_axis
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, exact_ints

__all__ = ["merge_branches", "SPECS"]

DYNAMIC_RANK = PartialShape.of(None)


def _rank_0_or_1(t: Tensor, what: str, op: str) -> None:
    if t.shape.rank is not None and t.shape.rank > 1:
        raise ShapeInferenceError(f"{op}: the rank of {what} must be 0 or 1, but got "
                                  f"{t.shape}")


def _known(t: Tensor, what: str, op: str) -> int | None:
    """The single value of ``t`` when it is known exactly (a constant, or bounds that
    meet), else None."""
    value = exact_ints(t)
    if value is None:
        return None
    if len(value) != 1:
        raise ShapeInferenceError(f"{op}: {what} must hold one value, but holds "
                                  f"{len(value)}")
    return int(value[0])


def _axis(axis: int, shape: PartialShape, op: str) -> int:
    found = normalize_axis(axis, shape.rank)
    if found is None:
        raise ShapeInferenceError(f"{op}: the port map's axis must lie within the rank, but "
                                  f"got axis {axis} for {shape}")
    return found


def _with(shape: PartialShape, axis: int, dim: Dimension) -> PartialShape:
    dims = list(shape.dims)
    dims[axis] = dim
    return PartialShape.of(tuple(dims))


def _outputs(body: Any) -> list[dict[str, Any]]:
    """The port map outputs that are outputs of the layer, in layer output order."""
    return sorted((e for e in body.port_map["outputs"] if e["external_port_id"] >= 0),
                  key=lambda e: e["external_port_id"])


def _inputs(body: Any) -> list[dict[str, Any]]:
    return sorted((e for e in body.port_map["inputs"] if e["external_port_id"] >= 0),
                  key=lambda e: e["external_port_id"])


def _input(ins: list[Tensor], entry: dict[str, Any], op: str) -> Tensor:
    i = entry["external_port_id"]
    if i >= len(ins):
        raise ShapeInferenceError(f"{op}: a port map input must name one of the "
                                  f"{len(ins)} inputs, but names input {i}")
    return ins[i]


def _check_outputs(attrs: Attrs, n: int, op: str) -> None:
    if n != attrs.n_outputs:
        raise ShapeInferenceError(f"{op}: the port map must describe every output, but it "
                                  f"describes {n} of {attrs.n_outputs}")


def _check_port_map(body: Any, n_inputs: int, loop: bool, op: str) -> None:
    """What OpenVINO requires of a loop's port map: one ``<input>`` with an external
    port for each input of the layer (a Loop's trip count and condition, inputs 0 and 1,
    may also go without one), no two ``<output>`` entries on one external port, and back
    edges only into Parameters that such an input feeds."""
    fed = [e for e in body.port_map["inputs"] if e["external_port_id"] >= 0]
    unfed = 2 - sum(e["external_port_id"] in (0, 1) for e in fed) if loop else 0
    if unfed < 0:
        raise ShapeInferenceError(f"{op}: inputs 0 and 1 may each feed one body Parameter, "
                                  "but one of them feeds several")
    if len(fed) + unfed != n_inputs:
        raise ShapeInferenceError(
            f"{op}: the port map must describe each of the layer's {n_inputs - unfed} data "
            f"inputs once, but describes {len(fed)}")
    ports = [e["external_port_id"] for e in body.port_map["outputs"]
             if e["external_port_id"] >= 0]
    if len(set(ports)) != len(ports):
        twice = sorted({p for p in ports if ports.count(p) > 1})
        raise ShapeInferenceError(
            f"{op}: each output port must come from one port map <output>, but port "
            f"{twice[0]} comes from several")
    params = {e["internal_layer_id"] for e in fed}
    for edge in body.back_edges:
        if edge.get("to-layer") not in params:
            raise ShapeInferenceError(
                f"{op}: a back edge must feed a body Parameter that a port map input "
                f"feeds from the layer, but Parameter {edge.get('to-layer')} is fed by none")


def _bodies(attrs: Attrs, op: str) -> dict[str, Any]:
    bodies = getattr(attrs, "bodies", None)
    if not bodies:
        raise ShapeInferenceError(f"{op}: the layer needs its bodies, but has none")
    return bodies


# -- TensorIterator-1 ------------------------------------------------------------------------
def tensor_iterator(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None
                    ) -> list[Tensor]:
    op = "TensorIterator-1"
    body = _bodies(attrs, op)["body"]
    _check_port_map(body, len(ins), False, op)
    params: dict[str, Tensor] = {}
    iterations, sliced = -1, False
    for entry in _inputs(body):
        t, pid = _input(ins, entry, op), entry["internal_layer_id"]
        etype = body.declared_type(pid)  # TensorIterator keeps the body's own types
        if "axis" not in entry:  # merged (a back edge feeds it later) or invariant
            params[pid] = Tensor(t.shape, etype)
            continue
        sliced = True
        if t.shape.rank is None:
            params[pid] = Tensor(DYNAMIC_RANK, etype)
            continue
        axis = _axis(entry["axis"], t.shape, op)
        part = entry.get("part_size", 1)
        params[pid] = Tensor(_with(t.shape, axis, Dimension.static(part)), etype)
        dim = t.shape.dims[axis]
        if dim.is_static and part > 0:
            size = dim.lo
            start, end = entry.get("start", 0), entry.get("end", -1)
            start, end = start + size if start < 0 else start, end + size if end < 0 else end
            iterations = (abs(end - start) + 1) // part
    results = body.run(params)
    outputs = _outputs(body)
    if iterations == -1 and not sliced:
        concat = next((e for e in outputs if "axis" in e), None)
        if concat is not None and concat.get("part_size", 1) > 0:
            iterations = abs(concat.get("end", -1) - concat.get("start", 0)) \
                // concat.get("part_size", 1)
    out = []
    for entry in outputs:
        value = results[entry["internal_layer_id"]]
        shape = value.shape
        if "axis" in entry:
            if shape.rank is None:
                shape = DYNAMIC_RANK
            else:
                if shape.rank == 0:
                    if entry["axis"] != 0:
                        raise ShapeInferenceError(
                            f"{op}: a concatenated output of scalars needs axis 0, but got "
                            f"axis {entry['axis']}")
                    shape = PartialShape.of((DYNAMIC,))
                axis = _axis(entry["axis"], shape, op)
                part = entry.get("part_size", 1)
                shape = _with(shape, axis, DYNAMIC if iterations == -1
                              else Dimension.static(iterations * part))
        out.append(Tensor(shape, value.etype))
    _check_outputs(attrs, len(out), op)
    return out


# -- Loop-5 --------------------------------------------------------------------------------
def _special(body: Any, purpose: str, key: str) -> str | None:
    return next((e["internal_layer_id"] for e in body.port_map[key]
                 if e.get("purpose") == purpose), None)


def _iterations(ins: list[Tensor], body: Any, results: dict[str, Tensor], op: str) -> int:
    """How many times the body runs, -1 when unknown (the rule in the module docstring)."""
    cond_id = _special(body, "execution_condition", "outputs")
    always_true, iterations = False, -1
    cond = results[cond_id]
    _rank_0_or_1(cond, "the body's condition", op)
    value = _known(cond, "the body's condition", op)
    source = body.source_parameter(cond_id)
    if value is None and source is not None:
        for entry in body.port_map["inputs"]:
            ext = entry["external_port_id"]
            if entry["internal_layer_id"] == source and 0 <= ext < len(ins):
                value = _known(ins[ext], "the condition fed to the body", op)
    if value is not None:
        always_true, iterations = bool(value), -1 if value else 1
    _rank_0_or_1(ins[0], "the trip count", op)
    trips = _known(ins[0], "the trip count", op)
    if trips is not None and always_true:
        iterations = trips
    return iterations


def _fit_back_edges(body: Any, params: dict[str, Tensor], results: dict[str, Tensor],
                    back: dict[str, str], outputs: list[dict[str, Any]]) -> bool:
    """Loosen the Parameters fed by back edges that the Results do not fit; True when
    one changed (the body must run again).

    A Result fits a dim of its Parameter when the Parameter's dim holds every size the
    Result's may take (``1..5`` does not fit ``1``: the Parameter becomes ``?``; ``3``
    fits ``2..4``, which stays), as OpenVINO 2026.4.1 relaxes a back edge (measured with
    ``openvino.opset8.loop``; ONNX ``loop11``'s ``y_in`` is ``[?]``, not ``[1]``)."""
    changed = False
    for entry in outputs:
        rid = entry["internal_layer_id"]
        if "axis" in entry or rid not in back:
            continue
        value, param = results[rid].shape, params[back[rid]]
        if value.rank is None:
            if param.shape.rank is not None:
                params[back[rid]] = Tensor(value, param.etype)
                changed = True
            continue
        if param.shape.rank is None:
            continue
        if value.rank != param.shape.rank:
            new = DYNAMIC_RANK
        else:
            fits = [p.lo <= d.lo and d.hi <= p.hi
                    for d, p in zip(value.dims, param.shape.dims, strict=True)]
            if all(fits):
                continue
            new = PartialShape.of(tuple(p if ok else DYNAMIC
                                        for p, ok in zip(param.shape.dims, fits, strict=True)))
        params[back[rid]] = Tensor(new, param.etype)
        changed = True
    return changed


def _zero_dims_open(shape: PartialShape) -> PartialShape:
    """The first shape of a Parameter fed by a back edge: the input's, but a dim of 0
    (an empty tensor a loop may grow) is ``?`` (OpenVINO 2026.4.1: ``[0,2]`` gives
    ``[?,2]`` even when the body keeps the shape; TensorIterator keeps the 0)."""
    if shape.rank is None or all(d.hi != 0 for d in shape.dims):
        return shape
    return PartialShape.of(tuple(DYNAMIC if d.hi == 0 else d for d in shape.dims))


def loop(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    op = "Loop-5"
    body = _bodies(attrs, op)["body"]
    _check_port_map(body, len(ins), True, op)
    _rank_0_or_1(ins[1], "the execution condition", op)
    started = _known(ins[1], "the execution condition", op)
    none = started is not None and not started
    current = _special(body, "current_iteration", "inputs")
    if current is not None:
        _rank_0_or_1(body.declared(current), "the current iteration Parameter", op)
    if _special(body, "execution_condition", "outputs") is None:
        # without a body condition OpenVINO infers no output at all
        body.run({})
        return [Tensor(DYNAMIC_RANK) for _ in range(attrs.n_outputs)]
    merged = {e["to-layer"]: e["from-layer"] for e in body.back_edges}
    params: dict[str, Tensor] = {}
    back: dict[str, str] = {}
    for entry in _inputs(body):
        t, pid = _input(ins, entry, op), entry["internal_layer_id"]
        if "axis" in entry:
            shape = t.shape if t.shape.rank is None else _with(
                t.shape, _axis(entry["axis"], t.shape, op),
                Dimension.static(entry.get("part_size", 1)))
            params[pid] = Tensor(shape, t.etype)
            continue
        params[pid] = Tensor(t.shape, t.etype)
        if pid in merged:
            back[merged[pid]] = pid
            params[pid] = Tensor(_zero_dims_open(t.shape), t.etype)
    results = body.run(params)
    iterations = _iterations(ins, body, results, op)
    outputs = _outputs(body)
    passes = 0
    while back and (iterations == -1 or passes < iterations):
        passes += 1
        if not _fit_back_edges(body, params, results, back, outputs):
            break
        results = body.run(params)
    out = []
    for entry in outputs:
        value = results[entry["internal_layer_id"]]
        shape = value.shape
        if "axis" in entry:
            if none:
                shape = PartialShape.of((Dimension.static(0),))
            elif shape.rank is not None:
                axis = _axis(entry["axis"], shape, op)
                if shape.rank == 0:
                    shape = PartialShape.of((Dimension.static(1),))
                dim = shape.dims[axis]
                shape = _with(shape, axis, Dimension.static(dim.lo * iterations)
                              if dim.is_static and iterations != -1 else DYNAMIC)
        elif none and shape.is_static and shape.rank:
            shape = _with(shape, 0, Dimension.static(0))
        out.append(Tensor(shape, value.etype))
    _check_outputs(attrs, len(out), op)
    return out


# -- If-8 ------------------------------------------------------------------------------------
def merge_branches(then: PartialShape, other: PartialShape) -> PartialShape:
    """One output shape for both branches of an If whose condition is unknown."""
    if then.rank is None or other.rank is None:
        return DYNAMIC_RANK
    if then.rank != other.rank:
        return PartialShape.of((DYNAMIC,)) if max(then.rank, other.rank) <= 1 \
            else DYNAMIC_RANK
    dims = []
    for a, b in zip(then.dims, other.dims, strict=True):
        if not (a.is_static and b.is_static):
            dims.append(DYNAMIC)
        elif a == b:
            dims.append(a)
        else:
            dims.append(Dimension.from_bounds(min(a.lo, b.lo), max(a.lo, b.lo)))
    return PartialShape.of(tuple(dims))


def _branch(ins: list[Tensor], body: Any, op: str) -> dict[int, Tensor]:
    params = {}
    for entry in _inputs(body):
        t = _input(ins, entry, op)
        params[entry["internal_layer_id"]] = Tensor(t.shape, t.etype)
    results = body.run(params)
    return {i: results[e["internal_layer_id"]] for i, e in enumerate(_outputs(body))}


def if_(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    op = "If-8"
    bodies = _bodies(attrs, op)
    _rank_0_or_1(ins[0], "the condition", op)
    value = _known(ins[0], "the condition", op)
    if value is not None:
        taken, other = ("then_body", "else_body") if value else ("else_body", "then_body")
        bodies[other].run({})  # not run on the inputs: its layers keep their own shapes
        outs = _branch(ins, bodies[taken], op)
        return [outs.get(i) or Tensor(DYNAMIC_RANK) for i in range(attrs.n_outputs)]
    then, other = _branch(ins, bodies["then_body"], op), _branch(ins, bodies["else_body"], op)
    out = []
    for i in range(attrs.n_outputs):
        if i not in then or i not in other:
            raise ShapeInferenceError(f"{op}: each output needs a Result in both bodies, "
                                      f"but output {i} has none in the "
                                      f"{'then' if i not in then else 'else'} body")
        a, b = then[i], other[i]
        if "dynamic" not in (a.etype, b.etype) and a.etype != b.etype:
            raise ShapeInferenceError(f"{op}: both bodies must give output {i} one element "
                                      f"type, but got {a.etype} and {b.etype}")
        etype = b.etype if a.etype == "dynamic" else a.etype
        out.append(Tensor(merge_branches(a.shape, b.shape), etype))
    return out


SPECS = (specs_of({"TensorIterator": tensor_iterator, "Loop": loop}, nested=True,
                  words="the body's result per iteration, concatenated or the last")
         + specs_of({"If": if_}, nested=True, words="the taken body's result"))
