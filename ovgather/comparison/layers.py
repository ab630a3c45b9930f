"""``compare --all-layers``: two models run on the same inputs and every intermediate tensor
that pairs up compared, to find the layer where the numbers start to differ.

:func:`compare_layers` first runs :func:`~ovgather.comparison.outputs.compare` (the same input
pairing, input making, sizes and output verdicts), then runs both models again on the very
arrays fed there with their layer outputs exposed, a chunk at a time (``runtime``'s
:class:`~ovgather.runtime.layer_outputs.LayerRunner`: OpenVINO's CPU plugin for an IR or
an ``.onnx``, or ONNX Runtime for A with ``ref="onnxruntime"``).

Pairing: an output of A pairs with the output of B that shares one of its tensor names,
else with B's output of the same layer friendly name and port; each output of B pairs
once, and the tensor names are tried for every output of A before any friendly name.
Constant subgraphs (a Const, and what only constants feed: the Convert, Subtract and
Multiply of a compressed weight) are left out: the runtime folds them. An output without
a partner is listed ``only in A`` or ``only in B`` (an ``only in B`` after the output of A
paired with the output of B before it), never dropped.

Per pair: ``ok`` or ``differs`` by the tolerances of ``compare`` (``|a - b| <= atol + rtol
* |b|`` everywhere; two shapes of one size, such as ``[25,96]`` and ``[5,5,96]`` where a
conversion folded a reshape away, are compared element by element and the message says
so; two sizes differ), the largest absolute and relative error and the cosine
similarity; ``not run`` when a runtime gave no value (an output over the memory budget
alone, a run that failed). The first ``differs`` in A's topological order is the first
divergent layer; :attr:`LayersReport.growth` the worst layers after it.

Memory: one chunk's outputs of both models, beside the inputs and twice each model's
largest tensor (what the runtime reuses between layers), fit ``memory_budget``; each chunk
is compiled once per model (at most ``CHUNK_OUTPUTS`` outputs: validate's bound).

Compiles: ``compare`` itself runs each model compiled with every layer output exposed
besides its own outputs (``remote.exposing``), and when a model's layer outputs fit half
the budget beside its inputs and twice its largest tensor, the layers are judged on the
values of that very run: each model is compiled and run once in all. Over that, ``compare``
compiles the model again as it is, and the layers run in chunks as above.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import CompareError, RuntimeBridgeError
from ..validate.all_layers import CHUNK_OUTPUTS
from ..validate.memory import DEFAULT_MEMORY_BUDGET, size_text
from . import remote
from .guards import fed_words
from .outputs import CompareReport, compare, differences
from .values import status_counts

__all__ = ["compare_layers", "pair_layers", "LayersReport", "LayerComparison",
           "LAYER_STATUSES", "REFS", "GROWTH"]

#: The verdicts of one layer output; ``differs`` fails the comparison, and so does
#: ``crashed`` (a model's runtime process died on a run that reaches the layer: counted in
#: ``layer_summary`` only when some layer has it).
LAYER_STATUSES = ("ok", "differs", "only in A", "only in B", "not run")
#: Runs that may crash the runtime's process in one ``compare_layers`` before a crashing
#: chunk is no longer split to find the layers that crash it alone (each crash costs a
#: new process).
CRASH_SPLITS = 16
#: What may run model A.
REFS = ("openvino", "onnxruntime")
#: The worst layers after the first divergent one that the report shows.
GROWTH = 5
#: Elements a cosine similarity is summed over at a time.
_SPAN = 1 << 20


@dataclass
class LayerComparison:
    """One layer output of A against its partner in B, or alone."""

    a: str | None
    b: str | None
    port: int
    tensor: str | None
    status: str
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None
    line_a: int | None = None
    line_b: int | None = None
    type: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "port": self.port, "tensor": self.tensor,
                "status": self.status, "max_abs": _finite(self.max_abs),
                "max_rel": _finite(self.max_rel), "cosine": _finite(self.cosine),
                "line_a": self.line_a, "line_b": self.line_b, "type": self.type,
                "message": self.message}


@dataclass
class LayersReport:
    """The output comparison (``outputs``: a :class:`CompareReport`) and every layer
    output, in A's topological order. ``ref`` says what ran A; ``chunks`` and
    ``compiles`` how the layers were run; ``peak_bytes`` the most one chunk was planned
    to hold (inputs and each model's largest tensor twice included)."""

    outputs: CompareReport
    layers: list[LayerComparison] = field(default_factory=list)
    ref: str = "openvino"
    chunks: int = 0
    compiles: int = 0
    peak_bytes: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The outputs pass, no layer output differs or crashed, and some layer output
        was compared (or ``allow_unproven``)."""
        return self.outputs.ok and all(lc.status not in ("differs", "crashed")
                                       for lc in self.layers) and \
            (self.unproven is None or self.outputs.allow_unproven)

    @property
    def unproven(self) -> str | None:
        """Why the layers prove nothing, or None: there are layer outputs and not one was
        compared (every one ``not run``, or without a partner)."""
        if not self.layers or any(lc.status in ("ok", "differs") for lc in self.layers):
            return None
        return "no layer output was compared (see each one's status): nothing compared " \
               "is nothing proven"

    @property
    def first_divergent(self) -> LayerComparison | None:
        return next((lc for lc in self.layers if lc.status == "differs"), None)

    @property
    def growth(self) -> list[LayerComparison]:
        """The :data:`GROWTH` compared outputs after the first divergent one with the
        largest absolute error, in A's order: how the error grows (the relative error
        of a tensor near zero says little of that)."""
        first = self.first_divergent
        if first is None:
            return []
        after = [lc for lc in self.layers[self.layers.index(first) + 1:]
                 if lc.status in ("ok", "differs")]
        worst = {id(lc) for lc in sorted(after, key=lambda lc: -_rank(lc.max_abs))[:GROWTH]}
        return [lc for lc in after if id(lc) in worst]

    @property
    def summary(self) -> dict[str, int]:
        return status_counts("layers", self.layers, LAYER_STATUSES)

    def to_dict(self) -> dict[str, Any]:
        """``compare``'s document, plus ``layers``, ``first_divergent`` and the rest;
        ``layers_unproven`` (why the layers prove nothing: :attr:`unproven`) only when
        no layer output was compared."""
        first = self.first_divergent
        extra = {} if self.unproven is None else {"layers_unproven": self.unproven}
        return {**self.outputs.to_dict(), **extra, "ref": self.ref,
                "layer_summary": self.summary, "chunks": self.chunks,
                "compiles": self.compiles, "peak_bytes": self.peak_bytes,
                "layers": [lc.to_dict() for lc in self.layers],
                "first_divergent": None if first is None else {
                    "a": first.a, "b": first.b, "port": first.port, "tensor": first.tensor,
                    "line_a": first.line_a, "line_b": first.line_b},
                "growth": [{"a": lc.a, "b": lc.b, "port": lc.port,
                            "max_abs": _finite(lc.max_abs), "max_rel": _finite(lc.max_rel)}
                           for lc in self.growth]}


def compare_layers(
    a: Any,
    b: Any,
    *,
    ref: str = "openvino",
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    threads: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    **options: Any,
) -> LayersReport:
    """:func:`~ovgather.comparison.outputs.compare` of ``a`` and ``b`` (every keyword of it is
    taken: ``shapes``, ``seed``, ``rtol``, ``atol``, ``inputs``, ``input_map``,
    ``by_position``, ``allow_unproven``), then every layer output that pairs up compared
    on the same inputs (see the module docstring). ``ref="onnxruntime"`` runs A, an
    ``.onnx`` file, with ONNX Runtime (its inputs made from OpenVINO's read of it, as
    ``compare`` makes them). ``progress(stage, done, total)`` is called before and after
    each chunk runs (``done`` of ``total`` paired outputs compared so far).

    >>> report = compare_layers("fp32.xml", "fp16.xml", rtol=1e-3)   # doctest: +SKIP
    >>> report.first_divergent.a                                     # doctest: +SKIP
    """
    if ref not in REFS:
        raise CompareError(f"ref is one of {', '.join(REFS)}, but got '{ref}'")
    started = time.perf_counter()
    if ref == "onnxruntime" and not (isinstance(a, (str, os.PathLike))
                                     and os.fspath(a).lower().endswith(".onnx")):
        raise CompareError("ONNX Runtime runs an .onnx model as A, but A is not one",
                           file=os.fspath(a) if isinstance(a, (str, os.PathLike)) else None)
    with remote.exposing(memory_budget) as exposed:
        if ref != "openvino":
            exposed.budget = 0  # A runs in ONNX Runtime: compare compiles as it is
        outputs = compare(a, b, memory_budget=memory_budget, threads=threads, **options)
        report = LayersReport(outputs, ref=ref)
        with remote.Session() as session:
            run = _Runs(session, outputs, a, b, ref, threads, exposed)
            _run_layers(report, run, memory_budget, progress)
    report.seconds = time.perf_counter() - started
    return report


class _Runs:
    """Both models' layer runners, held in the runtime worker (``remote``), and the
    arrays ``compare`` fed them."""

    def __init__(self, session: remote.Session, outputs: CompareReport, a: Any, b: Any,
                 ref: str, threads: int | None, exposed: remote.exposing) -> None:
        self.session, self.outputs = session, outputs
        session.adopt(exposed.held)
        keys, outs = [], []
        for which, src, kind in zip("AB", (a, b), (ref, "openvino"), strict=True):
            key = exposed.key(which) if kind == "openvino" else None
            found = session.call(remote.exposed_layers, key) if key else None
            if found is None:  # compare's model is not held with its layers exposed
                key = session.key(f"layers-{which}")
                found = session.open(key, remote.open_layers, _portable(src), kind, threads)
            keys.append(key)
            outs.append(found)
        self.keys, self.outs = tuple(keys), outs
        self.feeds = (dict(outputs.arrays),
                      {i["name_b"]: outputs.arrays[i["name"]] for i in outputs.inputs})
        self.compiles = [0, 0]
        self.fed = fed_words([i["name"] for i in outputs.inputs],
                             [i["shape"] for i in outputs.inputs],
                             [i["values"] for i in outputs.inputs])

    def sizes(self, k: int) -> dict[Any, int]:
        shapes = {n: list(v.shape) for n, v in self.feeds[k].items()}
        return self.session.call(remote.layer_bytes, self.keys[k], shapes)

    def run(self, chunk: Sequence[tuple[Any, Any]]) -> list[LayerComparison]:
        """The verdicts of ``chunk``: both models run with its outputs exposed, judged in
        the worker. A crash is raised as ``(which model, RuntimeCrash)`` in a
        :class:`_Crash`."""
        for k in (0, 1):
            try:
                self.compiles[k] = self.session.call(
                    remote.run_layers, self.keys[k], self.feeds[k], [p[k] for p in chunk])
            except remote.RuntimeCrash as crash:
                raise _Crash("AB"[k], crash) from crash
        return self.session.call_both(remote.judge_layers, *self.keys, _judge_all, _alone,
                                      list(chunk), self.outputs.rtol, self.outputs.atol)

    def crashed(self, which: str, crash: remote.RuntimeCrash) -> str:
        label = self.outputs.labels[0 if which == "A" else 1]
        return (f"model {which} ({label}) {remote.crash_words(crash)} running up to this "
                f"layer output on the inputs fed ({self.fed})")


class _Crash(Exception):
    def __init__(self, which: str, crash: remote.RuntimeCrash) -> None:
        super().__init__(which)
        self.which, self.crash = which, crash


def _portable(source: Any) -> Any:
    """A path as given; a graph as the IR bytes it is run as (``runtime.outputs``)."""
    from ..runtime.outputs import ir_bytes

    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else ir_bytes(source)


def _run_layers(report: LayersReport, run: _Runs, memory_budget: int,
                progress: Callable[[str, int, int], None] | None) -> None:
    """Plan the chunks of paired layer outputs, run them (``run``) and fill ``report``."""
    pairs = pair_layers(*run.outs)
    size_a, size_b = run.sizes(0), run.sizes(1)
    fixed = sum(v.nbytes for v in run.feeds[0].values()) + 2 * (
        _largest(size_a) + _largest(size_b))
    both = [(x, y) for x, y in pairs if x is not None and y is not None]
    cost = {(x, y): _cost(x, y, size_a, size_b) for x, y in both}
    chunks, over = _plan(both, cost, memory_budget - fixed)
    report.chunks = len(chunks)
    report.peak_bytes = fixed + max((sum(cost[p] for p in c) for c in chunks), default=0)
    results: dict[tuple[Any, Any], LayerComparison] = {}
    done = 0
    for k, chunk in enumerate(chunks):
        if progress is not None:  # compiling and running take most of a chunk's time
            of = f" (chunk {k + 1} of {len(chunks)})" if len(chunks) > 1 else ""
            progress(f"running both models with {len(chunk)} layer outputs{of}", done,
                     len(both))
        _run_chunk(run, chunk, results)
        done += len(chunk)
        if progress is not None:
            progress("comparing layer outputs", done, len(both))
    for p in over:
        results[p] = _alone(p, "not run", f"its outputs would take {size_text(cost[p])}, "
                            f"over the memory budget of {size_text(memory_budget)} beside "
                            f"the inputs and each model's largest tensor ({size_text(fixed)})")
    report.layers = [results.get((x, y)) or _alone((x, y), _lonely(x, y)) for x, y in pairs]
    report.compiles = sum(run.compiles)


def _pair_by_sources(live: Sequence[Any], outs_b: Sequence[Any], partner: dict[Any, Any],
                     used: set[Any]) -> None:
    """Pair what names could not: an output of A and one of B left over, of one op type
    and port, whose every non-constant input reads partners (or the same model input),
    in A's order, so that a chain of such layers pairs one after the other. These are the
    layers OpenVINO's reader makes itself (an IR v10's legacy ops converted) and names by
    a counter that runs on from one read to the next: the same file read twice names them
    apart."""
    left: dict[tuple[Any, ...], list[Any]] = {}
    for y in outs_b:
        if y not in used and not y.constant and y.sources:
            left.setdefault((y.type, y.port, y.sources), []).append(y)
    if not left:
        return
    a_by_name = {(o.layer, o.port): o for o in live}

    def read_by_b(source: tuple[str, int] | None) -> Any:
        if source is None or source[0] == "":
            return source
        x = a_by_name.get(source)
        y = partner.get(x) if x is not None else None
        return (y.layer, y.port) if y is not None else False

    for o in live:
        if o in partner or not o.sources or all(s is None for s in o.sources):
            continue
        want = tuple(read_by_b(s) for s in o.sources)
        if False in want:
            continue
        waiting = left.get((o.type, o.port, want))
        if waiting:
            y = waiting.pop(0)
            partner[o] = y
            used.add(y)


def _largest(sizes: Mapping[Any, int]) -> int:
    """The largest tensor a run computes (constants are folded, not held per run)."""
    return max((n for o, n in sizes.items() if not o.constant), default=0)


def _cost(x: Any, y: Any, size_a: Mapping[Any, int], size_b: Mapping[Any, int]) -> int:
    """Bytes of one pair's two values (one side's estimate stands for the other's)."""
    ea, eb = size_a.get(x), size_b.get(y)
    return (ea if ea is not None else eb or 0) + (eb if eb is not None else ea or 0)


