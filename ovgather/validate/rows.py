"""The runtime proof of ``reshape``: each row of a batch computes what the original
model computes on that row alone.

Shape inference cannot see a model that runs at the new shapes but mixes its rows: a
constant buffer sized for the old token count, filled by a scatter, passes every rule
and then writes one row's tokens over another's (or past its end). :func:`prove_rows`
runs the written model on a batch of rows and the original on each row alone, on the
OpenVINO CPU plugin in f32, at two batch sizes where the batch is dynamic (and two
sequence sizes where another dim is), and names the first output whose rows differ
beyond tolerance, or the run that fails.

The inputs are made per row (:func:`row_inputs`) as ``compare`` makes them: real numbers
at random, a mask of ones with padding, an integer that indexes a table at random inside
the table, positions in order, so that rows differ from each other and a leak shows. Two
rows equal in every input cannot show a leak: the inputs are re-drawn with values that
vary row by row (random zeros and ones for an integer that feeds nothing known,
positions that start at the row's number), and a proof whose rows stay equal, or that
compared no output, proves nothing (``nothing_proven``; never "equals").

What is compared, and how (:mod:`.row_values`): an output downstream of a random op is
left out (``not_compared``); so is one whose batch does not stack row by row, except a
DetectionOutput, whose detections are split by image id and matched per image as sets.
An output downstream of a FakeQuantize on activations that is off the f32 tolerance is
proven in two steps: the batch run again with the other rows changed must leave the row's
output unchanged bit for bit (no row reads another), and the row must equal the row run
alone within a few steps of the quantization grid (``compared`` says which bound).
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..element_types import element_type_name, numpy_dtype
from ..errors import OvgatherError
from ..shapes import Dimension, PartialShape
from .memory import DEFAULT_MEMORY_BUDGET, size_text, whole_run_bytes
from .row_values import (
    IOU,
    STEPS,
    list_output,
    match_detections,
    output_facts,
    quantization_bound,
    same_rows,
)
from .sizes import LARGER_SIZES, parameter_shapes, parameter_types

__all__ = ["RowProof", "prove_rows", "proof_sizes", "batch_inputs", "row_inputs",
           "distinct_inputs", "RTOL", "ATOL", "UNSTACKED"]

#: Tolerance of an f32 run: relative, and absolute per unit of the output's largest
#: magnitude (a batch runs other kernels' blocking than one row: the sums are reordered).
RTOL = 1e-3
ATOL = 1e-4
#: The batch sizes tried inside a dynamic batch (two, where a leak between rows shows).
BATCHES = (2, 3)
#: The sizes tried for another dim that is dynamic in both models, two per proof.
SEQUENCES = (5, 8, *LARGER_SIZES)
#: How many times inputs whose rows are equal are re-drawn.
REDRAWS = 4
#: Why an output whose batch does not stack row by row is not compared.
UNSTACKED = "its batch does not stack row by row"
#: How far a matched detection's score and box may move (they lie in [0, 1]).
DETECTION_ATOL = 1e-3


@dataclass
class RowProof:
    """What the runtime proof did. ``ran`` with ``why`` when not; ``runs``: the input
    shapes of each batch run; ``differs``: the first differing output (``output``,
    ``batch``, ``row``, ``max_abs``, ``why``), or None; ``unpaired``: outputs whose
    batch does not stack row by row (compared nowhere); ``not_compared``: each output
    left out (``output``, ``why``); ``compared``: each output compared (``output``,
    ``bound``: ``f32``, ``exact``, ``quantization`` or ``detections``, with the bound's
    numbers, or ``matched`` detections); ``nothing_proven``: why a proof that ran
    proves nothing (rows that cannot be told apart, no output compared)."""

    ran: bool
    why: str | None = None
    batches: list[int] = field(default_factory=list)
    runs: list[dict[str, list[int]]] = field(default_factory=list)
    differs: dict[str, Any] | None = None
    unpaired: list[str] = field(default_factory=list)
    seconds: float = 0.0
    not_compared: list[dict[str, str]] = field(default_factory=list)
    compared: list[dict[str, Any]] = field(default_factory=list)
    nothing_proven: str | None = None

    @property
    def ok(self) -> bool:
        """No row differs, and a proof that ran proved something."""
        return self.differs is None and self.nothing_proven is None

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "why": self.why, "precision": "f32", "rtol": RTOL,
                "atol": ATOL, "batches": self.batches, "runs": self.runs,
                "differs": self.differs, "unpaired": self.unpaired,
                "not_compared": self.not_compared, "compared": self.compared,
                "nothing_proven": self.nothing_proven, "seconds": round(self.seconds, 3)}

    def leave_out(self, output: str, why: str) -> None:
        if all(row["output"] != output for row in self.not_compared):
            self.not_compared.append({"output": output, "why": why})

    def count(self, output: str, bound: str, **numbers: Any) -> None:
        """``output`` compared under ``bound``; a looser bound (or more detections
        matched) replaces a tighter one."""
        order = ("exact", "f32", "detections", "quantization")
        for row in self.compared:
            if row["output"] == output:
                if bound == "detections":
                    row["matched"] = row.get("matched", 0) + numbers.get("matched", 0)
                elif order.index(bound) > order.index(row["bound"]) or (
                        bound == row["bound"] == "quantization"
                        and numbers["atol"] > row["atol"]):
                    row.clear()
                    row.update({"output": output, "bound": bound, **numbers})
                return
        self.compared.append({"output": output, "bound": bound, **numbers})


# ---- sizes --------------------------------------------------------------------------------
def batch_inputs(old: Mapping[str, PartialShape]) -> list[str]:
    """The inputs whose dim 0 is a batch: the original takes 1 there."""
    return [n for n, s in old.items() if s.dims and s.dims[0].lo <= 1 <= s.dims[0].hi]


def _fit(v: int, *dims: Dimension) -> int | None:
    lo, hi = max(d.lo for d in dims), min(d.hi for d in dims)
    return min(max(v, lo), hi) if lo <= hi else None


def proof_sizes(old: Mapping[str, PartialShape], new: Mapping[str, PartialShape],
                fits: Any = None) -> tuple[list[dict[str, list[int]]], str | None]:
    """The input shapes of each batch run, by name, and why there are none. Dim 0 is the
    batch of every input whose original dim 0 takes 1; each other dim is the original's
    where that one is static, else the written model's, else a size of
    :data:`SEQUENCES` that ``fits(shapes)`` accepts (the same at one axis for all
    inputs). Two runs where a dim is dynamic in the written model, else one.

    >>> P = PartialShape.parse
    >>> proof_sizes({"x": P("[1,4]")}, {"x": P("[?,4]")})
    ([{'x': [2, 4]}, {'x': [3, 4]}], None)
    """
    if any(s.dims is None for s in (*old.values(), *new.values())):
        return [], "an input has a dynamic rank"
    if set(old) != set(new):
        return [], "the inputs of the written model are not the original's"
    ranked = [f"{n}: {old[n]} -> {new[n]}" for n in new if len(old[n].dims) != len(new[n].dims)]
    if ranked:  # the original cannot run a row of the new shape: nothing pairs up
        return [], (f"an input changes rank ({', '.join(ranked)}), so the original cannot "
                    "run its rows")
    rows = batch_inputs(old)
    dims0 = [new[n].dims[0] for n in rows]
    if not dims0:
        batches = [1]
    elif all(d.is_static for d in dims0):
        batches = [dims0[0].lo] if len({d.lo for d in dims0}) == 1 else []
    else:
        batches = [b for b in BATCHES if _fit(b, *dims0) == b] or \
            [b for b in [_fit(2, *dims0)] if b is not None]
    if not batches:
        return [], "no batch size fits every input's dim 0"
    dynamic = any(not d.is_static for s in new.values() for d in s.dims[1:])
    runs = []
    for k in range(2 if dynamic or len(batches) > 1 else 1):
        for seq in SEQUENCES[k:]:
            run = _run_shapes(old, new, rows, batches[k % len(batches)], seq)
            if run is not None and (fits is None or fits(run)):
                runs.append(run)
                break
    if not runs:
        return [], "no input sizes inside the new shapes that the original also takes"
    return runs, None


def _run_shapes(old, new, rows, batch, seq) -> dict[str, list[int]] | None:
    out = {}
    for name, s in new.items():
        shape = []
        if len(old[name].dims) != len(s.dims):
            return None
        for j, (a, b) in enumerate(zip(old[name].dims, s.dims, strict=True)):
            if j == 0 and name in rows:
                v = _fit(batch, b)
            elif a.is_static:  # the original runs at its own size only
                v = a.lo if b.lo <= a.lo <= b.hi else None
            else:
                v = _fit(b.lo if b.is_static else seq, a, b)
            if v is None:
                return None
            shape.append(v)
        out[name] = shape
    return out


# ---- inputs -------------------------------------------------------------------------------
def row_inputs(G: nx.MultiDiGraph, shapes: Mapping[str, Sequence[int]], seed: int,
               model: Any = None, vary: bool = False) -> dict[str, np.ndarray]:
    """Inputs at ``shapes`` (by Parameter name) whose rows differ, made as ``compare``
    makes them (:mod:`ovgather.runtime.feeding`, from what each input feeds in
    ``model``, the ``openvino.Model`` of ``G`` by default): real numbers at random,
    indices inside the table they index, masks of ones with some padding, positions;
    ``vary``: also an integer that feeds nothing known and positions vary by row
    (:func:`ovgather.runtime.feeding.make_array`)."""
    from ..runtime import to_openvino
    from ..runtime.feeding import Feed, feeds_by_name, make_array

    feeds = feeds_by_name(model if model is not None else to_openvino(G), shapes)
    types = parameter_types(G)
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes.items():
        dtype = np.dtype(numpy_dtype(element_type_name(types.get(name, "f32"))) or "float32")
        out[name] = make_array(feeds.get(name, Feed("zeros")), shape, dtype, rng, vary)
    return out


def distinct_inputs(G: nx.MultiDiGraph, shapes: Mapping[str, Sequence[int]], seed: int,
                    model: Any, rows: Sequence[str]) -> tuple[dict[str, np.ndarray], bool,
                                                              str | None]:
    """:func:`row_inputs` whose rows differ in every input of ``rows`` that can vary: drawn
    as usual, and an input whose rows repeat (an integer that feeds nothing known is all
    zeros) re-drawn up to :data:`REDRAWS` times with ``vary``, since a row that reads
    another row's values of that input could not show otherwise. The inputs, whether
    any was re-drawn, and why two rows stay equal in every input (None when none do)."""
    feed = row_inputs(G, shapes, seed, model)
    batch = shapes[rows[0]][0] if rows else 1
    varied = False
    for k in range(1, REDRAWS + 1):
        repeating = [n for n in rows if same_rows(feed, [n], batch) is not None]
        if not repeating:
            break
        redrawn = row_inputs(G, shapes, seed + 7919 * k, model, vary=True)
        feed.update({n: redrawn[n] for n in repeating})
        varied = True
    pair = same_rows(feed, rows, batch)
    return feed, varied, None if pair is None else _equal_rows(pair, shapes)


def _equal_rows(pair: tuple[int, int], shapes: Mapping[str, Sequence[int]]) -> str:
    sizes = ", ".join(f"{n}{list(s)}" for n, s in shapes.items())
    return (f"rows {pair[0]} and {pair[1]} of the inputs ({sizes}) are equal in every input "
            "however drawn, so a rewrite that mixes them cannot show")


# ---- the proof ----------------------------------------------------------------------------
def _budget(G: nx.MultiDiGraph, runs: list[dict[str, list[int]]], budget: int,
            weights: int) -> str | None:
    from ..infer import check

    biggest = max(runs, key=lambda r: sum(math.prod(s) for s in r.values()))
    report = check(G, {n: PartialShape.of(tuple(Dimension.static(v) for v in s))
                       for n, s in biggest.items()})
    need = whole_run_bytes(G, {lr.id: lr.inferred_shapes for lr in report.layers}, ()) \
        + 2 * weights
    if need > budget:
        return (f"a run needs about {size_text(need)}, over the memory budget of "
                f"{size_text(budget)}")
    return None


def prove_rows(original: str, old: Mapping[str, PartialShape], G: nx.MultiDiGraph, *,
               seed: int = 0, budget: int = DEFAULT_MEMORY_BUDGET,
               threads: int | None = None) -> RowProof:
    """Run the written model ``G`` on batches of rows and the IR ``original`` (whose
    inputs had the shapes ``old``) on each row alone; the first output that differs.

    The proof is not run (``ran`` false, ``why`` says why) when the runtime is missing,
    when no input sizes fit both models, or when a run would exceed ``budget`` bytes."""
    start = time.perf_counter()
    try:
        from .. import runtime

        runtime.openvino()
    except OvgatherError as err:
        return RowProof(False, f"the OpenVINO runtime is not available: {err}")
    from ..infer import check

    def fits(run: dict[str, list[int]]) -> bool:
        shapes = {n: PartialShape.of(tuple(Dimension.static(v) for v in s))
                  for n, s in run.items()}
        return all(lr.status != "invalid" for lr in check(G, shapes).layers)

    runs, why = proof_sizes(old, parameter_shapes(G), fits)
    if why is None:
        bin_path = os.path.splitext(original)[0] + ".bin"
        why = _budget(G, runs, budget, os.path.getsize(bin_path)
                      if os.path.exists(bin_path) else 0)
    if why is not None:
        return RowProof(False, why)
    rows = batch_inputs(old)
    proof = RowProof(True, batches=sorted({r[rows[0]][0] if rows else 1 for r in runs}),
                     runs=runs)
    try:
        _compare_runs(proof, original, G, runs, rows, seed, threads)
    except _CannotRun as err:  # the proof's own inputs: no verdict on the model
        proof.ran, proof.why = False, f"the proof could not run: {err}"
    except OvgatherError as err:
        proof.differs = {"output": None, "batch": None, "row": None, "max_abs": None,
                         "why": _failure(err)}
    proof.seconds = time.perf_counter() - start
    return proof


def _compare_runs(proof: RowProof, original: str, G: nx.MultiDiGraph,
                  runs: list[dict[str, list[int]]], rows_of: list[str], seed: int,
                  threads: int | None) -> None:
    from ..runtime import to_openvino
    from ..runtime.core import compile_models
    from ..runtime.models import read_model

    try:
        models = (read_model(original), to_openvino(G))
    except OvgatherError as err:
        raise _CannotRun(f"the original does not compile: {_failure(err)}") from err
    compiled = compile_models(models, threads)  # both at once, a core each
    if isinstance(compiled[0], OvgatherError):
        raise _CannotRun(f"the original does not compile: {_failure(compiled[0])}")
    if isinstance(compiled[1], OvgatherError):  # the written model: a verdict
        raise compiled[1]
    names = [[p.get_node().get_friendly_name() for p in m.inputs] for m in models]
    outs = [_output_name(p, i) for i, p in enumerate(models[1].outputs)]
    facts = output_facts(models[1])
    for k, run in enumerate(runs):
        batch = run[rows_of[0]][0] if rows_of else 1
        feed, varied, same = distinct_inputs(G, run, seed + k, models[1], rows_of)
        try:  # the original first: when it cannot run a row, the inputs are the proof's
            rows = _original_rows(compiled[0], names[0], feed, rows_of, batch)
        except _CannotRun:
            if not varied:
                raise
            feed = row_inputs(G, run, seed + k, models[1])  # the values it takes
            rows = _original_rows(compiled[0], names[0], feed, rows_of, batch)
            pair = same_rows(feed, rows_of, batch)
            same = pair and (_equal_rows(pair, run) + " (the original fails on values "
                             "that vary)")
        if same and proof.nothing_proven is None:
            proof.nothing_proven = same
        many = _outputs(compiled[1], names[1], feed)  # fails where each row ran: a verdict
        moved: list[list[np.ndarray]] | None = None  # the batch with the other rows changed
        for i, got in enumerate(many):
            want = [row[i] for row in rows]
            name, fact = outs[i], facts[i]
            if fact.random:
                proof.leave_out(name, f"downstream of {fact.random}: its values are random")
                continue
            if fact.detections:
                matched, wrong = match_detections(got, want, DETECTION_ATOL)
                if wrong is not None:
                    proof.differs = {"output": name, "batch": batch, "row": wrong[0],
                                     "max_abs": None, "why": wrong[1]}
                    return
                proof.count(name, "detections", matched=matched, iou=IOU,
                            atol=DETECTION_ATOL)
                continue
            if got.shape[:1] != (sum(w.shape[0] if w.ndim else 1 for w in want),) \
                    or any(w.shape[1:] != got.shape[1:] for w in want) \
                    or fact.made_by.startswith("StringTensorUnpack "):  # offsets in the batch
                if name not in proof.unpaired:
                    proof.unpaired.append(name)
                proof.leave_out(name, f"a list {fact.made_by} makes from the whole batch"
                                if list_output(fact) else UNSTACKED)
                continue
            wrong = _first_row(got, want)
            if wrong is None:
                proof.count(name, "f32" if got.dtype.kind in "fc" else "exact",
                            **({"rtol": RTOL, "atol": ATOL} if got.dtype.kind in "fc" else {}))
                continue
            if fact.grid is not None and got.dtype.kind in "fc":
                if moved is None:
                    moved = _other_rows_changed(compiled[1], names[1], feed, G, run,
                                                seed + k, models[1], rows_of, batch, varied)
                row = _row_moves(got, want, [m[i] for m in moved])
                if row is not None:
                    proof.differs = {"output": name, "batch": batch, "row": row,
                                     "max_abs": None,
                                     "why": f"row {row} of a batch of {batch} changes when "
                                            "the other rows change"}
                    return
                loose = _first_row(got, want, fact.grid)
                if loose is None:
                    scale = max(float(np.nanmax(np.abs(w))) if w.size else 0.0 for w in want)
                    proof.count(name, "quantization", rtol=RTOL, steps=STEPS,
                                atol=quantization_bound(fact.grid, scale), **{
                                    key: fact.grid[key]
                                    for key in ("fake_quantize", "levels", "step")})
                    continue
                wrong = loose
            proof.differs = {"output": name, "batch": batch, "row": wrong[0],
                             "max_abs": wrong[1],
                             "why": f"row {wrong[0]} of a batch of {batch} differs from "
                                    f"that row run alone by up to {wrong[1]:.3g}"
                                    + (f" (over {STEPS} steps of {fact.grid['fake_quantize']})"
                                       if fact.grid is not None and got.dtype.kind in "fc"
                                       else "")}
            return
    if not proof.compared and proof.nothing_proven is None:
        left = "; ".join(f"{row['output']}: {row['why']}" for row in proof.not_compared)
        proof.nothing_proven = f"no output was compared ({left or 'the model has none'})"


def _original_rows(compiled: Any, names: list[str], feed: Mapping[str, np.ndarray],
                   rows_of: list[str], batch: int) -> list[list[np.ndarray]]:
    """The original's outputs on each row alone; :class:`_CannotRun` when it fails."""
    try:
        return [_outputs(compiled, names, _row(feed, r, rows_of)) for r in range(batch)]
    except OvgatherError as err:
        shapes = ", ".join(f"{n}{list(np.shape(a))}"
                           for n, a in _row(feed, 0, rows_of).items())
        raise _CannotRun(f"the original fails on one row of the inputs made for it "
                         f"({shapes}): {_failure(err)}") from err


