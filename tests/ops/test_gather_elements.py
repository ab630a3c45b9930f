"""GatherElements-6 output shapes, judged by OpenVINO.

Explicit cases (each also checked against the installed openvino) and a seeded random
differential test against ``openvino.opset6.gather_elements`` (seed from OVGATHER_SEED).
"""

from __future__ import annotations

import pytest
from ov_oracle import (
    INDEX_TYPES,
    dims_of,
    ov_gather_elements,
    ovgather_outcome,
    random_dim,
    random_shape,
    rng_for,
    same,
)

from ovgather.errors import ShapeInferenceError
from ovgather.ops import gather_elements_shape, infer_gather_elements
from ovgather.shapes import PartialShape

# (data, indices, axis, expected)
CASES = [
    ("[2,2]", "[2,2]", 1, "[2,2]"),
    ("[3,3]", "[2,3]", 0, "[2,3]"),
    ("[4,4,?]", "[1,?,5]", 0, "[1,4,5]"),  # the example in OpenVINO's shape-inference comment
    ("[2..5,3,?]", "[7,?,1..3]", 0, "[7,3,1..3]"),
    ("[2..5,3,?]", "[7,?,1..3]", -3, "[7,3,1..3]"),
    ("[2,3,4]", "[...]", -2, "[2,?,4]"),
    ("[...]", "[2,1]", 7, "[2,1]"),  # the axis is not checked against an unknown rank
    ("[...]", "[...]", 0, "[...]"),
    ("[2..8,5]", "[4..10,1..6]", 0, "[4..10,5]"),
    ("[2..8,5]", "[4..10,1..6]", 1, "[4..8,1..6]"),
    # OpenVINO's type_prop/gather_elements.cpp
    ("[1,2,3,4]", "[1,2,10,4]", -2, "[1,2,10,4]"),
    ("[3,3]", "[3,1]", 1, "[3,1]"),
    ("[3,3,10000]", "[300,3,10000]", 0, "[300,3,10000]"),
    ("[300,3,10]", "[300,3,10000]", 2, "[300,3,10000]"),
    ("[300,3,10,1]", "[300,3,10,33333]", -1, "[300,3,10,33333]"),
    ("[4,4,?]", "[1,?,?]", 0, "[1,4,?]"),
    ("[4,1..7,5]", "[1,5..10,5]", 0, "[1,5..7,5]"),
    ("[...]", "[4,7,5]", 0, "[4,7,5]"),
    ("[4,1..7,5]", "[...]", 0, "[?,1..7,5]"),
    ("[4,7,5]", "[...]", 0, "[?,7,5]"),
    ("[?,2..4,1..5,?,4..8,2..4]", "[?,3..6,6..10,4..8,?,4..6]", 2, "[?,3..4,6..10,4..8,4..8,4]"),
]

# (data, indices, axis, indices type, words the message must contain)
ERRORS = [
    ("[2,3]", "[2,1]", 0, "i8", "i32 or i64"),
    ("[2,3]", "[2,1]", 0, "dynamic", "i32 or i64"),
    ("[2,3]", "[2,1]", 0, "f32", "i32 or i64"),
    ("[]", "[2,1]", 0, "i64", "data must have rank at least 1"),
    ("[2]", "[]", 5, "i64", "indices must have rank at least 1"),  # before the axis check
    ("[]", "[]", 0, "i64", "indices must have rank at least 1"),
    ("[2,3]", "[2,1]", 2, "i64", "axis must lie in [-2, 1]"),
    ("[2,3]", "[...]", -3, "i64", "axis must lie in"),
    ("[2..5,3,?]", "[7,?]", 0, "i64", "same rank"),
    ("[2,3]", "[2,4]", 0, "i64", "same dims except at the axis"),
    ("[2..3,3]", "[4..5,4]", 1, "i32", "same dims except at the axis"),
    # OpenVINO's type_prop/gather_elements.cpp
    ("[3,3]", "[2,1]", 1, "u32", "i32 or i64"),
    ("[3,3]", "[2,1]", -33, "i32", "axis must lie in"),
    ("[3,3]", "[2,3,3333]", 0, "i32", "same rank"),
    ("[3,3]", "[2,1]", 1, "i32", "same dims except at the axis"),
    ("[4,2,4,?]", "[1,3,?,5]", 0, "i64", "same dims except at the axis"),
    ("[4,4,5]", "[1,5..10,5]", 0, "i64", "same dims except at the axis"),
]


@pytest.mark.parametrize(("data", "indices", "axis", "expected"), CASES)
def test_gather_elements_output_is_indices_merged_with_data(data, indices, axis, expected):
    assert str(gather_elements_shape(data, indices, axis)) == expected
    assert ov_gather_elements(data, indices, axis) == expected


@pytest.mark.parametrize(("data", "indices", "axis", "itype", "words"), ERRORS)
def test_gather_elements_rejects_what_openvino_rejects(data, indices, axis, itype, words):
    with pytest.raises(ShapeInferenceError) as info:
        gather_elements_shape(data, indices, axis, itype)
    assert words in info.value.message
    assert "GatherElements-6" in info.value.message and f"axis={axis}" in info.value.message
    assert ov_gather_elements(data, indices, axis, itype).startswith("error")


def test_gather_elements_unknown_indices_type_skips_the_type_check():
    out = infer_gather_elements(PartialShape.parse("[2,3]"), PartialShape.parse("[2,1]"), 1)
    assert str(out) == "[2,1]"


def random_gather_elements_case(rng):
    """One random (data, indices, axis, indices type) case."""
    data = random_shape(rng)
    data_dims = dims_of(data)
    rank = len(data_dims) if data_dims is not None else rng.randint(0, 4)
    axis = rng.randint(-rank - 1, rank)
    if rng.random() < 0.08:
        indices = "[...]"
    else:
        if rng.random() < 0.1:
            rank = rng.randint(0, 5)
        dims = dims_of(random_shape(rng, rank, like=data_dims))
        if dims and rng.random() < 0.8:
            dims[axis % len(dims)] = random_dim(rng)
        indices = "[" + ",".join(dims) + "]"
    itype = rng.choice(("i64", "i32")) if rng.random() < 0.9 else rng.choice(INDEX_TYPES)
    return data, indices, axis, itype


CASE_COUNT = 6000


def test_gather_elements_agrees_with_openvino_on_random_cases():
    rng = rng_for("gather_elements")
    disagreements = []
    kinds = {"shape": 0, "error": 0, "dynamic rank": 0}
    for _ in range(CASE_COUNT):
        data, indices, axis, itype = random_gather_elements_case(rng)
        theirs = ov_gather_elements(data, indices, axis, itype)
        ours = ovgather_outcome(gather_elements_shape, data, indices, axis, itype)
        if not same(ours, theirs):
            disagreements.append((data, indices, axis, itype, ours, theirs))
        kind = "error" if theirs.startswith("error") else "shape"
        kinds["dynamic rank" if theirs == "[...]" else kind] += 1
    assert not disagreements, disagreements[:10]
    assert kinds["shape"] > CASE_COUNT // 4 and kinds["error"] > CASE_COUNT // 10, kinds
    assert kinds["dynamic rank"] > 0, kinds
