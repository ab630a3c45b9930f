"""Prove every layer's inferred shape on the OpenVINO CPU runtime (``validate --all-layers``).

``check`` says what shape each layer gives; a user who sees it disagree with the IR asks
what the runtime really produces there. :func:`prove_all_layers` compiles the model once
(in chunks when it is big) with an extra output at every output port of every layer,
runs it at two or three input sizes inside each dynamic dim's bounds, and compares each
port's real shape with ovgather's inference for those very input sizes (``--shape``
semantics: the same walk as ``check`` with the Parameters set to the sizes run).

The sizes: one size ``s`` per run, clipped into each dynamic dim's bounds, so that dims
that must agree (a batch shared by two inputs, say) get the same value: the smallest
``s`` every dim's lower bound allows, the largest every bounded dim allows (four times the
small one when no dim is bounded), and one between. A fully static model runs once.
Inputs are zeros for integer and boolean types (a valid index, mask and token id for
any size) and small random numbers for real types.

Statuses, per layer:

``ok``             every port's real shape is the inferred one, at every size;
``looser``         the real shapes lie inside the inferred ones, which are not all static
                   (an op whose output size depends on values, NonZero say);
``shape differs``  a real shape is outside the inferred one: the rule or the walk is wrong;
``unchecked``      ovgather has no rule for the op: nothing to prove;
``not run``        the layer produced nothing to compare (no outputs: Assign, Result; the
                   size over the memory budget; the runtime refused the size; a layer
                   inside a TensorIterator, Loop or If body, listed by path after the
                   layer holding it: it cannot get an extra model output).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from . import runtime
from .element_types import element_type_name, numpy_dtype
from .errors import OvgatherError
from .infer import check
from .shapes import INF, Dimension, PartialShape
from .validate import DEFAULT_MEMORY_BUDGET, _xml_file

__all__ = ["LayerProof", "ProofReport", "prove_all_layers", "input_sizes", "PROOF_STATUSES"]

PROOF_STATUSES = ("ok", "looser", "shape differs", "unchecked", "not run")
#: Outputs added to one compiled model at most (big models are proved in chunks).
CHUNK_OUTPUTS = 4000
_SKIPPED_TYPES = ("Const", "Constant", "Result")
#: State writes: the CPU plugin compiles no extra output on them (they are sinks).
_SINKS = ("Assign",)
#: Sizes tried last: image sides and audio lengths that pass convolution and pooling.
_LARGER_SIZES = (32, 64, 224, 400, 1600)


@dataclass
class LayerProof:
    """One layer: declared, inferred and real shapes, per input size run."""

    id: str
    name: str
    type: str
    version: str | None
    line: int | None
    status: str = "not run"
    declared: list[str] = field(default_factory=list)
    check_status: str = "unchecked"
    inferred: dict[str, list[str]] = field(default_factory=dict)
    real: dict[str, list[str]] = field(default_factory=dict)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "version": self.version,
                "line": self.line, "status": self.status, "declared": self.declared,
                "check_status": self.check_status,
                "inferred": self.inferred, "real": self.real, "message": self.message}


@dataclass
class ProofReport:
    """What ``validate --all-layers`` found for one model."""

    path: str | None
    sizes: dict[str, dict[str, str]] = field(default_factory=dict)
    layers: list[LayerProof] = field(default_factory=list)
    compiles: int = 0
    seconds: float = 0.0
    mode: str = "all-layers"

    @property
    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(PROOF_STATUSES, 0)
        for lp in self.layers:
            counts[lp.status] += 1
        return {"layers": len(self.layers), **counts, "proved": counts["ok"] + counts["looser"],
                "compiles": self.compiles}

    @property
    def ok(self) -> bool:
        return not any(lp.status == "shape differs" for lp in self.layers)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode, "sizes": self.sizes,
                "summary": self.summary, "seconds": round(self.seconds, 3),
                "layers": [lp.to_dict() for lp in self.layers]}


# -- the sizes ------------------------------------------------------------------------------
def _parameter_shapes(G: nx.MultiDiGraph) -> dict[str, PartialShape]:
    """Each Parameter's partial shape as ``check`` starts from it, by friendly name."""
    shapes = {}
    for _node, attrs in G.nodes(data=True):
        if attrs["type"] == "Parameter":
            text = (attrs.get("data") or {}).get("shape")
            shapes[attrs["name"]] = (PartialShape.parse(text) if text is not None
                                     else PartialShape.dynamic())
    return shapes


