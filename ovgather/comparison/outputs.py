"""``compare``: two models on the OpenVINO CPU plugin, fed the same inputs, their outputs
compared tensor by tensor.

Matching follows polygraphy's ``run --compare``:

- inputs: first the pairs ``input_map`` names (A's input name -> B's), then by name (an
  input of A pairs with the input of B that answers to one of its names: the Parameter's
  friendly name or a tensor name, as OpenVINO shows them), then, with ``by_position``,
  each input left with the input of B at its own position. Every input must find its
  partner, of the same element type and of partial shapes that can meet; otherwise the
  models cannot be fed alike and a CompareError says which input;
- outputs as polygraphy's ``find_str_in_iterable`` pairs them: by a tensor name in common;
  for an output of A without one, by a similar name (one name part of the other, case
  aside), else the output of B at the same position, as long as that output of B has no
  partner yet (``matched_by`` says which). What still has no partner is reported
  ``only in A`` / ``only in B`` and fails the comparison (polygraphy only warns).

The inputs are the user's (``inputs``: arrays or ``.npy`` files by A's input name, or one
``.npz``) and, for the others, the ones ``runtime.feeding`` makes from what each input
feeds in the graph (valid indices for a table, ones with some padding for a mask, ``0, 1,
…`` for positions, small random floats), at the size validate picks for each dynamic dim
(``validate.sizes.one_size_tries``), trying its next sizes while a model refuses one.

An output passes when the shapes are equal and every element satisfies ``|a - b| <= atol
+ rtol * |b|`` (numpy's ``isclose``; NaN equals NaN); integers are compared exactly in
their own type (never through float64, where 2**53 + 1 rounds to 2**53). An output that
passes but is NaN or infinite everywhere in both models, or constant in both, proves
nothing: it is ``nothing proven``, which fails unless ``allow_unproven``.

Memory: the outputs are compared where the runtime wrote them (no copies), a million
elements at a time; one run's estimated bytes (inputs, both models' outputs and twice each
model's largest other tensor, from OpenVINO's shape inference at the sizes picked) must
fit ``memory_budget`` before anything is allocated.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..element_types import element_type_name, numpy_dtype
from ..errors import CompareError, RuntimeBridgeError
from ..runtime.core import cpu_config
from ..runtime.feeding import Feed, feeds_at, make_array, merge_feeds
from ..runtime.outputs import RunnableModel, Tensor
from ..shapes import Dimension, PartialShape
from ..validate.memory import DEFAULT_MEMORY_BUDGET, size_text
from ..validate.sizes import one_size_tries
from .inputs import load_inputs

__all__ = ["compare", "CompareReport", "OutputComparison", "STATUSES",
           "RTOL", "ATOL", "differences", "unproven"]

#: The verdicts of one output; all but ``ok`` fail the comparison (``nothing proven``
#: passes when allowed).
STATUSES = ("ok", "differs", "nothing proven", "only in A", "only in B")
#: Default tolerances (polygraphy's).
RTOL, ATOL = 1e-5, 1e-5
#: Elements compared at a time: the comparison's own memory stays a few tens of MB.
CHUNK = 1 << 20
#: What to do about an output that proves nothing.
HINT = ("feed inputs that exercise the model (--input NAME=FILE.npy, or inputs= in "
        "Python) or accept it (--allow-unproven)")


def precision() -> str:
    """The inference precision every compile asks the CPU plugin for (``f32``)."""
    return str(cpu_config().get("INFERENCE_PRECISION_HINT", "f32"))


@dataclass
class OutputComparison:
    """One output of A against its partner in B (``name_b``), or alone."""

    name: str
    name_b: str | None
    status: str = "ok"
    matched_by: str | None = "name"
    shape: str | None = None
    shape_b: str | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; an infinite difference (a NaN or an infinity against a number)
        is ``null``, as JSON has no infinity (the message says what differs)."""
        return {"name": self.name, "name_b": self.name_b, "status": self.status,
                "matched_by": self.matched_by, "shape": self.shape, "shape_b": self.shape_b,
                "max_abs": _finite(self.max_abs), "max_rel": _finite(self.max_rel),
                "message": self.message}


