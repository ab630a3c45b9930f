"""Dimension and PartialShape: OpenVINO's text, merge, compatibility and product.

Judged by the installed openvino: parse/print against ``str(openvino.PartialShape(text))``
on seeded random texts (OVGATHER_SEED), ``compatible`` against ``openvino.Dimension`` and
``openvino.PartialShape``, and merge and product where OpenVINO shows them: the batch dims
of GatherND-8 are merged, those of GatherND-5 multiplied.
"""

from __future__ import annotations

import pickle

import openvino as ov
import pytest
from ov_oracle import ov_gather_nd, random_dim, rng_for  # noqa: E402

from ovgather.errors import ShapeParseError
from ovgather.shapes import INF, Dimension, PartialShape, as_partial_shape, normalize_axis

ROUNDS = 3000


def ov_text(text: str) -> str:
    """OpenVINO's reading of a shape text, printed back, or "error"."""
    try:
        return str(ov.PartialShape(text))
    except (RuntimeError, ValueError):
        return "error"


def our_text(text: str) -> str:
    try:
        return str(PartialShape.parse(text))
    except ShapeParseError:
        return "error"


def random_dim_text(rng) -> str:
    """A dim as a user or an IR may write it: all the forms OpenVINO's text allows."""
    pick = rng.random()
    if pick < 0.1:
        return "-1"
    if pick < 0.15:
        return str(rng.choice((INF, INF - 1, 10**12)))
    if pick < 0.2:
        lo = rng.randint(0, 5)
        return f"{lo}..{rng.choice((INF, INF - 1, lo))}"
    if pick < 0.25:
        return f"0{rng.randint(0, 9)}"  # a leading zero
    return random_dim(rng)


def random_shape_text(rng) -> str:
    pick = rng.random()
    if pick < 0.05:
        return rng.choice(("[...]", "...", "[]", "", " [ ] "))
    dims = [random_dim_text(rng) for _ in range(rng.randint(1, 6))]
    sep = rng.choice((",", ",", ", "))
    body = sep.join(dims)
    return f"[{body}]" if rng.random() < 0.7 else body  # Parameter style: no brackets


def test_shape_text_round_trips_like_openvino():
    rng = rng_for("shape_text")
    texts = [random_shape_text(rng) for _ in range(ROUNDS)]
    disagreements = [(t, our_text(t), ov_text(t)) for t in texts if our_text(t) != ov_text(t)]
    assert not disagreements, disagreements[:10]
    printed = [our_text(t) for t in texts]
    assert all(our_text(p) == p for p in printed)  # printing then parsing is the identity


@pytest.mark.parametrize(
    "text", ["[a]", "[2,,3]", "[2", "2]", "[+3]", "[1 2]", "[[2]]", "[?..5]", "[2,]", "[,2]"]
)
def test_malformed_shape_text_is_rejected_as_openvino_rejects_it(text):
    assert ov_text(text) == "error"
    with pytest.raises(ShapeParseError):
        PartialShape.parse(text)


@pytest.mark.parametrize("text", ["[5..3]", "[-2]", "[-1..5]", "[9223372036854775808]"])
def test_shape_text_openvino_reads_oddly_is_an_error(text):
    # OpenVINO reads these as ?, 0, ..5 and 0: ovgather calls them malformed instead
    assert ov_text(text) != "error"
    with pytest.raises(ShapeParseError):
        PartialShape.parse(text)


def test_spaces_around_the_interval_dots_are_accepted():
    assert str(PartialShape.parse("[2 .. 5, ?]")) == "[2..5,?]"


def test_parse_accepts_ir_and_parameter_notations():
    assert str(PartialShape.parse("2..5,?,4")) == "[2..5,?,4]"
    assert str(PartialShape.parse("[-1, 3]")) == "[?,3]"
    assert as_partial_shape([2, -1, "2..5"]) == PartialShape.parse("[2,?,2..5]")
    assert as_partial_shape(None).rank is None


# -- dimension arithmetic ----------------------------------------------------------------------
def random_dimension(rng) -> Dimension:
    return Dimension.parse(random_dim(rng))