def input_sizes(G: nx.MultiDiGraph, rank: int = 2) -> dict[str, dict[str, PartialShape]]:
    """Concrete input shapes to run: ``{"low"|"mid"|"high": {parameter: shape}}`` (a
    dynamic-rank input gets ``rank`` dims).

    >>> import networkx as nx
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("0", name="x", type="Parameter", data={"shape": "?,2..8,3"})
    >>> {k: str(v["x"]) for k, v in input_sizes(G).items()}
    {'low': '[2,2,3]', 'mid': '[5,5,3]', 'high': '[8,8,3]'}
    """
    params = _parameter_shapes(G)
    dims = [d for s in params.values() for d in (s.dims or (Dimension.dynamic(),))
            if not d.is_static]
    if not dims:
        return {"static": {n: _concrete(s, 1, rank) for n, s in params.items()}}
    low = max(1, *(d.lo for d in dims))
    bounded = [d.hi for d in dims if d.hi < INF and d.hi >= low]
    high = min(bounded) if bounded else 4 * low
    picks = {"low": low, "mid": (low + high) // 2, "high": high}
    unique = dict(sorted({v: k for k, v in reversed(picks.items())}.items()))
    return {name: {n: _concrete(s, size, rank) for n, s in params.items()}
            for size, name in unique.items()}


def _fallback_sizes(G: nx.MultiDiGraph, rank: int) -> list[dict[str, PartialShape]]:
    """Other sizes to try when the runtime refuses one: the static dims of the inputs,
    most frequent first (a dynamic dim often has to equal one of them), then 1, then the
    sizes images and audio need (a kernel or a stride wider than a small input fails)."""
    params = _parameter_shapes(G)
    counts: dict[int, int] = {}
    for s in params.values():
        for d in s.dims or ():
            if d.is_static and d.lo > 1:
                counts[d.lo] = counts.get(d.lo, 0) + 1
    sizes = list(dict.fromkeys([*sorted(counts, key=lambda v: (-counts[v], v)), 1]))
    plans = [{n: _concrete(s, v, rank) for n, s in params.items()} for v in sizes]
    for v in _LARGER_SIZES:  # with a batch of 1 first: exports often bake it in
        plans += [{n: _concrete(s, v, rank, first=1) for n, s in params.items()},
                  {n: _concrete(s, v, rank) for n, s in params.items()}]
    return plans


def _concrete(shape: PartialShape, size: int, rank: int = 2,
              first: int | None = None) -> PartialShape:
    """``shape`` with ``size`` clipped into each dynamic dim (a dynamic rank: ``rank`` of
    them); ``first``, when given, is the size of dim 0 (the batch) instead."""
    dims = shape.dims if shape.dims is not None else (Dimension.dynamic(),) * rank
    return PartialShape.of(tuple(
        d if d.is_static else Dimension.static(
            min(max(first if first is not None and i == 0 else size, d.lo), d.hi))
        for i, d in enumerate(dims)))


def _zeros_or_noise(shape: PartialShape, etype: str, rng: np.random.Generator) -> np.ndarray:
    dims = [d.lo for d in shape.dims]
    name = numpy_dtype(element_type_name(etype)) or "float32"
    if np.dtype(name).kind == "f":
        return rng.standard_normal(dims, dtype=np.float32).astype(name, copy=False)
    return np.zeros(dims, dtype=name)


# -- the proof -----------------------------------------------------------------------------
def prove_all_layers(G: nx.MultiDiGraph, *, seed: int = 0,
                     memory_budget: int = DEFAULT_MEMORY_BUDGET,
                     threads: int | None = None) -> ProofReport:
    """Run ``G`` with an extra output at every layer and compare real and inferred shapes;
    ``memory_budget`` bounds the tensors of one run (inputs and every extra output), as
    it bounds ``validate``'s."""
    budget = memory_budget
    started = time.perf_counter()
    report = ProofReport(G.graph.get("xml_path") or G.graph.get("source_path"))
    declared = {lr.id: lr for lr in check(G).layers}
    proofs = {n: _new_proof(G, n, declared.get(n)) for n in G
              if G.nodes[n]["type"] not in _SKIPPED_TYPES}
    inner = _body_proofs(G, declared)
    ports = [(n, i) for n in proofs if G.nodes[n]["type"] not in _SINKS
             for i in range(len(G.nodes[n]["outputs"]))]
    rng = np.random.default_rng(seed)
    types = _parameter_types(G)
    last_error, ran_rank = "", None
    for rank, label, sizes in _sizes_to_run(G):
        if ran_rank is not None and (rank != ran_rank or (label is None and len(report.sizes) > 1)):
            break  # sizes of one rank ran: the others would only repeat them
        label = label or f"fallback {len(report.sizes) + 1}"
        if {n: str(s) for n, s in sizes.items()} in report.sizes.values():
            continue
        need = sum(_bytes(str(s), types.get(n)) for n, s in sizes.items())
        if need > budget // 4:  # the inputs alone would crowd out the outputs
            last_error = (f"not run: inputs of {need} bytes at these sizes exceed a quarter "
                          f"of the memory budget of {budget}")
            continue
        rows = {lr.id: lr for lr in check(G, shapes=sizes).layers}
        feeds = {n: _zeros_or_noise(s, types.get(n, "f32"), rng) for n, s in sizes.items()}
        real, why = _run_chunks(G, ports, rows, feeds, budget, threads, report)
        if not real:  # the runtime refused these sizes: try the next ones
            last_error = next(iter(why.values()), last_error)
            continue
        ran_rank = rank
        report.sizes[label] = {n: str(s) for n, s in sizes.items()}
        for node, lp in proofs.items():
            lp.inferred[label] = rows[node].inferred if node in rows else []
            lp.real[label] = [real.get((node, i), "-") for i in range(len(lp.declared))]
            if why.get(node):
                lp.message = why[node]
        for lp in inner:
            lp.inferred[label] = rows[lp.id].inferred if lp.id in rows else []
    for node, lp in proofs.items():
        if not report.sizes:
            lp.message = last_error or "not run: the runtime ran none of the input sizes tried"
        _judge(lp, declared.get(node))
    report.layers = [lp for node, lp in proofs.items()
                     for lp in (lp, *(b for b in inner if b.id.split("/", 1)[0] == node))]
    report.seconds = time.perf_counter() - started
    return report


def _sizes_to_run(G: nx.MultiDiGraph):
    """``(rank, label, sizes)`` to try in order: low, mid and high for each rank a
    dynamic-rank input may take, then the fallbacks (label None)."""
    ranks = (3, 2, 4, 1) if any(s.dims is None for s in _parameter_shapes(G).values()) else (2,)
    for rank in ranks:
        for label, sizes in input_sizes(G, rank).items():
            yield rank, label, sizes
    for rank in ranks:
        for sizes in _fallback_sizes(G, rank):
            yield rank, None, sizes


def _body_proofs(G: nx.MultiDiGraph, declared: dict[str, Any]) -> list[LayerProof]:
    """The layers inside bodies, ``not run``: none of them can get an extra model output
    (they follow the layer that holds them in the report, by path)."""
    from .subgraphs import body_layers, inside_words

    out = []
    for path_id, path_name, owner, attrs in body_layers(G):
        if attrs["type"] in _SKIPPED_TYPES:
            continue
        row = declared.get(path_id)
        out.append(LayerProof(path_id, path_name, attrs["type"], attrs.get("version"),
                              attrs.get("line"), declared=row.declared if row else [],
                              check_status=row.status if row else "unchecked",
                              message=f"not run: {inside_words(owner)}, where a layer cannot "
                                      "get an extra model output"))
    return out


def _new_proof(G: nx.MultiDiGraph, node: str, row: Any) -> LayerProof:
    attrs = G.nodes[node]
    return LayerProof(node, attrs["name"], attrs["type"], attrs.get("version"),
                      attrs.get("line"), declared=row.declared if row else [],
                      check_status=row.status if row else "unchecked")


def _parameter_types(G: nx.MultiDiGraph) -> dict[str, str]:
    """Each Parameter's element type, by friendly name."""
    return {a["name"]: (a.get("data") or {}).get("element_type", "f32")
            for _, a in G.nodes(data=True) if a["type"] == "Parameter"}


def _bytes(shape_text: str, etype: str | None) -> int:
    """Bytes of a tensor whose inferred shape is ``shape_text`` (upper bounds; 0 when
    unknown: the runtime then tells)."""
    try:
        shape = PartialShape.parse(shape_text)
    except OvgatherError:
        return 0
    if shape.dims is None or any(d.hi >= INF for d in shape.dims):
        return 0
    n = 1
    for d in shape.dims:
        n *= d.hi
    name = numpy_dtype(element_type_name(etype)) if etype else None
    return n * (np.dtype(name).itemsize if name else 4)


def _run_chunks(G, ports, rows, feeds, budget, threads, report):
    """Real output shapes ``{(node, port position): text}`` and why a layer has none."""
    inputs = sum(a.nbytes for a in feeds.values())
    chunk, used, chunks, why = [], inputs, [], {}
    for node, i in ports:
        inferred = rows[node].inferred if node in rows else []
        port = G.nodes[node]["outputs"][i]
        size = _bytes(inferred[i], port.get("precision")) if i < len(inferred) else 0
        if inputs + size > budget:
            why[node] = (f"not run: output {i} would take {size} bytes, over the memory "
                         f"budget of {budget}")
            continue
        if chunk and (used + size > budget or len(chunk) >= CHUNK_OUTPUTS):
            chunks.append(chunk)
            chunk, used = [], inputs
        chunk.append((node, i))
        used += size
    if chunk:
        chunks.append(chunk)
    real: dict[tuple[str, int], str] = {}
    names = {n: G.nodes[n]["name"] for n, _ in ports}
    for part in chunks:
        wanted = [(names[n], i) for n, i in part]
        report.compiles += 1
        try:
            with _xml_file(G) as xml:
                shapes = runtime.output_shapes(xml, wanted, feeds, threads=threads)
        except OvgatherError as err:
            for n, _ in part:
                why[n] = f"not run: {err.message}"
            continue
        for (n, i), (_, _) in zip(part, wanted, strict=True):
            text = shapes.get((names[n], i))
            if text is not None:
                real[n, i] = text
    return real, why


def _judge(lp: LayerProof, row: Any) -> None:
    """The layer's status from its inferred and real shapes at every size run."""
    if row is None or row.status == "unchecked":
        lp.status = "unchecked"
        return
    if not lp.declared:
        lp.status, lp.message = "not run", lp.message or "not run: the layer has no outputs"
        return
    if lp.type in _SINKS:
        lp.status, lp.message = "not run", "not run: a state write (the runtime gives no output)"
        return
    exact, ran, problems = True, False, []
    for label, real in lp.real.items():
        inferred = lp.inferred.get(label, [])
        for i, text in enumerate(real):
            if text == "-" or i >= len(inferred):
                continue
            ran = True
            if text == inferred[i]:
                continue
            if _within(text, inferred[i]):
                exact = False
            else:
                problems.append(f"output {i} at the {label} size: ovgather infers "
                                f"{inferred[i]}, the runtime gives {text}")
    if problems:
        lp.status, lp.message = "shape differs", "; ".join(problems)
    elif not ran:
        lp.status = "not run"
        lp.message = lp.message or "not run: the runtime gave no output here"
    else:
        lp.status, lp.message = ("ok" if exact else "looser"), ""


def _within(real: str, inferred: str) -> bool:
    """Whether the static shape ``real`` lies inside the partial shape ``inferred``."""
    r, s = PartialShape.parse(real), PartialShape.parse(inferred)
    if s.dims is None:
        return True
    return len(r.dims) == len(s.dims) and all(
        d.lo <= x.lo <= d.hi for x, d in zip(r.dims, s.dims, strict=True))


def summary_line(report: ProofReport) -> str:
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in PROOF_STATUSES if s[k])
    return (f"{report.path}: {s['layers']} layers (all layers, {len(report.sizes)} input "
            f"size(s), {s['compiles']} compile(s)): {s['proved']} proved; {counts}")


def problem_rows(report: ProofReport) -> Sequence[str]:
    """One line per layer whose shape differs: declared, inferred and real side by side."""
    rows = []
    for lp in report.layers:
        if lp.status != "shape differs":
            continue
        where = f"line {lp.line}, " if lp.line is not None else ""
        rows.append(f"  shape differs  {lp.name} ({where}id {lp.id}, {lp.type}): declared "
                    f"{', '.join(lp.declared)}; {lp.message}")
    return rows


def declared_rows(report: ProofReport) -> Sequence[str]:
    """Layers whose declared dims ``check`` finds wrong: declared, inferred and real side
    by side (the real shape at the first size run)."""
    rows = []
    for lp in report.layers:
        if lp.check_status != "mismatch":
            continue
        label = next(iter(lp.real), None)
        real = ", ".join(lp.real[label]) if label else "-"
        inferred = ", ".join(lp.inferred[label]) if label else "-"
        rows.append(f"  declared wrong  {lp.name} (id {lp.id}, {lp.type}): declared "
                    f"{', '.join(lp.declared)}, inferred {inferred}, real {real}")
    return rows
