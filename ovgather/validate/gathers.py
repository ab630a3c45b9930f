"""Prove the gather layers of a model against the OpenVINO CPU runtime (docs/cli.md).

For every GatherND, GatherElements and Gather layer :func:`validate`

1. takes the layer's input partial shapes from ovgather's own inference
   (``infer.infer_shapes``) and asks the op's input maker (``OpSpec.inputs``, in the op's
   file) for concrete sizes inside each dim's bounds that satisfy the op's rules (batch
   dims equal, index tuples no longer than the data rank…);
2. makes random data of the layer's element type and, by the same maker, random *valid*
   indices: negative ones where the runtime defines them (GatherND, GatherElements,
   Gather-8) and a few out-of-range ones for Gather-8, whose spec defines them as zeros;
   Const indices keep their value from the .bin;
3. runs every layer on the CPU plugin, many layers per compiled model
   (``runtime.run_cases``), and compares
   - the runtime's output shape with ovgather's inference for those concrete sizes,
   - OpenVINO's output partial shape with ovgather's for the layer's partial shapes,
   - the values with ovgather's NumPy reference (``reference.for_layer``): exactly for
     integer and bool data, within a tolerance for floats (the largest error is kept).

:func:`validate_whole_model` compiles the whole IR instead, with an extra output at
every gather layer, runs it on random inputs and compares each gather's real output
shape with ovgather's inference for those input sizes.

Statuses of a layer: ``ok``; ``mismatch`` (a shape or a value disagrees with the
runtime); ``invalid`` (ovgather's rules reject the layer, or its constant indices are
outside what the runtime defines); ``error`` (the runtime refused or failed on a layer
ovgather accepts); ``skipped`` (cannot be run: an element type NumPy cannot hold, an
axis that is not a constant, a layer inside a TensorIterator, Loop or If body, which
cannot get an extra model output: those are listed last, by path). Only ``mismatch``,
``invalid`` and ``error`` are problems.

The library never prints; ``progress`` callbacks let the CLI draw a bar.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from .. import graph as g
from .. import runtime
from ..element_types import element_type_name, numpy_dtype
from ..errors import (
    OvgatherError,
    ReferenceInputError,
    RuntimeBridgeError,
    ShapeError,
    UnsupportedOpError,
    UsageError,
)
from ..infer import infer_shapes
from ..ops.core import registry
from ..ops.core.inputs import SPAN, InputMaker, NoValidInputs, Params, pick, random_data
from ..ops.core.spec import Attrs, OpSpec
from ..ops.core.values import Tensor
from ..reference import for_layer
from ..shapes import Dimension, PartialShape

__all__ = [
    "STATUSES",
    "LayerValidation",
    "ValidationReport",
    "validate",
    "validate_whole_model",
    "gather_layers",
    "body_gathers",
    "DEFAULT_MEMORY_BUDGET",
    "parse_size",
]

STATUSES = ("ok", "mismatch", "invalid", "error", "skipped")
PROBLEMS = ("mismatch", "invalid", "error")

#: How many input-size strategies --whole-model tries before giving up.
MAX_TRIES = 8
#: Ranks tried for a dynamic-rank Parameter in --whole-model (the CPU plugin needs one).
DYNAMIC_RANKS = (3, 2, 4, 1)
#: The most elements of any input or output tensor validation allocates for a layer.
MAX_ELEMENTS = 1 << 26
#: The memory validate may hold for tensors at once, in bytes (``--memory-budget``): the
#: data, indices and outputs of the layers planned and not yet judged, counted three
#: times (ovgather's arrays; the runtime's own copies, converted to its precisions; the
#: output copied back and the reference's). A layer that needs more alone is
#: ``skipped``; otherwise planning waits until judged layers free enough.
DEFAULT_MEMORY_BUDGET = 2 << 30
#: Float tolerance: the ops only move data, so anything but a tiny error is a bug.
RTOL, ATOL = 1e-6, 1e-6
#: The most layers validate puts in one compiled model: OpenVINO's compile time grows a
#: little faster than the model (1,000 gather layers: 0.82 s as one model, 0.67 s as
#: four of 250; 100 layers per model is slower again).
CHUNK_LAYERS = 250
#: The fewest layers validate splits off into a model of their own to compile it beside
#: another (each compile costs ~10 ms however small the model).
MIN_CHUNK_LAYERS = 25
#: Models built, compiled and run side by side by validate.
WORKERS = 2


# -- the report ---------------------------------------------------------------------------
@dataclass
class LayerValidation:
    """One gather layer's verdict against the runtime."""

    id: str
    name: str
    type: str
    version: str | None
    line: int | None
    status: str = "ok"
    inputs: dict[str, str] = field(default_factory=dict)
    runtime_shape: str | None = None
    inferred_shape: str | None = None
    runtime_partial_shape: str | None = None
    inferred_partial_shape: str | None = None
    max_error: float | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "type": self.type, "version": self.version,
            "line": self.line, "status": self.status, "inputs": self.inputs,
            "runtime_shape": self.runtime_shape, "inferred_shape": self.inferred_shape,
            "runtime_partial_shape": self.runtime_partial_shape,
            "inferred_partial_shape": self.inferred_partial_shape,
            "max_error": self.max_error, "message": self.message,
        }


