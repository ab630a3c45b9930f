"""Reshape a model for good: new input shapes, written into every declared dim.

``openvino.Model.reshape`` changes a model in memory; the Model Optimizer's
``--input_shape`` used to write the result. :func:`reshape` does the latter on the IR
graph: it applies the new Parameter shapes (as ``check(G, shapes)`` reads them),
re-infers every layer, and rewrites each Parameter's ``shape`` attribute and every
declared port dim to the inferred ones, the way ``openvino.save_model`` writes them
(the ``shape`` attribute keeps intervals, ``1..10,?,2..``; a port ``<dim>`` holds a
static size or ``-1``). With no new shapes it repairs: the dims ``check`` calls a
``mismatch`` are rewritten, so the IR declares what OpenVINO computes.

A layer whose rule the new shapes break (say a MatMul after a flatten written as
``[1,-1]`` once the batch is 2) blocks the reshape: :class:`~ovgather.errors.ReshapeError`
names it, and ``G`` is left as it was. A dynamic dim (``?``, ``1..8``) is proved across
its range: a layer that fails at one of the sizes ``reshape_range`` tries (the old one, 1,
2, 3, the bounds) blocks it too, since the runtime will meet those sizes. With
``fix=True`` the usual culprits upstream are rewritten first (``reshape_fixes``), each so
that at the old shapes it computes exactly what it did. Fixes are applied only when the
model is blocked without them, and only to layers upstream of a blocking layer, with one
exception no shape rule can see: a GatherND whose constant indices pick row 0 of a batch
that was 1 (``reshape_rows``) is made to pick each row's own, since every row would
otherwise read row 0.

>>> import networkx as nx
>>> from ovgather.edit import add_layer
>>> G = nx.MultiDiGraph()
>>> x = add_layer(G, "Parameter", "opset1", data={"shape": "1,3", "element_type": "f32"},
...               outputs=[{"precision": "FP32", "dims": (1, 3)}], name="x")
>>> r = add_layer(G, "Relu", "opset1", inputs=[(x, 0)],
...               outputs=[{"precision": "FP32", "dims": (1, 3)}])
>>> result = reshape(G, {"x": "[?,3]"})
>>> G.nodes[x]["data"]["shape"], G.nodes[r]["outputs"][0]["dims"]
('?,3', (-1, 3))
>>> [(c["name"], c["before"], c["after"]) for c in result.changed]
[('x', '[1,3]', '[?,3]'), ('Relu', '[1,3]', '[?,3]')]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..edit import editing
from ..errors import ReshapeError
from ..graph import input_edges, locate, output_port
from ..infer import CheckReport, check, infer_shapes
from ..infer.report import LayerResult
from ..shapes import PartialShape, ShapeLike, as_partial_shape
from .reshape_buffers import SCATTERS, Buffer, fix_buffer, scatter_buffers
from .reshape_fixes import apply_fix, culprits
from .reshape_range import (
    Probe,
    changed_sizes,
    failures,
    least_size,
    parameters_named,
    shared_dim_warnings,
)
from .reshape_rows import fix_row_pick, may_pick_rows, row_picks

__all__ = ["reshape", "ReshapeResult", "shape_attribute", "reshape_effect"]

#: how many rounds of fixes before giving up (each round fixes every culprit it sees)
MAX_ROUNDS = 32


@dataclass
class ReshapeResult:
    """What :func:`reshape` changed.

    ``changed``: one record per output port whose declared dims changed (``id``,
    ``name``, ``type``, ``port``, ``before`` and ``after`` as shape texts, ``?`` for a
    ``-1`` dim; a Parameter's texts are its ``shape`` attribute). ``fixes``: one record
    per layer ``fix=True`` rewrote (``id``, ``name``, ``type``, ``line``, ``before``,
    ``after``, ``why``). ``warnings``: inputs left out of the new shapes that likely share
    a dim with one given. ``report``: ``check`` of the rewritten graph.
    """

    changed: list[dict[str, Any]] = field(default_factory=list)
    fixes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    report: CheckReport | None = None

    @property
    def modified(self) -> bool:
        return bool(self.changed or self.fixes)


def reshape(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None,
            fix: bool = False) -> ReshapeResult:
    """Give ``G`` new input shapes (or, with none, repair its declared dims) in place.

    ``shapes`` maps a Parameter's friendly or tensor name to a shape (text such as
    ``"[1..8,?,4]"`` or a PartialShape), as for :func:`ovgather.check`. Raises
    :class:`~ovgather.errors.ReshapeError` (``G`` unchanged) when a layer's rule rejects
    the new shapes, after trying the fixes above when ``fix`` is true; a name that is no
    Parameter is a UsageError.
    """
    shapes = dict(shapes or {})
    _inputs_only(G, shapes)
    report = check(G, shapes)
    blockers = _blockers(G, shapes, report)
    fixes: list[dict[str, Any]] = []
    if fix and (blockers or _row_picks(G, report)):
        H = copy.deepcopy(G)
        if blockers:
            fixes, report, blockers = _fix_until_clean(H, shapes, report)
        if not blockers:
            picked = _fix_row_picks(H, report)
            if picked:
                fixes += picked
                report = check(H, shapes)
                blockers = _blockers(H, shapes, report)
        if not blockers:
            _take_over(G, H)
    if blockers:
        raise _blocked(G, blockers, fixes, fix)
    result = ReshapeResult(fixes=fixes, warnings=shared_dim_warnings(G, shapes))
    if not fix:
        result.warnings += [_row_pick_warning(G, node) for node in _row_picks(G, report)]
    old = infer_shapes(G)
    with editing(G):
        result.changed = _write_dims(G, report, old, _overridden(G, shapes))
    result.report = check(G)
    return result


def shape_attribute(shape: PartialShape) -> str:
    """A Parameter's ``shape`` attribute as ``openvino.save_model`` writes it.

    >>> shape_attribute(PartialShape.parse("[1..10,?,2..,..5,3]"))
    '1..10,?,2..,..5,3'
    >>> shape_attribute(PartialShape.dynamic()), shape_attribute(PartialShape([]))
    ('...', '')
    """
    return str(shape)[1:-1]


# ---- blockers ---------------------------------------------------------------------------
@dataclass
class _Blocker:
    """An invalid layer: at the requested shapes, or (``probe``) at static sizes inside
    a requested dynamic range. ``report`` is the check at those shapes."""

    layer: Any
    report: CheckReport
    probe: Probe | None = None
    buffer: Buffer | None = None
    least: int | None = None  # the smallest size of the probed dims it is valid at


def _blockers(G: nx.MultiDiGraph, shapes: dict[str, Any], report: CheckReport
              ) -> list[_Blocker]:
    """The invalid layers at the requested shapes; when there are none, those invalid
    at a probe of a dynamic range (the first probe where each fails)."""
    found = [_Blocker(lr, report) for lr in report.layers if lr.status == "invalid"]
    if found:
        return found
    seen: set[str] = set()
    fine = {lr.id for lr in report.layers if lr.status != "invalid"}
    for probe, at, bad in failures(G, shapes, report):
        least = least_size(G, shapes, probe, fine)  # the size every layer runs from
        found += [_Blocker(lr, at, probe, least=least) for lr in bad if lr.id not in seen]
        seen |= {lr.id for lr in bad}
    return found or _buffer_blockers(G, report)


def _buffer_blockers(G: nx.MultiDiGraph, report: CheckReport) -> list[_Blocker]:
    """The scatters into a constant buffer sized for the old shapes (reshape_buffers):
    every rule holds, but the rows past the first land outside the buffer."""
    if not any(G.nodes[n]["type"] in SCATTERS for n in G):
        return []
    new = {lr.id: lr.inferred_shapes for lr in report.layers}
    found = []
    for b in scatter_buffers(G, infer_shapes(G), new):
        a = G.nodes[b.node]
        lr = LayerResult(b.node, a["name"], a["type"], a.get("version"), "invalid", [], [],
                         a.get("line"), b.why(G))
        found.append(_Blocker(lr, report, buffer=b))
    return found


def _blocked(G: nx.MultiDiGraph, blockers: list[_Blocker], fixes: list[dict[str, Any]],
             fixed: bool) -> ReshapeError:
    """The error naming every blocker, with one hint each: the layers upstream that a
    fix could rewrite (without ``--fix``), or that no fix covers it (with it)."""
    path = G.graph.get("xml_path")
    old = None if fixed else infer_shapes(G)
    rows = []
    for b in blockers:
        lr = b.layer
        why = lr.message if b.probe is None else f"at {b.probe.label}: {lr.message}"
        row = {"id": lr.id, "name": lr.name, "type": lr.type, "line": lr.line, "why": why}
        if b.probe is not None:
            row["sizes"] = {name: str(shape) for name, shape in b.probe.shapes.items()}
        upstream = [] if fixed or b.buffer or b.least else culprits(G, b.report, {lr.id},
                                                                     old)
        if b.least is not None:
            row["hint"] = (f"the model needs a size of at least {b.least} where the range "
                           f"starts lower: start the range there ('{b.least}..')")
            row["least_size"] = b.least
        elif b.buffer is not None and not fixed and b.buffer.value is not None:
            row["hint"] = ("--fix fills the buffer to the shape the tokens have at run "
                           "time")
        elif b.buffer is not None:
            row["hint"] = ("no fix covers this layer: its constant buffer is not one "
                           "repeated value, so ovgather cannot rebuild it at another size")
        elif upstream:
            names = ", ".join(f"{G.nodes[c]['type']} '{G.nodes[c]['name']}' (id {c})"
                              for c in upstream)
            row["hint"] = f"{names} hard-codes the old size; --fix rewrites it"
        elif fixed:
            row["hint"] = ("no fix covers this layer: it needs the old size itself, or a "
                           "constant sized by it that ovgather cannot rewrite")
        rows.append(row)
    first = rows[0]
    more = f" (and {len(rows) - 1} more layer(s))" if len(rows) > 1 else ""
    hint = f"; {first['hint']}" if "hint" in first and (not fixed or "least_size" in first) \
        else ""
    return ReshapeError(
        f"the model cannot be reshaped: {first['type']} rejects the new shapes: "
        f"{first['why']}{hint}{more}", rows, fixes=fixes, file=path, line=first["line"],
        layer_name=first["name"], layer_id=first["id"])


# ---- applying the shapes ------------------------------------------------------------------
def _overridden(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]) -> dict[str, PartialShape]:
    """Parameter id -> the new shape given for it (by friendly or tensor name)."""
    out: dict[str, PartialShape] = {}
    for name, node in parameters_named(G, shapes).items():  # the friendly name first
        out.setdefault(node, as_partial_shape(shapes[name]))
    return out


def _dims_text(dims: tuple[int, ...]) -> str:
    return "[" + ",".join("?" if d == -1 else str(d) for d in dims) + "]"


def _new_dims(shape: PartialShape, declared: tuple[int, ...], same: bool) -> tuple[int, ...]:
    """The dims to declare for ``shape``: a static size, else ``-1``. Where the walk is
    less precise than the IR (``?`` where a static size was declared and fits) and the
    new shapes did not change this port, the declared size stays."""
    dims = tuple(shape.to_ir_dims())
    if not same or len(declared) != len(dims):
        return dims
    return tuple(d if d != -1 or v == -1 or not s.lo <= v <= s.hi else v
                 for d, v, s in zip(dims, declared, shape.dims, strict=True))


def _write_dims(G: nx.MultiDiGraph, report: CheckReport,
                old: dict[str, list[PartialShape]], params: dict[str, PartialShape]
                ) -> list[dict[str, Any]]:
    from ..graph.bodies import locate, walk_bodies

    changed = []
    for lr in report.layers:
        # a layer inside a body (path id ``4/body/6``) is written in its body graph; a
        # body Parameter takes the shape its layer feeds it, as Model.reshape gives it
        H, node = (G, lr.id) if lr.id in G else locate(G, lr.id)
        attrs = H.nodes[node]
        if lr.type in ("Const", "Constant") or lr.status not in ("ok", "mismatch"):
            continue
        if lr.type == "Parameter":
            row = _set_parameter(H, node, lr.inferred_shapes[0], lr.id in params or H is not G)
            if row:
                changed.append({**row, "id": lr.id, "name": lr.name})
        before = old.get(lr.id, [])
        for i, (port, shape) in enumerate(zip(attrs["outputs"], lr.inferred_shapes,
                                              strict=False)):
            if shape.rank is None:
                dims: tuple[int, ...] = ()
            else:
                same = i < len(before) and before[i] == shape
                dims = _new_dims(shape, tuple(port["dims"]), same)
            if dims != tuple(port["dims"]):
                if lr.type != "Parameter":
                    changed.append(_row(lr, port, _dims_text(tuple(port["dims"])),
                                        _dims_text(dims)))
                port["dims"] = dims
    _follow_inputs(G)
    for _, _, _, body in walk_bodies(G):
        _follow_inputs(body)
    return changed


def _set_parameter(G: nx.MultiDiGraph, node: str, shape: PartialShape,
                   overridden: bool) -> dict[str, Any] | None:
    data = G.nodes[node]["data"]
    text = data.get("shape")
    if not overridden and text is not None:
        return None
    new = shape_attribute(shape)
    if text == new:
        return None
    data["shape"] = new
    port = G.nodes[node]["outputs"][0]
    lr = G.nodes[node]
    return {"id": node, "name": lr["name"], "type": lr["type"], "port": port["id"],
            "before": "[" + (text if text is not None else "?") + "]", "after": str(shape)}


def _row(lr: Any, port: dict, before: str, after: str) -> dict[str, Any]:
    return {"id": lr.id, "name": lr.name, "type": lr.type, "port": port["id"],
            "before": before, "after": after}


def _follow_inputs(G: nx.MultiDiGraph) -> None:
    """Every input port declares the dims of the output port that feeds it."""
    for u, v, key in G.edges(keys=True):
        dims = output_port(G, u, key[0])["dims"]
        for port in G.nodes[v]["inputs"]:
            if port["id"] == key[1]:
                port["dims"] = dims


def _take_over(G: nx.MultiDiGraph, H: nx.MultiDiGraph) -> None:
    """Make ``G`` the fixed copy ``H`` (same object, so callers keep their reference)."""
    G.clear()
    G.graph.update(H.graph)
    G.add_nodes_from(H.nodes(data=True))
    G.add_edges_from(H.edges(keys=True, data=True))


# ---- fixes --------------------------------------------------------------------------------
def _fix_until_clean(G: nx.MultiDiGraph, shapes: dict[str, Any], report: CheckReport
                     ) -> tuple[list[dict[str, Any]], CheckReport, list[_Blocker]]:
    """Fix the culprits of the first shapes that fail (the requested ones, else a probe)
    round by round; the fixes made, the report at the requested shapes, what still blocks."""
    fixes: list[dict[str, Any]] = []
    blockers = _blockers(G, shapes, report)
    sizes = changed_sizes(G, shapes)
    for _ in range(MAX_ROUNDS):
        if not blockers:
            break
        if blockers[0].buffer is not None:
            with editing(G):
                round_fixes = [f for b in blockers if b.buffer and (f := fix_buffer(G, b.buffer))]
            if not round_fixes:
                break
            fixes += round_fixes
            report = check(G, shapes)
            blockers = _blockers(G, shapes, report)
            continue
        failing = blockers[0].report
        ids = {b.layer.id for b in blockers if b.report is failing}
        # a layer fixed once follows its input: fixing it again would guess on a guess
        done = {fx["id"] for fx in fixes}
        old, new = infer_shapes(G), {lr.id: lr.inferred_shapes for lr in failing.layers}
        found = [c for c in culprits(G, failing, ids, old, sizes) if c not in done]
        if not found:
            break
        # targets first: a constant compared with a shape that is still wrong upstream
        # would be tiled or broadcast by the wrong count
        found = [c for c in found if G.nodes[c]["type"] in ("Reshape", "Broadcast")] or found
        with editing(G):
            round_fixes = [f for node in found if (f := apply_fix(G, node, old, new, sizes))]
        if not round_fixes:
            break
        fixes += round_fixes
        report = check(G, shapes)
        blockers = _blockers(G, shapes, report)
    return fixes, report, blockers


def _inputs_only(G: nx.MultiDiGraph, shapes: Mapping[str, Any]) -> None:
    """A reshape sets input shapes: a state's (which ``check`` takes, as the value it holds
    at run time) follows the inputs and is no shape an IR can declare."""
    from ..errors import UsageError
    from ..infer.walk import override_targets

    parameters, states = override_targets(G)
    for key in shapes:
        if key not in parameters and key in states:
            raise UsageError(f"reshape sets input shapes, but '{key}' names a state: its "
                             "shape follows the inputs at run time (check and stats take "
                             "it to size the cache)",
                             file=G.graph.get("xml_path") or G.graph.get("source_path"))


def _row_picks(G: nx.MultiDiGraph, report: CheckReport) -> list[str]:
    """The gathers that would read row 0 for every row at the shapes of ``report``."""
    if not may_pick_rows(G):
        return []
    return row_picks(G, infer_shapes(G), {lr.id: lr.inferred_shapes for lr in report.layers})


def _row_pick_warning(G: nx.MultiDiGraph, node: str) -> str:
    attrs = G.nodes[node]
    line = f"line {attrs['line']}, " if attrs.get("line") is not None else ""
    return (f"{attrs['type']} '{attrs['name']}' ({line}id {node}) picks row 0 of its data "
            "for every row through constant indices (a batch-1 trace): --fix makes it pick "
            "each row's own")


def _fix_row_picks(G: nx.MultiDiGraph, report: CheckReport) -> list[dict[str, Any]]:
    """Make each of :func:`_row_picks` read its own row (``reshape_rows``)."""
    found = _row_picks(G, report)
    if not found:
        return []
    old, new = infer_shapes(G), {lr.id: lr.inferred_shapes for lr in report.layers}
    with editing(G):
        return [f for node in found if (f := fix_row_pick(G, node, old, new))]


# ---- what new shapes change, without rewriting -----------------------------------------


def reshape_effect(G: nx.MultiDiGraph, shapes: dict[str, str],
                   after: Any = None) -> dict[str, list[dict]]:
    """What ``--shape`` overrides do to the model, layer by layer.

    ``changed``: the layers whose inferred output differs from the one the model as
    written gives (``before`` and ``after`` texts). ``stopped``: the layers where the
    change stops, so a user who reshapes a model sees which layer blocks it and why: a
    layer that becomes invalid (a Reshape with a hard-coded target whose element count
    no longer fits, a gather whose batch dims now clash), or a Reshape or Broadcast whose
    data changed while its output did not (a hard-coded target that swallows the change).
    ``after`` reuses ``infer.check(G, shapes)`` when the caller already has it.
    """
    before = {lr.id: lr for lr in check(G).layers}
    after = {lr.id: lr for lr in (after or check(G, shapes=shapes)).layers}
    moved = {n for n in after if n in before and after[n].inferred != before[n].inferred}
    changed, stopped = [], []
    for n, lr in after.items():
        row = {"id": n, "name": lr.name, "type": lr.type, "before": before[n].inferred,
               "after": lr.inferred, "status": lr.status}
        if n in moved:
            changed.append(row)
        if lr.status == "invalid" and before[n].status != "invalid":
            stopped.append({**row, "why": lr.message})
        elif n not in moved and _holds_shape(G, n, moved):
            stopped.append({**row, "why": f"its data input changed but its target shape is "
                                          f"fixed: the output stays {', '.join(lr.inferred)}"})
    return {"changed": changed, "stopped": stopped}


def _holds_shape(G: nx.MultiDiGraph, node: str, moved: set[str]) -> bool:
    """A Reshape/Broadcast whose data input changed and whose target is a Const (``node``
    may be a body layer's path id, ``4/body/6``: its inputs are then in that body)."""
    H, local = locate(G, node) or (G, node)
    if H.nodes[local]["type"] not in ("Reshape", "Broadcast"):
        return False
    prefix = node[:len(node) - len(local)]
    edges = input_edges(H, local)
    return (len(edges) >= 2 and prefix + edges[0][0] in moved
            and H.nodes[edges[1][0]]["type"] in ("Const", "Constant"))
