"""Prove every layer's inferred shape on the OpenVINO CPU runtime (``validate --all-layers``).

``check`` says what shape each layer gives; a user who sees it disagree with the IR asks
what the runtime really produces there. :func:`prove_all_layers` compiles the model once
(in chunks when it is big) with an extra output at every output port of every layer,
runs that compiled model at two or three input sizes inside each dynamic dim's bounds,
and compares each port's real shape with ovgather's inference for those very input
sizes (``--shape`` semantics: the same walk as ``check`` with the Parameters set to the
sizes run). The gather-family layers keep ``validate``'s value check besides: each runs
alone on random valid indices (negative ones included) against the NumPy reference.

The sizes (``validate.sizes``): one size ``s`` per run, clipped into each dynamic dim's
bounds, so that dims that must agree (a batch shared by two inputs, say) get the same
value: the smallest ``s`` every dim's lower bound allows, the largest every bounded dim
allows (four times the small one when no dim is bounded), and one between. Sizes that
ovgather's own rules reject are not run: a dynamic dim may have to equal a static dim of
another input, so the dims of one axis are pinned to such a size instead; when that does
not help either (a kernel wider than the input), the inputs' static sizes, 1, and the
sizes images and audio need are tried. A fully static model runs once. Inputs
(``runner.feeds``) are zeros for integer and boolean types (a valid index, mask and token
id for any size) and small random numbers for real types.

States: every run is a first call, so each ReadValue reads its initial value as OpenVINO
sets it (its input), and ovgather infers the layers after it from that value. A state
without an initializer (what ``MakeStateful`` leaves) would start empty, and its cache
would meet the new keys at a batch of 0: it is seeded instead, before the run, with a value
of the batch the model's rules tie it to and a past length of ``sizes.PAST``
(``sizes.state_sizes``), and the report names it among the sizes (``state VARIABLE_ID``).

Statuses, per layer:

``ok``             every port's real shape is the inferred one, at every size;
``looser``         the real shapes lie inside the inferred ones, which are not all static
                   (an op whose output size depends on values, NonZero say);
``shape differs``  a real shape is outside the inferred one, or the runtime ran a layer
                   that ovgather's rules reject at that size: the rule or the walk is wrong;
``values differ``  a gather-family layer run alone disagrees with the NumPy reference (or
                   with ovgather's validity rules), as ``validate`` reports it;
``unchecked``      ovgather has no rule for the op: nothing to prove;
``unknown``        OpenVINO's reader refuses the layer (``check``'s ``unknown``): the
                   model cannot be read, so nothing of it runs;
``crashed``        the runtime's process died (a signal in native code) in a model cut at
                   this layer, and in none cut before it (``runner.Runs``);
``not run``        the layer produced nothing to compare (no outputs: Assign, Result; a
                   friendly name another layer shares; the size over the memory budget;
                   no size both ovgather's rules and the runtime accept; a layer inside a
                   TensorIterator, Loop or If body, listed by path after the layer holding
                   it: it cannot get an extra model output).
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..errors import OvgatherError
from ..infer import check
from ..infer.readable import unread_layers
from ..shapes import PartialShape
from .gathers import validate
from .memory import DEFAULT_MEMORY_BUDGET, inputs_bytes, tensor_bytes
from .report import PROBLEM_STATUSES, PROBLEMS, LayerProof, ProofReport
from .runner import Runs, fits, size_inputs, xml_file
from .sizes import (
    concrete,
    dim_rules,
    dims,
    fallback_sizes,
    grown_sizes,
    honour,
    initial_states,
    parameter_shapes,
    parameter_types,
    pin_patterns,
    ranks,
    share_rules,
    size_picks,
    state_sizes,
    sweep_sizes,
)

__all__ = ["prove_all_layers"]

#: Outputs added to one compiled model at most. The memory budget is what splits a model
#: into chunks: a compile with every output exposed costs about what one without them
#: does (the 5k-layer Llama's ~3k outputs compile and run in one), and each more chunk is
#: one more compile of the whole model; this bound only keeps a test's chunks small.
CHUNK_OUTPUTS = 1 << 20
_SKIPPED_TYPES = ("Const", "Constant", "Result")
#: State writes: the CPU plugin compiles no extra output on them (they are sinks).
_SINKS = ("Assign",)


# -- the sizes, screened with ovgather's rules ----------------------------------------------
@dataclass
class _Try:
    """Input sizes to try, with ovgather's inference at them."""

    rank: int
    label: str | None  # None: a fallback
    sizes: dict[str, PartialShape]
    rows: dict[str, Any]
    why: str = ""  # why ovgather's rules reject these sizes ('' when they do not)
    states: dict[str, PartialShape] = field(default_factory=dict)  # seeds, by variable_id

    @property
    def texts(self) -> dict[str, str]:
        """The sizes by input name, then each seeded state as ``state VARIABLE_ID``."""
        return {**{n: str(s) for n, s in self.sizes.items()},
                **{f"state {v}": str(s) for v, s in self.states.items()}}


