"""Gather-1/7/8 output shapes, judged by OpenVINO.

Explicit cases (each also checked against the installed openvino) and a seeded random
differential test against ``openvino.opset1/opset7/opset8.gather`` with a Constant axis
or, for an unknown axis, a Parameter axis (seed from OVGATHER_SEED).
"""

from __future__ import annotations

import pytest
from ov_oracle import (
    INDEX_TYPES,
    dims_of,
    ov_gather,
    ovgather_outcome,
    random_shape,
    rng_for,
    same,
)

from ovgather.errors import ShapeInferenceError, UnsupportedOpError
from ovgather.ops import gather_shape, infer_gather
from ovgather.shapes import PartialShape

# (data, indices, axis, batch_dims, version, expected); axis None = not a constant
CASES = [
    ("[2,3,4]", "[2,5]", 1, 0, 8, "[2,2,5,4]"),
    ("[2,3,4]", "[2,5]", -1, 0, 1, "[2,3,2,5]"),
    ("[3,4]", "[]", 0, 0, 8, "[4]"),  # a scalar index drops the axis
    ("[2,3,4]", "[2,5]", 1, 1, 7, "[2,5,4]"),
    ("[2,3,4]", "[2,5]", 1, -1, 8, "[2,5,4]"),  # -1 + rank(indices) = 1
    ("[2..5,3]", "[4..8,3,4]", -1, 1, 8, "[4..5,3,4]"),
    ("[2,3,4]", "[2,5]", None, 0, 8, "[?,?,?,?]"),
    ("[2..5,3]", "[?,3,4]", None, 1, 8, "[2..5,?,?]"),
    ("[2..5,3]", "[?,3,4]", None, -1, 8, "[2..5,3]"),
    ("[]", "[2]", None, 0, 8, "[]"),
    ("[...]", "[2,5]", 5, 0, 8, "[...]"),  # the axis is not checked against an unknown rank
    ("[...]", "[2,5]", -1, 1, 8, "[...]"),
    ("[2,3,4]", "[...]", 1, 0, 8, "[...]"),
    ("[2,3,4]", "[2,5]", 1, -3, 8, "[2,5,2,5,4]"),  # OpenVINO's answer to a nonsense batch_dims
    ("[2,3,4]", "[2,5]", 1, -4, 8, "[2,2,5,2,5,4]"),
    ("[2,3,4]", "[2,5]", None, -5, 8, "[?,?,?,?,?,?,?]"),
    ("[2,3,4]", "[2,5]", 1, 2, 1, "[2,2,5,4]"),  # Gather-1 has no batch_dims
    ("[2,3,4]", "[2,5]", 1, 0, 1, "[2,2,5,4]"),
    # OpenVINO's type_prop/gather.cpp (the cases without rank intervals)
    ("[3,2]", "[2,2]", 0, 0, 1, "[2,2,2]"),
    ("[3,3]", "[1,2]", 1, 0, 1, "[3,1,2]"),
    ("[3,2]", "[2,2]", 0, 0, 7, "[2,2,2]"),
    ("[3,3]", "[1,2]", 1, 0, 7, "[3,1,2]"),
    ("[5,6,7]", "[4]", -2, 0, 7, "[5,4,7]"),
    ("[1..7,20,20]", "[7..10,3,8]", 1, 1, 7, "[7,3,8,20]"),
    ("[1..7,1..3,200,400]", "[7..10,2..10,3,8]", 3, 1, 7, "[7,1..3,200,2..10,3,8]"),
    ("[1..7,1..3,200,400]", "[7..10,2..10,3,8]", 2, 2, 7, "[7,2..3,3,8,400]"),
    ("[1..7,1..3,200,400]", "[7..10,2..10,3,8]", 3, 2, 7, "[7,2..3,200,3,8]"),
    ("[...]", "[7,3,8]", 3, 2, 7, "[...]"),
    ("[1,1,200,400]", "[2,2]", None, 0, 7, "[?,?,?,?,?]"),
    ("[2,1,200,400]", "[2,2]", None, 1, 7, "[2,?,?,?]"),
]

# (data, indices, axis, batch_dims, version, indices type, axis shape, words in the message)
ERRORS = [
    ("[2,3,4]", "[2,5]", 1, 0, 7, "f32", "[]", "integer type"),
    ("[5,6]", "[4]", None, 0, 1, "i64", "[2]", "scalar or hold one element"),  # type_prop
    ("[5,6]", "[4]", 2, 0, 1, "i64", "[1]", "axis must lie in [-2, 1]"),  # type_prop
    ("[2,3,4]", "[2,5]", 1, 0, 8, "boolean", "[]", "integer type"),
    ("[2,3,4]", "[2,5]", 1, 0, 8, "i64", "[2]", "scalar or hold one element"),
    ("[2,3,4]", "[2,5]", None, 0, 8, "i64", "[1,1]", "scalar or hold one element"),
    ("[2,3,4]", "[2,5]", 5, 0, 8, "i64", "[]", "axis must lie in [-3, 2]"),
    ("[]", "[3]", -2, 0, 8, "i64", "[]", "axis must lie in [-1, 0]"),
    ("[...]", "[2,5]", 1, 2, 8, "i64", "[]", "must not exceed the axis"),
    ("[2,3,4]", "[2,5]", None, 3, 8, "i64", "[]", "rank of indices"),
    ("[2,3,4]", "[2,5]", 2, 2, 8, "i64", "[]", "batch_dims dims of data and indices must match"),
    ("[2,3,4]", "[2,5]", 1, -5, 8, "i64", "[]", "at least -2 * rank(indices) = -4"),
    ("[]", "[]", None, 0, 8, "i64", "[]", "negative rank"),
    ("[]", "[2]", 0, 0, 8, "i64", "[]", "data must have rank at least 1"),
    ("[]", "[2]", -1, -1, 8, "i64", "[]", "data must have rank at least 1"),
    ("[2]", "[2,3]", None, 2, 8, "i64", "[]", "output rank"),
    ("[2,3]", "[2,3,3]", None, 3, 8, "i64", "[]", "output rank"),
    ("[2,3]", "[2,3,3,1,1]", None, 3, 8, "i64", "[]", "rank of data (3 > 2)"),
]


