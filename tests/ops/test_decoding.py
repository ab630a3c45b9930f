"""CTCGreedyDecoder-1, CTCGreedyDecoderSeqLen-6, CTCLoss-4 and GatherTree-1 against
OpenVINO, every output port, on seeded random shapes whose shared dims mostly agree
(static, intervals, dynamic, dynamic rank, wrong ranks)."""

from __future__ import annotations

import openvino as ov
import openvino.opset1 as ov1
import openvino.opset4 as ov4
import openvino.opset6 as ov6
import pytest
from op_diff import Case, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import dims_of, random_dim, random_shape


def _shape(rng, dims: list[str]) -> str:
    """Mostly ``dims``, sometimes a dim replaced, sometimes any shape at all."""
    if rng.random() < 0.08:
        return random_shape(rng)
    return "[" + ",".join(d if rng.random() < 0.85 else random_dim(rng) for d in dims) + "]"


def _sizes(rng, n: int) -> list[str]:
    return [rng.choice(("1", "2", "3", "?", random_dim(rng))) for _ in range(n)]


def _case(build, op, version, shapes, etypes):
    ins = [tensor(s, e) for s, e in zip(shapes, etypes, strict=True)]
    return Case(lambda: build(*[ov_param(s, getattr(ov.Type, e))
                                for s, e in zip(shapes, etypes, strict=True)]),
                op, version, ins, label=str(shapes))


def ctc_greedy_case(rng) -> Case:
    t, n, c = _sizes(rng, 3)
    shapes = [_shape(rng, [t, n, c]), _shape(rng, [t, n])]
    return _case(ov1.ctc_greedy_decoder, "CTCGreedyDecoder", 1, shapes, ("f32", "f32"))


def ctc_seq_len_case(rng) -> Case:
    n, t, c = _sizes(rng, 3)
    shapes = [_shape(rng, [n, t, c]), _shape(rng, [n])]
    etypes = ["f32", "i32"]
    if rng.random() < 0.6:
        shapes.append(rng.choice(("[]", "[1]", "[2]", "[?]", "[1,1]")))
        etypes.append("i32")
    return _case(ov6.ctc_greedy_decoder_seq_len, "CTCGreedyDecoderSeqLen", 6, shapes, etypes)


def ctc_loss_case(rng) -> Case:
    n, t, c = _sizes(rng, 3)
    shapes = [_shape(rng, [n, t, c]), _shape(rng, [n]), _shape(rng, [n, t]), _shape(rng, [n])]
    etypes = ["f32", "i32", "i32", "i32"]
    if rng.random() < 0.5:
        shapes.append(rng.choice(("[]", "[]", "[1]")))
        etypes.append("i32")
    return _case(lambda *a: ov4.ctc_loss(*a, unique=False), "CTCLoss", 4, shapes, etypes)


def gather_tree_case(rng) -> Case:
    t, n, w = _sizes(rng, 3)
    steps = _shape(rng, [t, n, w])
    parents = steps if rng.random() < 0.5 else _shape(rng, dims_of(steps) or [t, n, w])
    shapes = [steps, parents, _shape(rng, [n]), rng.choice(("[]", "[]", "[1]", "[...]"))]
    return _case(ov1.gather_tree, "GatherTree", 1, shapes, ("f32",) * 4)


CASES = {"CTCGreedyDecoder": ctc_greedy_case, "CTCGreedyDecoderSeqLen": ctc_seq_len_case,
         "CTCLoss": ctc_loss_case, "GatherTree": gather_tree_case}


@pytest.mark.parametrize("op", list(CASES))
def test_decoding_infers_what_openvino_infers(op):
    agree_on_every_output(op, CASES[op], 1000)
