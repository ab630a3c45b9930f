"""Recurrent cells and sequences: RNNCell-1, GRUCell-3, LSTMCell-1/4, RNNSequence-5,
GRUSequence-5 and LSTMSequence-5.

A cell takes ``X [batch, input]``, the states ``H`` (and ``C`` for LSTM) ``[batch, hidden]``,
the weights ``W [gates * hidden, input]``, ``R [gates * hidden, hidden]`` and the bias
``B [gates * hidden]`` (GRU with ``linear_before_reset``: ``gates + 1``); the gates are 1
for RNN, 3 for GRU, 4 for LSTM. Each state output is ``[batch, hidden]``, the batch merged
from ``X`` and the states, the hidden size from the states and ``R`` (or, when those leave
it unknown, from ``W`` and ``R`` divided by the gates).

A sequence adds the time and the directions: ``X [batch, seq, input]``, states
``[batch, dirs, hidden]``, ``seq_lengths [batch]``, ``W``/``R`` ``[dirs, gates * hidden, ...]``
and ``B [dirs, gates * hidden]``, with ``dirs`` 1 (forward, reverse) or 2 (bidirectional).
The outputs are ``Y [batch, dirs, seq, hidden]`` and the states ``[batch, dirs, hidden]``.

>>> from ovgather.shapes import PartialShape as P
>>> shapes = [P.parse(s) for s in ("[?,8]", "[2,?]", "[12,8]", "[12,3]", "[12]")]
>>> [str(s) for s in cell_shapes(shapes, gates=4, states=1)]
['[2,3]']
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import divided
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["cell_shapes", "sequence_shapes", "SPECS"]

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _ranks(shapes: list[PartialShape], ranks: tuple[int, ...]) -> None:
    for i, (shape, rank) in enumerate(zip(shapes, ranks, strict=False)):
        if shape.rank not in (None, rank):
            raise ShapeInferenceError(f"input {i} must be {rank}-D, but got {shape}")


def _at(shape: PartialShape, i: int) -> Dimension:
    return DYNAMIC if shape.dims is None else shape.dims[i]


def _merge(d: Dimension, other: Dimension | None, what: str) -> Dimension:
    m = None if other is None else d.merge(other)
    if m is None:
        raise ShapeInferenceError(f"the inputs must agree on the {what}, but got {d} and "
                                  f"{other if other is not None else 'no multiple'}")
    return m


def _hidden_from_weights(hidden: Dimension, weights: list[PartialShape], bias: PartialShape,
                         axis: int, gates: int, bias_gates: int) -> Dimension:
    """Check W, R and B against a static hidden size, or take it from W and R."""
    if hidden.is_static:
        for shape, n in ((weights[0], gates), (weights[1], gates), (bias, bias_gates)):
            if shape.dims is not None and not shape.dims[axis].compatible(hidden * n):
                raise ShapeInferenceError(
                    f"W, R and B must hold the gates times the hidden size {hidden}, but got "
                    f"{shape}")
        return hidden
    for shape in weights:
        if shape.dims is not None and shape.dims[0].is_static:
            hidden = _merge(hidden, divided(shape.dims[axis], gates), "hidden size")
    return hidden


def _batch_hidden(shapes: list[PartialShape], batched: list[PartialShape], states: int,
                  w_at: int, axis: int) -> tuple[Dimension, Dimension]:
    """The batch merged over X and ``batched``, the hidden size over the states and R
    (``axis``: where the states and R hold it)."""
    batch, hidden = _at(shapes[0], 0), _at(shapes[1], axis)
    for shape in batched:
        batch = _merge(batch, _at(shape, 0), "batch")
    for shape in shapes[2:1 + states] + [shapes[w_at + 1]]:
        hidden = _merge(hidden, _at(shape, axis), "hidden size")
    return batch, hidden


def cell_shapes(shapes: list[PartialShape], gates: int, states: int,
                bias_gates: int | None = None) -> list[PartialShape]:
    _ranks(shapes, (2,) * (1 + states) + (2, 2, 1))
    batch, hidden = _batch_hidden(shapes, shapes[1:1 + states], states, 1 + states, 1)
    w, r, b = shapes[1 + states:4 + states]
    hidden = _hidden_from_weights(hidden, [w, r], b, 0, gates, bias_gates or gates)
    return [PartialShape.of((batch, hidden))] * states


def sequence_shapes(shapes: list[PartialShape], gates: int, states: int, dirs: int,
                    bias_gates: int | None = None) -> list[PartialShape]:
    _ranks(shapes, (3,) * (1 + states) + (1, 3, 3, 2))
    batch, hidden = _batch_hidden(shapes, shapes[1:2 + states], states, 2 + states, 2)
    seq = _at(shapes[0], 1)
    w, r, b = shapes[2 + states:5 + states]
    directions = Dimension.static(dirs)
    for shape in shapes[1:1 + states]:
        directions = directions.merge(_at(shape, 1)) if directions is not None else None
    for shape in (w, r, b):
        directions = directions.merge(_at(shape, 0)) if directions is not None else None
    if directions is None:
        raise ShapeInferenceError(f"the inputs must have {dirs} direction(s), but got "
                                  f"{', '.join(str(s) for s in shapes)}")
    hidden = _hidden_from_weights(hidden, [w, r], b, 1, gates, bias_gates or gates)
    return ([PartialShape.of((batch, directions, seq, hidden))]
            + [PartialShape.of((batch, directions, hidden))] * states)


def _bias_gates(kind: str, attrs: Attrs) -> int:
    linear = kind == "GRU" and attrs.bool("linear_before_reset", False)
    return GATES[kind] + linear


def _cell(kind: str):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        states = 2 if kind == "LSTM" else 1
        shapes = cell_shapes([t.shape for t in ins], GATES[kind], states,
                             _bias_gates(kind, attrs))
        return [Tensor(s, ins[0].etype) for s in shapes]

    return rule


def _sequence(kind: str):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        direction = attrs.text("direction", "forward").lower()
        if direction not in DIRECTIONS:
            raise ShapeInferenceError(
                f"direction must be forward, reverse or bidirectional, but got '{direction}'")
        states = 2 if kind == "LSTM" else 1
        shapes = sequence_shapes([t.shape for t in ins], GATES[kind], states,
                                 DIRECTIONS[direction], _bias_gates(kind, attrs))
        return [Tensor(s, ins[0].etype) for s in shapes]

    return rule


SPECS = specs_of({"RNNCell": _cell("RNN"), "GRUCell": _cell("GRU"), "LSTMCell": _cell("LSTM"),
                  "RNNSequence": _sequence("RNN"), "GRUSequence": _sequence("GRU"),
                  "LSTMSequence": _sequence("LSTM")})