@dataclass
class CompareReport:
    """Both models' paths, the inputs fed (A's input name -> B's, the concrete shape and
    what values; ``arrays`` holds the arrays themselves) and a verdict per output.
    ``precision`` is the inference precision both models ran in; ``allow_unproven`` lets
    ``nothing proven`` pass."""

    a: str | None
    b: str | None
    seed: int
    rtol: float
    atol: float
    inputs: list[dict[str, str]] = field(default_factory=list)
    outputs: list[OutputComparison] = field(default_factory=list)
    precision: str = "f32"
    allow_unproven: bool = False
    #: the arrays fed, by A's input name (not in the JSON): to run them again elsewhere
    arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        passing = ("ok", "nothing proven") if self.allow_unproven else ("ok",)
        return all(o.status in passing for o in self.outputs)

    @property
    def summary(self) -> dict[str, int]:
        counts = {"outputs": len(self.outputs), **dict.fromkeys(STATUSES, 0)}
        for o in self.outputs:
            counts[o.status] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "seed": self.seed, "rtol": self.rtol,
                "atol": self.atol, "precision": self.precision,
                "allow_unproven": self.allow_unproven, "inputs": self.inputs,
                "summary": self.summary, "outputs": [o.to_dict() for o in self.outputs]}


def compare(
    a: Any,
    b: Any,
    *,
    shapes: Mapping[str, str] | None = None,
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
    threads: int | None = None,
    inputs: Mapping[str, Any] | str | os.PathLike | None = None,
    input_map: Mapping[str, str] | None = None,
    by_position: bool = False,
    allow_unproven: bool = False,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> CompareReport:
    """Run models ``a`` and ``b`` (each an IR ``.xml`` path, an ``.onnx`` path or a graph
    from ``read_ir``) on the same inputs and compare every output (see the module
    docstring for how inputs and outputs pair up and what passes).

    ``shapes`` reshapes the inputs of both models first, by A's input names, as
    ``openvino.Model.reshape`` does (``{"x": "[2,?,8]"}``); dynamic dims left get the
    sizes validate picks. ``inputs`` gives the values of some or all inputs, by A's input
    names: NumPy arrays or ``.npy`` paths, or one ``.npz`` path for all (its keys the
    names); ``input_map`` pairs inputs of different names (``{"x": "input.1"}``);
    ``by_position`` pairs the inputs left by their position. A missing file, inputs that
    cannot be paired or fed, a run over ``memory_budget`` bytes or a model the CPU plugin
    cannot compile raise an OvgatherError; differences are in the report.
    """
    ma, mb = RunnableModel(a, threads), RunnableModel(b, threads)
    pairs = _pair_inputs(ma, mb, input_map or {}, by_position)
    if shapes:
        _reshape(ma, mb, pairs, shapes)
    params, types = _sizes_to_pick(ma, mb, pairs)
    given = _given(ma, load_inputs(inputs) if inputs is not None else {}, params, types)
    params = _pinned(params, given)
    ma.compile()
    mb.compile()
    ran_a, ran_b, sizes, fed, feeds = _run_both(ma, mb, pairs, params, types, given, seed,
                                                memory_budget)
    report = CompareReport(ma.path, mb.path, seed, rtol, atol, precision=precision(),
                           allow_unproven=allow_unproven)
    report.inputs = [{"name": ma.inputs[i].name, "name_b": mb.inputs[j].name,
                      "shape": str(sizes[i]),
                      "values": given[i][1] if i in given else feeds[i].describe()}
                     for i, j in pairs]
    report.arrays = {ma.inputs[i].name: fed[i] for i, _ in pairs}
    for i, j, how in _pair_outputs(ma.outputs, mb.outputs):
        report.outputs.append(_verdict(ma.outputs, mb.outputs, ran_a, ran_b, i, j, how,
                                       rtol, atol))
    return report


def _where(model: RunnableModel) -> str:
    return os.path.basename(model.path) if model.path else "the model"


def _find(tensors: Sequence[Tensor], name: str) -> int | None:
    return next((k for k, t in enumerate(tensors) if name in t.names), None)


def _pair_inputs(ma: RunnableModel, mb: RunnableModel, input_map: Mapping[str, str],
                 by_position: bool) -> list[tuple[int, int]]:
    """``(A's input position, B's)`` for every input of A, in order: by ``input_map``, by
    name, then (``by_position``) by position; CompareError when an input of either model
    has no partner."""
    partner: dict[int, int] = {}
    for name_a, name_b in input_map.items():
        i, j = _find(ma.inputs, name_a), _find(mb.inputs, name_b)
        if i is None or j is None:
            model, name, which = (ma, name_a, "A") if i is None else (mb, name_b, "B")
            raise CompareError(
                f"--map pairs an input of A with one of B, but {_where(model)} (model "
                f"{which}) has no input '{name}' (its inputs: "
                f"{sorted(t.name for t in model.inputs)})", file=model.path)
        if i in partner or j in partner.values():
            raise CompareError(f"--map pairs each input once, but '{name_a}' or "
                               f"'{name_b}' is paired twice", file=ma.path)
        partner[i] = j
    for i, t in enumerate(ma.inputs):
        found = [j for j, u in enumerate(mb.inputs)
                 if i not in partner and j not in partner.values() and t.names & u.names]
        if found:
            partner[i] = found[0]
    if by_position:
        for i in range(min(len(ma.inputs), len(mb.inputs))):
            if i not in partner and i not in partner.values():
                partner[i] = i
    hint = "; pair them with --map A_NAME=B_NAME or --by-position"
    for i, t in enumerate(ma.inputs):
        if i not in partner:
            raise CompareError(
                f"every input of A needs a partner in B, but input '{t.name}' of "
                f"{_where(ma)} has none in {_where(mb)} (its inputs: "
                f"{sorted(u.name for u in mb.inputs)}){hint}", file=ma.path)
    extra = [u.name for j, u in enumerate(mb.inputs) if j not in partner.values()]
    if extra:
        raise CompareError(
            f"every input of B needs a partner in A, but {_where(mb)} has inputs {extra} "
            f"that {_where(ma)} does not (its inputs: "
            f"{sorted(t.name for t in ma.inputs)}){hint}", file=mb.path)
    return sorted(partner.items())


def _reshape(ma: RunnableModel, mb: RunnableModel, pairs: Sequence[tuple[int, int]],
             shapes: Mapping[str, str]) -> None:
    """``shapes`` (by any name of an input of A) on the paired inputs of both models."""
    by_a, by_b = {}, {}
    for name, text in shapes.items():
        hit = [(i, j) for i, j in pairs if name in ma.inputs[i].names]
        if not hit:
            raise CompareError(f"--shape names an input of the models, but '{name}' names "
                               f"none (inputs: {sorted(t.name for t in ma.inputs)})",
                               file=ma.path)
        i, j = hit[0]
        by_a[i], by_b[j] = text, text
    ma.reshape(by_a)
    mb.reshape(by_b)


def _sizes_to_pick(ma: RunnableModel, mb: RunnableModel, pairs: Sequence[tuple[int, int]]
                   ) -> tuple[dict[int, PartialShape], dict[int, str]]:
    """Each input's partial shape as both models allow it and its element type, by A's
    input position; CompareError when the two cannot be fed the same array."""
    params, types = {}, {}
    for i, j in pairs:
        t, u = ma.inputs[i], mb.inputs[j]
        if t.element_type != u.element_type:
            raise CompareError(f"an input must have the same element type in both models, but "
                               f"'{t.name}' is {t.element_type} in {_where(ma)} and "
                               f"{u.element_type} in {_where(mb)}", file=mb.path)
        merged = PartialShape.parse(t.shape).merge(PartialShape.parse(u.shape))
        if merged is None:
            raise CompareError(f"an input must take the same shapes in both models, but "
                               f"'{t.name}' is {t.shape} in {_where(ma)} and {u.shape} in "
                               f"{_where(mb)} (--shape sets both)", file=mb.path)
        params[i], types[i] = merged, t.element_type
    return params, types


def _dtype(etype: str) -> np.dtype:
    """The NumPy type of an input of element type ``etype`` (float32 for the types NumPy
    lacks: ``runtime.core.input_tensor`` converts)."""
    return np.dtype(numpy_dtype(element_type_name(etype)) or "float32")


def _given(ma: RunnableModel, arrays: Mapping[str, np.ndarray],
           params: Mapping[int, PartialShape], types: Mapping[int, str]
           ) -> dict[int, tuple[np.ndarray, str]]:
    """The user's arrays by A's input position, each with its description; CompareError
    for a name that is no input, an element type or a shape the input does not take."""
    given = {}
    for name, array in arrays.items():
        i = _find(ma.inputs, name)
        if i is None:
            raise CompareError(f"--input names an input of A, but '{name}' names none (its "
                               f"inputs: {sorted(t.name for t in ma.inputs)})", file=ma.path)
        want = numpy_dtype(element_type_name(types[i]))
        if want is not None and array.dtype != np.dtype(want):
            raise CompareError(f"input '{name}' is {types[i]} ({want}), but the array given "
                               f"is {array.dtype}", file=ma.path)
        shape = PartialShape([int(d) for d in array.shape])
        if params[i].merge(shape) is None:
            raise CompareError(f"input '{name}' takes shape {params[i]}, but the array given "
                               f"has shape {shape}", file=ma.path)
        given[i] = (np.ascontiguousarray(array), "given")
    return given


def _pinned(params: Mapping[int, PartialShape], given: Mapping[int, tuple[np.ndarray, str]]
            ) -> dict[int, PartialShape]:
    """``params`` with each given input's shape, and each dynamic dim of another input
    set to the size a given input of the same rank has at that axis (where that input's
    dim is dynamic too and the size fits): ``input_ids`` given ``[2,7]`` makes the
    ``attention_mask [?,?]`` fed with it ``[2,7]``."""
    out = dict(params)
    for i, (array, _) in given.items():
        out[i] = PartialShape(list(array.shape))
    for i, shape in params.items():
        if i in given or shape.dims is None:
            continue
        dims = list(shape.dims)
        for axis, d in enumerate(dims):
            if d.lo == d.hi:
                continue
            for g, (array, _) in given.items():
                other = params[g].dims
                if other and len(other) == len(dims) and other[axis].lo != other[axis].hi \
                        and d.lo <= array.shape[axis] <= d.hi:
                    dims[axis] = Dimension.static(int(array.shape[axis]))
                    break
        out[i] = PartialShape.of(tuple(dims))
    return out


def _feeds(ma: RunnableModel, mb: RunnableModel, pairs: Sequence[tuple[int, int]],
           shapes: Sequence[Sequence[int]], order_b: Sequence[int]) -> dict[int, Feed]:
    """What each input is fed at ``shapes`` (by A's position), suiting what it feeds in
    both models."""
    fa = feeds_at(ma.model, shapes)
    fb = feeds_at(mb.model, [shapes[i] for i in order_b])
    return {i: merge_feeds(fa[i], fb[j]) for i, j in pairs}


def _run_both(ma: RunnableModel, mb: RunnableModel, pairs: Sequence[tuple[int, int]],
              params: Mapping[int, PartialShape], types: Mapping[int, str],
              given: Mapping[int, tuple[np.ndarray, str]], seed: int, budget: int
              ) -> tuple[list[np.ndarray], list[np.ndarray], dict[int, PartialShape],
                         list[np.ndarray], dict[int, Feed]]:
    """Both models' outputs (the runtime's own memory) at the first sizes both run and
    fit ``budget``, those sizes, the arrays fed (in A's input order) and what each was
    made as."""
    order_b = [i for _, i in sorted((j, i) for i, j in pairs)]
    error: Exception | None = None
    tries = one_size_tries(params, np.random.default_rng(seed))
    for k, (_rank, sizes) in enumerate(tries):
        shapes = [sizes[i].to_list() for i in range(len(ma.inputs))]
        over = _over_budget(ma, mb, shapes, order_b, types, budget)
        if over is not None:
            error = over
            continue
        feeds = _feeds(ma, mb, pairs, shapes, order_b)
        rng = np.random.default_rng([seed, k])
        feed = [given[i][0] if i in given else
                make_array(feeds[i], shapes[i], _dtype(types[i]), rng)
                for i in range(len(ma.inputs))]
        try:
            ran_a = ma.run(feed, copy=False)
            ran_b = mb.run([feed[i] for i in order_b], copy=False)
        except RuntimeBridgeError as err:
            error = err
            continue
        return ran_a, ran_b, sizes, feed, feeds
    if isinstance(error, CompareError):
        raise error
    if error is None:  # pragma: no cover - one_size_tries always yields
        raise RuntimeBridgeError("no input sizes to try", file=ma.path)
    raise RuntimeBridgeError(f"the two models ran on none of the input sizes tried: "
                             f"{error}", file=getattr(error, "file", None)) from error


def _over_budget(ma: RunnableModel, mb: RunnableModel, shapes: Sequence[Sequence[int]],
                 order_b: Sequence[int], types: Mapping[int, str], budget: int
                 ) -> CompareError | None:
    """Why one run at ``shapes`` would need more than ``budget`` bytes, or None: the
    inputs, each model's outputs and twice its largest other tensor (OpenVINO's shape
    inference on a copy reshaped to them; a model it cannot reshape counts its inputs)."""
    cost = sum(math.prod(s) * _dtype(types[i]).itemsize for i, s in enumerate(shapes))
    for model, order in ((ma, range(len(shapes))), (mb, order_b)):
        run = model.run_bytes([shapes[i] for i in order])
        if run is not None:
            cost += run[0] + 2 * run[1]
    if cost <= budget:
        return None
    return CompareError(f"one run of both models at these input sizes "
                        f"({', '.join(map(str, map(list, shapes)))}) needs about "
                        f"{size_text(cost)}, more than the memory budget of "
                        f"{size_text(budget)} (--memory-budget; --shape sets smaller sizes)",
                        file=ma.path)


def _similar(a: Tensor, b: Tensor) -> bool:
    """One name of either is part of a name of the other, case aside (polygraphy's fuzzy
    step: ``logits`` and ``Logits:0``)."""
    return any(x.lower() in y.lower() or y.lower() in x.lower()
               for x in a.names for y in b.names)


def _pair_outputs(outs_a: Sequence[Tensor], outs_b: Sequence[Tensor]
                  ) -> list[tuple[int | None, int | None, str | None]]:
    """``(A's output position, B's, how)`` for every output of both: first every exact
    name, then for each output of A left, in order, a similar name, then the output of B
    at its position (``how``: ``name``, ``similar name``, ``position``; None alone)."""
    partner: dict[int, tuple[int, str]] = {}
    paired: set[int] = set()

    def pair(i: int, j: int, how: str) -> None:
        partner[i] = (j, how)
        paired.add(j)

    for i, t in enumerate(outs_a):
        named = [j for j, u in enumerate(outs_b) if j not in paired and t.names & u.names]
        if named:
            pair(i, named[0], "name")
    for i, t in enumerate(outs_a):
        if i in partner:
            continue
        similar = [j for j, u in enumerate(outs_b) if j not in paired and _similar(t, u)]
        if similar:
            pair(i, similar[0], "similar name")
        elif i < len(outs_b) and i not in paired:
            pair(i, i, "position")
    return [(i, *partner.get(i, (None, None))) for i in range(len(outs_a))] + [
        (None, j, None) for j in range(len(outs_b)) if j not in paired]


def _verdict(outs_a: Sequence[Tensor], outs_b: Sequence[Tensor], ran_a: Sequence[np.ndarray],
             ran_b: Sequence[np.ndarray], i: int | None, j: int | None, how: str | None,
             rtol: float, atol: float) -> OutputComparison:
    if i is None:
        assert j is not None
        return OutputComparison(outs_b[j].name, outs_b[j].name, "only in B", None,
                                shape_b=_shape(ran_b[j]),
                                message="no output of A has this name")
    if j is None:
        return OutputComparison(outs_a[i].name, None, "only in A", None, shape=_shape(ran_a[i]),
                                message="no output of B has this name")
    res = OutputComparison(outs_a[i].name, outs_b[j].name, matched_by=how,
                           shape=_shape(ran_a[i]), shape_b=_shape(ran_b[j]))
    x, y = ran_a[i], ran_b[j]
    if x.shape != y.shape:
        res.status = "differs"
        res.message = f"the shapes differ: {res.shape} in A, {res.shape_b} in B"
        return res
    res.max_abs, res.max_rel, bad = differences(x, y, rtol, atol)
    if bad:
        res.status = "differs"
        res.message = (f"{bad} of {x.size} elements differ by more than atol {atol:g} + "
                       f"rtol {rtol:g} * |B|")
    elif (why := unproven(x, y)) is not None:
        res.status = "nothing proven"
        res.message = f"{why}: equal, but that proves nothing; {HINT}"
    elif x.dtype.kind == "f" and (nans := _count_nan(x)):
        res.message = f"{nans} of {x.size} elements are NaN in both models"
    return res


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _shape(array: np.ndarray) -> str:
    return "[" + ",".join(map(str, array.shape)) + "]"


def _flat_chunks(*arrays: np.ndarray) -> Iterator[tuple[np.ndarray, ...]]:
    """The arrays (of one size) flattened, :data:`CHUNK` elements at a time (views of a
    contiguous array: nothing copied but a chunk)."""
    flat = [a.reshape(-1) for a in arrays]
    for start in range(0, flat[0].size, CHUNK):
        yield tuple(f[start:start + CHUNK] for f in flat)


def _is_integral(x: np.ndarray) -> bool:
    return x.dtype.kind in "iub"


def differences(x: np.ndarray, y: np.ndarray, rtol: float, atol: float
                ) -> tuple[float, float, int]:
    """The largest absolute difference of two arrays of one shape, the largest relative
    one (to ``|y|``, over the elements where ``y`` is not zero), and how many elements
    break ``|x - y| <= atol + rtol * |y|`` (NaN matches NaN, an infinity the same one;
    a NaN or an infinity against a number makes the largest difference ``inf``).

    Integers (and booleans) are compared exactly in their own values, never rounded to
    float64: the largest absolute difference is then an int. Strings are equal or not
    (a difference is ``inf``).

    >>> differences(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-5, 1e-5)
    (0.5, 0.2, 1)
    >>> differences(np.array([2**53]), np.array([2**53 + 1]), 0, 0)
    (1, 1.1102230246251565e-16, 1)
    """
    if x.size == 0:
        return 0.0, 0.0, 0
    if x.dtype.kind in "OUS" or y.dtype.kind in "OUS":  # strings: equal or not
        bad = sum(int(np.count_nonzero(cx != cy)) for cx, cy in _flat_chunks(x, y))
        return (math.inf, math.inf, bad) if bad else (0.0, 0.0, 0)
    if _is_integral(x) and _is_integral(y):
        return _int_differences(x, y, rtol, atol)
    max_abs = max_rel = 0.0
    bad = 0
    for cx, cy in _flat_chunks(x, y):
        a, b = cx.astype(np.float64), cy.astype(np.float64)
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            diff = np.where(close & ~np.isfinite(a), 0.0, np.abs(a - b))
            rel = np.where((diff == 0) | (b == 0), 0.0, diff / np.abs(b))
        max_abs = max(max_abs, _nan_inf(float(np.max(diff))))
        max_rel = max(max_rel, _nan_inf(float(np.max(rel))))
        bad += int(close.size - np.count_nonzero(close))
    return max_abs, max_rel, bad


def _nan_inf(value: float) -> float:
    return math.inf if math.isnan(value) else value


def _int_differences(x: np.ndarray, y: np.ndarray, rtol: float, atol: float
                     ) -> tuple[int, float, int]:
    """:func:`differences` for integers: ``|x - y|`` exact in uint64 (the modular
    difference of the larger minus the smaller), the bound ``atol + rtol * |y|`` rounded
    down to a whole number, so that two integers pass exactly when they are equal while
    that bound is below 1."""
    common = np.result_type(x, y)
    if common.kind == "b":
        common = np.dtype(np.uint8)
    in_python = common.kind not in "iu"  # uint64 against a signed type: Python ints
    if in_python:
        common = np.dtype(object)
    max_abs, max_rel, bad = 0, 0.0, 0
    for cx, cy in _flat_chunks(x, y):
        a, b = cx.astype(common), cy.astype(common)
        if in_python:
            diff, size = np.abs(a - b), np.abs(b)
        else:
            ua, ub = a.astype(np.uint64), b.astype(np.uint64)
            diff = np.where(a >= b, ua - ub, ub - ua)
            size = np.where(b < 0, np.uint64(0) - ub, ub)
        limit = np.floor(atol + rtol * size.astype(np.float64))
        if in_python:
            close = diff <= limit
        else:  # a bound of 2**64 or more passes every difference
            close = (limit >= 2.0**64) | (diff <= np.minimum(limit, 1.8e19).astype(np.uint64))
        bad += int(close.size - np.count_nonzero(close))
        max_abs = max(max_abs, int(diff.max()))
        nonzero = size != 0
        if np.any(nonzero & (diff != 0)):
            rel = diff[nonzero].astype(np.float64) / size[nonzero].astype(np.float64)
            max_rel = max(max_rel, float(rel.max()))
    return max_abs, max_rel, bad


def _count_nan(x: np.ndarray) -> int:
    return sum(int(np.count_nonzero(np.isnan(c))) for (c,) in _flat_chunks(x))


def unproven(x: np.ndarray, y: np.ndarray) -> str | None:
    """Why two equal outputs prove nothing, or None: NaN or infinite everywhere in both,
    or (two elements or more) one value everywhere in both.

    >>> unproven(np.full(4, np.nan), np.full(4, np.nan))
    'every element is NaN or infinite in both models'
    >>> unproven(np.zeros(3), np.zeros(3)), unproven(np.arange(3), np.arange(3))
    ('every element is 0 in both models', None)
    """
    if x.size == 0:
        return None
    if x.dtype.kind == "f" and y.dtype.kind == "f" and not _any_finite(x) \
            and not _any_finite(y):
        return "every element is NaN or infinite in both models"
    if x.size < 2:
        return None
    first_x, first_y = x.reshape(-1)[0], y.reshape(-1)[0]
    if _all_equal(x, first_x) and _all_equal(y, first_y):
        where = " in both models" if first_x == first_y else f" in A, {_num(first_y)} in B"
        return f"every element is {_num(first_x)}{where}"
    return None


def _num(value: np.generic) -> str:
    """A number as a person reads it: integers whole, floats in ``%g``."""
    v = value.item()
    return f"{v:g}" if isinstance(v, float) else str(v)


def _any_finite(x: np.ndarray) -> bool:
    return any(np.isfinite(c).any() for (c,) in _flat_chunks(x))


def _all_equal(x: np.ndarray, value: Any) -> bool:
    return all(bool(np.all(c == value)) for (c,) in _flat_chunks(x))