@dataclass
class ValidationReport:
    """The result of :func:`validate` or :func:`validate_whole_model` for one model."""

    path: str | None
    seed: int
    mode: str = "layers"
    layers: list[LayerValidation] = field(default_factory=list)
    #: the most bytes of tensors validate estimated it held at once (not in the JSON)
    peak_bytes: int = 0

    @property
    def summary(self) -> dict[str, int]:
        counts = Counter(lv.status for lv in self.layers)
        return {"layers": len(self.layers), **{status: counts[status] for status in STATUSES}}

    @property
    def ok(self) -> bool:
        """True when no layer disagrees with the runtime (skipped layers are not problems)."""
        return not self.problems()

    def problems(self) -> list[LayerValidation]:
        return [lv for lv in self.layers if lv.status in PROBLEMS]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "seed": self.seed, "mode": self.mode,
                "summary": self.summary, "layers": [lv.to_dict() for lv in self.layers]}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps({"models": [self.to_dict()]}, indent=indent)


# -- choosing the layers --------------------------------------------------------------------
def gather_layers(G: nx.MultiDiGraph, names: Sequence[str] | None = None) -> list[str]:
    """The top-level gather-family layers of ``G`` in graph order, or those named in
    ``names`` (friendly names or ids); a name that is not a gather layer is a
    UsageError. A name may also be the path of a gather inside a body
    (``loop/body/gather``, as ``check`` lists it): :func:`body_gathers` reports those."""
    found = [n for n, t in G.nodes(data="type") if t in registry.family("gather")]
    if not names:
        return found
    by_key: dict[str, str] = {}
    for n in found:
        by_key.setdefault(G.nodes[n]["name"], n)
        by_key.setdefault(n, n)
    inner = {key for path_id, path_name, _, _ in _body_gathers(G) for key in (path_id, path_name)}
    missing = [name for name in names if name not in by_key and name not in inner]
    if missing:
        known = ", ".join([G.nodes[n]["name"] for n in found]
                          + [name for _, name, _, _ in _body_gathers(G)]) or "none"
        raise UsageError(
            f"--layer must name a gather layer of the model, but {', '.join(missing)} "
            f"names none (gather layers: {known})", file=G.graph.get("xml_path"))
    return list(dict.fromkeys(by_key[name] for name in names if name in by_key))


def _body_gathers(G: nx.MultiDiGraph) -> list[tuple[str, str, str, dict[str, Any]]]:
    from ..graph.bodies import body_layers

    family = registry.family("gather")
    return [row for row in body_layers(G) if row[3]["type"] in family]


def body_gathers(G: nx.MultiDiGraph, names: Sequence[str] | None = None,
                 shapes: Mapping[str, list[PartialShape]] | None = None
                 ) -> list[LayerValidation]:
    """The gather layers inside TensorIterator, Loop and If bodies (those named in
    ``names`` when given), each ``skipped``: a layer inside a body cannot be given an
    extra model output, so the CPU plugin cannot run it alone. ``shapes``, the result
    of ``infer_shapes``, fills in the shape ``check`` infers for it."""
    from ..graph.bodies import inside_words

    out = []
    for path_id, path_name, owner, attrs in _body_gathers(G):
        if names and path_id not in names and path_name not in names:
            continue
        res = LayerValidation(path_id, path_name, attrs["type"], attrs.get("version"),
                              attrs.get("line"), status="skipped")
        inferred = (shapes or {}).get(path_id)
        if inferred:
            res.inferred_partial_shape = str(inferred[0])
        res.message = (f"{inside_words(owner)}: it cannot get an extra model output, so "
                       "the runtime does not run it alone (check infers its shapes)")
        out.append(res)
    return out


