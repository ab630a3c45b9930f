"""``reduce``: from a failing model to the few layers that still fail.

The search cuts the model (``cuts.cut``) at sets of its layers and keeps the failure a
condition names (``conditions``). Every cut is a standalone IR OpenVINO reads, fed at
each cut the tensor the whole model computed there (``runs.Values``), so that a value bug
reproduces on the same values; the weights a cut reads come along, the others stay out.

The search, over the layers in topological order (Parameters, Results and constant
subgraphs left out, ``N`` of them):

1. the whole model first: when the condition does not hold there, nothing is searched;
2. bisect: the shortest prefix that still fails (a prefix needs no cut), then the
   latest start of a range ending there that still fails (``2·log2(N)`` runs at most);
3. shrink: the range keeps only the layers on the failure's path (descendants of its
   first layer that are ancestors of its last), then drops ever smaller chunks of layers
   (halves, quarters... single layers, as delta debugging does) while the condition
   holds, up to ``max_runs`` runs in all.

Each candidate is judged once (a cache by its layer set). The smallest failing one is the
result; the largest passing one is kept beside it (what the failure needs, the layer
before it). Ctrl-C (KeyboardInterrupt) ends the search: the best model so far is the
result, and the report says it was interrupted.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..comparison.outputs import ATOL, RTOL
from ..errors import OvgatherError, UsageError
from .conditions import Candidate, Condition, Verdict, make_condition
from .cuts import (
    Port,
    compute_order,
    constant_layers,
    counted_layers,
    cut,
    describe_layers,
    small_int,
)
from .runs import Values, make_inputs

__all__ = ["reduce", "ReduceReport", "Search", "write_outputs", "default_sizes"]

#: Runs of a whole search, unless the caller gives another bound.
MAX_RUNS = 400
#: A dynamic dim with no bound gets this size (the first axis 1, the spatial axes of an
#: image 64, so that strided layers keep a pixel).
_DIM, _IMAGE_DIM = 8, 64


@dataclass
class ReduceReport:
    """What a search found and how: layers (besides Parameters, Constants and Results)
    before and after, runs made (``bisect_runs`` of them before the shrinking, and the
    ``value_runs`` of the whole model for the tensors at the cuts), the time, the
    condition's evidence on the model itself and on the small one."""

    model: str | None
    condition: str
    holds_on_model: bool
    model_evidence: str
    layers_before: int = 0
    layers_after: int = 0
    order_length: int = 0
    runs: int = 0
    bisect_runs: int = 0
    value_runs: int = 0
    seconds: float = 0.0
    evidence: str | None = None
    evidence_data: dict[str, Any] = field(default_factory=dict)
    layers: list[dict[str, Any]] = field(default_factory=list)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    made_up: list[str] = field(default_factory=list)
    passing_layers: int | None = None
    output: str | None = None
    inputs_file: str | None = None
    passing_output: str | None = None
    interrupted: bool = False

    @property
    def reduced(self) -> bool:
        return self.holds_on_model and self.layers_after < self.layers_before

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "condition": self.condition,
                "holds_on_model": self.holds_on_model, "model_evidence": self.model_evidence,
                "layers_before": self.layers_before, "layers_after": self.layers_after,
                "runs": self.runs, "bisect_runs": self.bisect_runs,
                "bisect_bound": bisect_bound(self.order_length),
                "value_runs": self.value_runs, "seconds": round(self.seconds, 3),
                "evidence": self.evidence, "evidence_data": _plain(self.evidence_data),
                "layers": self.layers, "inputs": self.inputs, "made_up_inputs": self.made_up,
                "output": self.output, "inputs_file": self.inputs_file,
                "passing_output": self.passing_output, "passing_layers": self.passing_layers,
                "interrupted": self.interrupted}

    def lines(self) -> list[str]:
        """The text report (no timings: the JSON has them)."""
        if not self.holds_on_model:
            return [f"{self.condition}: does not hold on {self.model or 'the model'} "
                    f"({self.model_evidence}); nothing to reduce"]
        out = [f"{self.condition}: {self.layers_before} layers -> {self.layers_after} in "
               f"{self.runs} runs ({self.bisect_runs} bisecting)"
               + (" (interrupted: the best so far)" if self.interrupted else "")]
        out += [f"  {d['name']} ({d['type']})" for d in self.layers]
        out.append(f"evidence: {self.evidence}")
        if self.output:
            fed = f", its inputs {self.inputs_file}" if self.inputs_file else ""
            out.append(f"wrote {self.output}{fed}")
        if self.passing_output:
            out.append(f"largest passing: {self.passing_output} ({self.passing_layers} layers)")
        if self.made_up:
            out.append(f"made up (the model crashed before them): {', '.join(self.made_up)}")
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def bisect_bound(n: int) -> int:
    """The most runs the bisect takes on ``n`` layers: two binary searches, and the whole
    model."""
    return 2 * math.ceil(math.log2(max(n, 2))) + 1


