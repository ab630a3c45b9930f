"""Prove the gather layers of a model against the OpenVINO CPU runtime (docs/cli/validate.md).

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

``whole_model.validate_whole_model`` compiles the whole IR instead and compares only the
gathers' shapes; ``all_layers.prove_all_layers`` proves every layer's shape.

Statuses of a layer: ``ok``; ``mismatch`` (a shape or a value disagrees with the
runtime); ``invalid`` (ovgather's rules reject the layer, or its constant indices are
outside what the runtime defines); ``error`` (the runtime refused or failed on a layer
ovgather accepts); ``skipped`` (cannot be run: an element type NumPy cannot hold, an
axis that is not a constant, a layer inside a TensorIterator, Loop or If body, which
cannot get an extra model output: those are listed last, by path). Only ``mismatch``,
``invalid`` and ``error`` are problems; so is ``crashed`` (the runtime's process died
running the layer alone: ``run_isolated``).

The library never prints; ``progress`` callbacks let the CLI draw a bar.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from .. import graph as g
from .. import runtime
from ..element_types import numpy_dtype
from ..errors import (
    ReferenceInputError,
    ShapeError,
    UnsupportedOpError,
    UsageError,
)
from ..infer import infer_shapes, shapes_reaching
from ..infer.readable import unread_layers
from ..ops.core import registry
from ..ops.core.inputs import InputMaker, NoValidInputs, Params, random_data
from ..ops.core.spec import Attrs, OpSpec
from ..ops.core.values import Tensor
from ..ops.reference import for_layer
from ..runtime.core import saturated
from ..shapes import PartialShape
from .memory import DEFAULT_MEMORY_BUDGET, itemsize, port_etype, size_text
from .report import LayerValidation, ValidationReport

__all__ = [
    "validate",
    "gather_layers",
    "body_gathers",
    "body_gather_rows",
]

#: The most elements of any input or output tensor validation allocates for a layer.
MAX_ELEMENTS = 1 << 26
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
    inner = {key for path_id, path_name, _, _ in body_gather_rows(G)
             for key in (path_id, path_name)}
    missing = [name for name in names if name not in by_key and name not in inner]
    if missing:
        known = ", ".join([G.nodes[n]["name"] for n in found]
                          + [name for _, name, _, _ in body_gather_rows(G)]) or "none"
        raise UsageError(
            f"--layer must name a gather layer of the model, but {', '.join(missing)} "
            f"names none (gather layers: {known})", file=G.graph.get("xml_path"))
    return list(dict.fromkeys(by_key[name] for name in names if name in by_key))


def body_gather_rows(G: nx.MultiDiGraph) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``(path id, path name, owner, attrs)`` of each gather layer inside a body."""
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
    for path_id, path_name, owner, attrs in body_gather_rows(G):
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
            raise NoValidInputs("skipped", f"its tensors need about {size_text(cost)}, more "
                                           f"than the memory budget of {size_text(self.total)} "
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


def _input_tensors(G, node, shapes) -> list[tuple[Tensor, str | None, str | None]]:
    """(tensor, producer node, producer type) per input port of ``node``, in order; a
    Const after the data and the indices (an axis) carries its value, as in the walk."""
    out = []
    for u, from_port, shape in shapes_reaching(G, node, shapes):
        port = g.output_port(G, u, from_port)
        value = None
        if G.nodes[u]["type"] in ("Const", "Constant") and len(out) >= 2:
            flat = tuple(int(v) for v in _const_array(G, u).reshape(-1))
            value = (flat, flat)
        tensor = Tensor(PartialShape.dynamic() if shape is None else shape,
                        port_etype(G, u, port), value)
        out.append((tensor, u, G.nodes[u]["type"]))
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
        widths = [itemsize(plan.ins[0].etype), itemsize(plan.ins[1].etype)]
        counts = [math.prod(int(d) for d in s) for s in sizes]
        cost = sum(c * w for c, w in zip(counts, widths + widths[:1], strict=False))
        plan.budget.reserve(plan, 3 * cost)


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
    if run.crashed:
        res.status, res.message = "crashed", f"the runtime crashed here: {run.error}"
        return
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
    why_i32 = None if ref is None else saturated(ref, run.output, ("the reference",
                                                                     "the runtime"), past=True)
    if ref is not None:
        if ref.shape != run.output.shape:
            problems.append(f"the reference gives shape {_shape_text(ref.shape)}, the runtime "
                            f"{res.runtime_shape}")
        else:
            res.max_error = _max_error(ref, run.output)
            if res.max_error != 0.0 and not _values_agree(ref, run.output) \
                    and why_i32 is None:  # i64 past i32: not proven, below
                problems.append(f"values differ from the reference (largest error "
                                f"{res.max_error:g})")
    if problems:
        notes = [res.message] if res.message else []
        res.status, res.message = "mismatch", "; ".join(problems + notes)
    elif why_i32 is not None:
        res.status, res.message = "skipped", f"not proven: {why_i32}"


# -- running, isolated ---------------------------------------------------------------------------
#: What the worker process runs a group of cases with (``runtime.run_cases``; a test puts
#: one there that crashes the process on a marked case).
RUN_CASES: Callable[..., list[runtime.OpRun]] = runtime.run_cases


def run_isolated(cases: Sequence[runtime.OpCase], *, batch_size: int, threads: int | None,
                 progress: Callable[[int], None] | None = None) -> list[runtime.OpRun]:
    """``runtime.run_cases`` in the runtime's worker process: a group the runtime crashes
    on is split until the cases that crash it alone are found; each of those is an
    ``OpRun`` with ``crashed`` naming the group it ran in, the others run as usual."""
    runs = runtime.run_split(runtime.shared_workers(), RUN_CASES, cases,
                             batch_size=batch_size, threads=threads, workers=1)
    out = []
    for case, run in zip(cases, runs, strict=True):
        if isinstance(run, runtime.RuntimeCrash):
            group = [c.label for c in run.group]
            others = [name for name in group if name != case.label]
            beside = (f"; it ran in a group of {len(group)} with {', '.join(others[:8])}"
                      f"{' …' if len(others) > 8 else ''}, which run without it"
                      if others else "")
            run = runtime.OpRun(error=f"{run.message} running this layer alone{beside}",
                                crashed=True)
        out.append(run)
    if progress is not None:
        progress(len(cases))
    return out


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
    report = ValidationReport(G.graph.get("xml_path"), seed, unread=unread_layers(G))
    nodes = gather_layers(G, layers)
    inner = body_gather_rows(G)
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
                run_isolated, [p.case for p in runnable], batch_size=size,
                threads=threads, progress=progress)))
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
        try:
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
        except BaseException:  # Ctrl-C or an error: the chunks still queued never start
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    report.layers = [p.result for p in plans] + skipped
    report.peak_bytes = budget.peak
    return report


def _chunk_size(n_layers: int, batch_size: int) -> int:
    """Layers per compiled model: at most ``batch_size`` and ``CHUNK_LAYERS``, and few
    enough that ``WORKERS`` models compile side by side, unless that would make models
    smaller than ``MIN_CHUNK_LAYERS``."""
    per_worker = max(MIN_CHUNK_LAYERS, -(-n_layers // WORKERS))
    return max(1, min(int(batch_size), CHUNK_LAYERS, per_worker))