# -- one layer ---------------------------------------------------------------------------------
@dataclass
class _Plan:
    result: LayerValidation
    spec: OpSpec | None = None
    case: runtime.OpCase | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    ins: list[Tensor] = field(default_factory=list)
    #: the concrete data and indices shapes picked and the output shape inferred for them
    concrete: tuple[tuple[int, ...], tuple[int, ...], str] | None = None
    #: the memory budget this plan reserves from (None: no total budget) and its share
    budget: _Budget | None = None
    cost: int = 0


class _Budget:
    """The bytes of tensors held at once by validate's planned, not yet judged layers.

    ``reserve`` is called with a layer's estimated bytes before its tensors exist; when
    they do not fit, ``make_room`` (set by :func:`validate`) judges and frees the oldest
    planned layers, and a layer that does not fit even alone is skipped."""

    def __init__(self, total: int) -> None:
        self.total, self.used, self.peak = int(total), 0, 0
        self.make_room: Callable[[], bool] = lambda: False

    def reserve(self, plan: _Plan, cost: int) -> None:
        if cost > self.total:
            raise NoValidInputs("skipped", f"its tensors need about {_size_text(cost)}, more "
                                           f"than the memory budget of {_size_text(self.total)} "
                                           "(--memory-budget)")
        while self.used + cost > self.total and self.make_room():
            pass
        plan.cost = cost
        self.used += cost
        self.peak = max(self.peak, self.used)

    def release(self, plan: _Plan) -> None:
        self.used -= plan.cost
        plan.cost = 0
        plan.case = None  # the arrays go with it


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def parse_size(text: str) -> int:
    """``2GiB``, ``512M``, ``1e9``, ``100000`` → bytes (units K, M, G, T of 1024, with
    or without ``iB``/``B``); ValueError when it is not a size.

    >>> parse_size("2GiB"), parse_size("512k"), parse_size("1000")
    (2147483648, 524288, 1000)
    """
    import re

    match = re.fullmatch(r"\s*([0-9]{1,15}(?:\.[0-9]{1,6})?)\s*([kmgt]?)(?:i?b)?\s*",
                         text.lower())
    if match is None:
        raise ValueError(f"a size is a number with an optional unit K, M, G or T (powers "
                         f"of 1024), such as 2GiB or 512M, but got '{text[:40]}'")
    number, unit = match.groups()
    return int(float(number) * (1 << (10 * " kmgt".index(unit or " "))))


def _etype_of(G: nx.MultiDiGraph, node: str, port: g.Port) -> str:
    attrs = G.nodes[node]
    if attrs["type"] in ("Parameter", "Const", "Constant"):
        et = (attrs.get("data") or {}).get("element_type")
        if et:
            return element_type_name(et)
    return element_type_name(port.get("precision") or None)


def _input_tensors(G, node, shapes) -> list[tuple[Tensor, str | None, str | None]]:
    """(tensor, producer node, producer type) per input port of ``node``, in order; a
    Const after the data and the indices (an axis) carries its value, as in the walk."""
    out = []
    for u, from_port, _ in g.input_edges(G, node):
        ports = G.nodes[u]["outputs"]
        pos = next(i for i, p in enumerate(ports) if p["id"] == from_port)
        shape = shapes[u][pos] if pos < len(shapes[u]) else PartialShape.dynamic()
        et = _etype_of(G, u, ports[pos])
        value = None
        if G.nodes[u]["type"] in ("Const", "Constant") and len(out) >= 2:
            flat = tuple(int(v) for v in _const_array(G, u).reshape(-1))
            value = (flat, flat)
        out.append((Tensor(shape, et, value), u, G.nodes[u]["type"]))
    return out


def _const_array(G, u: str) -> np.ndarray:
    from ..ir import const_value

    return np.array(const_value(G, u))


def _plan(G, node, shapes, rng, budget: _Budget | None = None) -> _Plan:
    attrs = G.nodes[node]
    result = LayerValidation(node, attrs["name"], attrs["type"], attrs.get("version"),
                             attrs.get("line"))
    plan = _Plan(result, attrs=dict(attrs.get("data") or {}), budget=budget)
    try:
        _plan_case(G, node, attrs, shapes, rng, plan)
    except NoValidInputs as why:
        result.status, result.message = why.status, why.message
    except (ShapeError, UnsupportedOpError) as err:
        result.status, result.message = "invalid", err.message
    return plan