def pair_layers(outs_a: Sequence[Any], outs_b: Sequence[Any]
                ) -> list[tuple[Any | None, Any | None]]:
    """``(output of A, its partner in B)`` for every non-constant output of A in order,
    with ``(None, output of B)`` for each non-constant output of B left without a
    partner, placed after the output of A paired with B's output before it.

    >>> from ovgather.runtime.layer_outputs import LayerOutput as O
    >>> x, y = O("mm", 0, frozenset({"t"}), None, "MatMul", False), \\
    ...     O("MatMul_7", 0, frozenset({"t"}), None, "MatMul", False)
    >>> pair_layers([x], [y]) == [(x, y)]
    True
    """
    by_tensor: dict[str, Any] = {}
    by_name: dict[tuple[str, int], Any] = {}
    for o in outs_b:
        for t in sorted(o.tensor_names):
            by_tensor.setdefault(t, o)
        by_name.setdefault((o.layer, o.port), o)
    live = [o for o in outs_a if not o.constant]
    partner: dict[Any, Any] = {}
    used: set[Any] = set()
    for o in live:
        found = [by_tensor[t] for t in sorted(o.tensor_names)
                 if t in by_tensor and by_tensor[t] not in used]
        if found:
            partner[o] = found[0]
            used.add(found[0])
    for o in live:
        y = by_name.get((o.layer, o.port))
        if o not in partner and y is not None and y not in used:
            partner[o] = y
            used.add(y)
    _pair_by_sources(live, outs_b, partner, used)
    after: dict[Any, list[Any]] = {}
    last = None
    position = {y: x for x, y in partner.items()}
    for y in outs_b:
        if y in position:
            last = position[y]
        elif not y.constant:
            after.setdefault(last, []).append(y)
    out: list[tuple[Any | None, Any | None]] = [(None, y) for y in after.get(None, [])]
    for o in live:
        out.append((o, partner.get(o)))
        out += [(None, y) for y in after.get(o, [])]
    return out


