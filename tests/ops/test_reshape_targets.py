"""Reshape against OpenVINO on seeded random inputs (static, interval and ``?`` dims, an
unknown rank) and constant targets mixing -1, 0 (copied or literal), 1 and dims of the
input: the -1 dim, the zero-size rule and the element-count check must be OpenVINO's."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ov1
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim

from ovgather.shapes import PartialShape


def reshape_case(rng) -> Case:
    if rng.random() < 0.2:
        data = "[...]"
        dims: list[str] = []
    else:
        dims = [random_dim(rng) if rng.random() < 0.4 else str(rng.choice((0, 1, 2, 3, 4, 6)))
                for _ in range(rng.randint(0, 4))]
        data = "[" + ",".join(dims) + "]"
    parsed = PartialShape.parse(data).dims or ()
    target = []
    for k in range(rng.randint(1, 4)):
        pick = rng.random()
        if pick < 0.3 and k < len(parsed) and parsed[k].lo == parsed[k].hi:
            target.append(parsed[k].lo)  # a dim of the input, which cancels
        elif pick < 0.45:
            target.append(0)
        else:
            target.append(rng.choice((1, 2, 3, 4, 6, 12)))
    if rng.random() < 0.7:
        target[rng.randrange(len(target))] = -1
    special_zero = rng.random() < 0.5
    return Case(lambda: ov1.reshape(ov_param(data), ov1.constant(np.array(target, np.int64)),
                                    special_zero),
                "Reshape", 1, [tensor(data), const(target)],
                {"special_zero": "true" if special_zero else "false"},
                label=f"{data} -> {target} special_zero={special_zero}")


def test_reshape_targets_agree_with_openvino():
    agree_with_openvino("reshape_targets", reshape_case, 3000)


def test_minus_one_of_an_input_of_unknown_rank_counts_one_element_or_more():
    from op_diff import ours, theirs

    for target in ([1, -1], [-1], [7, -1]):
        case = Case(lambda t=target: ov1.reshape(ov_param("[...]"),
                                                 ov1.constant(np.array(t, np.int64)), False),
                    "Reshape", 1, [tensor("[...]"), const(target)], {"special_zero": "false"})
        assert ours(case) == theirs(case)
        assert ours(case).endswith("1..]")