def default_sizes(G: nx.MultiDiGraph, shapes: Mapping[str, Any] | None = None
                  ) -> dict[str, list[int]]:
    """A concrete shape per Parameter (by friendly name): ``shapes`` where given, else the
    declared one with each dynamic dim at its lower bound when above 1, else 1 on the
    first axis, 64 on the spatial axes of a 4-D image, 8 elsewhere (within its upper
    bound)."""
    from ..shapes import PartialShape

    out = {}
    for _, a in G.nodes(data=True):
        if a["type"] != "Parameter":
            continue
        given = (shapes or {}).get(a["name"])
        text = given if given is not None else a["data"].get("shape", "")
        s = text if isinstance(text, PartialShape) else PartialShape.parse(
            text if str(text).startswith("[") else f"[{text}]")
        if s.dims is None:
            raise UsageError(f"input '{a['name']}' has a dynamic rank: give it a shape "
                             "(--shape)")
        dims = []
        for axis, d in enumerate(s.dims):
            if d.is_static:
                dims.append(d.lo)
                continue
            want = 1 if axis == 0 else (_IMAGE_DIM if len(s.dims) == 4 and axis >= 2
                                        else _DIM)
            want = max(want, d.lo)
            dims.append(min(want, d.hi) if d.hi is not None and d.hi >= 0 else want)
        out[a["name"]] = dims
    return _as_the_rules_say(G, out, shapes)


def _as_the_rules_say(G: nx.MultiDiGraph, sizes: dict[str, list[int]],
                      given: Mapping[str, Any] | None) -> dict[str, list[int]]:
    """``sizes`` with the dims the model's rules tie to a number or to another input's
    dim set so (validate's ``sizes.honour``: a GatherElements' indices take the data's
    size), except the inputs the user gave."""
    from ..shapes import Dimension, PartialShape
    from ..validate.sizes import dim_rules, honour, parameter_shapes

    params = parameter_shapes(G)
    concrete = {n: PartialShape.of(tuple(Dimension.static(v) for v in s))
                for n, s in sizes.items()}
    fixed = honour(concrete, params, dim_rules(G))
    return {n: (sizes[n] if n in (given or {}) else [d.lo for d in fixed[n].dims])
            for n in sizes}


