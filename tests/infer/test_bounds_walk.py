"""Value bounds through shape subgraphs, against OpenVINO: seeded random chains of 1 to 4
ops over the ShapeOf of Parameters with interval dims (Gather, Concat, Convert,
Squeeze/Unsqueeze, Add/Subtract/Multiply/Divide, Minimum/Maximum, ReduceProd/Min/Max/Sum,
StridedSlice/Slice, Select, Broadcast) ending in the ops that read a shape from bounds
(Broadcast, Reshape, Range, Tile). Every layer's output shape is compared with read_model's
(``compare_with_openvino``)."""

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
    if pick < 0.35:
        return str(rng.choice((1, 2, 3, 4, 6, 8)))
    lo = rng.randint(0, 4)
    if pick < 0.75:
        return f"{lo}..{lo + rng.randint(1, 8)}"
    return rng.choice(("?", f"{lo}..", f"..{rng.randint(1, 9)}"))


class _Chain(ShapeChain):
    """A pool of 1-D integer vectors computed from ShapeOfs, with their lengths."""

    def __init__(self, rng: random.Random):
        super().__init__(rng, _dim, ITYPES)

    def pick(self):
        return self.rng.choice(self.pool)

    def step(self) -> None:
        rng = self.rng
        node, n, etype = self.pick()
        kind = rng.choice(("gather", "concat", "convert", "arith", "arith", "minmax", "reduce",
                           "slice", "strided", "select", "unsqueeze", "broadcast", "pair",
                           "equal", "reshaped", "abs"))
        if kind == "gather":
            idx = [rng.randrange(n) for _ in range(rng.randint(1, 3))]
            out, m = o8.gather(node, C(idx), C(0)), len(idx)
        elif kind == "concat":
            other = [p for p in self.pool if p[2] == etype]
            b = rng.choice(other)
            out, m = o.concat([node, b[0]], 0), n + b[1]
        elif kind == "convert":
            to = rng.choice(ITYPES)
            out, m, etype = o.convert(node, to), n, to
        elif kind == "arith":
            op = rng.choice((o.add, o.subtract, o.multiply, o.divide))
            same = [p for p in self.pool if p[1] == n and p[2] == etype]
            if rng.random() < 0.4 and len(same) > 1:
                other = rng.choice(same)[0]
            else:
                lo = 1 if op is o.divide else -2
                other = self.const([rng.randint(lo, 4)] if rng.random() < 0.5 else
                                   [rng.randint(lo, 4) for _ in range(n)], etype)
            out, m = op(node, other), n
        elif kind == "minmax":
            op = rng.choice((o.minimum, o.maximum))
            out, m = op(node, self.const([rng.randint(0, 6)], etype)), n
        elif kind == "reduce":
            op = rng.choice((o.reduce_prod, o.reduce_min, o.reduce_max, o.reduce_sum))
            out, m = op(node, C([0]), True), 1
        elif kind == "slice":
            b = rng.randint(-n, n - 1)
            out = o8.slice(node, C([b]), C([rng.choice((n, -1, b + 1))]), C([1]))
            m = None
        elif kind == "strided":
            b = rng.randint(0, n - 1)
            out = o.strided_slice(node, C([b]), C([n]), C([1]), [0], [0])
            m = n - b
        elif kind == "select":
            same = [p for p in self.pool if p[1] == n and p[2] == etype]
            other = rng.choice(same)[0]
            cond = C([rng.random() < 0.5 for _ in range(n)], np.bool_)
            out, m = o.select(cond, node, other), n
        elif kind == "unsqueeze":
            i = rng.randrange(n)
            scalar = o8.gather(node, C(i), C(0))
            out, m = o.unsqueeze(o.squeeze(o.unsqueeze(scalar, C([0])), C([0])), C([0])), 1
        elif kind == "pair":
            same = [p for p in self.pool if p[1] in (n, 1) and p[2] == etype]
            op = rng.choice((o.add, o.subtract, o.multiply, o.minimum, o.maximum, o.divide))
            out, m = op(node, rng.choice(same)[0]), n
        elif kind == "equal":
            same = [p for p in self.pool if p[1] in (n, 1) and p[2] == etype]
            other = rng.choice(same)[0] if rng.random() < 0.5 else self.const([1], etype)
            cond = rng.choice((o.equal, o.less, o.greater))(node, other)
            out, m = o.select(cond, self.const([1], etype), node), n
        elif kind == "reshaped":
            y = P("[" + ",".join(_dim(rng) for _ in range(rng.randint(1, 3))) + "]")
            self.params.append(y)
            r = o.reshape(y, C([-1] + [1] * rng.randint(0, 1)), False)
            out, m = o.convert(o3.shape_of(r, "i64"), etype), None
        elif kind == "abs":
            out, m = o.abs(o.subtract(node, self.const([rng.randint(0, 5)], etype))), n
        else:
            scalar = o8.gather(node, C(rng.randrange(n)), C(0))
            out, m = o3.broadcast(scalar, C([rng.randint(1, 3)])), None
        self.keep(out, m, etype)

    def consumer(self):
        rng = self.rng
        node, n, etype = self.pool[-1]
        kind = rng.choice(("broadcast", "broadcast", "reshape", "range", "tile"))
        if kind == "broadcast":
            return o3.broadcast(C(1.0, np.float32), node)
        if kind == "reshape":
            x = self.params[0]
            tgt = o.concat([self.const([-1], etype), node], 0) if rng.random() < 0.5 else node
            return o.reshape(x, tgt, rng.random() < 0.3)
        if kind == "range":
            stop = o8.gather(node, C(rng.randrange(n)), C(0))
            return o.range(C(0, np.int64), o.convert(stop, ov.Type.i64), C(1, np.int64),
                           ov.Type.i64)
        return o.tile(P("[" + ",".join("2" for _ in range(n)) + "]"), node)


def _model(rng: random.Random):
    return chain_model(rng, _Chain)


@pytest.mark.parametrize("seed", range(200))
def test_bounds_through_shape_subgraphs_match_openvino(tmp_path, seed):
    rng = rng_for(f"bounds_walk{seed}")
    out, params = _model(rng)
    _, diffs = compare_with_openvino(tmp_path, [out], params, f"b{seed}")
    assert diffs == []