def _try(first: nx.MultiDiGraph, declared: Mapping[str, Any], rank: int, label: str | None,
         sizes: dict[str, PartialShape], as_the_rules_say: bool = True) -> _Try:
    """``sizes`` (with the dims the model's rules fix set, unless ``as_the_rules_say`` is
    false: the sweep tries the sizes a dim declares, whatever the rules merged it with)
    and ovgather's inference at them."""
    rules = dim_rules(first)
    if as_the_rules_say:
        sizes = honour(sizes, parameter_shapes(first), rules)
    states = state_sizes(first, sizes, rules)
    rows = {lr.id: lr for lr in check(_seeded(first, states), shapes=sizes).layers}
    for lr in rows.values():  # a layer the declared shapes pass and these sizes break
        if lr.status == "invalid" and getattr(declared.get(lr.id), "status", "") != "invalid":
            return _Try(rank, label, sizes, rows, f"ovgather's rules reject {lr.name} "
                        f"({lr.type}) at {_sizes_text(sizes)}: {lr.message}", states)
    return _Try(rank, label, sizes, rows, "", states)


def _seeded(first: nx.MultiDiGraph, states: Mapping[str, PartialShape]) -> nx.MultiDiGraph:
    """``first`` with each state without an initializer holding a value of the shape it
    is seeded with (``sizes.state_sizes``), as the runtime's run will find it."""
    if not states:
        return first
    H = first.copy()
    H.in_order = getattr(first, "in_order", False)
    for _, attrs in H.nodes(data=True):
        data = attrs.get("data") or {}
        if attrs["type"] == "ReadValue" and data.get("variable_id") in states:
            attrs["data"] = {**data, "variable_shape": str(states[data["variable_id"]])}
    return H


def _given(G: nx.MultiDiGraph, t: _Try, seed: int) -> dict[Any, np.ndarray]:
    """The inputs a run at ``t`` takes besides the ones made (``runner.size_inputs``),
    and the value of each seeded state (small random numbers, or zeros for integers),
    keyed ``(runtime.STATE, variable_id)``."""
    from ..element_types import element_type_name, numpy_dtype
    from ..runtime.models import STATE

    given: dict[Any, np.ndarray] = dict(size_inputs(G, t.sizes, t.rows or None))
    rng = np.random.default_rng([seed, 7])
    kinds = initial_states(G)
    for variable, shape in t.states.items():
        dtype = numpy_dtype(element_type_name(kinds[variable][0])) or "float32"
        dims = [d.lo for d in shape.dims]
        given[(STATE, variable)] = (rng.standard_normal(dims).astype(dtype)
                                    if np.dtype(dtype).kind == "f" else np.zeros(dims, dtype))
    return given


def _sizes_text(sizes: Mapping[str, Any]) -> str:
    return ", ".join(f"{n}={s}" for n, s in sizes.items())