def ov_dimension(dim: Dimension) -> ov.Dimension:
    return ov.Dimension(dim.lo, -1 if dim.hi == INF else dim.hi)


def test_dimension_queries_match_openvino():
    rng = rng_for("dimension_queries")
    for _ in range(ROUNDS):
        dim = random_dimension(rng)
        theirs = ov_dimension(dim)
        assert str(dim) == str(theirs)
        assert dim.is_static == theirs.is_static
        assert dim.max_length == theirs.get_max_length()


def test_dimension_compatible_matches_openvino():
    rng = rng_for("dimension_compatible")
    outcomes = set()
    for _ in range(ROUNDS):
        a, b = random_dimension(rng), random_dimension(rng)
        expected = ov_dimension(a).compatible(ov_dimension(b))
        assert a.compatible(b) == expected, (a, b)
        outcomes.add(expected)
    assert outcomes == {True, False}


def test_partial_shape_compatible_matches_openvino():
    rng = rng_for("shape_compatible")
    outcomes = set()
    for _ in range(ROUNDS):
        shapes = [PartialShape.parse(random_shape_text(rng)) for _ in range(2)]
        if rng.random() < 0.5 and shapes[0].rank is not None:  # same rank more often
            shapes[1] = PartialShape([random_dimension(rng) for _ in range(shapes[0].rank)])
        a, b = shapes
        expected = ov.PartialShape(str(a)).compatible(ov.PartialShape(str(b)))
        assert a.compatible(b) == expected, (a, b)
        outcomes.add(expected)
    assert outcomes == {True, False}


def test_dimension_merge_matches_gather_nd_8_batch_merge():
    rng = rng_for("dimension_merge")
    outcomes = set()
    for _ in range(ROUNDS // 3):
        a, b = random_dimension(rng), random_dimension(rng)
        theirs = ov_gather_nd(f"[{a},4]", f"[{b},1]", 1, 8)
        merged = a.merge(b)
        assert (merged is None) == theirs.startswith("error"), (a, b, theirs)
        if merged is not None:
            assert f"[{merged}]" == theirs
        assert a.merge(b) == b.merge(a) and (a & b) == merged
        outcomes.add(merged is None)
    assert outcomes == {True, False}


def test_dimension_product_matches_gather_nd_5_batch_fold():
    rng = rng_for("dimension_product")
    for _ in range(ROUNDS // 3):
        a, b = random_dimension(rng), random_dimension(rng)
        if rng.random() < 0.1:
            a = Dimension(rng.choice((2**40, 2**62, INF - 1)))
        assert ov_gather_nd(f"[{a},{b},4]", f"[{a},{b},1]", 2, 5) == f"[{a * b}]", (a, b)


@pytest.mark.parametrize(
    ("a", "b", "product"),
    [("4..6", "6..7", "24..42"), ("?", "5", "?"), ("2", "0", "0"), ("2..", "3", "6.."),
     ("0..", "3", "?"), ("2..5", "3..4", "6..20")],
)
def test_dimension_product_examples(a, b, product):
    assert str(Dimension.parse(a) * Dimension.parse(b)) == product


# -- identity --------------------------------------------------------------------------------
def test_static_dims_are_interned():
    assert Dimension(7) is Dimension.parse("7") is PartialShape.parse("[7]").dims[0]
    assert Dimension.parse("?") is Dimension() is Dimension(-1)
    assert pickle.loads(pickle.dumps(Dimension(7))) is Dimension(7)


def test_shapes_are_immutable_and_hashable():
    shape = PartialShape.parse("[2,?]")
    with pytest.raises(AttributeError):
        shape.dims = ()
    assert {shape: 1}[PartialShape.parse("[2,-1]")] == 1


def test_normalize_axis_follows_openvino_ranges():
    assert [normalize_axis(a, 3) for a in (-4, -3, -1, 0, 2, 3)] == [None, 0, 2, 0, 2, None]
    assert [normalize_axis(a, 0) for a in (-2, -1, 0, 1)] == [None, 0, 0, None]
