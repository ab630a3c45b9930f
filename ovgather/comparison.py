"""``compare``: two models on the OpenVINO CPU plugin, fed the same seeded inputs, their
outputs compared tensor by tensor.

Matching follows polygraphy's ``run --compare``:

- inputs by name: an input of A pairs with the input of B that answers to one of its names
  (the Parameter's friendly name or a tensor name, as OpenVINO shows them). Every input
  must find its partner, of the same element type and of partial shapes that can meet;
  otherwise the models cannot be fed alike and a CompareError says which input;
- outputs as polygraphy's ``find_str_in_iterable`` pairs them: by a tensor name in common;
  for an output of A without one, by a similar name (one name part of the other, case
  aside), else the output of B at the same position, as long as that output of B has no
  partner yet (``matched_by`` says which). What still has no partner is reported
  ``only in A`` / ``only in B`` and fails the comparison (polygraphy only warns).

The inputs are the ones ``validate --whole-model`` makes (``validate.runner.feeds``: small
random floats, zeros for integer and boolean inputs, a valid index, mask and token id at
any size), at the size it picks for each dynamic dim (``validate.sizes.one_size_tries``),
trying its next sizes while a model refuses one. An output passes when every element
satisfies ``|a - b| <= atol + rtol * |b|`` (numpy's ``isclose``; NaN equals NaN), with
the shapes equal.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import CompareError, RuntimeBridgeError
from .runtime.outputs import RunnableModel, Tensor
from .shapes import PartialShape
from .validate.runner import feeds
from .validate.sizes import one_size_tries

__all__ = ["compare", "CompareReport", "OutputComparison", "STATUSES", "RTOL", "ATOL"]

#: The verdicts of one output; all but ``ok`` fail the comparison.
STATUSES = ("ok", "differs", "only in A", "only in B")
#: Default tolerances (polygraphy's).
RTOL, ATOL = 1e-5, 1e-5


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
    """Both models' paths, the inputs fed (A's input name -> B's and the concrete shape)
    and a verdict per output."""

    a: str | None
    b: str | None
    seed: int
    rtol: float
    atol: float
    inputs: list[dict[str, str]] = field(default_factory=list)
    outputs: list[OutputComparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.status == "ok" for o in self.outputs)

    @property
    def summary(self) -> dict[str, int]:
        counts = {"outputs": len(self.outputs), **dict.fromkeys(STATUSES, 0)}
        for o in self.outputs:
            counts[o.status] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "seed": self.seed, "rtol": self.rtol,
                "atol": self.atol, "inputs": self.inputs, "summary": self.summary,
                "outputs": [o.to_dict() for o in self.outputs]}


def compare(
    a: Any,
    b: Any,
    *,
    shapes: Mapping[str, str] | None = None,
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
    threads: int | None = None,
) -> CompareReport:
    """Run models ``a`` and ``b`` (each an IR ``.xml`` path, an ``.onnx`` path or a graph
    from ``read_ir``) on the same inputs and compare every output (see the module
    docstring for how inputs and outputs pair up and what passes).

    ``shapes`` reshapes the inputs of both models first, by A's input names, as
    ``openvino.Model.reshape`` does (``{"x": "[2,?,8]"}``); dynamic dims left get the
    sizes validate picks. A missing file, inputs that cannot be paired or a model the CPU
    plugin cannot compile raise an OvgatherError; differences are in the report.
    """
    ma, mb = RunnableModel(a, threads), RunnableModel(b, threads)
    pairs = _pair_inputs(ma, mb)
    if shapes:
        _reshape(ma, mb, pairs, shapes)
    params, types = _sizes_to_pick(ma, mb, pairs)
    ma.compile()
    mb.compile()
    ran_a, ran_b, sizes = _run_both(ma, mb, pairs, params, types, seed)
    report = CompareReport(ma.path, mb.path, seed, rtol, atol, inputs=[
        {"name": ma.inputs[i].name, "name_b": mb.inputs[j].name, "shape": str(sizes[i])}
        for i, j in pairs])
    for i, j, how in _pair_outputs(ma.outputs, mb.outputs):
        report.outputs.append(_verdict(ma.outputs, mb.outputs, ran_a, ran_b, i, j, how,
                                       rtol, atol))
    return report


def _where(model: RunnableModel) -> str:
    return os.path.basename(model.path) if model.path else "the model"


def _pair_inputs(ma: RunnableModel, mb: RunnableModel) -> list[tuple[int, int]]:
    """``(A's input position, B's)`` for every input, paired by name; CompareError when
    an input of either model has no partner."""
    pairs, taken = [], set()
    for i, t in enumerate(ma.inputs):
        found = [j for j, u in enumerate(mb.inputs) if j not in taken and t.names & u.names]
        if not found:
            raise CompareError(
                f"the two models must have inputs of the same names, but input '{t.name}' of "
                f"{_where(ma)} has no input of that name in {_where(mb)} (its inputs: "
                f"{sorted(u.name for u in mb.inputs)})", file=ma.path)
        taken.add(found[0])
        pairs.append((i, found[0]))
    extra = [u.name for j, u in enumerate(mb.inputs) if j not in taken]
    if extra:
        raise CompareError(
            f"the two models must have inputs of the same names, but {_where(mb)} has "
            f"inputs {extra} that {_where(ma)} does not (its inputs: "
            f"{sorted(t.name for t in ma.inputs)})", file=mb.path)
    return pairs


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


def _run_both(ma: RunnableModel, mb: RunnableModel, pairs: Sequence[tuple[int, int]],
              params: Mapping[int, PartialShape], types: Mapping[int, str], seed: int
              ) -> tuple[list[np.ndarray], list[np.ndarray], dict[int, PartialShape]]:
    """Both models' outputs at the first sizes both run, and those sizes."""
    order_b = [i for _, i in sorted((j, i) for i, j in pairs)]
    error: RuntimeBridgeError | None = None
    tries = one_size_tries(params, np.random.default_rng(seed))
    for k, (_rank, sizes) in enumerate(tries):
        feed = feeds(sizes, types, seed, k)
        try:
            ran_a = ma.run([feed[i] for i in range(len(ma.inputs))])
            ran_b = mb.run([feed[i] for i in order_b])
        except RuntimeBridgeError as err:
            error = err
            continue
        return ran_a, ran_b, sizes
    if error is None:  # pragma: no cover - one_size_tries always yields
        raise RuntimeBridgeError("no input sizes to try", file=ma.path)
    raise RuntimeBridgeError(f"the two models ran on none of the input sizes tried: "
                             f"{error.message}", file=error.file) from error


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
    elif x.dtype.kind == "f" and (nans := int(np.isnan(x).sum())):
        res.message = (f"{nans} of {x.size} elements are NaN in both models: those prove "
                       "nothing (integer inputs are zeros; an all-zero attention mask masks "
                       "every position)")
    return res


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _shape(array: np.ndarray) -> str:
    return "[" + ",".join(map(str, array.shape)) + "]"


def differences(x: np.ndarray, y: np.ndarray, rtol: float, atol: float
                ) -> tuple[float, float, int]:
    """The largest absolute difference of two arrays of one shape, the largest relative
    one (to ``|y|``, over the elements where ``y`` is not zero), and how many elements
    break ``|x - y| <= atol + rtol * |y|`` (NaN matches NaN, an infinity the same one;
    a NaN or an infinity against a number makes the largest difference ``inf``).

    >>> differences(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-5, 1e-5)
    (0.5, 0.2, 1)
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(close & ~np.isfinite(a), 0.0, np.abs(a - b))
        rel = np.where((diff == 0) | (b == 0), 0.0, diff / np.abs(b))
    max_abs = float(np.max(diff, initial=0.0))
    max_rel = float(np.max(rel, initial=0.0))
    return (max_abs if not math.isnan(max_abs) else math.inf,
            max_rel if not math.isnan(max_rel) else math.inf, int(close.size - close.sum()))
