"""GatherND-5/8 output shapes, judged by OpenVINO.

Three kinds of tests: the cases of OpenVINO's own ``type_prop/gather_nd.cpp`` and CPU
shape-inference tests with their expected shapes (checked against both ovgather and the
installed openvino), a seeded random differential test against ``openvino.opset5`` and
``openvino.opset8`` (seed from ``OVGATHER_SEED``), and the ONNX views.
"""

from __future__ import annotations

import pytest
from ov_oracle import (
    INDEX_TYPES,
    dims_of,
    ov_gather_nd,
    ovgather_outcome,
    random_dim,
    random_shape,
    rng_for,
    same,
)

from ovgather.errors import ShapeInferenceError, UnsupportedOpError
from ovgather.ops import gather_nd_shape, infer_gather_nd, onnx_gather_nd_shape
from ovgather.shapes import PartialShape

# (data, indices, batch_dims, expected) for GatherND-5 and GatherND-8 alike (b <= 1):
# type_prop/gather_nd.cpp typed tests, its bd=0 tests, and the CPU static shape-infer tests.
BOTH_VERSIONS = [
    ("[8,3,11,12]", "[8,4,2]", 1, "[8,4,12]"),
    ("[8,3,11,12]", "[8,4,3]", 1, "[8,4]"),
    ("[8,3,11,12]", "[8,4,?]", 1, "[...]"),
    ("[2..6,3..7,8..10,12..14]", "[4..8,6..10,2]", 1, "[4..6,6..10,12..14]"),
    ("[2,3,11,12]", "[2,3,2]", 0, "[2,3,11,12]"),
    ("[7,?,?,12,?]", "[7,5,3,?]", 0, "[...]"),
    ("[2,2]", "[2,2]", 0, "[2]"),
    ("[2,2]", "[2,1]", 0, "[2,2]"),
    ("[2,2,2]", "[2,3]", 0, "[2]"),
    ("[2,2,2]", "[2,2]", 0, "[2,2]"),
    ("[2,2,2]", "[1,1]", 0, "[1,2,2]"),
    ("[2,2]", "[2,1,2]", 0, "[2,1]"),
    ("[2,2]", "[2,1,1]", 0, "[2,1,2]"),
    ("[2,2,2]", "[2,2,3]", 0, "[2,2]"),
    ("[2,2,2]", "[2,2,2]", 0, "[2,2,2]"),
    ("[2,2,2]", "[2,1,1]", 0, "[2,1,2,2]"),
    ("[8]", "[1]", 0, "[]"),
    ("[8]", "[5,1]", 0, "[5]"),
    ("[8,11]", "[2]", 0, "[]"),
    ("[8,11,12]", "[2]", 0, "[12]"),
    ("[8,3,11,12]", "[2,1]", 0, "[2,3,11,12]"),
    ("[7,3,11,12]", "[8,6,5,4,4]", 0, "[8,6,5,4]"),
    ("[8,11]", "[8,1]", 1, "[8]"),
    ("[8,3,11,12]", "[8,7,4,2]", 1, "[8,7,4,12]"),
    ("[7,3,11,12]", "[7,6,5,4,3]", 1, "[7,6,5,4]"),
    ("[2,2]", "[2,0]", 0, "[2,2,2]"),  # k = 0
]

# (data, indices, batch_dims, expected v5, expected v8)
PER_VERSION = [
    ("[2,3,11,12]", "[2,3,2]", 2, "[6]", "[2,3]"),
    ("[7,5,11,12,32]", "[7,5,3,1]", 2, "[35,3,12,32]", "[7,5,3,12,32]"),
    ("[7,?,11,12,32]", "[7,5,3,1]", 2, "[35,3,12,32]", "[7,5,3,12,32]"),
    ("[7,?,?,12,32]", "[7,5,3,1]", 2, "[35,3,12,32]", "[7,5,3,12,32]"),
    ("[7,?,?,12,?]", "[7,5,3,1]", 2, "[35,3,12,?]", "[7,5,3,12,?]"),
    ("[2..6,3..7,8..10,12..14]", "[4..8,6..10,2]", 2, "[24..42]", "[4..6,6..7]"),
    ("[2..6,3..7,8..10,12..14]", "[4..8,6..10,1]", 2, "[24..42,12..14]", "[4..6,6..7,12..14]"),
    ("[6,4,11,12,13]", "[6,4,2]", 2, "[24,13]", "[6,4,13]"),
    ("[6,4,11,12,13]", "[6,4,5,7,2]", 2, "[24,5,7,13]", "[6,4,5,7,13]"),
    ("[6,4,1,12,13]", "[6,4,1,1]", 3, "[24,13]", "[6,4,1,13]"),
    ("[6,4,1,12,13]", "[6,4,1,5,2]", 3, "[24,5]", "[6,4,1,5]"),
    ("[..5,3,4]", "[2..,3,1]", 2, "[6..15]", "[2..5,3]"),
]

