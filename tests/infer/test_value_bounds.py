"""Shape arithmetic in real types: ShapeOf -> Convert(f32) -> Divide -> Floor/Ceiling ->
Convert(i64) -> Concat -> Reshape, as Swin's window partition and many exported models
compute their reshape targets. OpenVINO evaluates the bounds through every one of these
ops; so must ovgather, or the Reshape ends as ``[?,?,?,?,?,?]``. Each case is judged by
OpenVINO, layer by layer (``compare_with_openvino``)."""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import openvino.opset13 as o
import pytest
from op_graphs import C, P, accepted_by_openvino, compare_with_openvino


def _window_partition(x, side: float, rounding, window: int):
    """``x [B, L, C]`` to ``[B, round(L / side), window, …]`` with the length computed in f32."""
    s = o.shape_of(x)
    length = o.convert(o.gather(s, C([1]), C(0)), ov.Type.f32)
    count = o.convert(rounding(o.divide(length, C([side], np.float32))), ov.Type.i64)
    target = o.concat([C([-1]), count, C([window]), o.gather(s, C([2]), C(0))], 0)
    return o.reshape(x, target, False)


def test_swin_window_partition_keeps_every_dim(tmp_path):
    x = P("[1,256,16]")
    s = o.shape_of(x)
    q = o.convert(o.floor(o.divide(o.convert(o.gather(s, C([1]), C(0)), ov.Type.f32),
                                   C([64.0], np.float32))), ov.Type.i64)
    r = o.reshape(x, o.concat([C([1]), q, C([4, 4, 4, 16])], 0), False)
    report, diffs = compare_with_openvino(tmp_path, [r], [x], "swin")
    assert diffs == []
    assert {lr.name: lr.inferred for lr in report.layers}[r.get_friendly_name()] == \
        ["[1,4,4,4,4,16]"]


@pytest.mark.parametrize("seed", range(36))
def test_real_shape_arithmetic_matches_openvino(tmp_path, seed):
    rng = random.Random(f"value_bounds-{seed}")
    window = rng.choice((2, 4, 8))
    lo = rng.choice((1, 2, 8))
    length = rng.choice((f"{window * 16}", f"{lo * window}..{window * 32}", "?", "..64"))
    x = P(f"[{rng.choice(('1', '?', '1..4'))},{length},{rng.choice((8, 16))}]")
    rounding = rng.choice((o.floor, o.ceiling, lambda node: node))  # Divide alone keeps bounds
    side = float(rng.choice((window, 2 * window, 4 * window)))  # a valid static reshape
    r = _window_partition(x, side, rounding, window)
    _, diffs = compare_with_openvino(tmp_path, [r], [x], f"arith{seed}")
    assert diffs == []


def test_a_real_range_has_the_length_openvino_gives(tmp_path):
    x = P("[?,6]")
    start = o.convert(o.gather(o.shape_of(x), C(1), C(0)), ov.Type.f32)
    r = o.range(C(0.5, np.float32), start, C(1.5, np.float32), ov.Type.f32)
    r2 = o.range(C(0.0, np.float32), C(7.0, np.float32), C(2.0, np.float32), ov.Type.f32)
    _, diffs = compare_with_openvino(tmp_path, [r, r2], [x], "real_range")
    assert diffs == []


def _shape_pieces(rng: random.Random, x, rows: int):
    """ShapeOf(x) and constants laid out as a ``[rows, 2]`` tensor, split along a random
    axis by Split or VariadicSplit: the pieces carry the bounds of x's dims."""
    s = o.shape_of(x)
    grid = o.reshape(o.concat([s, C([1] * (2 * rows - 3))], 0), C([rows, 2]), False)
    axis = rng.choice((0, 1, -1))
    n = rows if axis == 0 else 2
    if rng.random() < 0.5:
        parts = o.split(grid, C(axis), n)
    else:
        lengths = [1] * n
        if n > 2:
            lengths = [2] + [1] * (n - 3) + [-1] if rng.random() < 0.5 else [n - 1, 1]
        parts = o.variadic_split(grid, C(axis), C(lengths))
    return [parts.output(i) for i in range(parts.get_output_size())]