def _lonely(x: Any, y: Any) -> str:
    return "only in A" if y is None else "only in B" if x is None else "not run"


def _alone(pair: tuple[Any, Any], status: str, message: str | None = None
           ) -> LayerComparison:
    x, y = pair
    if message is None and status.startswith("only"):
        message = f"no output of {'B' if x is not None else 'A'} has its tensor names or " \
                  "its layer name and port"
    return LayerComparison(
        x.layer if x else None, y.layer if y else None, (x or y).port,
        _tensor(x, y), status, line_a=x.line if x else None, line_b=y.line if y else None,
        type=(x or y).type, message=message)


def _tensor(x: Any, y: Any) -> str | None:
    """A tensor name of the pair: one both share, else one of A's, else one of B's."""
    common = sorted((x.tensor_names if x else set()) & (y.tensor_names if y else set()))
    names = common or sorted(x.tensor_names if x else ()) or sorted(y.tensor_names if y
                                                                    else ())
    return names[0] if names else None


def _plan(run: Sequence[tuple[Any, Any]], cost: Mapping[tuple[Any, Any], int], room: int
          ) -> tuple[list[list[tuple[Any, Any]]], list[tuple[Any, Any]]]:
    """Chunks of pairs whose values fit ``room`` bytes (``CHUNK_OUTPUTS`` pairs at most
    each), in order; the pairs that fit no chunk alone."""
    chunks: list[list[tuple[Any, Any]]] = []
    chunk: list[tuple[Any, Any]] = []
    used, over = 0, []
    for p in run:
        if cost[p] > room:
            over.append(p)
            continue
        if chunk and (used + cost[p] > room or len(chunk) >= CHUNK_OUTPUTS):
            chunks.append(chunk)
            chunk, used = [], 0
        chunk.append(p)
        used += cost[p]
    if chunk:
        chunks.append(chunk)
    return chunks, over