# (data, indices, batch_dims, indices type, words the message must contain)
ERRORS = [
    ("[2,3,4,5]", "[2,1]", 3, "i32", "rank of indices"),
    ("[2,3,4,5]", "[2,1,2]", 2, "i32", "batch_dims dims of data and indices must match"),
    ("[2,1,4,5]", "[2,1,5,3]", 2, "i32", "tuple length"),
    ("[]", "[2,1,1]", 0, "i32", "data must have rank at least 1"),
    ("[2,2,2]", "[]", 0, "i32", "indices must have rank at least 1"),
    ("[2,2,2]", "[2,1,1]", 0, "f32", "integer type"),
    ("[2,3]", "[2,2]", 2, "i32", "rank of data"),
    ("[2,3]", "[2,1]", -1, "i64", "rank of data"),
]


@pytest.mark.parametrize(("data", "indices", "b", "expected"), BOTH_VERSIONS)
@pytest.mark.parametrize("version", [5, 8])
def test_gather_nd_openvino_cases(data, indices, b, expected, version):
    assert str(gather_nd_shape(data, indices, b, version, "i32")) == expected
    assert ov_gather_nd(data, indices, b, version, "i32") == expected


@pytest.mark.parametrize(("data", "indices", "b", "expected_v5", "expected_v8"), PER_VERSION)
def test_gather_nd_v5_folds_batch_dims_v8_keeps_them(data, indices, b, expected_v5, expected_v8):
    assert str(gather_nd_shape(data, indices, b, 5, "i32")) == expected_v5
    assert str(gather_nd_shape(data, indices, b, 8, "i32")) == expected_v8
    assert ov_gather_nd(data, indices, b, 5, "i32") == expected_v5
    assert ov_gather_nd(data, indices, b, 8, "i32") == expected_v8


@pytest.mark.parametrize(("data", "indices", "b", "itype", "words"), ERRORS)
@pytest.mark.parametrize("version", [5, 8])
def test_gather_nd_rejects_what_openvino_rejects(data, indices, b, itype, words, version):
    with pytest.raises(ShapeInferenceError) as info:
        gather_nd_shape(data, indices, b, version, itype)
    message = info.value.message
    assert words in message
    assert f"GatherND-{version}" in message and f"data {PartialShape.parse(data)}" in message
    assert ov_gather_nd(data, indices, b, version, itype).startswith("error")


def test_gather_nd_unknown_rank_or_tuple_length_hides_later_rules():
    # batch clash and too long a tuple, but k unknown: OpenVINO answers [...] without error
    assert str(gather_nd_shape("[2,3,4]", "[3,?]", 1)) == "[...]"
    assert ov_gather_nd("[2,3,4]", "[3,?]", 1, 8) == "[...]"
    assert str(gather_nd_shape("[...]", "[...]", -1)) == "[...]"


def test_gather_nd_indices_type_unknown_or_dynamic_is_accepted():
    assert str(infer_gather_nd(PartialShape.parse("[2,3]"), PartialShape.parse("[2,1]"), 0, 8)) \
        == "[2,3]"
    assert str(gather_nd_shape("[2,3]", "[2,1]", indices_type="dynamic")) == "[2,3]"
    assert ov_gather_nd("[2,3]", "[2,1]", 0, 8, "dynamic") == "[2,3]"


def test_gather_nd_rejects_an_unknown_version():
    with pytest.raises(UnsupportedOpError):
        gather_nd_shape("[2,3]", "[2,1]", version=6)


def test_gather_nd_returns_interned_static_dims():
    out = gather_nd_shape("[7,5,11,12,32]", "[7,5,3,1]", 2, 8)
    source = PartialShape.parse("[12]").dims[0]
    assert out.dims[3] is source


