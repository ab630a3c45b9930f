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

An empty output (a zero-size dim) proves nothing too, and so does an int64 output holding
a value at the edge of the i32 range (2147483647 or -2147483648): the CPU plugin computes
i64 in i32, saturating, so two equal outputs there may both be wrong.

OpenVINO compiles and runs both models in the runtime worker process (``remote``): a
native crash of the CPU plugin (SIGSEGV on an index far out of range, say) ends that
process, not ``compare``; the outputs are then ``crashed`` (nothing compared, the other
model's shapes where it ran) and ``CompareReport.crashed`` names the model, the signal and
the inputs fed. Before running, a given integer array that indexes a table of known size
(``runtime.outputs.index_bounds``) must lie in it: one out of range is a CompareError.

Memory: the outputs are compared where the runtime wrote them (no copies), a million
elements at a time; one run's estimated bytes (inputs, both models' outputs and twice each
model's largest other tensor, from OpenVINO's shape inference at the sizes picked) must
fit ``memory_budget`` before anything is allocated.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..element_types import element_type_name, numpy_dtype
from ..errors import CompareError, RuntimeBridgeError
from ..runtime.core import cpu_config
from ..runtime.feeding import Feed, feeds_at, make_array, merge_feeds
from ..runtime.outputs import RunnableModel, Tensor, index_bounds, ir_bytes
from ..shapes import Dimension, PartialShape
from ..validate.memory import DEFAULT_MEMORY_BUDGET, size_text
from ..validate.sizes import one_size_tries
from . import remote
from .detections import detection_verdict
from .guards import check_aliases, check_indices, distinct_names, fed_words
from .inputs import load_inputs
from .values import CHUNK, I32_EDGES, _count_nan, differences, saturated, status_counts, unproven

__all__ = ["compare", "CompareReport", "OutputComparison", "STATUSES", "CRASHED", "CHUNK",
           "I32_EDGES", "RTOL", "ATOL", "differences", "unproven", "saturated"]

#: The verdicts of one output; all but ``ok`` fail the comparison (``nothing proven``
#: passes when allowed). ``crashed`` (a model's runtime process died: nothing compared)
#: is counted in ``summary`` only when some output has it.
STATUSES = ("ok", "differs", "nothing proven", "only in A", "only in B")
CRASHED = "crashed"
#: Default tolerances (polygraphy's).
RTOL, ATOL = 1e-5, 1e-5
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
    #: each model whose runtime process died (a native crash of the CPU plugin): ``model``
    #: (``A`` or ``B``), ``file``, ``signal`` (``SIGSEGV``; "" when an exit code ended
    #: it), ``stage`` (``compiling`` or ``running``), ``inputs`` (what it was fed, in
    #: words: ``x[2,8] (given), …``) and ``message``; in the JSON only when not empty
    crashed: list[dict[str, str]] = field(default_factory=list)
    #: the two files as the report names them: the shortest distinct path suffixes
    labels: tuple[str, str] = ("A", "B")

    @property
    def ok(self) -> bool:
        passing = ("ok", "nothing proven") if self.allow_unproven else ("ok",)
        return all(o.status in passing for o in self.outputs)

    @property
    def summary(self) -> dict[str, int]:
        """How many outputs have each status (``crashed`` only when some have it)."""
        return status_counts("outputs", self.outputs, STATUSES)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document; ``crashed`` (see the field) only when a model crashed."""
        doc = {"a": self.a, "b": self.b, "seed": self.seed, "rtol": self.rtol,
               "atol": self.atol, "precision": self.precision,
               "allow_unproven": self.allow_unproven, "inputs": self.inputs,
               "summary": self.summary, "outputs": [o.to_dict() for o in self.outputs]}
        if self.crashed:
            doc["crashed"] = self.crashed
        return doc


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
    ma.label, mb.label = distinct_names(ma.path, mb.path)
    pairs = _pair_inputs(ma, mb, input_map or {}, by_position)
    reshape_a, reshape_b = _reshape(ma, mb, pairs, shapes) if shapes else ({}, {})
    params, types = _sizes_to_pick(ma, mb, pairs)
    arrays = load_inputs(inputs, memory_budget=memory_budget) if inputs is not None else {}
    given = _given(ma, arrays, params, types)
    params = _pinned(params, given)
    report = CompareReport(ma.path, mb.path, seed, rtol, atol, precision=precision(),
                           allow_unproven=allow_unproven, labels=(ma.label, mb.label))
    with remote.Session() as session:
        sides = (_Side("A", ma, a, reshape_a, session), _Side("B", mb, b, reshape_b, session))
        _open_sides(sides, session)  # a model the plugin refuses fails before any input
        sizes, fed, feeds = _run_both(ma, mb, sides, pairs, params, types, given, seed,
                                      memory_budget)
        report.inputs = [{"name": ma.inputs[i].name, "name_b": mb.inputs[j].name,
                          "shape": str(sizes[i]),
                          "values": given[i][1] if i in given else feeds[i].describe()}
                         for i, j in pairs]
        report.arrays = {ma.inputs[i].name: fed[i] for i, _ in pairs}
        plan = _pair_outputs(ma.outputs, mb.outputs)
        crashed = [side for side in sides if side.crash is not None]
        if crashed:
            report.crashed = [side.crash_record() for side in crashed]
            report.outputs = [_crashed(ma.outputs, mb.outputs, sides, i, j, how)
                              for i, j, how in plan]
        else:
            report.outputs = session.call_both(remote.judge_outputs, sides[0].key,
                                               sides[1].key, _judge(ma), plan, rtol, atol)
    return report


def _open_sides(sides: Sequence[_Side], session: remote.Session) -> None:
    """Compile both models at once in the worker; when its process dies, each in turn,
    so that the crash is the side's that caused it."""
    try:
        session.open_together([(side.key, remote.open_model, side.open_args())
                               for side in sides])
    except remote.RuntimeCrash:
        for side in sides:
            side.open()