def _run_chunk(run: _Runs, chunk: Sequence[tuple[Any, Any]],
               results: dict[tuple[Any, Any], LayerComparison]) -> None:
    """Run one chunk on both models and judge each pair; a chunk a runtime fails on is
    run in halves, down to single pairs (``not run`` with the runtime's words); one that
    crashes the runtime's process too (``crashed``, naming the model), until
    :data:`CRASH_SPLITS` crashes: then a crashing chunk is ``crashed`` whole."""
    try:
        for p, lc in zip(chunk, run.run(chunk), strict=True):
            results[p] = lc
        return
    except _Crash as crashed:
        if len(chunk) == 1 or run.session.crashes >= CRASH_SPLITS:
            message = run.crashed(crashed.which, crashed.crash)
            if len(chunk) > 1:
                message += f" (one run of {len(chunk)} layer outputs: not split further " \
                           f"after {run.session.crashes} crashes)"
            for p in chunk:
                results[p] = _alone(p, "crashed", message)
            return
    except RuntimeBridgeError as err:
        if len(chunk) == 1:
            results[chunk[0]] = _alone(chunk[0], "not run", f"the runtime failed: {err.message}")
            return
    half = len(chunk) // 2
    for part in (chunk[:half], chunk[half:]):
        _run_chunk(run, part, results)