@pytest.mark.parametrize(("data", "indices", "axis", "b", "version", "expected"), CASES)
def test_gather_output_shape(data, indices, axis, b, version, expected):
    assert str(gather_shape(data, indices, axis, b, version)) == expected
    assert ov_gather(data, indices, axis, b, version) == expected


@pytest.mark.parametrize(
    ("data", "indices", "axis", "b", "version", "itype", "axis_shape", "words"), ERRORS
)
def test_gather_rejects_what_openvino_rejects(
    data, indices, axis, b, version, itype, axis_shape, words
):
    with pytest.raises(ShapeInferenceError) as info:
        gather_shape(data, indices, axis, b, version, itype, axis_shape)
    assert words in info.value.message
    assert f"Gather-{version}" in info.value.message
    assert ov_gather(data, indices, axis, b, version, itype, axis_shape).startswith("error")


@pytest.mark.parametrize("itype", ["f32", "u8", "boolean"])
def test_gather_1_takes_any_indices_type(itype):
    assert str(gather_shape("[3,2]", "[2,2]", 0, version=1, indices_type=itype)) == "[2,2,2]"
    assert ov_gather("[3,2]", "[2,2]", 0, 0, 1, itype) == "[2,2,2]"


def test_gather_axis_of_unknown_shape_is_not_checked():
    out = infer_gather(
        PartialShape.parse("[2,3,4]"), PartialShape.parse("[2,5]"), None, 0, 8, "i32",
        PartialShape.parse("[?]"),
    )
    assert str(out) == "[?,?,?,?]"
    assert ov_gather("[2,3,4]", "[2,5]", None, 0, 8, "i32", "[?]") == "[?,?,?,?]"


def test_gather_rejects_an_unknown_version():
    with pytest.raises(UnsupportedOpError):
        gather_shape("[2,3]", "[2]", 0, version=6)


# -- the differential test ---------------------------------------------------------------------
AXIS_SHAPES = ("[]", "[]", "[]", "[]", "[1]", "[1]", "[2]", "[1,1]", "[?]", "[...]", "[0]")


def random_gather_case(rng):
    """One random (data, indices, axis, batch_dims, version, type, axis shape) case."""
    version = rng.choice((1, 7, 8, 8))
    data = random_shape(rng)
    data_dims = dims_of(data)
    data_rank = len(data_dims) if data_dims is not None else rng.randint(0, 4)
    indices = random_shape(rng, like=data_dims)
    if rng.random() < 0.3:
        indices = random_shape(rng, rng.randint(0, 3), like=data_dims)
    indices_dims = dims_of(indices)
    indices_rank = len(indices_dims) if indices_dims is not None else rng.randint(0, 4)
    axis = rng.randint(-data_rank - 1, data_rank) if rng.random() < 0.8 else None
    pick = rng.random()
    if pick < 0.5:
        b = rng.randint(0, min(indices_rank, data_rank))
    elif pick < 0.8:
        b = rng.randint(-indices_rank, -1) if indices_rank else -1
    else:
        b = rng.randint(-2 * indices_rank - 2, indices_rank + 1)
    axis_shape = rng.choice(AXIS_SHAPES) if rng.random() < 0.15 else "[]"
    if axis is not None and axis_shape in ("[?]", "[...]"):
        axis_shape = "[]"  # a Constant has a static shape
    itype = rng.choice(("i64", "i32")) if rng.random() < 0.9 else rng.choice(INDEX_TYPES)
    return data, indices, axis, b, version, itype, axis_shape


CASE_COUNT = 6000


def test_gather_agrees_with_openvino_on_random_cases():
    rng = rng_for("gather")
    disagreements = []
    kinds = {"shape": 0, "error": 0, "dynamic rank": 0}
    for _ in range(CASE_COUNT):
        data, indices, axis, b, version, itype, axis_shape = random_gather_case(rng)
        theirs = ov_gather(data, indices, axis, b, version, itype, axis_shape)
        ours = ovgather_outcome(gather_shape, data, indices, axis, b, version, itype, axis_shape)
        if not same(ours, theirs):
            disagreements.append((data, indices, axis, b, version, itype, axis_shape, ours, theirs))
        kind = "error" if theirs.startswith("error") else "shape"
        kinds["dynamic rank" if theirs == "[...]" else kind] += 1
    assert not disagreements, disagreements[:10]
    assert kinds["shape"] > CASE_COUNT // 4 and kinds["error"] > CASE_COUNT // 10, kinds
    assert kinds["dynamic rank"] > CASE_COUNT // 50, kinds