def _other_rows_changed(compiled: Any, names: list[str], feed: Mapping[str, np.ndarray],
                        G: nx.MultiDiGraph, run: Mapping[str, Sequence[int]], seed: int,
                        model: Any, rows_of: list[str], batch: int, varied: bool
                        ) -> list[list[np.ndarray]]:
    """For each row r, the written model's outputs on ``feed`` whose other rows are
    drawn afresh (inputs without a batch kept)."""
    fresh = row_inputs(G, run, seed + 104729, model, vary=varied)
    out = []
    for r in range(batch):
        mixed = {n: (np.array(fresh[n]) if n in rows_of else a) for n, a in feed.items()}
        for n in rows_of:
            mixed[n][r] = feed[n][r]
        out.append(_outputs(compiled, names, mixed))
    return out


def _row_moves(got: np.ndarray, want: list[np.ndarray], moved: list[np.ndarray]
               ) -> int | None:
    """The first row whose output in ``got`` is not bit for bit the same in ``moved[r]``,
    the batch run with the other rows changed."""
    at = 0
    for r, w in enumerate(want):
        n = w.shape[0] if w.ndim else 1
        if moved[r].shape != got.shape or \
                got[at:at + n].tobytes() != moved[r][at:at + n].tobytes():
            return r
        at += n
    return None


