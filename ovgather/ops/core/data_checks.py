"""OpenVINO's validation of ops whose output is their data input's shape.

The scatter ops and ReverseSequence write a tensor of the data's shape, so a rule that
only returns that shape would accept inputs OpenVINO refuses: updates whose dims do not
match the indices and the data, a ``seq_lengths`` longer than the batch. These checks
follow OpenVINO's ``validate_and_infer_types`` and shape-inference headers of each op
(``scatter_base.cpp``, ``scatter_nd_base_shape_inference.hpp``,
``scatter_elements_update_shape_inference.hpp``, ``reverse_sequence_shape_inference.hpp``)
and run wherever the rule runs, in Loop, TensorIterator and If bodies too.

>>> from ovgather.shapes import PartialShape as P
>>> t = lambda s, e="f32": Tensor(P.parse(s), e)
>>> check_scatter_update([t("[?,15376]"), t("[1]", "i32"), t("[1,30752]"),
...                       Tensor(P.parse("[]"), "i32", ((0,), (0,)))], Attrs())
Traceback (most recent call last):
...
ovgather.errors.ShapeInferenceError: Updates shape must have appropriate dimensions ...
>>> str(reverse_sequence([t("[3..6,?,?]"), t("[4]", "i32")], Attrs())[0].shape)
'[4,?,?]'
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import ShapeInferenceError
from ...shapes import PartialShape
from .dims import normalize_axis
from .spec import Attrs, Rule, Trace
from .values import INT_TYPES, Tensor, exact_scalar

__all__ = ["check_scatter_update", "check_scatter_nd", "check_scatter_elements",
           "reverse_sequence", "validated"]


def _fail(rule: str, detail: str) -> None:
    raise ShapeInferenceError(f"{rule} ({detail})")


def _integral(t: Tensor, what: str) -> None:
    if t.etype not in ("dynamic", "undefined") and t.etype not in INT_TYPES:
        _fail(f"{what} element type must be of an integral number type", f"got {t.etype}")


def _one_element_axis(axis: Tensor) -> None:
    if not (axis.shape.compatible(PartialShape([])) or axis.shape.compatible(PartialShape([1]))):
        _fail("Axis input shape is required to be scalar or 1D tensor", f"got {axis.shape}")


def check_scatter_update(ins: list[Tensor], data: Attrs) -> None:
    """ScatterUpdate-3: ``rank(updates) = rank(indices) + rank(data) - 1`` and, with a
    known axis, updates dims ``data[:axis] + indices + data[axis+1:]`` (each compatible)."""
    d, idx, upd, axis_t = ins[0], ins[1], ins[2], ins[3]
    _integral(idx, "Indices")
    _integral(axis_t, "Axis")
    _one_element_axis(axis_t)
    rd, ri, ru = d.shape.rank, idx.shape.rank, upd.shape.rank
    if None not in (rd, ri, ru) and ru != ri + rd - 1:
        _fail("Updates rank is expected to be rank(indices) + rank(data) - 1",
              f"got rank(data) = {rd}, rank(indices) = {ri}, rank(updates) = {ru}")
    axis = exact_scalar(axis_t)
    if rd is None or axis is None:
        return
    axis = normalize_axis(axis, max(rd, 1))  # a scalar's axis is -1 or 0
    if ri is None or ru is None:
        return
    if rd == 0:  # OpenVINO reads updates dims past their rank
        if ri:
            _fail("Accessing out-of-range dimension", f"updates {upd.shape} of a scalar's scatter")
        return
    want = list(d.shape)[:axis] + list(idx.shape) + list(d.shape)[axis + 1:]
    if not all(u.compatible(w) for u, w in zip(upd.shape, want, strict=True)):
        _fail("Updates shape must have appropriate dimensions equal to indices and data "
              "dimensions", f"updates {upd.shape}, data {d.shape}, indices {idx.shape}, "
              f"axis {axis}")


def check_scatter_nd(ins: list[Tensor], data: Attrs) -> None:
    """ScatterNDUpdate-3/15: with ``k = indices[-1]`` known, ``k <= rank(data)`` and updates
    ``indices[:-1] + data[k:]`` (a rank-0 expectation also takes one element)."""
    d, idx, upd = ins[0], ins[1], ins[2]
    _integral(idx, "Indices")
    rd, ri, ru = d.shape.rank, idx.shape.rank, upd.shape.rank
    if rd == 0 or ri == 0:
        _fail("Indices rank and inputs_rank are expected to be at least 1",
              f"data {d.shape}, indices {idx.shape}")
    if rd is None or ri is None or not idx.shape[ri - 1].is_static:
        return
    k = idx.shape[ri - 1].length
    if k > rd:
        _fail("Last dimension of indices can be at most the rank of inputs",
              f"indices {idx.shape}, data {d.shape}")
    if ru is None:
        return
    expected = rd + ri - 1 - k
    if ru != expected and expected != 0:
        _fail("Rank of updates must be rank of inputs + rank of indices - last dimension of "
              "indices - 1", f"updates {upd.shape}, data {d.shape}, indices {idx.shape}")
    want = list(idx.shape)[:ri - 1] + list(d.shape)[k:]
    got = list(upd.shape)
    if len(got) < len(want) or not all(w.compatible(u) for w, u in zip(want, got, strict=False)):
        _fail("updates_shape must be indices_shape[:-1] + data_shape[indices_shape[-1]:]",
              f"updates {upd.shape}, data {d.shape}, indices {idx.shape}")


def check_scatter_elements(ins: list[Tensor], data: Attrs) -> None:
    """ScatterElementsUpdate-3/12: indices of the data's rank and the updates' shape, an
    axis inside the data's rank."""
    d, idx, upd, axis_t = ins[0], ins[1], ins[2], ins[3]
    _integral(idx, "Indices")
    _one_element_axis(axis_t)
    rd, ri = d.shape.rank, idx.shape.rank
    if rd is not None and ri is not None and rd != ri:
        _fail("Indices rank and data rank are required to be equal",
              f"got {ri} and {rd}")
    if not idx.shape.compatible(upd.shape):
        _fail("Indices and updates input shapes are required to be equal",
              f"got {idx.shape} and {upd.shape}")
    axis = exact_scalar(axis_t)
    if rd is not None and axis is not None:
        normalize_axis(axis, max(rd, 1))


