"""Bucketize-3 and SearchSorted-15 against OpenVINO on seeded random shapes."""

from __future__ import annotations

import openvino.opset3 as ov3
import openvino.opset15 as ov15
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_shape


def bucketize_case(rng) -> Case:
    data, buckets = random_shape(rng), rng.choice(("[5]", "[?]", "[]", "[2,2]", "[...]"))
    return Case(lambda: ov3.bucketize(ov_param(data), ov_param(buckets), "i32"), "Bucketize", 3,
                [tensor(data), tensor(buckets)], {"output_type": "i32"},
                label=f"{data} {buckets}")


def search_sorted_case(rng) -> Case:
    values = random_shape(rng)
    like = values[1:-1].split(",") if values not in ("[...]", "[]") else None
    sorted_seq = random_shape(rng, rank=rng.choice((None, 1, len(like or []))), like=like)
    return Case(lambda: ov15.search_sorted(ov_param(sorted_seq), ov_param(values)),
                "SearchSorted", 15, [tensor(sorted_seq), tensor(values)],
                {"right_mode": "false"}, label=f"{sorted_seq} {values}")


def test_bucketize_infers_what_openvino_infers():
    agree_with_openvino("bucketize", bucketize_case, 500)


def test_search_sorted_infers_what_openvino_infers():
    agree_with_openvino("search_sorted", search_sorted_case, 1500)