def _tries(G: nx.MultiDiGraph, first: nx.MultiDiGraph,
           declared: Mapping[str, Any]) -> Iterator[_Try]:
    """The sizes to try, in order, each once: low, mid and high for each rank a
    dynamic-rank input may take (with the dims of an axis pinned when ovgather's rules
    reject a size as it is: the pins found once serve every size), then the fallbacks (none
    for a static model: they would only repeat its one size)."""
    params = parameter_shapes(G)
    pinned, searched, seen = None, False, set()
    for rank in ranks(params):
        for label, size in size_picks(params, rank).items():
            t = _try(first, declared, rank, label,
                     {n: concrete(s, size, rank) for n, s in params.items()})
            if label == "static":
                yield t
                return
            if t.why:
                patterns = [pinned] if pinned else [] if searched else pin_patterns(params, rank)
                searched = True
                for pins in patterns:
                    u = _try(first, declared, rank, label,
                             {n: concrete(s, size, rank, pins) for n, s in params.items()})
                    if not u.why:
                        pinned, t = pins, u
                        break
            seen.add(tuple(t.texts.items()))
            yield t
    for rank in ranks(params):
        for sizes in fallback_sizes(params, rank):
            key = tuple((n, str(s)) for n, s in sizes.items())
            if key not in seen:  # the ovgather check of a size costs a walk of the model
                seen.add(key)
                yield _try(first, declared, rank, None, sizes)