class _Side:
    """One model as the runtime worker holds it: opened (compiled) there, run there, and
    what became of it when its process died (``crash``, at ``stage``, fed ``fed``)."""

    def __init__(self, which: str, model: RunnableModel, source: Any,
                 reshape: Mapping[int, str], session: remote.Session) -> None:
        self.which, self.model, self.session = which, model, session
        self.source = os.fspath(source) if isinstance(source, (str, os.PathLike)) \
            else ir_bytes(source)
        self.reshape = dict(reshape)
        self.key = session.key(which)
        self.crash: remote.RuntimeCrash | None = None
        self.stage, self.fed = "", ""
        self.shapes: list[str] | None = None

    def open_args(self) -> tuple[Any, ...]:
        return self.source, self.model.path, self.model.threads, self.reshape

    def open(self) -> None:
        try:
            self.session.open(self.key, remote.open_model, *self.open_args())
        except remote.RuntimeCrash as crash:
            self.crash, self.stage = crash, "compiling"

    def run(self, feed: Sequence[np.ndarray], fed: str) -> None:
        """Run on ``feed`` (a crash is kept, a refusal raised as RuntimeBridgeError)."""
        self.shapes = None
        if self.crash is not None and self.stage == "compiling":
            return
        self.crash = None
        try:
            largest = self.model.largest_tensor([np.shape(f) for f in feed])
            self.shapes = self.session.call(remote.run_model, self.key, list(feed), largest)
        except remote.RuntimeCrash as crash:
            self.crash, self.stage, self.fed = crash, "running", fed

    def crash_record(self) -> dict[str, str]:
        assert self.crash is not None
        on = f" on inputs {self.fed}" if self.stage == "running" else ""
        return {"model": self.which, "file": self.model.path or "",
                "signal": self.crash.signal_name, "stage": self.stage, "inputs": self.fed,
                "message": f"model {self.which} ({_where(self.model)}) "
                           f"{remote.crash_words(self.crash)} while {self.stage}{on}"}


