"""Value bounds op by op, negative values included, against OpenVINO.

``test_bounds_walk.py`` draws shape chains whose values stay sizes; here the chains also
scale, shift and negate them (``ShapeOf(x) * [-1,1]``, ``2 - ShapeOf(x)``, ``Negative``),
so every op's ``evaluate_lower``/``evaluate_upper`` meets bounds of both signs, and run
through more of the ops OpenVINO propagates bounds through: Gather with negative indices,
Concat, Convert, the arithmetic, Minimum/Maximum, ReduceProd/Min/Max/Sum, Slice and
StridedSlice (negative steps too), Select, Squeeze/Unsqueeze, Reshape, Transpose, Tile,
Broadcast, ScatterUpdate, ScatterElementsUpdate, ScatterNDUpdate, Clamp, Abs, Floor,
Ceiling and Round through f32, Equal/Less/Greater, Split/VariadicSplit, Mod/FloorMod, Pad,
GatherElements, GatherND, Power, Relu, Sign, Negative. Each chain ends in an op that reads a
shape from bounds (Broadcast, Reshape, Range, Tile, Slice, Pad); every layer's output shape
is compared with read_model's (``compare_with_openvino``). The named tests below are the
disagreements this walk found."""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import openvino.opset3 as o3
import openvino.opset8 as o8
import openvino.opset13 as o
import pytest
from op_graphs import C, P, ShapeChain, chain_model, compare_with_openvino
from ov_oracle import rng_for

ITYPES = (ov.Type.i64, ov.Type.i32)


