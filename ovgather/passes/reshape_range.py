"""Prove a reshape to a dynamic dim across its range, the way the runtime will meet it.

A dynamic dim (``?``, ``1..8``) hides the sizes a model will really run at: a ViT's class
token, a constant ``[1,1,D]``, merges with a ``?`` batch (shape inference says the batch
is 1), so ``Model.reshape([-1,3,32,32])`` succeeds and the compiled model fails at batch
2. :func:`probes` picks representative static sizes inside each requested range — the
old size, 1, 2, 3 and the interval's bounds — and :func:`failures` runs ovgather's own
shape inference at each of them (no compile): a layer that is invalid at one of them
blocks the reshape as surely as one invalid at the requested shapes.

Only a dim the reshape widens is probed: one that was static (or a narrower interval)
and now is a range, and only at sizes outside its old range (plus its old static size,
where the fixes must keep the model as it was). A size the model met before is the
model's own business, and so are ties between inputs (a data batch that must equal an
index batch). Every probed dim of a probe takes the same
size (two inputs that share a batch stay equal); the "old size" probe gives each dim the
static size it had before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from ..errors import OvgatherError
from ..graph import op_spec, producer
from ..infer import CheckReport, LayerResult, all_tensors, check, tensors_reaching
from ..shapes import INF, Dimension, PartialShape, ShapeLike, as_partial_shape

__all__ = ["Probe", "probes", "failures", "out_of_bounds", "shared_dim_warnings",
           "changed_sizes", "parameters_named", "least_size", "SIZES"]

#: the sizes every dynamic dim is tried at (besides its old size and its bounds)
SIZES = (1, 2, 3)


@dataclass(frozen=True)
class Probe:
    """Static input shapes inside the requested ranges, and how to name them."""

    shapes: dict[str, PartialShape]

    @property
    def label(self) -> str:
        return ", ".join(f"{name}{shape}" for name, shape in self.shapes.items())


def parameters_named(G: nx.MultiDiGraph, shapes: Mapping[str, Any]) -> dict[str, str]:
    """Each name of ``shapes`` that names a Parameter (friendly or tensor name) -> its id."""
    out = {}
    for node, attrs in G.nodes(data=True):
        if attrs.get("type") != "Parameter":
            continue
        names = [attrs["name"], *(n for p in attrs["outputs"] for n in p.get("names") or ())]
        out.update((name, node) for name in names if name in shapes)
    return out


def _declared(G: nx.MultiDiGraph, node: str) -> PartialShape:
    """A Parameter's ``shape`` attribute (dynamic rank when it has none)."""
    text = (G.nodes[node].get("data") or {}).get("shape")
    return PartialShape.parse(f"[{text}]") if text is not None else PartialShape.dynamic()


def _old_shapes(G: nx.MultiDiGraph, shapes: Mapping[str, Any]) -> dict[str, PartialShape]:
    """Each requested name -> its Parameter's shape as the model declares it now."""
    return {name: _declared(G, node) for name, node in parameters_named(G, shapes).items()}


def _pick(dim: Dimension, old: Dimension | None, size: int | None) -> int:
    """``size`` (or the old static size when None) clamped into ``dim``'s interval: never
    below its lower bound, even when it has no upper one (``32..`` probes 32, not 1).

    >>> _pick(Dimension(32, INF), None, 1), _pick(Dimension(1, 8), None, 12)
    (32, 8)
    """
    if size is None:
        size = old.lo if old is not None and old.is_static else 1
    lo = max(dim.lo, 1)
    return min(max(size, lo), dim.hi) if dim.hi >= lo else lo


def _widened(shapes: dict[str, PartialShape], old: dict[str, PartialShape]
             ) -> dict[str, list[Dimension | None]]:
    """Per input, per dim: the old dim where the new one is a range that reaches beyond
    it (probe it), else None."""
    out = {}
    for name, shape in shapes.items():
        if shape.rank is None:
            continue
        before = old.get(name)
        same_rank = before is not None and before.rank == shape.rank
        out[name] = [
            None if d.is_static or (same_rank and before.dims[i].lo <= d.lo
                                    and d.hi <= before.dims[i].hi)
            else before.dims[i] if same_rank else Dimension.dynamic()
            for i, d in enumerate(shape.dims)]
    return out