def reverse_sequence(ins: list[Tensor], data: Attrs,
                     trace: Trace | None = None) -> list[Tensor]:
    """ReverseSequence-1: data of rank 2 or more, ``seq_lengths`` of rank 1 whose length
    merges with the data's batch dim; the output is the data's shape with that merged dim."""
    d, lengths = ins[0], ins[1]
    rd, rl = d.shape.rank, lengths.shape.rank
    if rd is not None and rd < 2:
        _fail("Data input rank should be equal or greater than 2", f"got {d.shape}")
    if rl is not None and rl != 1:
        _fail("Sequence lengths rank must be equal to 1", f"got {lengths.shape}")
    if rd is None and data.int("seq_axis", 1) < 0:
        _fail("Rank must be static in order to normalize negative axis",
              f"seq_axis {data.int('seq_axis', 1)}")
    if rd is None or rl is None:
        return [Tensor(d.shape, d.etype)]
    batch = normalize_axis(data.int("batch_axis", 0), rd, "batch_axis")
    normalize_axis(data.int("seq_axis", 1), rd, "seq_axis")
    merged = d.shape[batch].merge(lengths.shape[0])
    if merged is None:
        _fail("Sequence lengths input size is not equal to batch axis dimension of data input",
              f"seq_lengths {lengths.shape}, data {d.shape}")
    dims = list(d.shape)
    dims[batch] = merged
    return [Tensor(PartialShape.of(tuple(dims)), d.etype)]


def validated(check: Callable[[list[Tensor], Attrs], None], rule: Rule, inputs: int) -> Rule:
    """``rule`` run after OpenVINO's ``check`` of its ``inputs`` inputs."""

    def op(ins: list[Tensor], data: Attrs, trace: Trace | None = None) -> list[Tensor]:
        if len(ins) >= inputs:
            check(ins, data)
        return rule(ins, data, trace)

    return op