def _first_call(G: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """``G`` as its first call runs it: each ReadValue reads its initial value as OpenVINO
    sets it, its input. One without an input keeps its declared variable shape here: each
    size tried seeds it (:func:`_seeded`, ``sizes.state_sizes``) rather than letting it
    start empty. ``G`` itself when it has no state."""
    reads = [n for n, a in G.nodes(data=True) if a["type"] == "ReadValue"]
    if not reads:
        return G
    H = G.copy()
    H.in_order = getattr(G, "in_order", False)
    share_rules(H, G)  # the rules see the states dynamic, as the model declares them
    for n in reads:
        data = dict(H.nodes[n].get("data") or {})
        if H.in_degree(n):  # the variable relaxed: the rule passes the input through
            data.pop("variable_shape", None)
            data["variable_type"] = "dynamic"
        H.nodes[n]["data"] = data
    return H


# -- the proof -----------------------------------------------------------------------------
@dataclass
class _Ran:
    """Sizes the runtime ran: the ``k``-th tried, its chunk that ran first, what came out."""

    label: str
    t: _Try
    k: int
    part: list[tuple[str, int]]
    real: dict[tuple[str, int], str]


def prove_all_layers(G: nx.MultiDiGraph, *, seed: int = 0,
                     memory_budget: int = DEFAULT_MEMORY_BUDGET,
                     threads: int | None = None,
                     progress: Callable[[int, int, int, int], None] | None = None
                     ) -> ProofReport:
    """Run ``G`` with an extra output at every layer and compare real and inferred shapes;
    ``memory_budget`` bounds the tensors of one run (inputs and every extra output), as
    it bounds ``validate``'s, which checks the gather-family layers' values after.
    ``progress(proved, layers, compiles, planned)`` is called after each run in the
    runtime: the layers that have a real shape so far of those asked for, and the
    compiles done of those planned (a chunk the plugin refuses whole adds its halves)."""
    started = time.perf_counter()
    report = ProofReport(G.graph.get("xml_path") or G.graph.get("source_path"),
                         unread=unread_layers(G))
    declared = {lr.id: lr for lr in check(G).layers}
    proofs = {n: _new_proof(G, n, declared.get(n)) for n in G
              if G.nodes[n]["type"] not in _SKIPPED_TYPES}
    report.left_out = dict(Counter(G.nodes[n]["type"] for n in G
                                   if G.nodes[n]["type"] in _SKIPPED_TYPES))
    inner = _body_proofs(G, declared)
    ports, why = _ports(G, proofs)
    with xml_file(G) as xml:
        runs = Runs(xml, {n: G.nodes[n]["name"] for n in proofs}, threads, G=G)
        runs.progress = _told(progress, ports)
        ran, last_error = _choose_sizes(G, ports, declared, memory_budget, seed, runs)
        broken = _sweep(G, _first_call(G), ports, declared, ran, memory_budget, seed, runs)
        real, more, report.peak_bytes = _run_every_chunk(G, ports, ran, memory_budget,
                                                         seed, runs)
        runs.close()
    why.update(more)
    for (node, i), words in runs.refused.items():
        why.setdefault(node, f"not run: the CPU plugin refuses an extra output at output {i} "
                             f"here, even alone: {words}")
    for node, culprit in runs.after_crash.items():
        why.setdefault(node, f"not run: it depends on {G.nodes[culprit]['name']}, where the "
                             "runtime crashed")
    report.compiles = runs.compiles
    for r in ran:
        report.sizes[r.label] = r.t.texts
        for node, lp in proofs.items():
            row = r.t.rows.get(node)
            lp.inferred[r.label] = row.inferred if row else []
            if row is not None and row.status == "invalid":
                lp.invalid[r.label] = row.message
            lp.real[r.label] = [real[r.label].get((node, i), "-")
                                for i in range(len(lp.declared))]
        for lp in inner:
            row = r.t.rows.get(lp.id)
            lp.inferred[r.label] = row.inferred if row else []
    for node, lp in proofs.items():
        lp.message = why.get(node) or lp.message
        if not ran:
            lp.message = last_error or "not run: the runtime ran none of the input sizes tried"
        _judge(lp, declared.get(node))
        if node in runs.crashed:
            lp.status, lp.message = "crashed", f"the runtime crashed here: {runs.crashed[node]}"
    report.failed = _blame(G, proofs, declared, broken, ran)
    _check_values(G, proofs, seed, memory_budget, threads)
    report.layers = [lp for node, lp in proofs.items()
                     for lp in (lp, *(b for b in inner if b.id.split("/", 1)[0] == node))]
    report.seconds = time.perf_counter() - started
    return report


def _told(progress: Callable[[int, int, int, int], None] | None,
          ports: Sequence[tuple[str, int]]) -> Callable[[Runs], None] | None:
    """What ``Runs`` calls after each run: ``progress`` with the layers run so far."""
    if progress is None:
        return None
    layers = {n for n, _ in ports}
    if not layers:
        return None
    progress(0, len(layers), 0, 1)

    def told(runs: Runs) -> None:
        progress(min(runs.ran, len(layers)), len(layers), runs.compiles, runs.planned)
    return told


def _ports(G: nx.MultiDiGraph, proofs: Mapping[str, LayerProof]
           ) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """The output ports to ask the runtime for, and why a layer has none asked."""
    names = Counter(a["name"] for _, a in G.nodes(data=True))
    ports, why = [], {}
    for n in proofs:
        attrs = G.nodes[n]
        if attrs["type"] in _SINKS:
            continue
        if names[attrs["name"]] > 1:
            why[n] = (f"not run: {names[attrs['name']]} layers share its friendly name, so "
                      "the runtime cannot be asked for its output")
            continue
        ports += [(n, i) for i in range(len(attrs["outputs"]))]
    return ports, why


def _choose_sizes(G, ports, declared, budget, seed, runs) -> tuple[list[_Ran], str]:
    """Run the first chunk at each size tried until sizes of one rank ran: the sizes run,
    and why the last one tried did not. When only a fallback runs, it is grown (every
    dynamic dim twice and one and a half times as large) for two more sizes. Sizes
    ovgather's rules reject go to the runtime only when no other size runs: it judges
    (a wrong rule may be what rejects them)."""
    first, types = _first_call(G), parameter_types(G)
    ran: list[_Ran] = []
    rejected: list[_Try] = []
    count, refused, rules_judge = itertools.count(), "", True

    def attempt(t: _Try) -> bool:
        nonlocal refused
        if any(r.t.texts == t.texts for r in ran):
            return False
        if t.why and rules_judge:
            rejected.append(_Try(t.rank, t.label, t.sizes, {}, t.why, t.states))  # rows again
            return False
        label = t.label or f"fallback {sum(r.t.label is None for r in ran) + 1}"
        result = _first_run(G, ports, t, label, next(count), budget, seed, runs, types)
        if isinstance(result, str):
            refused = result
            return False
        ran.append(result)
        return True

    def run(tries: Iterator[_Try]) -> None:
        for t in tries:
            if ran and (t.rank != ran[0].t.rank or (t.label is None and len(ran) > 1)):
                break  # sizes of one rank ran: the others would only repeat them
            if attempt(t) and t.label is None:  # a fallback ran: two grown sizes beside it
                more = 0
                for u in _grown(G, first, declared, t):
                    more += attempt(u)
                    if more == 2:
                        break
                break

    run(_tries(G, first, declared))
    if not ran and rejected:
        rules_judge = False
        run(_try(first, declared, t.rank, t.label, t.sizes) for t in list(rejected))
        if not ran:
            return [], (f"not run: {rejected[0].why}; nor does the runtime run any size "
                        f"tried: {refused}")
    return ran, f"not run: {refused}" if refused else ""


def _grown(G: nx.MultiDiGraph, first: nx.MultiDiGraph, declared: Mapping[str, Any],
           t: _Try) -> Iterator[_Try]:
    """``sizes.grown_sizes`` of ``t``, each with ovgather's inference at it."""
    for sizes in grown_sizes(parameter_shapes(G), t.rank, t.sizes):
        yield _try(first, declared, t.rank, None, sizes)


def _first_run(G, ports, t: _Try, label: str, k: int, budget: int, seed: int, runs: Runs,
               types: Mapping[str, str]) -> _Ran | str:
    """Run the first chunk at the sizes of ``t``: what came out, or why nothing did."""
    need = inputs_bytes(t.sizes, types)
    if need > budget // 4:  # the inputs alone would crowd out the outputs
        return (f"inputs of {need} bytes at these sizes exceed a quarter of the memory "
                f"budget of {budget}")
    chunks, over, _ = _plan(G, ports, [t.rows], need, budget)
    if not chunks:
        return next(iter(over.values()), "no layer has an output to compare")
    runs.chunks = max(runs.chunks, len(chunks))
    try:
        real = runs.shapes(chunks[0], t.sizes, seed, k, types,
                           _given(G, t, seed))
    except OvgatherError as err:
        return _RuntimeSaid(err.message)
    return _Ran(label, t, k, chunks[0], real)


class _RuntimeSaid(str):
    """Why the runtime failed at some sizes, in its words (not a budget's refusal)."""

    __slots__ = ()


@dataclass
class _Broken:
    """A size of the sweep the runtime failed at: the axis and size, what was tried, why."""

    axis: int
    size: int
    t: _Try
    error: str


def _sweep(G, first, ports, declared, ran: list[_Ran], budget: int, seed: int,
           runs: Runs) -> list[_Broken]:
    """Try each dynamic axis that ran at no size above 1 at 1, 2 and 3 too
    (``sizes.sweep_sizes``), whether ovgather's rules accept those sizes or not (the
    runtime judges): each size that runs joins ``ran``, each it fails at is returned."""
    if not ran:
        return []
    types, broken = parameter_types(G), []
    tried = sweep_sizes(parameter_shapes(G), ran[0].t.rank, [r.t.sizes for r in ran])
    for j, (axis, v, sizes) in enumerate(tried):
        label = f"{_axis_word(axis)} {v}"
        t = _try(first, declared, ran[0].t.rank, label, sizes, as_the_rules_say=False)
        result = _first_run(G, ports, t, label, len(ran) + 100 + j, budget, seed, runs, types)
        if isinstance(result, _RuntimeSaid):
            broken.append(_Broken(axis, v, t, str(result)))
        elif isinstance(result, _Ran):
            ran.append(result)
    return broken


def _axis_word(axis: int) -> str:
    return "batch" if axis == 0 else f"dim {axis} ="


def _blame(G, proofs: Mapping[str, LayerProof], declared: Mapping[str, Any],
           broken: Sequence[_Broken], ran: Sequence[_Ran]) -> dict[str, dict[str, Any]]:
    """The layers that break at a size of the sweep become ``fails at a size``: the one
    the runtime's error names and those ovgather's rules reject at that size (the model
    ran at the other sizes, so they ran there). The sizes failed at, by label, for the
    report: the shapes, the runtime's error and the layers named."""
    by_name = {lp.name: n for n, lp in proofs.items()}
    params = parameter_shapes(G)
    failed = {}
    for axis in sorted({b.axis for b in broken}):
        works = sorted({r.t.sizes[n].dims[axis].lo for r in ran for n, s in params.items()
                        if axis < len(dims(s, r.t.rank))
                        and not dims(s, r.t.rank)[axis].is_static})
        culprits: dict[str, tuple[list[int], str]] = {}
        for b in (b for b in broken if b.axis == axis):
            named = {by_name[m] for m in re.findall(r"name '([^']+)'", b.error)
                     if m in by_name}
            found = dict.fromkeys(named, "the runtime fails here")
            for node, row in b.t.rows.items():
                if node in proofs and row.status == "invalid" and \
                        getattr(declared.get(node), "status", "") != "invalid":
                    found[node] = (f"{found.get(node, 'the run fails')} and ovgather's "
                                   f"rules reject it: {row.message}")
            for node, why in found.items():
                culprits.setdefault(node, ([], why))[0].append(b.size)
            failed[b.t.label] = {"sizes": b.t.texts, "message": b.error,
                                 "layers": [proofs[n].name for n in found]}
        for node, (sizes, why) in culprits.items():
            lp = proofs[node]
            text = (f"works at {_axis_word(axis)} {', '.join(map(str, works))}, fails at "
                    f"{', '.join(map(str, sizes))} ({why})")
            if lp.status in PROBLEM_STATUSES:
                lp.message = f"{lp.message}; {text}"
            else:
                lp.status, lp.message = "fails at a size", text
    return failed


def _run_every_chunk(G, ports, ran: Sequence[_Ran], budget: int, seed: int, runs: Runs
                     ) -> tuple[dict[str, dict[tuple[str, int], str]], dict[str, str], int]:
    """The real shapes at every size run, by size label; why a layer got none; the most
    bytes one run was planned to hold. The chunks fit the budget at every size, and each
    is compiled once and run at every size (a chunk that ran first is not run again)."""
    types = parameter_types(G)
    real = {r.label: dict(r.real) for r in ran}
    if not ran:
        return real, {}, 0
    need = max(inputs_bytes(r.t.sizes, types) for r in ran)
    chunks, over, peak = _plan(G, ports, [r.t.rows for r in ran], need, budget)
    runs.chunks = max(runs.chunks, len(chunks))
    why = {n: f"not run: {text}" for n, text in over.items()}
    given = {r.label: _given(G, r.t, seed) for r in ran}
    for part in chunks:
        for r in ran:
            if part == r.part:
                continue
            try:
                real[r.label].update(runs.shapes(part, r.t.sizes, seed, r.k, types,
                                                 given[r.label]))
            except OvgatherError as err:
                for n, _ in part:
                    why.setdefault(n, f"not run at the {r.label} size: {err.message}")
    return real, why, peak


def _plan(G, ports, rows_list: Sequence[Mapping[str, Any]], inputs: int, budget: int
          ) -> tuple[list[list[tuple[str, int]]], dict[str, str], int]:
    """Chunks of ports whose outputs fit the budget beside the inputs at every size of
    ``rows_list`` (``CHUNK_OUTPUTS`` at most each); why a port fits no chunk; the most
    bytes a chunk's run holds."""
    chunks: list[list[tuple[str, int]]] = []
    chunk, used, peak, why = [], inputs, inputs, {}
    for node, i in ports:
        port = G.nodes[node]["outputs"][i]
        size = max(_port_bytes(rows.get(node), i, port.get("precision")) for rows in rows_list)
        if inputs + size > budget:
            why[node] = (f"output {i} would take {size} bytes, over the memory budget of "
                         f"{budget}")
            continue
        if chunk and (used + size > budget or len(chunk) >= CHUNK_OUTPUTS):
            chunks.append(chunk)
            chunk, used = [], inputs
        chunk.append((node, i))
        used += size
        peak = max(peak, used)
    if chunk:
        chunks.append(chunk)
    return chunks, why, peak


def _port_bytes(row: Any, i: int, precision: str | None) -> int:
    inferred = row.inferred if row is not None else []
    return tensor_bytes(inferred[i], precision) if i < len(inferred) else 0


def _check_values(G, proofs: Mapping[str, LayerProof], seed: int, budget: int,
                  threads: int | None) -> None:
    """``validate``'s value check of every gather-family layer (run alone on random valid
    indices against the NumPy reference): a problem there makes the layer ``values
    differ`` (``crashed`` when the runtime crashed on it) unless its shape already differs."""
    for lv in validate(G, seed=seed, memory_budget=budget, threads=threads).layers:
        lp = proofs.get(lv.id)
        if lp is None:  # a gather inside a body: not run, as every layer there
            continue
        lp.values = {"status": lv.status, "max_error": lv.max_error, "message": lv.message}
        if lv.status in PROBLEMS and lp.status not in ("shape differs", "unknown", "crashed"):
            # a runtime that crashed on the layer alone proved nothing of its values
            lp.status = "crashed" if lv.status == "crashed" else "values differ"
            lp.message = f"run alone against the reference: {lv.status}: {lv.message}"


def _body_proofs(G: nx.MultiDiGraph, declared: dict[str, Any]) -> list[LayerProof]:
    """The layers inside bodies, ``not run``: none of them can get an extra model output
    (they follow the layer that holds them in the report, by path)."""
    from ..graph.bodies import body_layers, inside_words

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


def _judge(lp: LayerProof, row: Any) -> None:
    """The layer's status from its inferred and real shapes at every size run."""
    if row is None or row.status == "unchecked":
        lp.status = "unchecked"
        lp.message = (f"ovgather has no shape rule for {lp.type}"
                      f"{'/' + lp.version if lp.version else ''}: nothing to compare the "
                      "runtime's shape with")
        return
    if row.status == "unknown":  # OpenVINO's reader refuses it: the model cannot be read
        lp.status, lp.message = "unknown", row.message
        return
    if not lp.declared:
        lp.status, lp.message = "not run", lp.message or "not run: the layer has no outputs"
        return
    if lp.type in _SINKS:
        lp.status, lp.message = "not run", "not run: a state write (the runtime gives no output)"
        return
    exact, ran, problems, looser = True, False, [], ""
    for label, real in lp.real.items():
        inferred = lp.inferred.get(label, [])
        for i, text in enumerate(real):
            if text == "-" or i >= len(inferred):
                continue
            ran = True
            if label in lp.invalid:
                problems.append(f"output {i} at the {label} size: ovgather's rules reject the "
                                f"layer ({lp.invalid[label]}), the runtime gives {text}")
                continue
            if text == inferred[i]:
                continue
            if fits(PartialShape.parse(text).to_list(), PartialShape.parse(inferred[i])):
                exact = False
                looser = looser or (f"output {i} at the {label} size: the runtime gives {text}, "
                                    f"inside ovgather's {inferred[i]} (a size that depends on "
                                    "values)")
            else:
                problems.append(f"output {i} at the {label} size: ovgather infers "
                                f"{inferred[i]}, the runtime gives {text}")
    if problems:
        lp.status, lp.message = "shape differs", "; ".join(problems)
    elif not ran:
        lp.status = "not run"
        lp.message = lp.message or "not run: the runtime gave no output here"
    else:
        lp.status, lp.message = ("ok", "") if exact else ("looser", looser)