def _crashed(outs_a: Sequence[Tensor], outs_b: Sequence[Tensor], sides: Sequence[_Side],
             i: int | None, j: int | None, how: str | None) -> OutputComparison:
    """An output pair where a model crashed: ``crashed``, nothing compared, the shapes the
    other model computed where it ran."""
    a, b = sides
    res = OutputComparison(outs_a[i].name if i is not None else outs_b[j].name,
                           outs_b[j].name if j is not None else None, CRASHED,
                           how if i is not None and j is not None else None)
    if i is not None and a.shapes is not None:
        res.shape = a.shapes[i]
    if j is not None and b.shapes is not None:
        res.shape_b = b.shapes[j]
    res.message = "; ".join(side.crash_record()["message"] for side in sides
                            if side.crash is not None) + ": nothing compared"
    return res


def _where(model: RunnableModel) -> str:
    label = getattr(model, "label", None)
    return label or (os.path.basename(model.path) if model.path else "the model")


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
             shapes: Mapping[str, str]) -> tuple[dict[int, str], dict[int, str]]:
    """``shapes`` (by any name of an input of A) on the paired inputs of both models; the
    shapes set, by input position in A and in B."""
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
    return by_a, by_b


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


#: What arrays an input of a type NumPy lacks takes, by the type name's first letter
#: (bf16, f8e4m3, nf4: floats; u4, i4, u1: integers; string: strings).
_KINDS = {"b": "f", "f": "f", "n": "f", "u": "iu", "i": "iu", "s": "US"}


def _given(ma: RunnableModel, arrays: Mapping[str, np.ndarray],
           params: Mapping[int, PartialShape], types: Mapping[int, str]
           ) -> dict[int, tuple[np.ndarray, str]]:
    """The user's arrays by A's input position, each with its description; CompareError
    for a name that is no input, two names of one input, an element type or a shape the
    input does not take (strings, objects or booleans for a number of a type NumPy lacks,
    such as bf16, too)."""
    given = {}
    check_aliases(list(arrays), {n: i for n in arrays if (i := _find(ma.inputs, n))
                                 is not None}, [t.name for t in ma.inputs], ma.path)
    for name, array in arrays.items():
        i = _find(ma.inputs, name)
        if i is None:
            raise CompareError(f"--input names an input of A, but '{name}' names none (its "
                               f"inputs: {sorted(t.name for t in ma.inputs)})", file=ma.path)
        want = numpy_dtype(element_type_name(types[i]))
        if want is not None and array.dtype != np.dtype(want):
            raise CompareError(f"input '{name}' is {types[i]} ({want}), but the array given "
                               f"is {array.dtype}", file=ma.path)
        kinds = _KINDS.get(element_type_name(types[i])[:1], "fiub")
        if want is None and array.dtype.kind not in kinds:
            words = {"f": "floating-point numbers", "iu": "integers", "US": "strings"}
            raise CompareError(f"input '{name}' is {types[i]}, which takes "
                               f"{words.get(kinds, 'numbers')}, but the array given is "
                               f"{array.dtype}", file=ma.path)
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