def probes(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]) -> list[Probe]:
    """The shapes to prove ``shapes`` at: each widened dim at a static size, the other
    dims as given; none when no dim is widened. A dynamic rank (``...``) stays as given."""
    new = {name: as_partial_shape(s) for name, s in shapes.items()}
    widened = _widened(new, _old_shapes(G, new))
    probed = [(name, i) for name, dims in widened.items() for i, d in enumerate(dims)
              if d is not None]
    if not probed:
        return []
    # a batch of 0 is inside ``?`` but no one runs it: the low end counts from 1; just
    # past an old interval is where the new sizes start
    ends = [e for name, i in probed for e in (new[name].dims[i].lo, new[name].dims[i].hi)
            if 0 < e < INF]
    ends += [e for name, i in probed for e in (widened[name][i].lo - 1, widened[name][i].hi + 1)
             if 0 < e < INF and not widened[name][i].is_static]
    found: dict[tuple, Probe] = {}
    for size in (None, *SIZES, *ends):
        picks = {(name, i): _pick(new[name].dims[i], widened[name][i], size) for name, i in probed}
        if size is None and not all(widened[n][i].is_static for n, i in probed):
            continue  # no old size to check the fixes at
        if size is not None and all(widened[n][i].lo <= k <= widened[n][i].hi
                                    for (n, i), k in picks.items()):
            continue  # the model met these sizes before: nothing the reshape admits
        picked = {name: PartialShape([
            d if widened[name][i] is None else Dimension.static(picks[name, i])
            for i, d in enumerate(new[name].dims)]) for name in widened}
        key = tuple((n, str(s)) for n, s in picked.items())
        found.setdefault(key, Probe(picked))
    return list(found.values())


def least_size(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike], probe: Probe,
               layers: set[str], limit: int = 4096) -> int | None:
    """The smallest size of the probed dims (every dim the probe set, as probes do, at one
    size) above the probe's at which every one of ``layers`` is valid: what a model whose
    layers need a minimum size (kernels wider than a small image) needs; None when no
    size up to ``limit`` (or the dims' upper bound) is. A bisection: about
    ``log2(limit)`` checks."""
    new = {name: as_partial_shape(s) for name, s in shapes.items()}
    probed = [(name, i) for name, shape in probe.shapes.items() if shape.dims is not None
              for i, d in enumerate(shape.dims)
              if name in new and new[name].dims is not None and not new[name].dims[i].is_static]
    if not probed:
        return None
    start = max(probe.shapes[n].dims[i].lo for n, i in probed)
    top = min([limit, *(new[n].dims[i].hi for n, i in probed)])

    def valid_at(k: int) -> bool:
        at = {name: PartialShape([Dimension.static(min(max(k, new[name].dims[i].lo),
                                                       new[name].dims[i].hi))
                                  if (name, i) in probed else d
                                  for i, d in enumerate(shape.dims)])
              for name, shape in probe.shapes.items()}
        try:
            rows = check(G, {**shapes, **at}).layers
        except OvgatherError:
            return False
        return not any(lr.status == "invalid" and lr.id in layers for lr in rows)

    if top <= start or not valid_at(top):
        return None
    lo, hi = start, top  # invalid at lo, valid at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if valid_at(mid) else (mid, hi)
    return hi


def _leaves_old_range(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]) -> bool:
    """Some requested static dim lies outside the range its input had: a size the model
    did not admit before (``x[2,3,8]`` of ``x[1..8,3,8]`` does not)."""
    new = {name: as_partial_shape(s) for name, s in shapes.items()}
    old = _old_shapes(G, new)
    for name, shape in new.items():
        before = old.get(name)
        if shape.rank is None or before is None or before.rank != shape.rank:
            return True
        if any(d.is_static and not before.dims[i].lo <= d.lo <= before.dims[i].hi
               for i, d in enumerate(shape.dims)):
            return True
    return False