def _dim(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.3:
        return str(rng.choice((1, 2, 3, 4, 6)))
    lo = rng.randint(0, 4)
    if pick < 0.8:
        return f"{lo}..{lo + rng.randint(1, 6)}"
    return rng.choice(("?", f"{lo}..", f"..{rng.randint(1, 9)}"))


def _np(etype):
    return np.int64 if etype == ov.Type.i64 else np.int32


class _Chain(ShapeChain):
    """A pool of 1-D integer vectors computed from ShapeOfs: (node, length, type)."""

    def __init__(self, rng: random.Random):
        super().__init__(rng, _dim, ITYPES)

    def _same(self, n, etype, ones=False):
        return [p for p in self.pool if p[2] == etype and (p[1] == n or ones and p[1] == 1)]

    def _small(self, n, etype, lo=-3, hi=4):
        rng = self.rng
        values = [rng.randint(lo, hi)] if rng.random() < 0.4 else \
            [rng.randint(lo, hi) for _ in range(n)]
        return self.const(values, etype)

    def step(self) -> None:  # noqa: C901 - one branch an op, read top to bottom
        rng = self.rng
        node, n, etype = rng.choice(self.pool)
        kind = rng.choice((
            "signs", "signs", "signs", "gather", "concat", "convert", "arith", "arith", "pair",
            "minmax", "reduce", "reduce", "slice", "strided", "select", "squeeze", "reshape",
            "transpose", "tile", "broadcast", "scatter", "scatter_elements", "scatter_nd",
            "clamp", "abs", "rounding", "compare", "split", "mod", "pad", "gather_elements",
            "gather_nd", "reverse", "power", "unary", "variadic_split"))
        m = n
        if kind == "signs":
            pick = rng.random()
            if pick < 0.4:
                out = o.multiply(node, self.const(
                    [rng.choice((-1, 1, -2, 2)) for _ in range(n)], etype))
            elif pick < 0.7:
                out = o.subtract(self.const([rng.randint(-2, 4)], etype), node)
            else:
                out = o.negative(node)
        elif kind == "gather":
            idx = [rng.randrange(-n, n) for _ in range(rng.randint(1, 3))]
            out, m = o8.gather(node, C(idx), C(0)), len(idx)
        elif kind == "concat":
            b = rng.choice([p for p in self.pool if p[2] == etype])
            out, m = o.concat([node, b[0]], 0), n + b[1]
        elif kind == "convert":
            to = rng.choice(ITYPES)
            out, etype = o.convert(node, to), to
        elif kind == "arith":
            op = rng.choice((o.add, o.subtract, o.multiply, o.divide))
            other = self._small(n, etype, -3, 4) if op is not o.divide else \
                self.const([rng.choice((-3, -2, -1, 1, 2, 3))], etype)
            out = op(node, other) if rng.random() < 0.7 or op is o.divide else op(other, node)
        elif kind == "pair":
            same = self._same(n, etype, ones=True)
            op = rng.choice((o.add, o.subtract, o.multiply, o.minimum, o.maximum))
            out = op(node, rng.choice(same)[0])
        elif kind == "minmax":
            op = rng.choice((o.minimum, o.maximum))
            out = op(node, self._small(n, etype, -4, 6))
        elif kind == "reduce":
            op = rng.choice((o.reduce_prod, o.reduce_min, o.reduce_max, o.reduce_sum))
            keep = rng.random() < 0.5
            out, m = op(node, C([0] if keep or rng.random() < 0.5 else [-1]), keep), 1
            if not keep:
                out = o.unsqueeze(out, C([0]))
        elif kind == "slice":
            step = rng.choice((1, 1, 2, -1))
            b = rng.randint(-n, n - 1)
            end = rng.choice((n, -n - 1, -1, b + 1, 100)) if step > 0 else \
                rng.choice((-n - 1, -100, 0))
            out, m = o8.slice(node, C([b]), C([end]), C([step])), None
        elif kind == "strided":
            b = rng.randint(0, n - 1)
            if rng.random() < 0.3:
                out = o.strided_slice(node, C([-1]), C([0]), C([-1]), [1], [1])
            else:
                out = o.strided_slice(node, C([b]), C([n]), C([1]), [0], [0])
            m = None
        elif kind == "select":
            other = rng.choice(self._same(n, etype, ones=True))[0]
            cond = C([rng.random() < 0.5 for _ in range(n)], np.bool_)
            out = o.select(cond, node, other)
        elif kind == "squeeze":
            out = o.squeeze(o.unsqueeze(node, C([rng.choice((0, 1))])), C([rng.choice((0, 1))]))
            out = o.reshape(out, C([-1]), False)
        elif kind == "reshape":
            out = o.reshape(o.reshape(node, C([1, n]), False), C([n]), rng.random() < 0.5)
        elif kind == "transpose":
            twice = o.concat([o.unsqueeze(node, C([0])), o.unsqueeze(node, C([0]))], 0)
            out = o.reshape(o.transpose(twice, C([1, 0])), C([-1]), False)
            out = o8.gather(out, C(list(range(0, 2 * n, 2))), C(0))
        elif kind == "tile":
            out, m = o.tile(node, C([2])), 2 * n
        elif kind == "broadcast":
            scalar = o8.gather(node, C(rng.randrange(n)), C(0))
            out, m = o3.broadcast(scalar, C([rng.randint(1, 3)])), None
        elif kind == "scatter":
            i = rng.randrange(n)
            upd = o8.gather(rng.choice([p for p in self.pool if p[2] == etype])[0], C([0]), C(0))
            out = o3.scatter_update(node, C([i]), upd, C(0))
        elif kind == "scatter_elements":
            i = rng.randrange(n)
            upd = self._small(1, etype)
            out = o3.scatter_elements_update(node, C([i]), upd, C(0))
        elif kind == "scatter_nd":
            i = rng.randrange(n)
            upd = o8.gather(rng.choice([p for p in self.pool if p[2] == etype])[0], C([-1]),
                            C(0))
            out = o.scatter_nd_update(node, C([[i]]), upd)
        elif kind == "clamp":
            lo = rng.randint(-3, 3)
            out = o.clamp(node, lo, lo + rng.randint(0, 6))
        elif kind == "abs":
            out = o.abs(node)
        elif kind == "rounding":
            real = o.divide(o.convert(node, ov.Type.f32), C([rng.choice((2.0, 3.0))], np.float32))
            rounding = rng.choice((o.floor, o.ceiling, lambda x: o.round(x, "half_to_even")))
            out = o.convert(rounding(real), etype)
        elif kind == "split":
            if n % 2:
                return
            out, m = o.split(node, C(0), 2).output(rng.randrange(2)), n // 2
        elif kind == "mod":
            op = rng.choice((o.mod, o.floor_mod))
            out = op(node, self.const([rng.choice((-3, -2, 2, 3, 5))], etype))
        elif kind == "pad":
            out, m = o.pad(node, C([1]), C([1]), "constant", self.const(
                rng.randint(-2, 2), etype)), n + 2
        elif kind == "gather_elements":
            out = o.gather_elements(node, C([rng.randrange(n) for _ in range(n)]), 0)
        elif kind == "gather_nd":
            idx = [[rng.randrange(n)] for _ in range(rng.randint(1, 3))]
            out, m = o8.gather_nd(node, C(idx)), len(idx)
        elif kind == "reverse":
            out = o8.slice(node, C([-1]), C([-n - 1]), C([-1]))
        elif kind == "unary":
            out = rng.choice((o.relu, o.sign, o.negative))(node)
        elif kind == "variadic_split":
            if n < 2:
                return
            cut = rng.randrange(1, n)
            part = rng.randrange(2)
            out = o.variadic_split(node, C(0), C([cut, -1])).output(part)
            m = cut if part == 0 else n - cut
        elif kind == "power":
            out = o.power(node, self.const([rng.choice((0, 1, 2))], etype))
        else:
            other = rng.choice(self._same(n, etype, ones=True))[0] if rng.random() < 0.5 \
                else self.const([rng.randint(-1, 3)], etype)
            cond = rng.choice((o.equal, o.less, o.greater))(node, other)
            out = o.select(cond, self._small(1, etype, -2, 3), node)
        self.keep(out, m, etype)

    def consumer(self):
        rng = self.rng
        node, n, etype = self.pool[-1]
        kind = rng.choice(("broadcast", "reshape", "range", "tile", "slice", "pad"))
        if kind == "broadcast":
            return o3.broadcast(C(1.0, np.float32), o.maximum(node, self.const([0], etype)))
        if kind == "reshape":
            tgt = o.concat([self.const([-1], etype), node], 0) if rng.random() < 0.5 else node
            return o.reshape(self.params[0], tgt, rng.random() < 0.5)
        if kind == "range":
            stop = o8.gather(node, C(rng.randrange(n)), C(0))
            return o.range(C(0, np.int64), o.convert(stop, ov.Type.i64), C(1, np.int64),
                           ov.Type.i64)
        if kind == "tile":
            return o.tile(P("[" + ",".join("2" for _ in range(n)) + "]"), node)
        if kind == "slice":
            start = o8.gather(node, C([rng.randrange(n)]), C(0))
            return o8.slice(P("[20]"), start, C([20]), C([1]))
        pads = o8.gather(node, C([rng.randrange(n)]), C(0))
        return o.pad(P("[9]"), pads, C([0], _np(etype)), "constant")


def _model(rng: random.Random):
    return chain_model(rng, _Chain)


@pytest.mark.parametrize("seed", range(300))
def test_bounds_of_both_signs_match_openvino(tmp_path, seed):
    out, params = _model(rng_for(f"bounds_ops{seed}"))
    _, diffs = compare_with_openvino(tmp_path, [out], params, f"b{seed}")
    assert diffs == []


# -- disagreements the walk above found -----------------------------------------------
def _negated_reduction(reduce):
    """``0 - Reduce(ShapeOf(x) * [-1,1,1])`` as a Broadcast target, x ``[3..5,2..3,4]``."""
    x = P("[3..5,2..3,4]")
    scaled = o.multiply(o3.shape_of(x, "i64"), C([-1, 1, 1]))
    return o3.broadcast(C(1.0, np.float32), o.subtract(C([0]), reduce(scaled, C([0]), True))), x


@pytest.mark.parametrize("reduce", [o.reduce_prod, o.reduce_min, o.reduce_max],
                         ids=["ReduceProd", "ReduceMin", "ReduceMax"])
def test_reductions_fold_bounds_below_zero(tmp_path, reduce):
    """OpenVINO runs ReduceProd/Min/Max on each side of the bounds whatever their signs
    (``[36..40]``, ``[3..5]``); ovgather folded only non-negative bounds and said ``?``."""
    if reduce is o.reduce_max:  # max(-5..-3, -3..-2, -4) is -3..-2: 0 - it is [2..3]
        x = P("[3..5,2..3,4]")
        scaled = o.multiply(o3.shape_of(x, "i64"), C([-1, -1, -1]))
        out = o3.broadcast(C(1.0, np.float32),
                           o.subtract(C([0]), reduce(scaled, C([0]), True)))
    else:
        out, x = _negated_reduction(reduce)
    _, diffs = compare_with_openvino(tmp_path, [out], [x], "negreduce")
    assert diffs == []


def test_a_two_dim_concat_keeps_its_bounds(tmp_path):
    """Two ``[1,3]`` rows of a ShapeOf joined into ``[2,3]``, transposed and read back as a
    Broadcast target: OpenVINO concatenates the bound tensors at any rank; ovgather kept
    them only for 1-D Concats and said ``[?,?,?]``."""
    x = P("[2..4,3,1..]")
    row = o.unsqueeze(o3.shape_of(x, "i64"), C([0]))
    flat = o.reshape(o.transpose(o.concat([row, row], 0), C([1, 0])), C([-1]), False)
    target = o8.gather(flat, C([0, 2, 5]), C(0))
    out = o3.broadcast(C(1.0, np.float32), target)
    _, diffs = compare_with_openvino(tmp_path, [out], [x], "concat2d")
    assert diffs == []


def test_mod_bounds_follow_openvinos_interval_estimate(tmp_path):
    """OpenVINO estimates Mod's bounds (``ShapeOf(x) % 3`` with x ``4..9`` is ``0..2``,
    by a divisor ``2..5`` the estimate of its reference); ovgather gave Mod no bounds and
    said ``?``."""
    x = P("[4..9,2,7]")
    s = o3.shape_of(x, "i64")
    divisor = o.add(o3.shape_of(P("[0..3]"), "i64"), C([2]))
    outs = [o3.broadcast(C(1.0, np.float32), o.mod(s, C([3]))),
            o.tile(P("[2,2,2]"), o.mod(o.add(s, C([1, 0, 0])), C([5, 2, 4]))),
            o3.broadcast(C(1.0, np.float32), o.mod(s, divisor))]
    params = [x, divisor.input_value(0).get_node().input_value(0).get_node(),
              outs[1].input_value(0).get_node()]
    _, diffs = compare_with_openvino(tmp_path, outs, params, "mod")
    assert diffs == []


@pytest.mark.parametrize("special_zero", [True, False])
def test_a_reshape_target_between_minus_one_and_zero(tmp_path, special_zero):
    """A target element bounded ``-1..0`` (``ShapeOf(y) - 1``, y ``0..1``): with
    ``special_zero`` OpenVINO copies the input dim as for a 0 (``[3]``, ``[12,1]``);
    ovgather read it as the size 0."""
    y = P("[0..1]")
    t = o.subtract(o3.shape_of(y), C([1]))
    outs = [o.reshape(P("[3,1,1..5,4..10]"), t, special_zero)]
    if special_zero:  # without, [12] to [0,-1] is refused
        outs.append(o.reshape(P("[12]"), o.concat([t, C([-1])], 0), special_zero))
    params = [y] + [r.input_value(0).get_node() for r in outs]
    _, diffs = compare_with_openvino(tmp_path, outs, params, "minus_one_zero")
    assert diffs == []


@pytest.mark.parametrize("op", [o.add, o.subtract, o.maximum, o.minimum],
                         ids=["Add", "Subtract", "Maximum", "Minimum"])
def test_crossed_bounds_come_out_in_order(tmp_path, op):
    """``ReduceProd(ShapeOf(x) * -1)`` over ``[3..5,2..3]`` has the lower bound
    ``(-5)(-3) = 15`` and the upper one ``(-3)(-2) = 6`` in OpenVINO; its arithmetic takes
    the least and the greatest over the ends (``+ 2..10`` is ``8..25``, ``max(_, 0)`` is
    ``6..15``), where ovgather kept them crossed and said ``?``."""
    x, y = P("[3..5,2..3]"), P("[2..10]")
    prod = o.reduce_prod(o.multiply(o3.shape_of(x, "i64"), C([-1, -1])), C([0]), True)
    other = {o.add: o3.shape_of(y, "i64"), o.subtract: C([1]), o.maximum: C([0]),
             o.minimum: C([100])}[op]
    out = o3.broadcast(C(1.0, np.float32), o.concat([C([7]), op(prod, other)], 0))
    _, diffs = compare_with_openvino(tmp_path, [out], [x, y], "crossed")
    assert diffs == []
