"""The expression algebra of symbolic dims (ops/core/symbolic.py): every expression equals
the integer arithmetic it stands for, and equal expressions print identically."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ovgather.ops.core.symbolic import const, maximum, minimum, name, window

NAMES = ("B", "S", "P")


def _random_expr(rng: random.Random, depth: int):
    """An expression and the Python function it stands for (numbers and names at the
    leaves; + - * by anything; // and % by a positive number or a name; min, max)."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.4:
            n = rng.randint(-6, 9)
            return const(n), lambda env, n=n: n
        v = rng.choice(NAMES)
        return name(v), lambda env, v=v: env[v]
    a, fa = _random_expr(rng, depth - 1)
    op = rng.choice(["+", "-", "*", "//", "%", "min", "max"])
    if op in ("//", "%"):
        if rng.random() < 0.6:
            k = rng.randint(1, 9)
            b, fb = const(k), lambda env, k=k: k
        else:
            v = rng.choice(NAMES)
            b, fb = name(v), lambda env, v=v: env[v]
    else:
        b, fb = _random_expr(rng, depth - 1)
    built = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
             "%": lambda: a % b, "min": lambda: minimum(a, b), "max": lambda: maximum(a, b)}
    python = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__, "//": int.__floordiv__,
              "%": int.__mod__, "min": min, "max": max}[op]
    return built[op](), lambda env: python(fa(env), fb(env))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.integers(1, 40), min_size=3, max_size=3))
def test_an_expression_evaluates_to_the_arithmetic_it_was_built_from(seed, sizes):
    expr, fn = _random_expr(random.Random(seed), 4)
    env = dict(zip(NAMES, sizes, strict=True))
    assert expr.evaluate(env) == fn(env), str(expr)


def test_equal_sums_products_and_quotients_print_identically():
    B, S, P = name("B"), name("S"), name("P")
    assert str(P + S) == str(S + P) == "P+S"
    assert (B * S) // S == B and str(B * (S + 1) - B) == "B*S"
    assert str((S - 10) // 5 // 2) == str(S // 10 - 1) == "S//10-1"
    assert str(((S + 7) // 8) * 8 // 8) == "(S+7)//8"
    assert (2 * S + 4) % 2 == const(0) and str((4 * S + 6) % 4) == "2"


def test_min_and_max_keep_what_a_constant_difference_does_not_decide():
    S, T = name("S"), name("T")
    assert minimum(S, S + 3) == S and maximum(S - 1, S) == S
    assert str(minimum(T, S, 4)) == str(minimum(4, minimum(S, T)))
    assert minimum(3, 5) == const(3)


def test_a_window_is_the_floor_of_the_padded_span_over_the_stride_plus_one():
    H = name("H")
    for size in range(5, 40):
        for kernel, stride, dilation, pads in ((3, 2, 1, (1, 1)), (7, 2, 1, (3, 3)),
                                               (3, 1, 2, (2, 2)), (2, 2, 1, (0, 0))):
            span = size + sum(pads) - dilation * (kernel - 1) - 1
            out = window(H, kernel, stride, dilation, pads, "explicit")
            assert out.evaluate({"H": size}) == span // stride + 1
            ceiled = window(H, kernel, stride, dilation, pads, "explicit", ceil=True)
            assert ceiled.evaluate({"H": size}) == -(-span // stride) + 1
        assert window(H, 4, 3, 1, (0, 0), "same_upper").evaluate({"H": size}) == -(-size // 3)


_COMPARISONS = {"Equal": int.__eq__, "NotEqual": int.__ne__, "Less": int.__lt__,
                "LessEqual": int.__le__, "Greater": int.__gt__, "GreaterEqual": int.__ge__}


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.integers(0, 40), min_size=3, max_size=3))
def test_a_comparison_the_algebra_decides_holds_for_every_dim(seed, sizes):
    """Names are dims (0 or more): a decided comparison (``B == -1`` false) is what the
    integers give at any such sizes, 0 included."""
    from ovgather.ops.core.symbolic import VALUE_FUNCTIONS
    rng = random.Random(seed)
    (a, fa), (b, fb) = _random_expr(rng, 3), _random_expr(rng, 2)
    env = dict(zip(NAMES, sizes, strict=True))
    try:
        x, y = fa(env), fb(env)
    except ZeroDivisionError:
        return
    for op, python in _COMPARISONS.items():
        decided = VALUE_FUNCTIONS[op](a, b)
        if decided is not None:
            assert decided.const == int(python(x, y)), (op, str(a), str(b), env)


def test_comparisons_with_a_dim_are_decided_by_its_sign():
    from ovgather.ops.core.symbolic import VALUE_FUNCTIONS as F
    B, S = name("B"), name("S")
    assert F["Equal"](B, const(-1)) == const(0) and F["NotEqual"](B * S + 1, const(0)) == \
        const(1)
    assert F["GreaterEqual"](S, const(0)) == const(1) and F["Less"](-S - 1, const(0)) == \
        const(1)
    assert F["Equal"](B, const(0)) is None and F["Greater"](S - 1, const(0)) is None


def test_every_printed_expression_evaluates_as_printed_to_its_value():
    """The printed text, read as Python reads it, is the value: ``21*((H+31)//32)`` and
    not ``21*(H+31)//32`` (which Python reads as ``(21*(H+31))//32``)."""
    rng = random.Random(20261207)
    for _ in range(3000):
        expr, python = _random_expr(rng, 4)
        for _ in range(3):
            env = {v: rng.randint(1, 40) for v in NAMES}
            try:
                value = python(env)
            except ZeroDivisionError:
                continue
            text = str(expr)
            printed = eval(text, {"min": min, "max": max}, dict(env))  # noqa: S307
            assert printed == value, f"{text} at {env}: {printed}, not {value}"


def test_a_yolo_head_prints_with_its_brackets():
    h, w = name("H"), name("W")
    total = 21 * ((h + 31) // 32) * ((w + 31) // 32)
    text = str(total)
    assert eval(text, {}, {"H": 640, "W": 640}) == 8400  # noqa: S307
    assert eval(str(-((h + 31) // 32)), {}, {"H": 640}) == -20  # noqa: S307