class _CannotRun(Exception):
    """The proof's runs could not start: the original cannot run its own rows."""


def _failure(err: OvgatherError) -> str:
    """The error of a run that failed, with the layer OpenVINO names in its full text."""
    text = str(err.args[0] if err.args else err)
    node = re.search(r"Node (\S+) of type (\w+)", str(err.__cause__ or ""))
    return f"{node[2]} '{node[1]}': {text}" if node else text


def _output_name(port: Any, i: int) -> str:
    names = sorted(port.get_names())
    return names[0] if names else f"output {i}"


def _row(feed: Mapping[str, np.ndarray], r: int, rows: list[str]) -> dict[str, np.ndarray]:
    return {n: a[r:r + 1] if n in rows else a for n, a in feed.items()}


def _outputs(compiled: Any, names: list[str], feed: Mapping[str, np.ndarray]
             ) -> list[np.ndarray]:
    request = _run(compiled, [feed[n] for n in names])
    tensors = [request.get_output_tensor(i) for i in range(len(compiled.outputs))]
    return [np.array(t.str_data if t.get_element_type().get_type_name() == "string"
                     else t.data) for t in tensors]  # strings: never .data's bytes


def _run(compiled: Any, arrays: list[np.ndarray]) -> Any:
    from ..runtime.core import run_request

    return run_request(compiled, arrays)


def _first_row(got: np.ndarray, want: list[np.ndarray], grid: Mapping[str, Any] | None = None
               ) -> tuple[int, float] | None:
    """The first row of ``got`` outside tolerance of ``want`` (and its largest error);
    with ``grid``, the tolerance of a few of its quantization steps where looser."""
    at = 0
    for r, w in enumerate(want):
        n = w.shape[0] if w.ndim else 1
        g = got[at:at + n]
        at += n
        if g.dtype.kind not in "fc":
            if not np.array_equal(g, w.reshape(g.shape)):
                if g.dtype.kind in "OUS":  # strings: equal or not (inf, as compare has it)
                    return r, math.inf
                return r, float(np.max(np.abs(g.astype(np.float64) - w)))
            continue
        scale = float(np.nanmax(np.abs(w))) if w.size and not np.isnan(w).all() else 1.0
        w = w.reshape(g.shape)
        atol = ATOL * max(1.0, scale)
        if grid is not None:
            atol = max(atol, quantization_bound(grid, scale))
        if not np.allclose(g, w, rtol=RTOL, atol=atol, equal_nan=True):
            diff = np.abs(g.astype(np.float64) - w)
            return r, float(np.nanmax(diff)) if not np.isnan(diff).all() else math.inf
    return None