@pytest.mark.parametrize("seed", range(24))
def test_split_pieces_carry_bounds_like_openvino(tmp_path, seed):
    """Pads and Reshape targets taken from a split shape tensor (Swin's F.pad): the
    pieces keep the value bounds, as OpenVINO's Split and VariadicSplit evaluate them."""
    rng = random.Random(f"split_values-{seed}")
    dims = [rng.choice(("2", "?", "2..8", "3", "1..4", "6")) for _ in range(3)]
    x = P("[" + ",".join(dims) + "]")
    rows = rng.choice((2, 3))
    pieces = [o.reshape(p, C([-1]), False) for p in _shape_pieces(rng, x, rows)]
    flat = o.concat(pieces, 0)  # 2 * rows elements: the shape, then ones
    pads = o.gather(flat, C([0, 1, 2]), C(0))
    outs = [o.pad(x, pads, pads, "constant"),
            o.reshape(x, o.concat([o.gather(flat, C([2, 1, 0]), C(0)), C([-1])], 0), False)]
    outs += [o.reshape(p, C([-1]), False) for p in pieces]
    _, diffs = compare_with_openvino(tmp_path, outs, [x], f"split{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize("seed", range(12))
def test_abs_bounds_are_openvinos(tmp_path, seed):
    """Abs of a shape element minus a constant: OpenVINO bounds it by the smaller and
    the larger absolute value of the two ends (``|-3..3|`` gives 3)."""
    rng = random.Random(f"abs_values-{seed}")
    dims = [rng.choice(("2..8", "?", "3", "1..4", "..5")), "6"]
    x = P("[" + ",".join(dims) + "]")
    g = o.gather(o.shape_of(x), C([0]), C(0))
    shifted = o.subtract(g, C([rng.choice((0, 2, 5, 9))]))
    if rng.random() < 0.5:
        shifted = o.convert(o.convert(shifted, ov.Type.f32), ov.Type.i64)
    outs = [o.reshape(x, o.concat([o.abs(shifted), C([-1])], 0), False),
            o.reshape(x, o.concat([o.abs(g), C([-1])], 0), False)]
    _, diffs = compare_with_openvino(tmp_path, outs, [x], f"abs{seed}")
    assert diffs == [], dims


COMPARES = (o.equal, o.not_equal, o.less, o.less_equal, o.greater, o.greater_equal)
LOGICALS = (o.logical_and, o.logical_or, o.logical_xor)


@pytest.mark.parametrize("seed", range(24))
def test_comparisons_fold_exact_values_only(tmp_path, seed):
    """Mixtral's split lengths add ``Convert(Greater(Mod(64, 2), 0))``: a comparison of
    exact values folds to 0 or 1; of bounds it gives nothing, as in OpenVINO."""
    rng = random.Random(f"compare_values-{seed}")
    dims = [rng.choice(("2..8", "?", "3", "6", "1..4")), "6"]
    x = P("[" + ",".join(dims) + "]")
    g = o.gather(o.shape_of(x), C([0]), C(0))
    other = C([rng.choice((1, 3, 6))]) if rng.random() < 0.7 else o.gather(o.shape_of(x),
                                                                             C([1]), C(0))
    flag = rng.choice(COMPARES)(g, other)
    if rng.random() < 0.5:
        flag = rng.choice(LOGICALS)(flag, rng.choice(COMPARES)(other, C([2])))
    etype = rng.choice((ov.Type.i64, ov.Type.i32))
    count = o.add(o.convert(flag, etype), C([1], np.int64 if etype == ov.Type.i64 else np.int32))
    r = o.reshape(x, o.concat([o.convert(count, ov.Type.i64), C([-1])], 0), False)
    _, diffs = compare_with_openvino(tmp_path, [r], [x], f"compare{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize("seed", range(30))
def test_multiply_bounds_take_every_pair_of_ends(tmp_path, seed):
    """A shape element shifted below 0 and multiplied (by a constant or another bounded
    element), then Abs, as a Reshape target: OpenVINO multiplies every pair of ends."""
    rng = random.Random(f"multiply_values-{seed}")

    def case():
        dims = [rng.choice(("2..8", "?", "3", "1..4", "..5", "6"))]
        x, y = P(f"[{dims[0]},12]"), P(f"[{rng.choice(('1..3', '2', '?', '0..4'))}]")
        g = o.gather(o.shape_of(x), C([0]), C(0))
        a = o.subtract(g, C([rng.choice((0, 3, 9))]))
        b = C([rng.choice((-2, -1, 1, 3))]) if rng.random() < 0.6 else o.subtract(
            o.shape_of(y), C([rng.choice((0, 2))]))
        if rng.random() < 0.3:
            a, b = (o.convert(v, ov.Type.f32) for v in (a, b))
        product = o.convert(o.multiply(a, b), ov.Type.i64)
        return o.reshape(x, o.concat([o.abs(product), C([-1])], 0), False), [x, y], dims

    r, params, dims = accepted_by_openvino(case)
    _, diffs = compare_with_openvino(tmp_path, [r], params, f"multiply{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize("seed", range(30))
def test_transpose_tile_and_broadcast_move_bounds_like_openvino(tmp_path, seed):
    """Shape elements laid out as a ``[2, 2]`` grid, then transposed, tiled or broadcast
    and read back as Pad widths and a Reshape target: the bounds move with the
    elements, as OpenVINO moves its lower and upper bound tensors."""
    rng = random.Random(f"moved_values-{seed}")
    dims = [rng.choice(("2", "?", "2..8", "3", "1..4", "6")) for _ in range(3)]
    x = P("[" + ",".join(dims) + "]")
    grid = o.reshape(o.concat([o.shape_of(x), C([1])], 0), C([2, 2]), False)
    pick = rng.randrange(4)
    if pick == 0:
        moved = o.transpose(grid, C([1, 0]))
    elif pick == 1:
        moved = o.tile(grid, C(rng.choice(([1, 2], [2, 1], [2]))))
    elif pick == 2:
        moved = o.broadcast(o.reshape(grid, C([1, 4]), False), C([2, 4]))
    else:
        moved = o.broadcast(grid, C([2, 1, 1]), broadcast_spec="bidirectional")
    flat = o.reshape(moved, C([-1]), False)
    pads = o.gather(flat, C(rng.sample(range(4), 3)), C(0))
    outs = [o.pad(x, pads, pads, "constant"),
            o.reshape(x, o.concat([o.gather(flat, C([rng.randrange(4)]), C(0)), C([-1])], 0),
                      False)]
    _, diffs = compare_with_openvino(tmp_path, outs, [x], f"moved{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize("seed", range(24))
def test_negative_relu_and_select_values_like_openvino(tmp_path, seed):
    """Negative and Relu fold exact values only; Select with a known condition takes
    each element's bounds from its branch, with an unknown one nothing."""
    rng = random.Random(f"select_values-{seed}")
    dims = [rng.choice(("2..8", "?", "3", "6", "1..4")), "6"]
    x = P("[" + ",".join(dims) + "]")
    g = o.gather(o.shape_of(x), C([0]), C(0))
    pick = rng.randrange(4)
    if pick == 0:
        element = o.negative(o.negative(g))
    elif pick == 1:
        element = o.relu(o.subtract(g, C([rng.choice((0, 2, 9))])))
    else:
        cond = (C([rng.random() < 0.5], bool) if pick == 2
                else o.greater(g, C([rng.choice((0, 3))])))
        element = o.select(cond, g, C([rng.choice((1, 2, 3))]))
    r = o.reshape(x, o.concat([element, C([-1])], 0), False)
    _, diffs = compare_with_openvino(tmp_path, [r], [x], f"select{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize("seed", range(80))
def test_divide_bounds_follow_the_divisors_sign_like_openvino(tmp_path, seed):
    """A shape element (maybe shifted below 0) divided by a constant of either sign or by
    a bounded element (positive, negative, or around 0), in integers or in f32."""
    rng = random.Random(f"divide_values-{seed}")
    dims = [rng.choice(("2..8", "?", "3", "6", "1..4", "..5"))]
    x, y = P(f"[{dims[0]},12]"), P(f"[{rng.choice(('1..3', '2', '?', '0..4', '3..9'))}]")
    a = o.subtract(o.gather(o.shape_of(x), C([0]), C(0)), C([rng.choice((0, 3, 9))]))
    if rng.random() < 0.5:
        b = C([rng.choice((-3, -1, 1, 2, 4))])
    else:
        b = o.subtract(o.shape_of(y), C([rng.choice((0, 2, 10))]))
    if rng.random() < 0.3:
        a, b = (o.convert(v, ov.Type.f32) for v in (a, b))
    quotient = o.convert(o.divide(a, b), ov.Type.i64)
    outs = []
    for target in (o.abs(quotient), quotient):
        try:
            outs.append(o.reshape(x, o.concat([target, C([-1])], 0), False))
        except (RuntimeError, ValueError):  # OpenVINO rejects it (a division by 0): skip
            pass
    _, diffs = compare_with_openvino(tmp_path, outs or [x], [x, y], f"divide{seed}")
    assert diffs == [], dims


BINARY_BUILDERS = {
    "Add": o.add, "Subtract": o.subtract, "Multiply": o.multiply, "Divide": o.divide,
    "Maximum": o.maximum, "Minimum": o.minimum, "FloorMod": o.floor_mod, "Mod": o.mod,
    "Power": o.power, "SquaredDifference": o.squared_difference,
}


@pytest.mark.parametrize("op", sorted(BINARY_BUILDERS))
def test_binary_ops_fold_exact_values_only_where_openvino_does(tmp_path, op):
    """Exact shape elements through each binary op: OpenVINO folds all of them but
    SquaredDifference (it has no evaluation), so a Reshape fed by it learns nothing."""
    x, y = P("[?,60]"), P("[5,3]")
    s = o.shape_of(y)
    a, b = o.gather(s, C([0]), C(0)), o.gather(s, C([1]), C(0))
    element = BINARY_BUILDERS[op](a, b)
    r = o.reshape(x, o.concat([element, C([-1])], 0), False)
    _, diffs = compare_with_openvino(tmp_path, [r], [x, y], f"fold_{op}")
    assert diffs == []


@pytest.mark.parametrize("seed", range(40))
def test_floor_mod_and_power_bounds_are_openvinos(tmp_path, seed):
    """FloorMod and Power of bounded shape elements: OpenVINO evaluates the op on both
    low ends and on both high ends and keeps them in order."""
    rng = random.Random(f"endwise_values-{seed}")

    def case():
        dims = [rng.choice(("2..8", "?", "3", "2..6", "0..2", "..5"))]
        x, y = P(f"[{dims[0]},60]"), P(f"[{rng.choice(('1..3', '2', '?', '2..8', '3'))}]")
        a = o.gather(o.shape_of(x), C([0]), C(0))
        b = o.shape_of(y) if rng.random() < 0.5 else C([rng.choice((1, 2, 3, 5))])
        op = rng.choice((o.floor_mod, o.power))
        element = op(a, b) if rng.random() < 0.7 else op(b, a)
        return o.reshape(x, o.concat([element, C([-1])], 0), False), [x, y], dims

    r, params, dims = accepted_by_openvino(case)
    _, diffs = compare_with_openvino(tmp_path, [r], params, f"endwise{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize("seed", range(30))
def test_clamp_bounds_and_sign_values_like_openvino(tmp_path, seed):
    """Clamp clamps both bounds (even of an unknown element: ``?`` to ``1..4``), integers
    to ``ceil(min)..floor(max)``; Sign folds exact values only."""
    rng = random.Random(f"clamp_values-{seed}")

    def case():
        dims = [rng.choice(("2..8", "?", "5", "0..2", "3.."))]
        x = P(f"[{dims[0]},60]")
        a = o.gather(o.shape_of(x), C([0]), C(0))
        if rng.random() < 0.3:
            element = o.sign(o.subtract(a, C([rng.choice((0, 2, 5))])))
        else:
            low = rng.choice((0.0, 1.0, 1.5, 2.0))
            high = low + rng.choice((0.0, 0.5, 2.0, 3.5))
            real = rng.random() < 0.4
            source = o.convert(a, ov.Type.f32) if real else a
            element = o.clamp(source, low, high)
            element = o.convert(element, ov.Type.i64) if real else element
        return o.reshape(x, o.concat([element, C([-1])], 0), False), [x], dims

    r, params, dims = accepted_by_openvino(case)
    _, diffs = compare_with_openvino(tmp_path, [r], params, f"clamp{seed}")
    assert diffs == [], dims