def _judge(pair: tuple[Any, Any], x: np.ndarray, y: np.ndarray, rtol: float, atol: float
           ) -> LayerComparison:
    lc = _alone(pair, "ok")
    shapes = f"the shapes differ: {list(x.shape)} in A, {list(y.shape)} in B"
    if x.shape != y.shape:
        if x.size != y.size:
            lc.status, lc.message = "differs", shapes
            return lc
        # one tensor in another layout (a reshape a conversion folded away, a scalar
        # kept as [1]): the same elements in the same order
        x, y = x.reshape(-1), y.reshape(-1)
        lc.message = f"{shapes}; compared element by element"
    lc.max_abs, lc.max_rel, bad = differences(x, y, rtol, atol)
    lc.cosine = cosine(x, y)
    if bad:
        lc.status = "differs"
        lc.message = "; ".join(filter(None, [lc.message, (
            f"{bad} of {x.size} elements differ by more than atol {atol:g} + rtol {rtol:g} "
            "* |B|")]))
    return lc


def _judge_all(items: Sequence[tuple[tuple[Any, Any], np.ndarray, np.ndarray]], rtol: float,
               atol: float) -> list[LayerComparison]:
    """:func:`_judge` of each ``(pair, x, y)``. Real arrays of one shape and type, up to
    a span each (most layer outputs), have their differences measured together, in
    float64 over one joined vector and reduced segment by segment, as :func:`differences`
    measures one: a model's thousands of small outputs cost a few array operations, not
    a few each."""
    out: list[LayerComparison | None] = [None] * len(items)
    batch = [k for k, (_, x, y) in enumerate(items)
             if x.shape == y.shape and x.dtype == y.dtype and x.dtype.kind == "f"
             and 0 < x.size <= _SPAN]
    if len(batch) > 1:
        a = np.concatenate([items[k][1].reshape(-1) for k in batch]).astype(np.float64)
        b = np.concatenate([items[k][2].reshape(-1) for k in batch]).astype(np.float64)
        starts = np.cumsum([0] + [items[k][1].size for k in batch[:-1]])
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            diff = np.where(close & ~np.isfinite(a), 0.0, np.abs(a - b))
            rel = np.where((diff == 0) | (b == 0), 0.0, diff / np.abs(b))
        max_abs = np.maximum.reduceat(diff, starts)
        max_rel = np.maximum.reduceat(rel, starts)
        bad = np.add.reduceat((~close).astype(np.int64), starts)
        for n, k in enumerate(batch):
            pair, x, y = items[k]
            lc = _alone(pair, "ok")
            lc.max_abs = _inf_for_nan(float(max_abs[n]))
            lc.max_rel = _inf_for_nan(float(max_rel[n]))
            lc.cosine = cosine(x, y)
            if bad[n]:
                lc.status = "differs"
                lc.message = (f"{int(bad[n])} of {x.size} elements differ by more than atol "
                              f"{atol:g} + rtol {rtol:g} * |B|")
            out[k] = lc
    return [lc if lc is not None else _judge(*items[k], rtol, atol)
            for k, lc in enumerate(out)]