def _runnable_spec(attrs: Mapping[str, Any]) -> OpSpec:
    """The layer's spec (UnsupportedOpError when its opset does not hold the op), with
    the input maker, runtime builder and reference validation needs."""
    spec = registry.find(attrs["type"], attrs.get("version"))
    if spec is None or None in (spec.inputs, spec.build, spec.reference):
        name = attrs["type"] if spec is None else spec.name
        raise NoValidInputs("skipped", f"ovgather cannot run {name} on the CPU plugin and "
                                       "compare it with a reference")
    return spec


def _plan_case(G, node, attrs, shapes, rng, plan: _Plan) -> None:
    spec = plan.spec = _runnable_spec(attrs)
    maker: InputMaker = spec.inputs
    inputs = _input_tensors(G, node, shapes)
    if len(inputs) < maker.n_inputs:
        raise NoValidInputs("invalid", f"a {spec.type} layer needs all its inputs connected")
    plan.ins = [t for t, _, _ in inputs]
    plan.result.inferred_partial_shape = str(spec.infer(plan.ins, plan.attrs)[0].shape)
    p = maker.params(Attrs(plan.attrs, spec.version), plan.ins)
    (dt, du, dk), (it, iu, ik) = inputs[0], inputs[1]
    dtype, itype = _np_dtype(dt.etype, "data"), _np_dtype(it.etype, "indices")
    const = ik in ("Const", "Constant")
    if const:
        indices = _const_array(G, iu)
        dsize = _sizes_for_const(plan, rng, dt.shape, indices, p)
    else:
        dsize, isize = maker.sizes(rng, dt.shape, it.shape, p)
        _check_budget(plan, dsize, isize)
        wild = maker.out_of_range_defined(len(dsize), dtype)
        indices = maker.indices(rng, dsize, isize, itype, p, out_of_range=wild)
    data = _const_array(G, du) if dk in ("Const", "Constant") else random_data(rng, dsize, dtype)
    plan.result.inputs = {"data": _shape_text(data.shape), "indices": _shape_text(indices.shape)}
    plan.case = runtime.OpCase(
        spec.type, spec.version, data, indices, batch_dims=p.batch_dims, axis=p.axis,
        axis_type=p.axis_type, data_shape=str(dt.shape), indices_shape=str(it.shape),
        indices_const=const, label=attrs["name"],
    )


def _sizes_for_const(plan: _Plan, rng, data: PartialShape, indices: np.ndarray,
                     p: Params) -> list[int]:
    """Data sizes for constant indices: picked, then grown until the indices fit."""
    maker = plan.spec.inputs
    dsize, _ = maker.sizes(rng, data, PartialShape(list(indices.shape)), p)
    if indices.size:
        dsize = maker.fit_const(data, dsize, indices, p)
    _check_budget(plan, dsize, list(indices.shape))
    return dsize


def _check_budget(plan: _Plan, dsize: list[int], isize: list[int]) -> None:
    """Skip a layer whose inputs or output would not fit in memory: shapes are
    arithmetic, but validation allocates real tensors."""
    out = _infer_concrete(plan, dsize, isize)
    plan.concrete = (tuple(dsize), tuple(isize), str(out))
    sizes = [dsize, isize] + ([out.to_list()] if out.is_static else [])
    biggest = max(math.prod(int(d) for d in s) for s in sizes)
    if biggest > MAX_ELEMENTS:
        raise NoValidInputs("skipped", f"a tensor of {biggest} elements exceeds the validation "
                                       f"budget of {MAX_ELEMENTS} (concrete data "
                                       f"{_shape_text(dsize)}, indices {_shape_text(isize)})")
    if plan.budget is not None:
        widths = [_itemsize(plan.ins[0].etype), _itemsize(plan.ins[1].etype)]
        counts = [math.prod(int(d) for d in s) for s in sizes]
        cost = sum(c * w for c, w in zip(counts, widths + widths[:1], strict=False))
        plan.budget.reserve(plan, 3 * cost)


def _itemsize(etype: str) -> int:
    name = numpy_dtype(etype)
    return np.dtype(name).itemsize if name else 8


def _infer_concrete(plan: _Plan, dsize: Sequence[int], isize: Sequence[int]) -> PartialShape:
    """The spec's output shape for concrete data and indices shapes."""
    ins = [Tensor(PartialShape(list(dsize)), plan.ins[0].etype),
           Tensor(PartialShape(list(isize)), plan.ins[1].etype), *plan.ins[2:]]
    return plan.spec.infer(ins, plan.attrs)[0].shape