def failures(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike], report: CheckReport
             ) -> list[tuple[Probe, CheckReport, list[Any]]]:
    """``(probe, its report, its invalid layers)`` for each probe where a layer valid at
    the requested shapes (``report``) is invalid, or a Gather reads out of bounds that did
    not at the old shapes."""
    static = [Probe({k: as_partial_shape(v) for k, v in shapes.items()})] \
        if _leaves_old_range(G, shapes) else []
    candidates = probes(G, shapes) or static
    if not candidates:
        return []
    fine = {lr.id for lr in report.layers if lr.status != "invalid"}
    before = set(out_of_bounds(G, None))
    out = []
    for probe in candidates:
        at = check(G, {**shapes, **probe.shapes})
        bad = [lr for lr in at.layers if lr.status == "invalid" and lr.id in fine]
        bad += [lr for node, lr in out_of_bounds(G, {**shapes, **probe.shapes}).items()
                if node not in before and node in fine]
        if bad:
            out.append((probe, at, bad))
    return out


def out_of_bounds(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None
                  ) -> dict[str, LayerResult]:
    """The layers whose known index bounds reach past their data at ``shapes`` (None:
    the model as it is; ``OpSpec.index_reach`` says which ops and how), as invalid layer
    results. Shape inference lets them pass (OpenVINO's too), and the CPU plugin then
    reads zeros there."""
    from ..ops.core.spec import Attrs

    produced = all_tensors(G, shapes)
    found = {}
    for node, attrs in G.nodes(data=True):
        if node not in produced or attrs.get("type") in ("Parameter", "Const", "Result"):
            continue
        try:
            spec = op_spec(G, node)
        except OvgatherError:
            continue
        if spec is None or spec.index_reach is None:
            continue
        ins = tensors_reaching(attrs, G._pred[node], produced)
        why = spec.index_reach(ins, Attrs(attrs.get("data") or {}, spec.version),
                               _const_indices(G, node))
        if why:
            found[node] = LayerResult(node, attrs["name"], attrs["type"], attrs.get("version"),
                                      "invalid", [], [], attrs.get("line"), why)
    return found


def _const_indices(G: nx.MultiDiGraph, node: str):
    """The array of a Const feeding input 1 (the indices of the gather family), else None."""
    from ..ir import const_value

    source = producer(G, node, G.nodes[node]["inputs"][1]["id"]) \
        if len(G.nodes[node]["inputs"]) > 1 else None
    if source is None or G.nodes[source[0]]["type"] not in ("Const", "Constant"):
        return None
    try:
        return const_value(G, source[0])
    except OvgatherError:
        return None


def shared_dim_warnings(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]) -> list[str]:
    """A warning per Parameter left out of ``shapes`` that has, at a position where a
    given input changes, the same old size: most likely a batch or a sequence the two
    share (``input_ids`` reshaped, ``attention_mask`` left at the old size)."""
    new = {name: as_partial_shape(s) for name, s in shapes.items()}
    given = parameters_named(G, new)
    changed: list[tuple[str, int, int, str]] = []  # (name, position, old size, new dim)
    for name, node in given.items():
        before, after = _declared(G, node), new[name]
        if before.rank is None or before.rank != after.rank:
            continue
        changed += [(name, i, a.lo, str(b)) for i, (a, b) in
                    enumerate(zip(before.dims, after.dims, strict=True))
                    if a.is_static and a != b]
    given_ids = set(given.values())
    warnings = []
    for node, attrs in G.nodes(data=True):
        if attrs.get("type") != "Parameter" or node in given_ids:
            continue
        text = (attrs.get("data") or {}).get("shape")
        shape = PartialShape.parse(f"[{text}]") if text is not None else None
        if shape is None or shape.rank is None:
            continue
        for name, i, size, after in changed:
            if i < shape.rank and shape.dims[i].is_static and shape.dims[i].lo == size:
                warnings.append(
                    f"input '{attrs['name']}' {shape} keeps its size {size} at dim {i}, where "
                    f"'{name}' changes from {size} to {after}: if the two share that dim, "
                    "give it in --shape too")
                break
    return warnings


def changed_sizes(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike]) -> frozenset[int]:
    """The old static sizes of the input dims ``shapes`` changes (a batch of 1: {1})."""
    new = {name: as_partial_shape(s) for name, s in shapes.items()}
    out = set()
    for name, before in _old_shapes(G, new).items():
        after = new[name]
        if before.rank is not None and before.rank == after.rank:
            out |= {a.lo for a, b in zip(before.dims, after.dims, strict=True)
                    if a.is_static and a != b}
    return frozenset(out or {1})