class Search:
    """One reduction: the model, its layers in order, the tensors at the cuts, the
    candidates judged so far."""

    def __init__(self, G: nx.MultiDiGraph, condition: Condition, *, xml: str,
                 inputs: Mapping[str, np.ndarray] | None, shapes: Mapping[str, Any] | None,
                 seed: int, max_runs: int, folder: str,
                 progress: Callable[[str, int], None] | None = None) -> None:
        from ..edit.extract import port_shapes
        from ..infer import all_tensors, check

        self.G, self.condition, self.xml, self.folder = G, condition, xml, folder
        self.max_runs, self.progress = max_runs, progress
        self.constants = constant_layers(G)
        self.order = compute_order(G, self.constants)
        self.position = {n: i for i, n in enumerate(self.order)}
        self.sizes = default_sizes(G, shapes)
        if inputs:
            self.sizes.update({k: list(np.shape(v)) for k, v in inputs.items()
                               if k in self.sizes})
        tensors = all_tensors(G, {k: f"[{','.join(map(str, v))}]"
                                  for k, v in self.sizes.items()})
        self.shapes = port_shapes(G, check(G, {k: f"[{','.join(map(str, v))}]"
                                               for k, v in self.sizes.items()}))
        self.folded = _exact_small_ints(G, tensors, self.shapes)
        self.seed = seed
        self._given_inputs = dict(inputs or {})
        self.values: Values = None  # type: ignore[assignment]
        self.judged: dict[frozenset[str], Verdict] = {}
        self.runs = 0
        self.best: frozenset[str] | None = None
        self.best_verdict: Verdict | None = None
        self.passing: frozenset[str] | None = None
        self._k = 0

    def sizes_for(self, GB: nx.MultiDiGraph) -> dict[str, str]:
        """The sizes run, as ``check`` overrides for another model's Parameters."""
        names = {a["name"] for _, a in GB.nodes(data=True) if a["type"] == "Parameter"}
        return {k: f"[{','.join(map(str, v))}]" for k, v in self.sizes.items() if k in names}

    def start(self) -> None:
        from ..errors import RuntimeBridgeError
        from ..runtime.worker import RuntimeCrash, shared_worker

        worker = shared_worker()
        inputs = dict(self._given_inputs)
        if any(k not in inputs for k in self.sizes):
            try:
                made = worker.call(make_inputs, self.xml, self.sizes, self.seed)
            except (RuntimeCrash, RuntimeBridgeError):
                if self.condition.runs_model:
                    raise
                made = {}  # check's verdicts need no run: the inputs are left out
            inputs.update({k: v for k, v in made.items() if k not in inputs})
        self.values = Values(self.G, self.xml, inputs, self.shapes, worker)
        self.condition.setup(self)

    # -- candidates ---------------------------------------------------------------------
    def candidate(self, layers: Iterable[str], fetch: bool = False) -> Candidate:
        """The cut of ``layers``, written in a folder of its own with its inputs (the
        tensors at the cuts run for when the condition runs the model, or ``fetch``)."""
        from ..ir import write_ir

        chosen = frozenset(layers)
        cut_ports = self._cut_ports(chosen)
        values: dict[Port, np.ndarray] = {p: self.folded[p] for p in cut_ports
                                          if p in self.folded}
        need = [p for p in cut_ports if p not in values]
        if need and (fetch or self.condition.runs_model):
            values.update(self.values.get(need))
        H = cut(self.G, chosen, shapes=self.shapes, values=values, constants=self.constants)
        self._k += 1
        folder = os.path.join(self.folder, f"c{self._k}")
        os.makedirs(folder, exist_ok=True)
        xml = os.path.join(folder, "model.xml")
        write_ir(H, xml)
        feeds: dict[str, np.ndarray] = {}
        for _, a in H.nodes(data=True):
            if a["type"] != "Parameter":
                continue
            port = H.graph["reduce_ports"].get(a["name"])
            if port is not None and port in values:
                feeds[a["name"]] = values[port]
            elif a["name"] in self.values.inputs:
                feeds[a["name"]] = self.values.inputs[a["name"]]
        npz = os.path.join(folder, "inputs.npz")
        np.savez(npz, **feeds)
        return Candidate(chosen, H, xml, feeds, npz, folder)

    def _cut_ports(self, chosen: frozenset[str]) -> list[Port]:
        """The outputs of left-out compute layers that ``chosen`` reads."""
        out: dict[Port, None] = {}
        for n in chosen:
            for u, _, key in self.G.in_edges(n, keys=True):
                if u not in chosen and u in self.position:
                    out[(u, key[0])] = None
        return list(out)

    def judge(self, layers: Iterable[str]) -> bool:
        """Whether the failure holds on the cut of ``layers`` (each set judged once)."""
        chosen = frozenset(layers)
        if not chosen:
            return False
        if chosen in self.judged:
            return self.judged[chosen].holds
        if self.runs >= self.max_runs:
            raise _OutOfRuns
        self.runs += 1
        cand = self.candidate(chosen)
        try:
            verdict = self.condition.holds(cand)
        finally:
            shutil.rmtree(cand.folder, ignore_errors=True)
        self.judged[chosen] = verdict
        if verdict.holds and (self.best is None or len(chosen) < len(self.best)):
            self.best, self.best_verdict = chosen, verdict
        elif not verdict.holds and (self.passing is None or len(chosen) > len(self.passing)):
            self.passing = chosen
        if self.progress is not None:
            self.progress("run", self.runs)
        return verdict.holds

    # -- the search ---------------------------------------------------------------------
    def bisect(self) -> list[str]:
        """The shortest failing prefix, then the latest failing start of a range ending
        there: the range, in order."""
        order = self.order
        lo, hi = 1, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.judge(order[:mid]):
                hi = mid
            else:
                lo = mid + 1
        end = lo
        lo, hi = 0, end - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.judge(order[mid:end]):
                lo = mid
            else:
                hi = mid - 1
        return order[lo:end]

    def shrink(self, layers: Sequence[str]) -> list[str]:
        """Drop what the failure does not need (see the module docstring)."""
        current = list(layers)
        if len(current) > 2:
            first, last = current[0], current[-1]
            path = (nx.descendants(self.G, first) | {first}) & \
                (nx.ancestors(self.G, last) | {last})
            on_path = [n for n in current if n in path]
            if len(on_path) < len(current) and self.judge(on_path):
                current = on_path
        chunk = max(1, len(current) // 2)
        while len(current) > 1:
            dropped = False
            k = 0
            while k < len(current) and len(current) > 1:
                rest = current[:k] + current[k + chunk:]
                if rest and self.judge(rest):
                    current, dropped = rest, True
                else:
                    k += chunk
            if chunk == 1 and not dropped:
                break
            chunk = max(1, chunk // 2)
        return current


class _OutOfRuns(Exception):
    """The run budget is spent: the best so far is the result."""


def _exact_small_ints(G: nx.MultiDiGraph, tensors: Mapping[str, Mapping[int, Any]],
                      shapes: Mapping[Port, Any]) -> dict[Port, np.ndarray]:
    """The small integer tensors (shapes, axes) whose value ovgather's inference knows
    exactly, as arrays: a cut there becomes a Const, no run needed."""
    from ..element_types import element_type_name, numpy_dtype
    from ..graph import output_port

    out = {}
    for node, ports in tensors.items():
        if node not in G or G.nodes[node]["type"] in ("Const", "Constant", "Parameter"):
            continue
        for pid, t in ports.items():
            shape = shapes.get((node, pid))
            if shape is None or not shape.is_static or not small_int(G, node, pid, shape):
                continue
            try:
                value = t.value
            except Exception:  # noqa: BLE001 - a value that cannot be read is unknown
                continue
            if value is None or value[0] != value[1]:
                continue
            dtype = numpy_dtype(element_type_name(output_port(G, node, pid).get("precision")))
            try:
                out[node, pid] = np.array(value[0], dtype=dtype).reshape(shape.to_list())
            except (ValueError, TypeError, OverflowError):
                continue
    return out


def reduce(
    model: Any,
    until: str,
    *,
    against: str | os.PathLike | None = None,
    command: str | None = None,
    fail_regex: str | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
    shapes: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | str | os.PathLike | None = None,
    seed: int = 0,
    max_runs: int = MAX_RUNS,
    timeout: float | None = None,
    output: str | os.PathLike | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[nx.MultiDiGraph | None, ReduceReport]:
    """Cut ``model`` (an IR path or a graph from ``read_ir``) down to the few layers that
    still meet ``until`` (one of :data:`~ovgather.debug.conditions.CONDITIONS`; see the
    module docstring). Returns the small graph (None when the condition does not hold on
    the model itself) and the :class:`ReduceReport`. With ``output`` (an ``.xml`` path)
    the small model, its inputs (``.npz`` beside it) and the largest passing cut
    (``.passing.xml``) are written, each atomically.

    >>> small, report = reduce("model.xml", "crashes")              # doctest: +SKIP
    >>> report.layers_after, report.evidence                        # doctest: +SKIP
    (1, 'the runtime crashed (SIGSEGV)')
    """
    from ..comparison.inputs import load_inputs
    from ..ir import read_ir, write_ir

    started = time.perf_counter()
    condition = make_condition(until, against=None if against is None else os.fspath(against),
                               command=command, fail_regex=fail_regex, rtol=rtol, atol=atol,
                               timeout=timeout)
    G = read_ir(os.fspath(model)) if isinstance(model, (str, os.PathLike)) else model
    path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else G.graph.get("xml_path")
    given = load_inputs(inputs) if inputs is not None else {}
    with tempfile.TemporaryDirectory(prefix="ovgather-reduce-") as folder:
        xml = path if path and os.path.isfile(path) else os.path.join(folder, "model.xml")
        if xml != path:
            write_ir(G, xml)
        search = Search(G, condition, xml=xml, inputs=given, shapes=shapes, seed=seed,
                        max_runs=max_runs, folder=folder, progress=progress)
        if not search.order:
            raise UsageError("the model has no layer to reduce (only Parameters, Constants "
                             "and Results)", file=path)
        search.start()
        report = ReduceReport(path, until, False, "", layers_before=counted_layers(G),
                              order_length=len(search.order))
        whole = search.judge(search.order)
        report.model_evidence = search.judged[frozenset(search.order)].evidence
        report.holds_on_model = whole
        if not whole:
            report.runs, report.seconds = search.runs, time.perf_counter() - started
            return None, report
        try:
            found = search.bisect()
            report.bisect_runs = search.runs
            search.shrink(found)
        except _OutOfRuns:
            pass
        except KeyboardInterrupt:
            report.interrupted = True
        if not report.bisect_runs:
            report.bisect_runs = search.runs
        small = _finish(search, report)
        if output is not None:
            write_outputs(search, small, report, os.fspath(output))
    report.seconds = time.perf_counter() - started
    return small.H, report


def _finish(search: Search, report: ReduceReport) -> Candidate:
    """The best cut, built again (its folder is kept until the outputs are written)."""
    best = search.best or frozenset(search.order)
    small = search.candidate(best, fetch=True)
    verdict = search.best_verdict or search.judged[frozenset(search.order)]
    report.runs, report.value_runs = search.runs, search.values.runs
    report.layers_after = counted_layers(small.H)
    report.evidence, report.evidence_data = verdict.evidence, verdict.data
    report.layers = describe_layers(search.G, best)
    for _, a in small.H.nodes(data=True):
        if a["type"] == "Parameter":
            port = small.H.graph["reduce_ports"].get(a["name"])
            report.inputs.append({
                "name": a["name"], "shape": f"[{a['data'].get('shape', '')}]",
                "element_type": a["data"].get("element_type"),
                "stands_for": None if port is None else search.G.nodes[port[0]]["name"]})
            if port is not None and port in search.values.made_up:
                report.made_up.append(a["name"])
    return small


def write_outputs(search: Search, small: Candidate, report: ReduceReport, out: str) -> None:
    """The small model at ``out``, its inputs beside it (``.npz``) and the largest passing
    cut (``.passing.xml``), each written all at once."""
    from ..atomic import AtomicOutput
    from ..ir import write_ir

    if not out.lower().endswith(".xml"):
        raise UsageError(f"the output must be an .xml file, but got '{out}'")
    base = out[:-4]
    write_ir(small.H, out)
    npz = base + ".npz"
    with AtomicOutput([npz], "the inputs") as atomic:
        with atomic.open(npz, "wb") as f:
            np.savez(f, **small.feeds)
    report.output, report.inputs_file = out, npz
    if search.passing is not None:
        try:
            passing = search.candidate(search.passing, fetch=True)
        except (OvgatherError, KeyboardInterrupt):
            return
        write_ir(passing.H, base + ".passing.xml")
        report.passing_output = base + ".passing.xml"
        report.passing_layers = counted_layers(passing.H)