def _np_dtype(etype: str, what: str) -> np.dtype:
    name = numpy_dtype(etype)
    if name is None:
        raise NoValidInputs("skipped", f"the {what} element type {etype} has no NumPy "
                                       "counterpart")
    return np.dtype(name)


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


# -- comparison ---------------------------------------------------------------------------------
def _concrete_inference(plan: _Plan) -> str:
    """ovgather's output shape for the case's concrete input shapes (the one worked out
    while planning, unless the inputs came out in other shapes)."""
    case = plan.case
    assert case is not None
    if plan.concrete and plan.concrete[:2] == (case.data.shape, case.indices.shape):
        return plan.concrete[2]
    return str(_infer_concrete(plan, case.data.shape, case.indices.shape))


#: Elements compared at a time: the comparison's float64 temporaries stay a few MiB
#: instead of several times an output that may fill most of the memory budget.
COMPARE_BLOCK = 1 << 16


def _blocks(ref: np.ndarray, out: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    a, b = ref.reshape(-1), out.reshape(-1)
    for start in range(0, a.size, COMPARE_BLOCK):
        yield a[start:start + COMPARE_BLOCK], b[start:start + COMPARE_BLOCK]


def _max_error(ref: np.ndarray, out: np.ndarray) -> float:
    return max((_block_error(a, b) for a, b in _blocks(ref, out)), default=0.0)


def _block_error(ref: np.ndarray, out: np.ndarray) -> float:
    if ref.dtype.kind in "fc":
        a, b = ref.astype(np.float64), out.astype(np.float64)
        same_nan = np.isnan(a) & np.isnan(b)
        diff = np.where(same_nan, 0.0, np.abs(a - b))
        return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
    return float(np.max(np.abs(ref.astype(np.int64) - out.astype(np.int64))))


def _values_agree(ref: np.ndarray, out: np.ndarray) -> bool:
    if ref.dtype.kind in "fc":
        return all(np.allclose(b, a, rtol=RTOL, atol=ATOL, equal_nan=True)
                   for a, b in _blocks(ref, out))
    return bool(np.array_equal(out, ref))


def _judge(plan: _Plan, run: runtime.OpRun, reference: Callable[..., np.ndarray]) -> None:
    res, case = plan.result, plan.case
    assert case is not None
    res.runtime_partial_shape = run.partial_shape
    if run.error is not None or run.output is None:
        res.status, res.message = "error", f"the CPU plugin failed: {run.error}"
        return
    res.runtime_shape = _shape_text(run.output.shape)
    res.inferred_shape = _concrete_inference(plan)
    res.message = run.note or ""
    problems = []
    if res.runtime_shape != res.inferred_shape:
        problems.append(f"the runtime's output shape is {res.runtime_shape}, ovgather infers "
                        f"{res.inferred_shape}")
    if res.runtime_partial_shape != res.inferred_partial_shape:
        problems.append(f"OpenVINO's output partial shape is {res.runtime_partial_shape}, "
                        f"ovgather infers {res.inferred_partial_shape}")
    try:
        ref = reference(case.op_type, case.version, case.data, case.indices,
                        batch_dims=case.batch_dims, axis=case.axis)
    except ReferenceInputError as err:
        problems.append(f"the reference refused the inputs the runtime ran: {err}")
        ref = None
    if ref is not None:
        if ref.shape != run.output.shape:
            problems.append(f"the reference gives shape {_shape_text(ref.shape)}, the runtime "
                            f"{res.runtime_shape}")
        else:
            res.max_error = _max_error(ref, run.output)
            if res.max_error != 0.0 and not _values_agree(ref, run.output):
                problems.append(f"values differ from the reference (largest error "
                                f"{res.max_error:g})")
    if problems:
        notes = [res.message] if res.message else []
        res.status, res.message = "mismatch", "; ".join(problems + notes)


# -- entry points ------------------------------------------------------------------------------
def validate(
    G: nx.MultiDiGraph,
    *,
    layers: Sequence[str] | None = None,
    seed: int = 0,
    batch_size: int = 1000,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
    reference: Callable[..., np.ndarray] | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> ValidationReport:
    """Run every gather layer (or those named in ``layers``) on the CPU plugin and
    compare its shapes with ovgather's inference and its values with the reference.

    ``memory_budget`` bounds the bytes of tensors held at once (see
    ``DEFAULT_MEMORY_BUDGET``): layers are planned, run, judged and freed a chunk at a
    time within it, and a layer that needs more on its own is reported ``skipped``.

    At most ``batch_size`` layers share one compiled model (fewer when there are many:
    see ``CHUNK_LAYERS``). ``reference`` replaces ``reference.for_layer`` (tests use it
    to prove that a wrong reference is caught).

    Compiling dominates, and OpenVINO compiles without holding the GIL: while
    ``WORKERS`` threads build, compile and run the models, this thread plans the next
    layers (in graph order, so a seed gives the same inputs however they are split) and
    then judges the finished ones.
    """
    report = ValidationReport(G.graph.get("xml_path"), seed)
    nodes = gather_layers(G, layers)
    inner = _body_gathers(G)
    shapes = infer_shapes(G) if nodes or inner else {}
    skipped = body_gathers(G, layers, shapes) if inner else []
    if not nodes:
        report.layers = skipped
        return report
    rng = np.random.default_rng(seed)
    size = _chunk_size(len(nodes), batch_size)
    budget = _Budget(memory_budget)
    plans: list[_Plan] = []
    chunk: list[_Plan] = []
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:

        def submit() -> None:
            runnable = [p for p in chunk if p.case is not None and p.result.status == "ok"]
            kept = {id(p) for p in runnable}
            for p in chunk:
                if id(p) not in kept and p.cost:
                    budget.release(p)
            pending.append((runnable, pool.submit(
                runtime.run_cases, [p.case for p in runnable], batch_size=size,
                threads=threads, progress=progress, workers=1)))
            chunk.clear()

        def judge_oldest() -> bool:
            """Judge the oldest planned layers and free their tensors (the chunk being
            planned is sent first when it is all there is)."""
            if not pending:
                if not chunk:
                    return False
                submit()
            runnable, future = pending.popleft()
            for plan, run in zip(runnable, future.result(), strict=True):
                _judge(plan, run, reference or for_layer)
                budget.release(plan)
            return True

        budget.make_room = judge_oldest
        for n in nodes:
            plan = _plan(G, n, shapes, rng, budget)
            plans.append(plan)
            chunk.append(plan)
            if len(chunk) == size:
                submit()
        if chunk:
            submit()
        while judge_oldest():
            pass
    report.layers = [p.result for p in plans] + skipped
    report.peak_bytes = budget.peak
    return report


def _chunk_size(n_layers: int, batch_size: int) -> int:
    """Layers per compiled model: at most ``batch_size`` and ``CHUNK_LAYERS``, and few
    enough that ``WORKERS`` models compile side by side, unless that would make models
    smaller than ``MIN_CHUNK_LAYERS``."""
    per_worker = max(MIN_CHUNK_LAYERS, -(-n_layers // WORKERS))
    return max(1, min(int(batch_size), CHUNK_LAYERS, per_worker))


def validate_whole_model(
    G: nx.MultiDiGraph,
    *,
    layers: Sequence[str] | None = None,
    seed: int = 0,
    threads: int | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> ValidationReport:
    """Compile the whole IR with an extra output at every gather layer, run it on random
    inputs, and compare each gather's real output shape with ovgather's inference for
    the same input sizes.

    ``memory_budget`` bounds the estimated bytes of one run (the inputs, twice the
    gather outputs and twice the largest other tensor, from ovgather's inference for the
    sizes picked); over it nothing is allocated and every gather layer is reported
    ``skipped`` with its own output size.

    Dynamic Parameter dims get sizes inside their bounds: first one size for all of
    them (so that a batch ``N`` shared by several inputs stays shared), then the static
    sizes seen elsewhere, then one size per distinct bounds, until the runtime accepts
    the sizes. A dynamic-rank Parameter gets rank 3, 2, 4 or 1 (the model is reshaped
    to it: the CPU plugin runs no dynamic-rank input).
    Integer inputs are zeros, a valid index for any gather; float and bool inputs are
    random.
    """
    report = ValidationReport(G.graph.get("xml_path"), seed, mode="whole-model")
    nodes = gather_layers(G, layers)
    skipped = body_gathers(G, layers, infer_shapes(G)) if _body_gathers(G) else []
    if not nodes:
        report.layers = skipped
        return report
    names = [G.nodes[n]["name"] for n in nodes]
    try:
        run = _run_whole(G, names, seed, threads, nodes, memory_budget)
    except RuntimeBridgeError as err:  # no input size runs the model: nothing to compare
        for node, name in zip(nodes, names, strict=True):
            attrs = G.nodes[node]
            report.layers.append(LayerValidation(
                node, name, attrs["type"], attrs.get("version"), attrs.get("line"),
                status="skipped", message=err.message))
        report.layers += skipped
        return report
    except _OverBudget as over:
        for node, name in zip(nodes, names, strict=True):
            attrs = G.nodes[node]
            res = LayerValidation(node, name, attrs["type"], attrs.get("version"),
                                  attrs.get("line"), status="skipped",
                                  inputs=dict(over.concrete))
            res.inferred_shape = over.outputs.get(node)
            res.message = (f"the whole model needs about {_size_text(over.cost)} for these "
                           f"input sizes (this layer's output {res.inferred_shape}), more "
                           f"than the memory budget of {_size_text(memory_budget)} "
                           "(--memory-budget)")
            report.layers.append(res)
        report.layers += skipped
        return report
    concrete = {name: _shape_text(a.shape) for name, a in run.inputs.items()}
    inferred = infer_shapes(G, shapes=concrete)
    for node, name in zip(nodes, names, strict=True):
        report.layers.append(_judge_whole(G, node, name, run, inferred, concrete))
    report.layers += skipped
    return report


class _OverBudget(Exception):
    def __init__(self, cost: int, concrete: dict[str, str], outputs: dict[str, str]) -> None:
        super().__init__(cost)
        self.cost, self.concrete, self.outputs = cost, concrete, outputs


def _whole_cost(G, nodes: list[str], concrete: dict[str, str]) -> tuple[int, dict[str, str]]:
    """Estimated bytes of one whole-model run with the Parameters at ``concrete``: the
    inputs, twice the gather outputs (the runtime's and the copy handed back), and twice
    the largest other tensor (OpenVINO reuses memory between layers); unknown sizes count
    as 0. Also the gather output shapes."""
    inferred = infer_shapes(G, shapes=concrete)
    wanted = set(nodes)
    total = biggest = 0
    outputs = {}
    for node, shapes_out in inferred.items():
        attrs = G._node.get(node)
        if attrs is None:  # a layer inside a body (its path id): no tensor of its own
            continue
        for port, shape in zip(attrs.get("outputs") or [], shapes_out, strict=False):
            count = math.prod(d.lo for d in shape.dims) if shape.is_static else 0
            width = _itemsize(_etype_of(G, node, port))
            if attrs["type"] == "Parameter":
                total += count * width
            elif node in wanted:
                total += 2 * count * width
            else:
                biggest = max(biggest, count * width)
        if node in wanted and shapes_out:
            outputs[node] = str(shapes_out[0])
    return total + 2 * biggest, outputs


def _run_whole(G, names: list[str], seed: int, threads: int | None,
               nodes: list[str] | None = None,
               memory_budget: int | None = None) -> runtime.ModelRun:
    """Run the whole model on the first of the size strategies that the runtime accepts
    (and whose estimated memory is inside ``memory_budget``)."""
    rng = np.random.default_rng(seed)
    candidates = [int(rng.integers(2, SPAN + 1)), *_static_sizes(G), 1]
    strategies: list[Callable[[Dimension], int]] = [
        *(_one_size(v) for v in dict.fromkeys(candidates)),
        _SharedByBounds(rng),
    ][:MAX_TRIES]
    error: RuntimeBridgeError | None = None
    tries = [(size_of, rank) for rank in DYNAMIC_RANKS for size_of in strategies][:4 * MAX_TRIES]
    if not _has_dynamic_rank(G):
        tries = [(size_of, 0) for size_of in strategies]
    checked: set[str] = set()
    for size_of, rank in tries:
        checked.clear()

        def make_input(name: str, shape_text: str, dtype: np.dtype, size_of=size_of, rank=rank):
            shape = PartialShape.parse(shape_text)
            if shape.rank is None:  # the model is reshaped to the array's shape
                shape = PartialShape.dynamic(rank)
            sizes = [size_of(d) for d in shape]
            if memory_budget is not None and name not in checked:
                _check_whole_budget(G, nodes or [], size_of, rank, memory_budget)
                checked.add(name)
            if np.dtype(dtype).kind in "iu":
                return np.zeros(sizes, dtype)
            return random_data(rng, sizes, dtype)

        try:
            with _xml_file(G) as xml_path:
                return runtime.run_model_with_outputs(xml_path, names, make_input,
                                                      threads=threads)
        except RuntimeBridgeError as err:
            error = err
    assert error is not None
    raise RuntimeBridgeError(f"the runtime ran the model on none of the input sizes tried: "
                             f"{error.message}", file=G.graph.get("xml_path")) from error


def _check_whole_budget(G, nodes: list[str], size_of, rank: int, budget: int) -> None:
    """Raise _OverBudget before any input is made when one run with the Parameters at
    the sizes ``size_of`` picks would need more than ``budget`` bytes."""
    concrete = {}
    for _, attrs in G.nodes(data=True):
        if attrs.get("type") != "Parameter":
            continue
        text = (attrs.get("data") or {}).get("shape", "")
        try:
            shape = PartialShape.parse(text) if text.strip() != "..." else None
        except ShapeError:
            continue
        if shape is None or shape.rank is None:
            shape = PartialShape.dynamic(rank or 1)
        concrete[attrs["name"]] = _shape_text([size_of(d) for d in shape])
    inputs = 0
    for node, attrs in G.nodes(data=True):
        if attrs.get("type") == "Parameter" and attrs["name"] in concrete:
            port = (attrs.get("outputs") or [{}])[0]
            count = math.prod(PartialShape.parse(concrete[attrs["name"]]).to_list())
            inputs += count * _itemsize(_etype_of(G, node, port))
    try:
        cost, outputs = _whole_cost(G, nodes, concrete)
    except (OvgatherError, ValueError):  # the runtime will say what is wrong
        cost, outputs = inputs, {}
    cost = max(cost, inputs)
    if cost > budget:
        raise _OverBudget(cost, concrete, outputs)


def _has_dynamic_rank(G: nx.MultiDiGraph) -> bool:
    return any(a.get("type") == "Parameter" and (a.get("data") or {}).get("shape", "").strip()
               == "..." for _, a in G.nodes(data=True))


def _static_sizes(G: nx.MultiDiGraph) -> list[int]:
    """The static dims of the Parameters, most frequent first: a dynamic dim often has
    to equal one of them (a batch dim shared with a static input)."""
    counts: dict[int, int] = {}
    for _, attrs in G.nodes(data=True):
        if attrs.get("type") == "Parameter":
            for d in (attrs.get("outputs") or [{}])[0].get("dims", ()):
                if d > 1:
                    counts[d] = counts.get(d, 0) + 1
    return sorted(counts, key=lambda d: (-counts[d], d))


def _one_size(v: int) -> Callable[[Dimension], int]:
    return lambda d: min(max(v, d.lo), d.hi)


class _SharedByBounds:
    """One random size per distinct (lower, upper) bounds."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.sizes = rng, {}

    def __call__(self, d: Dimension) -> int:
        return self.sizes.setdefault((d.lo, d.hi), pick(self.rng, d))


def _judge_whole(G, node, name, run, inferred, concrete) -> LayerValidation:
    attrs = G.nodes[node]
    res = LayerValidation(node, name, attrs["type"], attrs.get("version"), attrs.get("line"),
                          inputs=dict(concrete))
    out = run.outputs.get(name)
    if out is None:
        res.status = "error"
        res.message = "OpenVINO's model has no layer of this name after reading"
        return res
    res.runtime_shape = _shape_text(out.shape)
    res.inferred_shape = str(inferred[node][0])
    res.runtime_partial_shape = run.partial_shapes.get(name)
    inferred_shape = inferred[node][0]
    if not _fits(out.shape, inferred_shape):
        res.status = "mismatch"
        res.message = (f"the runtime's output shape is {res.runtime_shape}, ovgather infers "
                       f"{res.inferred_shape} for these input sizes")
    elif not inferred_shape.is_static:
        res.message = ("the runtime's shape lies inside ovgather's bounds (the sizes depend "
                       "on data values upstream)")
    return res


def _fits(shape: Sequence[int], inferred: PartialShape) -> bool:
    """A concrete shape inside a partial one: equal when static, within every interval
    otherwise (a data-dependent op upstream, such as NonZero, leaves bounds only)."""
    if inferred.dims is None:
        return True
    return len(shape) == len(inferred.dims) and all(
        d.lo <= n <= d.hi for n, d in zip(shape, inferred.dims, strict=True))


class _xml_file:
    """The graph's .xml path, or a temporary IR written from it when it has none."""

    def __init__(self, G: nx.MultiDiGraph) -> None:
        self.G, self.tmp = G, None

    def __enter__(self) -> str:
        path = self.G.graph.get("xml_path")
        if path and os.path.isfile(path):
            return path
        from ..ir import write_ir

        self.tmp = tempfile.TemporaryDirectory(prefix="ovgather-")
        path = os.path.join(self.tmp.name, "model.xml")
        write_ir(self.G, path)
        return path

    def __exit__(self, *exc: object) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()