# -- the differential test ---------------------------------------------------------------------
def random_gather_nd_case(rng):
    """One random (data, indices, batch_dims, version, indices type) case."""
    version = rng.choice((5, 8))
    b = rng.choice((0, 0, 1, 1, 2, 2, 3, 4, -1, -2)) if rng.random() < 0.95 else rng.randint(5, 7)
    data = random_shape(rng)
    if rng.random() < 0.7:
        data = random_shape(rng, max(b, 0) + rng.randint(1, 3))
    data_dims = dims_of(data)
    if rng.random() < 0.07:
        indices = "[...]"
    else:
        rank = max(b, 0) + rng.randint(1, 3)
        if rng.random() < 0.3:
            rank = rng.choice((0, 1, 2, 2, 3, 3, 4, 5))
        indices_dims = dims_of(random_shape(rng, rank, like=data_dims))
        if indices_dims:
            data_rank = len(data_dims) if data_dims is not None else 3
            room = data_rank - max(b, 0)
            pick = rng.random()
            if pick < 0.75:  # a valid k mostly, one too many sometimes
                too_long = 1 if rng.random() < 0.2 else 0
                indices_dims[-1] = str(rng.randint(0, max(room, 0) + too_long))
            elif pick < 0.9:
                indices_dims[-1] = random_dim(rng)
        indices = "[" + ",".join(indices_dims) + "]"
    itype = rng.choice(("i64", "i32")) if rng.random() < 0.85 else rng.choice(INDEX_TYPES)
    return data, indices, b, version, itype


CASES = 6000


def test_gather_nd_agrees_with_openvino_on_random_cases():
    rng = rng_for("gather_nd")
    disagreements = []
    kinds = {"shape": 0, "error": 0, "dynamic rank": 0}
    for _ in range(CASES):
        data, indices, b, version, itype = random_gather_nd_case(rng)
        theirs = ov_gather_nd(data, indices, b, version, itype)
        ours = ovgather_outcome(gather_nd_shape, data, indices, b, version, itype)
        if not same(ours, theirs):
            disagreements.append((data, indices, b, version, itype, ours, theirs))
        kind = "error" if theirs.startswith("error") else "shape"
        kinds["dynamic rank" if theirs == "[...]" else kind] += 1
    assert not disagreements, disagreements[:10]
    # the generator must exercise every outcome, or the agreement says little
    assert min(kinds.values()) > CASES // 20, kinds
    print(kinds)


# -- ONNX views --------------------------------------------------------------------------------
def test_onnx_gather_nd_12_and_13_take_batch_dims():
    assert str(onnx_gather_nd_shape("[2,2,2]", "[2,1]", batch_dims=1, opset=12)) == "[2,2]"
    assert str(onnx_gather_nd_shape("[2,3,4,5]", "[2,3,1]", batch_dims=2, opset=13)) == "[2,3,5]"
    assert str(onnx_gather_nd_shape("[2,3,4,5]", "[2,3,1]", batch_dims=2, opset=18)) == "[2,3,5]"


@pytest.mark.parametrize(("opset", "domain"), [(11, ""), (1, "com.microsoft")])
def test_onnx_gather_nd_without_batch_dims_attribute_rejects_one(opset, domain):
    assert str(onnx_gather_nd_shape("[2,2]", "[2,2]", opset=opset, domain=domain)) == "[2]"
    with pytest.raises(UnsupportedOpError, match="no batch_dims"):
        onnx_gather_nd_shape("[2,2,2]", "[2,1]", batch_dims=1, opset=opset, domain=domain)


def test_onnx_gather_nd_needs_an_opset_that_has_it():
    with pytest.raises(UnsupportedOpError, match="opset 10"):
        onnx_gather_nd_shape("[2,2]", "[2,2]", opset=10)
    with pytest.raises(UnsupportedOpError, match="domain"):
        onnx_gather_nd_shape("[2,2]", "[2,2]", domain="ai.onnx.ml", opset=1)


def test_onnx_gather_nd_breaks_rules_like_gather_nd_8():
    with pytest.raises(ShapeInferenceError, match="GatherND-8"):
        onnx_gather_nd_shape("[2,3,4]", "[3,1]", batch_dims=1, opset=13)


def test_onnx_gather_nd_keeps_the_spec_rule_for_batch_dims_of_one():
    # OpenVINO's ONNX frontend broadcasts a batch dim of 1 like onnxruntime; the ONNX spec
    # (and this view) wants equal batch dims
    with pytest.raises(ShapeInferenceError, match="batch_dims dims of data and indices"):
        onnx_gather_nd_shape("[1,3,4]", "[5,1]", batch_dims=1, opset=13)