def _inf_for_nan(value: float) -> float:
    return math.inf if math.isnan(value) else value


def cosine(x: np.ndarray, y: np.ndarray) -> float | None:
    """The cosine similarity of two arrays of one shape, summed in float64 a span at a
    time; 1 for two zero arrays, 0 when one alone is zero, None for strings, NaN or an
    infinity.

    >>> cosine(np.array([1.0, 0.0]), np.array([1.0, 1.0]))
    0.7071067811865475
    """
    if x.dtype.kind in "OUS" or y.dtype.kind in "OUS":
        return None
    dot = nx = ny = 0.0
    for cx, cy in _spans(x, y):
        a, b = cx.astype(np.float64), cy.astype(np.float64)
        dot += float(a @ b)
        nx += float(a @ a)
        ny += float(b @ b)
    if not all(map(math.isfinite, (dot, nx, ny))):
        return None
    if nx == 0 or ny == 0:
        return 1.0 if nx == ny else 0.0
    return max(-1.0, min(1.0, dot / math.sqrt(nx * ny)))


def _spans(x: np.ndarray, y: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    fx, fy = x.reshape(-1), y.reshape(-1)
    for start in range(0, fx.size, _SPAN):
        yield fx[start:start + _SPAN], fy[start:start + _SPAN]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _rank(value: float | None) -> float:
    return -1.0 if value is None else math.inf if math.isnan(value) else value
