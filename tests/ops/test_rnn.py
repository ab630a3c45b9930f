"""The recurrent cells and sequences against OpenVINO, every output: RNNCell-1, GRUCell-3
(with and without linear_before_reset), LSTMCell-1/4, RNNSequence-5, GRUSequence-5 and
LSTMSequence-5 in every direction, on seeded random sizes whose dims mostly agree
(static, intervals, dynamic, dynamic rank, wrong ranks, clashing sizes)."""

from __future__ import annotations

import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset4 as ov4
import openvino.opset5 as ov5
import pytest
from op_diff import Case, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import random_dim, random_shape

from ovgather.ops.rnn import DIRECTIONS, GATES

CELLS = {("RNNCell", 1): (ov3.rnn_cell, "RNN"), ("GRUCell", 3): (ov3.gru_cell, "GRU"),
         ("LSTMCell", 1): (ov1.lstm_cell, "LSTM"), ("LSTMCell", 4): (ov4.lstm_cell, "LSTM")}
SEQUENCES = {"RNNSequence": (ov5.rnn_sequence, "RNN"), "GRUSequence": (ov5.gru_sequence, "GRU"),
             "LSTMSequence": (ov5.lstm_sequence, "LSTM")}


def _text(rng, dims) -> str:
    if rng.random() < 0.06:
        return random_shape(rng)
    return "[" + ",".join(str(d) if rng.random() < 0.88 else random_dim(rng)
                          for d in dims) + "]"


def _sizes(rng):
    return (rng.choice((1, 2, "?")), rng.choice((3, 4, 8)), rng.choice((2, 3, 5)))


def _case(op, version, make, shapes, hidden, attrs, kw):
    def build():
        args = [ov_param(s) for s in shapes]
        if op.endswith("Sequence"):
            args[len(args) - 4] = ov_param(shapes[len(args) - 4], ov.Type.i32)
        return make(*args, hidden, **kw)

    ins = [tensor(s) for s in shapes]
    return Case(build, op, version, ins, dict(attrs, hidden_size=str(hidden)),
                label=f"{shapes} {attrs}")


def cell_case(rng, op: str, version: int) -> Case:
    make, kind = CELLS[op, version]
    batch, inputs, hidden = _sizes(rng)
    linear = kind == "GRU" and rng.random() < 0.5
    gates = GATES[kind]
    dims = [[batch, inputs]] + [[batch, hidden]] * (2 if kind == "LSTM" else 1)
    dims += [[gates * hidden, inputs], [gates * hidden, hidden], [(gates + linear) * hidden]]
    shapes = [_text(rng, d) for d in dims]
    kw = {"linear_before_reset": linear} if kind == "GRU" else {}
    if kind == "RNN":
        kw = {"activations": ["tanh"], "activations_alpha": [], "activations_beta": []}
    attrs = {"linear_before_reset": str(linear).lower()} if kind == "GRU" else {}
    return _case(op, version, make, shapes, hidden, attrs, kw)


@pytest.mark.parametrize("op,version", list(CELLS), ids=[f"{o}-{v}" for o, v in CELLS])
def test_cells_infer_what_openvino_infers(op, version):
    agree_on_every_output(f"{op}{version}", cell_case, 700, op, version)


def sequence_case(rng, op: str) -> Case:
    make, kind = SEQUENCES[op]
    batch, inputs, hidden = _sizes(rng)
    direction = rng.choice(list(DIRECTIONS))
    dirs, seq = DIRECTIONS[direction], rng.choice((1, 5, "?"))
    if rng.random() < 0.05:
        dirs = 3 - dirs
    linear = kind == "GRU" and rng.random() < 0.5
    gates = GATES[kind]
    dims = [[batch, seq, inputs]] + [[batch, dirs, hidden]] * (2 if kind == "LSTM" else 1)
    dims += [[batch], [dirs, gates * hidden, inputs], [dirs, gates * hidden, hidden],
             [dirs, (gates + linear) * hidden]]
    shapes = [_text(rng, d) for d in dims]
    kw = {"linear_before_reset": linear} if kind == "GRU" else {}
    attrs = {"direction": direction}
    if kind == "GRU":
        attrs["linear_before_reset"] = str(linear).lower()
    return _case(op, 5, lambda *a: make(*a, direction, **kw), shapes, hidden, attrs, {})


@pytest.mark.parametrize("op", list(SEQUENCES))
def test_sequences_infer_what_openvino_infers(op):
    agree_on_every_output(op, sequence_case, 700, op)