def _run_both(ma: RunnableModel, mb: RunnableModel, sides: Sequence[_Side],
              pairs: Sequence[tuple[int, int]], params: Mapping[int, PartialShape],
              types: Mapping[int, str], given: Mapping[int, tuple[np.ndarray, str]],
              seed: int, budget: int
              ) -> tuple[dict[int, PartialShape], list[np.ndarray], dict[int, Feed]]:
    """Run both models (in the runtime worker: ``sides``) at the first sizes both run and
    fit ``budget``: those sizes, the arrays fed (in A's input order) and what each was
    made as. A given array of indices out of the range of a table it indexes is refused
    first (CompareError); a model whose process dies is kept as crashed (``sides``)."""
    order_b = [i for _, i in sorted((j, i) for i, j in pairs)]
    error: Exception | None = None
    tries = one_size_tries(params, np.random.default_rng(seed))
    for k, (_rank, sizes) in enumerate(tries):
        shapes = [sizes[i].to_list() for i in range(len(ma.inputs))]
        over = _over_budget(ma, mb, shapes, order_b, types, budget)
        if over is not None:
            error = over
            continue
        _check_given_indices(ma, mb, pairs, shapes, order_b, given)
        feeds = _feeds(ma, mb, pairs, shapes, order_b)
        rng = np.random.default_rng([seed, k])
        feed = [given[i][0] if i in given else
                make_array(feeds[i], shapes[i], _dtype(types[i]), rng)
                for i in range(len(ma.inputs))]
        fed = fed_words([t.name for t in ma.inputs], [_shape(f) for f in feed],
                        [given[i][1] if i in given else feeds[i].describe()
                         for i in range(len(feed))])
        fed_b = fed_words([mb.inputs[j].name for j in range(len(mb.inputs))],
                          [_shape(feed[i]) for i in order_b],
                          [given[i][1] if i in given else feeds[i].describe()
                           for i in order_b])
        try:
            sides[0].run(feed, fed)
            sides[1].run([feed[i] for i in order_b], fed_b)
        except RuntimeBridgeError as err:
            error = err
            continue
        return sizes, feed, feeds
    if isinstance(error, CompareError):
        raise error
    if error is None:  # pragma: no cover - one_size_tries always yields
        raise RuntimeBridgeError("no input sizes to try", file=ma.path)
    raise RuntimeBridgeError(f"the two models ran on none of the input sizes tried: "
                             f"{error}", file=getattr(error, "file", None)) from error


def _check_given_indices(ma: RunnableModel, mb: RunnableModel,
                         pairs: Sequence[tuple[int, int]], shapes: Sequence[Sequence[int]],
                         order_b: Sequence[int], given: Mapping[int, tuple[np.ndarray, str]]
                         ) -> None:
    """CompareError when a given integer array holds an index outside a table it indexes
    in either model (``runtime.outputs.index_bounds``), before anything runs."""
    ints = {i: array for i, (array, _) in given.items() if array.dtype.kind in "iu"}
    if not ints:
        return
    bounds_a = index_bounds(ma.model, shapes)
    in_b = index_bounds(mb.model, [shapes[i] for i in order_b])
    bounds_b: list[tuple[int, int, str] | None] = [None] * len(bounds_a)
    for i, j in pairs:
        bounds_b[i] = in_b[j]
    check_indices(ints, [t.name for t in ma.inputs], [bounds_a, bounds_b], ma.path)


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


def _judge(ma: RunnableModel) -> Any:
    """:func:`_verdict`, told which outputs of A a DetectionOutput makes: those are
    compared as sets of detections (``detections.py``)."""
    found = frozenset(k for k, r in enumerate(ma.model.get_results())
                      if r.input_value(0).get_node().get_type_name() == "DetectionOutput")
    return functools.partial(_verdict, detections=found) if found else _verdict


def _verdict(outs_a: Sequence[Tensor], outs_b: Sequence[Tensor], ran_a: Sequence[np.ndarray],
             ran_b: Sequence[np.ndarray], i: int | None, j: int | None, how: str | None,
             rtol: float, atol: float, detections: frozenset[int] = frozenset()
             ) -> OutputComparison:
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
    if i in detections and x.shape[-1:] == y.shape[-1:] == (7,):
        return detection_verdict(res, x, y, rtol, atol)
    if x.shape != y.shape:
        res.status = "differs"
        res.message = f"the shapes differ: {res.shape} in A, {res.shape_b} in B"
        return res
    res.max_abs, res.max_rel, bad = differences(x, y, rtol, atol)
    if bad:
        res.status = "differs"
        res.message = (f"{bad} of {x.size} elements differ by more than atol {atol:g} + "
                       f"rtol {rtol:g} * |B|")
    elif (why := unproven(x, y) or saturated(x, y)) is not None:
        res.status = "nothing proven"
        res.message = f"{why}: equal, but that proves nothing; {HINT}"
    elif x.dtype.kind == "f" and (nans := _count_nan(x)):
        res.message = f"{nans} of {x.size} elements are NaN in both models"
    return res


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _shape(array: np.ndarray) -> str:
    return "[" + ",".join(map(str, array.shape)) + "]"
